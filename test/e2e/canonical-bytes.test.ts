/**
 * The direct bytes-to-canonical path (src/core/canonical/from-bytes.ts) must equal the
 * model path, compactForm(parseJson(text)) / jcsForm(parseJson(text)), on
 * every input: same bytes, same refusal, same parse error or acceptance.
 */
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { CanonicalError, canonicalBytes, compactForm, jcsForm } from "../../src/core/canonical/index.ts";
import { chainOf } from "../../src/core/chain.ts";
import { digestJson, digestJsonText, digestJsonUtf8, type Recipe } from "../../src/core/digest.ts";
import { type Json, parseJson } from "../../src/core/json.ts";
import { JsonParseError } from "../../src/core/json-error.ts";
import { stringEnd } from "../../src/core/json-spans.ts";
import { firstInvalidUtf8 } from "../../src/core/utf8.ts";
import { chainFromJsonLine, classifyLine } from "../../src/format/line.ts";
import { Gen } from "../helpers/jsongen.ts";
import { HAVE_PYTHON } from "../helpers/verify-helpers.ts";

type Result = { parse: "error" } | { kind: string } | { bytes: string };

function viaModel(text: string, recipe: Recipe): Result {
  let v;
  try {
    v = parseJson(text, { rejectDuplicateKeys: recipe === "jcs" });
  } catch (e) {
    if (!(e instanceof JsonParseError)) throw e;
    return { parse: "error" };
  }
  try {
    return { bytes: hex(new TextEncoder().encode(recipe === "jcs" ? jcsForm(v) : compactForm(v))) };
  } catch (e) {
    if (!(e instanceof CanonicalError)) throw e;
    return { kind: e.kind };
  }
}

function viaBytes(text: string, recipe: Recipe): Result {
  const chunks: string[] = [];
  let outcome;
  try {
    outcome = canonicalBytes(new TextEncoder().encode(text), recipe, (b) => chunks.push(hex(b)));
  } catch (e) {
    if (!(e instanceof JsonParseError)) throw e;
    return { parse: "error" };
  }
  return outcome === "ok" ? { bytes: chunks.join("") } : { kind: outcome };
}

function hex(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("hex");
}

/** Text with raw lone surrogates has no UTF-8 form; UTF-8 input never holds one. */
const isWellFormed = (s: string) => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

function same(text: string): void {
  if (!isWellFormed(text)) return;
  for (const recipe of ["json-c14n", "jcs"] as const) {
    const want = viaModel(text, recipe);
    const got = viaBytes(text, recipe);
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      throw new Error(
        `${recipe} of ${JSON.stringify(text).slice(0, 300)}: bytes path ${JSON.stringify(got).slice(0, 200)}, model path ${JSON.stringify(want).slice(0, 200)}`,
      );
    }
  }
}

