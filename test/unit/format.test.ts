/**
 * The format's line and chain rules (src/format/) as tables, and the kind
 * lists against docs/ledger-format.md, the document that defines them.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { lineForm } from "../../src/core/canonical/index.ts";
import { chainOf, GENESIS } from "../../src/core/chain.ts";
import { type Json, JsonFloat, parseJson } from "../../src/core/json.ts";
import { BREAK_KINDS, FINDING_KINDS } from "../../src/format/kinds.ts";
import {
  chainClaim,
  chainedLine,
  chainedRow,
  classifyLine,
  expectedChain,
  isBlank,
  lineBufferBytes,
} from "../../src/format/line.ts";
import { buildRow, ENVELOPE_KEYS, type Envelope, repairFields, repairs } from "../../src/format/row.ts";
import { Gen } from "../helpers/jsongen.ts";

const bytes = (s: string | number[]) => (typeof s === "string" ? new TextEncoder().encode(s) : new Uint8Array(s));

/** The chain rule applied to the row's model (what chainedLine must agree with): the chain after prev, set as the last key. */
function setChain(prev: string, row: Map<string, Json>): string {
  row.delete("chain");
  const chain = chainOf(prev, row);
  row.set("chain", chain);
  return chain;
}

describe("lines", () => {
  const cases: [string, Uint8Array, "blank" | "unparseable" | "row"][] = [
    ["empty", bytes(""), "blank"],
    ["ASCII whitespace", bytes(" \t\r\v\f"), "blank"],
    ["a no-break space is not blank", bytes("\u00a0"), "unparseable"],
    ["an object", bytes('{"a": 1}'), "row"],
    ["a JSON value that is no object", bytes("[1]"), "row"],
    ["NaN, as Python reads it", bytes('{"a": NaN}'), "row"],
    ["a BOM first", bytes([0xef, 0xbb, 0xbf, 0x7b, 0x7d]), "unparseable"],
    ["invalid UTF-8", bytes([0x22, 0xff, 0x22]), "unparseable"],
    ["a syntax error", bytes('{"a": }'), "unparseable"],
    ["an int of 4301 digits", bytes(`[${"1".repeat(4301)}]`), "unparseable"],
    ["nesting of 993, as CPython reads it in the reference", bytes(`${"[".repeat(993)}${"]".repeat(993)}`), "row"],
    ["nesting of 994", bytes(`${"[".repeat(994)}${"]".repeat(994)}`), "unparseable"],
  ];
  for (const [name, line, kind] of cases) test(name, () => expect(classifyLine(line).kind).toBe(kind));

  test("isBlank is exactly Python's bytes.strip() set", () => {
    const blank = [];
    for (let c = 0; c < 256; c++) if (isBlank(new Uint8Array([c]))) blank.push(c);
    expect(blank).toEqual([0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20]);
  });
});