describe("bytes path equals model path", () => {
  test("on 4000 generated documents", () => {
    const g = new Gen(11);
    for (let i = 0; i < 4000; i++) same(g.document());
  });
  test("on 4000 near-JSON mutants", () => {
    const g = new Gen(12);
    for (let i = 0; i < 4000; i++) same(g.mutant());
  });
  test("on random bytes decoded as UTF-8", () => {
    const g = new Gen(13);
    for (let i = 0; i < 2000; i++) same(new TextDecoder().decode(g.bytes(g.int(40))));
  });
  test("on random bytes as they are: only JsonParseError, and invalid UTF-8 is refused where it starts", () => {
    const g = new Gen(17);
    for (let i = 0; i < 3000; i++) {
      const b = g.bytes(g.int(40));
      const bad = firstInvalidUtf8(b);
      try {
        canonicalBytes(b, "json-c14n", () => {});
        expect(bad).toBe(-1);
      } catch (e) {
        expect(e).toBeInstanceOf(JsonParseError);
        if (bad >= 0) expect((e as JsonParseError).message).toBe(`not UTF-8 at offset ${bad}`);
      }
    }
  });
  test.each([
    [[0x22, 0x63, 0x61, 0x66, 0xe9, 0x22], 4], // Latin-1 é
    [[0xc0, 0x80], 0], // overlong NUL
    [[0x22, 0xed, 0xa0, 0x80, 0x22], 1], // a surrogate in UTF-8 (CESU)
    [[0xf4, 0x90, 0x80, 0x80], 0], // above U+10FFFF
    [[0x22, 0xe2, 0x82], 1], // cut short
    [[0x22, 0xe2, 0x82, 0xac, 0x22], -1], // "€"
  ])("firstInvalidUtf8(%j) = %d", (bytes, at) => {
    expect(firstInvalidUtf8(Uint8Array.from(bytes))).toBe(at);
  });
  const cases = [
    '{"b":1,"a":2}',
    '{"a":2,"b":1}',
    '{"dup":1,"x":0,"dup":2}',
    '{"dup":1,"dup":2}',
    '{"\\ufb00":2,"\\ud83d\\ude00":1,"\\ue000":0}',
    '{"\\ud800":1,"\\udc00":2}',
    '{"a":NaN}',
    '{"a":"\\ud800"}',
    '["\\ud800", NaN]',
    '{"z":{"y":{"b":1,"a":[{"d":1,"c":2}]},"x":0},"a":-0,"-0":-0.0}',
    "-0",
    "-5",
    "[-1,-0,-0.0,-10,0,-0e0,-0.5]",
    "1e400",
    "123456789012345678901234567890",
    `{"k":${"9".repeat(4301)}}`,
    "[".repeat(900) + "]".repeat(900),
    "[".repeat(901) + "]".repeat(901),
    '"\\u0000\\u001f\\u007f\\u2028 \\"\\\\\\/\\b\\f\\n\\r\\t"',
    "\ufeff[]",
    "\f1",
    "[1,\u000b2]",
    " \t\r\n[ 1 ,\n2 ]\r\n ",
  ];
  test.each(cases)("%s", (text) => same(text));

  test("an object of many members, shuffled, with repeats (the Array#sort path)", () => {
    const g = new Gen(14);
    for (let round = 0; round < 50; round++) {
      const members: string[] = [];
      for (let i = 0; i < 10 + g.int(200); i++) members.push(`${g.key()}:${g.value(5)}`);
      same(`{${members.join(",")}}`);
    }
  });

  test("values bigger than the buffer: a streamed 3 MB top-level array and a held 3 MB object", () => {
    const g = new Gen(15);
    const items: string[] = [];
    let size = 0;
    while (size < 3e6) {
      const v = g.value(2);
      items.push(v);
      size += v.length;
    }
    items.push(`"${"x\\n\\u00e9😀".repeat(200_000)}"`);
    same(`[${items.join(",")}]`);
    same(`{${items.map((v, i) => `"k${(i * 7919) % items.length}":${v}`).join(",")}}`);
  });

  test("a top-level array streams: the sink gets bounded chunks, not the whole output at the end", () => {
    const row = '{"b":[1,2.5,"x"],"a":{"d":null,"c":"é"}}';
    const text = `[${Array.from({ length: 100_000 }, () => row).join(",")}]`;
    const sizes: number[] = [];
    expect(canonicalBytes(new TextEncoder().encode(text), "json-c14n", (b) => sizes.push(b.length))).toBe("ok");
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(new TextEncoder().encode(text).length); // already canonical but for the key order
    expect(sizes.length).toBeGreaterThan(10);
    expect(Math.max(...sizes)).toBeLessThan(1 << 17);
  });

  describe("float literals written from their digits", () => {
    // Literals around what the shortcut takes (up to 15 significant digits, 1e-4 .. 1e16) and what it leaves.
    const g = new Gen(18);
    const literal = (): string => {
      const sign = g.chance(0.3) ? "-" : "";
      const zeros = (n: number) => "0".repeat(n);
      const digits = (n: number) => (n === 0 ? "" : g.digits(n, false));
      const int = g.chance(0.3) ? "0" : g.digits(1 + g.int(17));
      const frac = g.chance(0.8)
        ? `.${g.chance(0.3) ? zeros(g.int(6)) : ""}${digits(1 + g.int(17))}${g.chance(0.3) ? zeros(1 + g.int(4)) : ""}`
        : "";
      const exp =
        frac === "" || g.chance(0.4)
          ? `${g.pick(["e", "E"])}${g.pick(["", "+", "-"])}${g.pick(["", "0", "00"])}${g.int(25)}`
          : "";
      return sign + int + frac + exp;
    };
    const fixed = [
      "0.0001",
      "0.00009999999999999999",
      "9999999999999999.0",
      "999999999999999.9",
      "1e15",
      "1e16",
      "123456789012345.0",
      "1234567890123456.0",
      "0.1000000000000000",
      "100e-6",
      "0.0e5",
      "-0.000",
      "1.0e-4",
      "10000000000000000e-1",
    ];
    const all = [...fixed, ...Array.from({ length: 20_000 }, literal)];
    test("as the model path writes them", () => same(`[${all.join(",")}]`));
    test.skipIf(!HAVE_PYTHON)("as Python's json module writes them", () => {
      const text = `[${all.join(",")}]`;
      const r = spawnSync(
        "python3",
        ["-c", "import json,sys; sys.stdout.write(json.dumps(json.loads(sys.stdin.read()), separators=(',', ':')))"],
        {
          input: text,
          maxBuffer: 1 << 26,
        },
      );
      expect(r.status).toBe(0);
      const chunks: Uint8Array[] = [];
      expect(canonicalBytes(new TextEncoder().encode(text), "json-c14n", (b) => chunks.push(b.slice()))).toBe("ok");
      expect(Buffer.concat(chunks).toString("utf8").split(",")).toEqual(r.stdout.toString().split(","));
    });
  });

  describe("objects too long to hold are written member by member", () => {
    // Over a megabyte: an object that long, outside every other, is not held whole.
    const numbers = (n: number, seed: number) =>
      "[" +
      Array.from({ length: n }, (_, i) => ((i * seed) % 7 === 0 ? String(i) : (i * 0.001953125).toFixed(6))).join(",") +
      "]";
    const big = numbers(150_000, 3);
    const members = [
      `"structuredContent": {"values": ${big}, "unit": "m", "aa": {"z": ${numbers(160_000, 5)}, "a": 1.0}}`,
      `"content": [{"type": "text", "text": "${"x\\n\\u00e9\u{1F600}".repeat(80_000)}"}]`,
      `"\u00e9": -0, "\ud83d\ude00": 1e400, "isError": false`,
      `"_meta": {"b": ${big}, "a": [${big}, {"y": 2, "x": 1}]}`,
    ];
    const object = (order: number[], extra = "") => `{${order.map((i) => members[i]).join(", ")}${extra}}`;
    const cases: [string, string][] = [
      ["members out of order, nested long objects", object([0, 1, 2, 3])],
      ["another order", object([3, 2, 1, 0])],
      [
        "a repeated key: the last long value wins",
        object([0, 1, 3, 2], `, "_meta": {"dropped": false}, "content": ${big}`),
      ],
      ["a dropped value held NaN", `{"a": [${big}, NaN], "b": ${big}, "a": 1}`],
      ["a kept value holds NaN", `{"a": 1, "b": ${big}, "a": [${big}, NaN]}`],
      ["a lone surrogate in a long member", `{"b": ["\udc00", ${big}], "a": 2}`],
      ["a lone surrogate and NaN: ValueError wins", `{"b": ["\udc00", ${big}], "a": NaN}`],
      ["a lone surrogate in a dropped key's value", `{"k": ["\ud800", ${big}], "k": 0}`],
      ["in a top-level array", `[1, ${object([1, 0])}, ${object([2, 3])}]`],
    ];
    test.each(cases)("%s: as the model path", (_, text) => same(text));

    // Keys compared where they lie (src/core/canonical/key-order.ts): escaped and raw spellings of one
    // key, prefixes and bytes below the quote, characters above U+FFFF against U+E000..U+FFFF (whose
    // order differs between code points and UTF-16 units), empty keys and the chain key spelled escaped.
    const tricky = [
      ...['""', '" "', '"!"', '"a"', '"a "', '"a!"', '"a\\""', '"a\\\\"', '"a\\/b"', '"\\n"', '"\\u0000"'],
      ...['"\\ud83d\\ude00"', '"\u{10000}"', '"\ue000"', '"\\uffff"', '"\\u00e9"', '"ab\\u0063"', '"chain"'],
    ];
    const respelled = [
      '"\\u0061"',
      '"\\u0020"',
      '"\\u0000"',
      '"\\ud83d\\ude00"',
      '"😀"',
      '"\\ue000"',
      '"\uffff"',
      '"é"',
      '"a/b"',
    ];
    const lone = ['"\\ud800"', '"\\udbff\\udfff"', '"\\udc00"', '"\\ud800\\u0041"', '"\\udfff"', '"\\ud7ff"'];
    const pad = `"${"p".repeat(1_100_000)}"`;
    const shuffled = (keys: string[], seed: number) => {
      const g = new Gen(seed);
      const out = keys.slice();
      for (let i = out.length - 1; i > 0; i--) {
        const j = g.int(i + 1);
        [out[i], out[j]] = [out[j]!, out[i]!];
      }
      return out;
    };
    test.each([
      ["distinct keys", tricky],
      ["keys repeated in other spellings", [...tricky, ...respelled]],
      ["lone surrogates", [...tricky, ...lone]],
    ])("%s, in many orders: as the model path", (_, keys) => {
      for (let seed = 0; seed < 12; seed++) {
        const members = shuffled(keys, seed).map((k, i) => `${k}: ${i}`);
        members.splice(seed % members.length, 0, `"pad": ${pad}`);
        same(`{${members.join(", ")}}`);
      }
    });

    test("the sink gets bounded chunks, not the whole object at its end", () => {
      const sizes: number[] = [];
      const bytes = new TextEncoder().encode(object([0, 1, 3]));
      expect(canonicalBytes(bytes, "json-c14n", (b) => sizes.push(b.length))).toBe("ok");
      expect(sizes.reduce((a, b) => a + b, 0)).toBeGreaterThan(3_000_000);
      expect(Math.max(...sizes)).toBeLessThanOrEqual((1 << 20) + (1 << 16));
    });

    test("not JSON: the error a reader in document order meets first, at the same place", () => {
      // ASCII only, so parseJson's offsets (UTF-16 units) are byte offsets too.
      const text = `{"b": ${big}, "a": {"y": ${big}, "x": [1, 2]}, "c": "tail"}`;
      const g = new Gen(17);
      const at = (e: unknown) => (e instanceof JsonParseError ? `${e.reason} at ${e.offset}` : String(e));
      for (let round = 0; round < 40; round++) {
        const k = g.int(text.length);
        const broken = text.slice(0, k) + g.pick(["}", "]", ",", '"', "x", ":", "", "[", "{"]) + text.slice(k + 1);
        let want = "ok";
        try {
          parseJson(broken);
        } catch (e) {
          want = at(e);
        }
        let got = "ok";
        try {
          canonicalBytes(new TextEncoder().encode(broken), "json-c14n", () => {});
        } catch (e) {
          got = at(e);
        }
        expect({ k, got }).toEqual({ k, got: want });
      }
    });

    test("jcs: a repeated key is refused where the object closes, as in an object held whole", () => {
      const text = `{"a": ${big}, "b": 1, "a": 2}`;
      try {
        canonicalBytes(new TextEncoder().encode(text), "jcs", () => {});
        throw new Error("accepted");
      } catch (e) {
        expect(e).toBeInstanceOf(JsonParseError);
        expect([(e as JsonParseError).reason, (e as JsonParseError).offset]).toEqual([
          "duplicate key",
          text.length - 1,
        ]);
      }
    });
  });

  test.each([
    ["one chunk", '{ "b": [1, 2.50, "x"], "a": null }'],
    [
      "a top-level array in many chunks",
      JSON.stringify(Array.from({ length: 20_000 }, (_, i) => ({ n: i, t: `v${i}` }))),
    ],
    ["a long string", JSON.stringify({ s: "é".repeat(100_000) })],
  ])("digestJsonUtf8 of %s equals digestJson(parseJson(text))", (_what, text) => {
    expect(digestJsonUtf8(new TextEncoder().encode(text))).toBe(digestJson(parseJson(text)));
    expect(digestJsonUtf8(new TextEncoder().encode(text), "jcs")).toBe(digestJson(parseJson(text), "jcs"));
  });

  test("digestJsonUtf8 and digestJsonText equal digestJson(parseJson(text))", () => {
    const g = new Gen(16);
    for (let i = 0; i < 500; i++) {
      const text = g.document();
      let v;
      try {
        v = parseJson(text);
      } catch {
        expect(() => digestJsonText(text)).toThrow(JsonParseError);
        continue;
      }
      expect(digestJsonText(text)).toBe(digestJson(v));
      if (isWellFormed(text)) expect(digestJsonUtf8(new TextEncoder().encode(text))).toBe(digestJson(v));
    }
  });

  test("a repeated key is a parse error for jcs only (I-JSON forbids it)", () => {
    expect(() => digestJsonText('{"a":1,"a":1}', "jcs")).toThrow(/duplicate key/);
    expect(() => parseJson('{"a":1,"a":1}', { rejectDuplicateKeys: true })).toThrow(/duplicate key/);
    expect(digestJsonText('{"a":0,"a":1}')).toBe(digestJsonText('{"a":1}'));
  });

  test("deep input is a JsonParseError, never a stack overflow", () => {
    expect(() => digestJsonText("[".repeat(1_000_000), "json-c14n", { maxDepth: Infinity })).toThrow(JsonParseError);
    expect(() => digestJsonText(`${"[".repeat(1_000_000)}\ud800`, "json-c14n", { maxDepth: Infinity })).toThrow(
      JsonParseError,
    );
    expect(() => digestJsonText('{"a":'.repeat(1_000_000))).toThrow(JsonParseError);
  });
});