describe("chain claims", () => {
  const cases: [string, string, ReturnType<typeof chainClaim>["kind"], string | null][] = [
    ["a string chain", '{"chain": "abc"}', "chained", "abc"],
    ["no chain", '{"a": 1}', "unchained", null],
    ["null", '{"chain": null}', "unchained", null],
    ["empty string", '{"chain": ""}', "unchained", null],
    ["0.0", '{"chain": 0.0}', "unchained", null],
    ["-0.0", '{"chain": -0.0}', "unchained", null],
    ["empty object", '{"chain": {}}', "unchained", null],
    ["a number", '{"chain": 1}', "non_string_chain", null],
    ["NaN is truthy", '{"chain": NaN}', "non_string_chain", null],
    ["a list", '{"chain": ["x"]}', "non_string_chain", null],
    ["not an object", '"chain"', "not_object", null],
  ];
  for (const [name, text, kind, next] of cases) {
    test(name, () => {
      const claim = chainClaim(parseJson(text));
      expect([claim.kind, claim.kind === "chained" ? claim.chain : null]).toEqual([kind, next]);
    });
  }

  test("the first chain vector, by both setChain and expectedChain", () => {
    const row = new Map([["a", 1]]);
    expect(setChain(GENESIS, row)).toBe("bfd5f35b43681d586db0f4a547a500ca");
    expect(lineForm(row)).toBe('{"a": 1, "chain": "bfd5f35b43681d586db0f4a547a500ca"}');
    expect(expectedChain(GENESIS, { a: 1, chain: "whatever" })).toBe("bfd5f35b43681d586db0f4a547a500ca");
    expect(expectedChain(GENESIS, { a: new JsonFloat(1) })).not.toBe("bfd5f35b43681d586db0f4a547a500ca");
  });

  test("chainedLine: setChain's chain and lineForm's line, for rows in chain form and not", () => {
    const g = new Gen(7);
    let rows = 0;
    for (let i = 0; i < 3000; i++) {
      let row: Json;
      try {
        row = parseJson(`{${g.key()}: ${g.value(1)}, ${g.key()}: ${g.value(1)}, "chain": "x"}`);
      } catch {
        continue;
      }
      rows++;
      const copy = parseJson(lineForm(row)) as Map<string, Json>;
      const prev = g.pick([GENESIS, "bfd5f35b43681d586db0f4a547a500ca"]);
      const { chain, bytes } = chainedLine(prev, row as Map<string, Json>);
      expect(chain).toBe(setChain(prev, copy));
      expect(new TextDecoder().decode(bytes)).toBe(`${lineForm(copy)}\n`);
      expect([...(row as Map<string, Json>).keys()]).toEqual([...copy.keys()]);
    }
    expect(rows).toBeGreaterThan(1000);
  });

  // chainedLine writes a row of ASCII text as bytes itself, and takes the general way for the rest:
  // each row here must come out as the rule's chain and lineForm's line either way.
  const H = "sha256:json-c14n:v1:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
  const nest = (n: number): Json => (n === 0 ? "x" : [nest(n - 1)]);
  const rowCases: [string, [string, Json][], string?][] = [
    [
      "a row as seam writes one",
      [
        ["evt", "tool_call"],
        ["seq", 7],
        ["tool", "search"],
        ["rpc_id", 4711],
        ["args_digest", H],
        ["ms", 3.25],
        ["ts", "2026-11-30T03:24:07.123Z"],
      ],
    ],
    [
      "every scalar",
      [
        ["f", new JsonFloat(3)],
        ["g", -0.5],
        ["t", true],
        ["n", null],
        ["b", 123456789012345678901234567890n],
        ["i", -(2 ** 60)],
      ],
    ],
    [
      "NaN and the infinities",
      [
        ["a", Number.NaN],
        ["b", Number.POSITIVE_INFINITY],
        ["c", new JsonFloat(-Infinity)],
      ],
    ],
    ["the escapes json.dumps writes, and DEL raw", [["s", 'a\nb\t"q"\\ \u0001\u001f\b\f\r\u007f~ /']]],
    ["a string past ASCII", [["s", "café"]]],
    ["an astral character", [["s", "x😀y"]]],
    ["a lone surrogate", [["s", "a\ud800b"]]],
    ["a key with an escape", [['k"ey', 1]]],
    ["a key past ASCII", [["ключ", 1]]],
    [
      "a nested object in key order",
      [
        [
          "o",
          new Map<string, Json>([
            ["a", 1],
            ["b", [1, "x\n"]],
          ]),
        ],
      ],
    ],
    [
      "a nested object out of key order",
      [
        [
          "o",
          new Map<string, Json>([
            ["b", 1],
            ["a", 2],
          ]),
        ],
      ],
    ],
    ["a nested string past ASCII", [["o", ["é"]]]],
    [
      "nested scalars of every kind, in key order",
      [
        [
          "o",
          new Map<string, Json>([
            ["a", new JsonFloat(3)],
            ["b", 123456789012345678901234567890n],
            ["c", [Number.NaN, -0.5, null, true, false, []]],
            ["d", new Map()],
          ]),
        ],
      ],
    ],
    [
      "a plain object in key order, an undefined member left out",
      [["o", { a: 1, b: undefined, c: ["x"] } as unknown as Json]],
    ],
    ["a plain object whose keys read as indexes (a JS object puts them first)", [["o", { b: 1, 10: 2, 9: 3 } as Json]]],
    [
      "keys where a prefix comes first",
      [
        [
          "o",
          new Map<string, Json>([
            ["ab", 1],
            ["a", 2],
          ]),
        ],
      ],
    ],
    [
      "a key that repeats its neighbour but for case",
      [
        [
          "o",
          new Map<string, Json>([
            ["a", 1],
            ["B", 2],
          ]),
        ],
      ],
    ],
    ["a long string", [["s", "ab\n".repeat(5000)]]],
    ["a string too long for the line buffer", [["s", "x".repeat(300_000)]]],
    ["a large nested value", [["o", Array.from({ length: 20_000 }, (_, i) => `item ${i}`)]]],
    ["a deeply nested value", [["o", nest(900)]]],
    ["no member but the chain", []],
    [
      "keys the sort must order (code point order, prefixes first)",
      [
        ["zz", 1],
        ["Z", 2],
        ["z", 3],
        ["_", 4],
        ["a_b", 5],
        ["ab", 6],
      ],
    ],
    ["a prev past ASCII", [["a", 1]], "prév"],
  ];
  test.each(rowCases)("chainedLine: %s", (_name, members, prev = GENESIS) => {
    const row = new Map<string, Json>([...members, ["chain", "x"]]);
    const copy = new Map<string, Json>(members);
    const { chain, bytes } = chainedLine(prev, row);
    expect(chain).toBe(setChain(prev, copy));
    expect(new TextDecoder().decode(bytes)).toBe(`${lineForm(copy)}\n`);
    expect([...row.entries()]).toEqual([...copy.entries()]);
  });

  test("chainedLine: rows of the same size one after another, with other keys, each in its own order", () => {
    const shapes: [string, Json][][] = [
      [
        ["b", 1],
        ["a", 2],
        ["c", 3],
      ],
      [
        ["c", 1],
        ["b", 2],
        ["a", 3],
      ],
      [
        ["a", 1],
        ["c", 2],
        ["b", 3],
      ],
      [
        ["c", 1],
        ["b", 2],
        ["a", 3],
      ],
    ];
    let prev = GENESIS;
    for (const members of shapes) {
      const { chain, bytes } = chainedLine(prev, new Map<string, Json>(members));
      expect(chain).toBe(setChain(prev, new Map<string, Json>(members)));
      expect(new TextDecoder().decode(bytes)).toBe(
        `${lineForm(new Map<string, Json>([...members, ["chain", chain]]))}\n`,
      );
      prev = chain;
    }
  });

  // chainedRow writes buildRow(env, fields)'s line from the envelope and fields themselves:
  // each case must come out as that row's chain and line, the general way's included.
  const env = {
    evt: "tool_call",
    impl: "seam/0.1.0",
    session: "0b7c6a52-8f43-4c1e-9d1a-3f0f4b8e2a61",
    seq: 7,
    server: "fs",
    ts: "2026-11-30T03:24:07.123Z",
  };
  const rowFields: [string, Envelope, Parameters<typeof buildRow>[1]][] = [
    [
      "a call's fields, undefined ones left out",
      env,
      { tool: "search", rpc_id: 4711, args_digest: H, reason: undefined, ms: 3.25 },
    ],
    ["fields named as the envelope's keys are dropped", env, { seq: 99, ts: "x", chain: "y", session: "z", tool: "t" }],
    ["no seq (a row in no session's sequence), seam given", { ...env, seq: null, seam: "mcp-http" }, { torn_line: 3 }],
    ["a value past ASCII (the general way)", env, { tool: "café" }],
    [
      "a nested object out of key order (the general way)",
      env,
      {
        args: new Map<string, Json>([
          ["b", 1],
          ["a", 2],
        ]),
      },
    ],
    [
      "a nested object in key order, a float, a bigint",
      env,
      {
        args: new Map<string, Json>([
          ["a", [1, "x"]],
          ["b", new JsonFloat(2)],
        ]),
        n: 2n ** 70n,
      },
    ],
    [
      "fields as pairs",
      env,
      [
        ["tool", "search"],
        ["status", "ok"],
        ["x", undefined],
      ],
    ],
    [
      "more members than the writer's spans first hold",
      env,
      Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`f${i}`, i])),
    ],
    ["no fields", env, {}],
  ];
  test.each(rowFields)("chainedRow: %s", (_name, e, fields) => {
    for (const prev of [GENESIS, "prév"]) {
      const row = buildRow(e, fields);
      const { chain, bytes } = chainedRow(prev, e, fields);
      expect(chain).toBe(setChain(prev, row));
      expect(new TextDecoder().decode(bytes)).toBe(`${lineForm(row)}\n`);
    }
  });

  test("chainedLine: a key's string again, another, one past ASCII, one with escapes, one too long to keep", () => {
    // The writer keeps the text of each key's last short string: each row must still read as its own.
    const values = [
      "ok",
      "ok",
      "no",
      "error",
      "ok",
      'a "q"\n',
      'a "q"\n',
      "café",
      "ok",
      "x".repeat(65),
      "x".repeat(65),
      "ok",
    ];
    let prev = GENESIS;
    for (const [i, status] of values.entries()) {
      const members: [string, Json][] = [
        ["evt", "tool_call"],
        ["seq", i],
        ["status", status],
        ["tool", i % 3 === 0 ? "search" : "fetch"],
      ];
      const { chain, bytes } = chainedLine(prev, new Map<string, Json>(members));
      expect(chain).toBe(setChain(prev, new Map<string, Json>(members)));
      expect(new TextDecoder().decode(bytes)).toBe(
        `${lineForm(new Map<string, Json>([...members, ["chain", chain]]))}\n`,
      );
      prev = chain;
    }
  });

  test("chainedLine: rows of many kinds in turn, more kinds than the writer keeps orders of", () => {
    // Key lists of equal length: only the keys tell them apart, in place and in order.
    const kinds: string[][] = [];
    for (let k = 0; k < 11; k++) {
      const keys = ["evt", "seq", `k${k}`, `j${(k * 7) % 11}`, "ts"];
      kinds.push(k % 2 === 0 ? keys : [...keys].reverse());
    }
    let prev = GENESIS;
    for (let round = 0; round < 3; round++) {
      // Two kinds in turn (a call's row and its exchange's), then every kind, so the oldest orders are dropped.
      const turn = round === 1 ? [0, 1, 0, 1, 0, 1] : kinds.map((_, k) => k);
      for (const k of turn) {
        const members: [string, Json][] = kinds[k]!.map((key, i) => [key, i]);
        const { chain, bytes } = chainedLine(prev, new Map<string, Json>(members));
        expect(chain).toBe(setChain(prev, new Map<string, Json>(members)));
        expect(new TextDecoder().decode(bytes)).toBe(
          `${lineForm(new Map<string, Json>([...members, ["chain", chain]]))}\n`,
        );
        prev = chain;
      }
    }
  });

  test("chainedLine: the reused line buffer stays within 1 MiB, whatever the rows", () => {
    chainedLine(GENESIS, new Map<string, Json>([["s", "x".repeat(300_000)]]));
    chainedLine(GENESIS, new Map<string, Json>([["o", Array.from({ length: 150_000 }, (_, i) => `item ${i}`)]]));
    expect(lineBufferBytes()).toBeLessThanOrEqual(1 << 20);
  });

  test("chainedLine: a row with no form throws, as lineForm does", () => {
    for (const v of [10n ** 5000n, undefined as unknown as Json, [new Date(0) as unknown as Json]]) {
      expect(() =>
        chainedLine(
          GENESIS,
          new Map<string, Json>([
            ["a", "x"],
            ["v", v],
          ]),
        ),
      ).toThrow();
    }
  });

  test("expectedChain from the line or from the row: the same chain, and the Map left without its chain", () => {
    for (const text of ['{"a": 1, "chain": "x"}', '{"a":1, "chain": "x"}']) {
      const row = parseJson(text) as Map<string, Json>;
      expect(expectedChain(GENESIS, row, new TextEncoder().encode(text))).toBe("bfd5f35b43681d586db0f4a547a500ca");
      expect([...row.keys()]).toEqual(["a"]);
    }
  });
});

describe("rows", () => {
  test.each([
    [
      "pairs",
      [
        ["tool", "echo"],
        ["seq", 99],
        ["chain", "forged"],
        ["gone", undefined],
        ["n", 1],
      ] as [string, Json | undefined][],
    ],
    ["an object", { tool: "echo", seq: 99, chain: "forged", gone: undefined, n: 1 }],
  ])("the envelope's key order, and fields named like envelope keys dropped: fields as %s", (_, fields) => {
    const row = buildRow({ evt: "tool_call", impl: "seam/9", session: "s", seq: 3, server: "x", ts: "T" }, fields);
    expect(lineForm(row)).toBe(
      '{"evt": "tool_call", "seam": "mcp-stdio", "seam_impl": "seam/9", "session": "s", "seq": 3, "server": "x", "tool": "echo", "n": 1, "ts": "T"}',
    );
    expect([...ENVELOPE_KEYS].every((k) => k === "chain" || row.has(k))).toBe(true);
    const noSeq = buildRow({ evt: "checkpoint", impl: "seam/9", session: "s", seq: null, server: "x", ts: "T" }, []);
    expect([...noSeq.keys()]).toEqual(["evt", "seam", "seam_impl", "session", "server", "ts"]);
  });

  test("a ledger_repair row declares exactly the torn line it names", () => {
    const torn = { line: 4, bytes: 10, digest: "sha256:raw-bytes:v1:00" };
    const row = new Map([["evt", "ledger_repair"], ...repairFields(torn)]);
    expect(repairs(row, torn)).toBe(true);
    expect(repairs(row, { ...torn, line: 5 })).toBe(false);
    expect(repairs(row, { ...torn, bytes: 11 })).toBe(false);
    expect(repairs(new Map([...row, ["evt", "tool_call"]]), torn)).toBe(false);
    expect(repairs([...row.values()], torn)).toBe(false);
  });
});

describe("docs/ledger-format.md", () => {
  const doc = readFileSync(join(import.meta.dir, "../..", "docs", "ledger-format.md"), "utf8");
  /** The kinds in the first column of the table under `heading`. */
  const table = (heading: string) => {
    const from = doc.indexOf(`\n${heading}\n`);
    expect(from).toBeGreaterThan(0);
    const rows = doc.slice(from).split("\n\n")[1]!.split("\n");
    return rows.slice(2).map((r) => /^\| `([a-z_]+)` \|/.exec(r)?.[1]);
  };
  test("lists every break kind, in the order of src/format/kinds.ts", () => {
    expect(table("Breaks:")).toEqual(Object.keys(BREAK_KINDS));
  });
  test("lists every finding kind, in the order of src/format/kinds.ts", () => {
    expect(table("Findings (session findings start `session <id>: `):")).toEqual(Object.keys(FINDING_KINDS));
  });
});