/** chainOf on the row classifyLine reads, or "unparseable"; and the first repeated key in document order. */
function chainViaModel(prev: string, text: string): { chain: string; dup?: string } | "unparseable" {
  let dup: string | undefined;
  const line = classifyLine(new TextEncoder().encode(text), (k) => {
    dup ??= k;
  });
  if (line.kind !== "row") return "unparseable";
  const row = line.row as Map<string, Json>;
  row.delete("chain");
  return dup === undefined ? { chain: chainOf(prev, row) } : { chain: chainOf(prev, row), dup };
}

function chainViaBytes(prev: string, text: string): { chain: string; dup?: string } | "unparseable" {
  const bytes = new TextEncoder().encode(text);
  let first = -1;
  let firstEnd = -1;
  let chain: string;
  try {
    chain = chainFromJsonLine(prev, bytes, (at, end) => {
      if (first < 0 || end < firstEnd) [first, firstEnd] = [at, end];
    });
  } catch (e) {
    if (!(e instanceof JsonParseError)) throw e;
    return "unparseable";
  }
  if (first < 0) return { chain };
  return { chain, dup: parseJson(new TextDecoder().decode(bytes.subarray(first, stringEnd(bytes, first)))) as string };
}

describe("the chain form from a line's bytes equals chainOf on its row", () => {
  const sameChain = (text: string, prev = "genesis") => {
    if (!isWellFormed(text)) return;
    expect(chainViaBytes(prev, text)).toEqual(chainViaModel(prev, text));
  };
  test("on 3000 generated rows, with a chain key and repeats", () => {
    const g = new Gen(21);
    for (let i = 0; i < 3000; i++) {
      const members: string[] = [];
      for (let k = g.int(6); k > 0; k--) members.push(`${g.key()}:${g.ws()}${g.document()}`);
      if (g.chance(0.7)) members.splice(g.int(members.length + 1), 0, `"chain":${g.value(1)}`);
      if (g.chance(0.2)) members.push(`"chain": "${i}"`);
      sameChain(`${g.ws()}{${members.join(`,${g.ws()}`)}}${g.ws()}`, g.pick(["genesis", "ab12", `é${i}`]));
    }
  });
  test("on 3000 near-JSON mutants of rows", () => {
    const g = new Gen(22);
    for (let i = 0; i < 3000; i++) sameChain(`{"a":${g.mutant()},"chain":"x"}`);
  });
  test.each([
    '{"chain": "x", "a": NaN, "b": [Infinity, -Infinity, 1e999, -1e999]}',
    '{"b": "\\ud800", "a": {"\\udc00": 1, "\\ud83d\\ude00": 2}, "chain": "c"}',
    '{"x": {"d": 1, "d": 2}, "a": 1, "a": 3, "chain": "c", "chain": "d"}',
    '{"chain": 1}',
    "{}",
    `{"deep": ${"[".repeat(991)}${"]".repeat(991)}}`,
    `{"deep": ${"[".repeat(992)}${"]".repeat(992)}}`,
    '\ufeff{"a": 1}',
    '{"a": 1} x',
    '{"\\u0061": 1, "a": 2, "b": {"\\u0062": 0, "b": 1}, "chain": "c"}',
    '{"a": 2, "\\u0061": 1, "chain": "c"}',
    '{"": 1, " ": 2, "!": 3, "a": 4, "a ": 5, "a!": 6, "a\\"": 7, "a\\\\": 8, "\\u0000": 9, "": 10}',
    '{"\\ud83d\\ude00": 1, "\ue000": 2, "\uffff": 3, "\\uffff": 4, "😀": 5, "\\ue000": 6, "\u{10000}": 7}',
    '{"\\ud800": 1, "\\udbff\\udfff": 2, "\\udc00": 3, "\\ud800\\u0041": 4, "\\ud7ff": 5, "\\ud800": 6}',
    '{"\\u0063hain": "x", "a": 1, "chai": 2, "chains": 3, "a\\u0063hain": 4}',
    '{"a\\/b": 1, "a/b": 2, "\\n": 3, "\\u000a": 4, "\\t": 5, "\\u00e9": 6, "é": 7}',
  ])("%s", (text) => sameChain(text));
  test("a row too large to hold its object in place: written member by member", () => {
    const g = new Gen(23);
    const items = Array.from({ length: 40_000 }, () => g.value(2));
    sameChain(`{${items.map((v, i) => `"k${(i * 7919) % items.length}":${v}`).join(",")},"chain":"z"}`);
    sameChain(`{"x":[${Array.from({ length: 400_000 }, () => "{}").join(",")}],"chain":"z"}`);
  });
});
