import { describe, expect, test } from "bun:test";
import { compactForm } from "../../src/core/canonical/index.ts";
import { digestBytes, digestJson, digestJsonUtf8 } from "../../src/core/digest.ts";
import { getField, type Json, parseJson } from "../../src/core/json.ts";
import { JsonParseError } from "../../src/core/json-error.ts";
import { parseLenient } from "../../src/core/json-lenient.ts";
import { readFrame } from "../../src/observe/frame-reading.ts";
import { goFold } from "../../src/observe/json-stacks.ts";
import { answerDigest, BULK_MEMBERS, SKIM_AT } from "../../src/observe/large-answer.ts";
import { valueSpan } from "../../src/observe/payloads.ts";
import { cat } from "../helpers/bytes.ts";
import { Gen } from "../helpers/jsongen.ts";

const enc = new TextEncoder();

describe("parseLenient", () => {
  test("reads every document parseJson reads, to the same value (so digests of today's frames cannot change)", () => {
    const g = new Gen(7);
    for (let i = 0; i < 3000; i++) {
      const doc = g.document();
      let strict: Json;
      try {
        strict = parseJson(doc);
      } catch {
        continue;
      }
      const lenient = parseLenient(doc).value;
      expect({ i, d: digestJson(lenient, "json-c14n") }).toEqual({ i, d: digestJson(strict, "json-c14n") });
    }
  });

  test("refuses what no stack reads, as parseJson does", () => {
    const g = new Gen(8);
    for (let i = 0; i < 3000; i++) {
      const doc = g.mutant();
      let strictOk = true;
      try {
        parseJson(doc, { maxDepth: 1e9 });
      } catch (e) {
        // The strict parser stops at its first long integer; what follows it is unjudged there.
        if (e instanceof JsonParseError && /longer than/.test(e.reason)) continue;
        strictOk = false;
      }
      let lenientOk = true;
      try {
        parseLenient(doc);
      } catch {
        lenientOk = false;
      }
      expect({ doc, lenientOk }).toEqual({ doc, lenientOk: strictOk });
    }
  });

  test("a million levels deep: read without recursion", () => {
    const n = 1_000_000;
    const p = parseLenient(`{"a":${"[".repeat(n)}${"]".repeat(n)}}`);
    expect(p.depth).toBe(n + 1);
  });

  test("flags what some stack refuses: NaN, long ints, lone surrogate escapes", () => {
    const p = parseLenient(`{"a":NaN,"b":${"9".repeat(4301)},"c":"\\udc00"}`);
    expect([p.nanLiteral, p.longInt, p.loneSurrogate]).toEqual([true, true, true]);
    const q = parseLenient(`{"b":${"9".repeat(4300)}}`);
    expect([q.nanLiteral, q.longInt, q.loneSurrogate]).toEqual([false, false, false]);
  });

  test("keeps shallow members in source order with duplicates and the spans of their values", () => {
    const text = `{"a": 1, "b" : {"x":[1, 2]} ,"a":"z"}`;
    const p = parseLenient(text);
    const top = p.value as Map<string, Json>;
    expect([...top.entries()]).toEqual([
      ["a", "z"],
      ["b", top.get("b")!],
    ]);
    expect(p.entries.get(top)!.map((e) => [e.key, text.slice(e.start, e.end)])).toEqual([
      ["a", "1"],
      ["b", `{"x":[1, 2]}`],
      ["a", `"z"`],
    ]);
  });

  test("a byte order mark is refused", () => {
    expect(() => parseLenient("\ufeff{}")).toThrow(JsonParseError);
  });
});

describe("goFold", () => {
  test.each([
    ["Method", "method"],
    ["PARAMS", "params"],
    ["param\u017f", "params"],
    ["\u212aey", "key"],
    ["\u0131d", null],
    ["na\u00efve", null],
  ])("%p folds to %p", (k, want) => expect(goFold(k)).toBe(want));
});

const frame = (params: string, extra = "") =>
  `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":${params}${extra}}`;

/** readFrame as a short summary: kind, and each reading's stacks with its tool or refusal. */
function summary(bytes: Uint8Array): unknown {
  const r = readFrame(bytes, { readings: true });
  if (r.kind !== "parsed") return r;
  return r.readings?.map((x) => [x.stacks.join("+"), x.refused ?? `${x.method} ${x.tool}`]) ?? "unambiguous";
}

describe("readFrame: what each stack reads", () => {
  const cases: [string, Uint8Array, unknown][] = [
    ["a plain call", enc.encode(frame(`{"name":"a","arguments":{}}`)), "unambiguous"],
    [
      "a duplicate key deep in the arguments",
      enc.encode(frame(`{"name":"a","arguments":{"x":{"y":1,"y":2}}}`)),
      "unambiguous",
    ],
    [
      "a duplicate name",
      enc.encode(frame(`{"name":"a","name":"b"}`)),
      [
        ["json-parse+python-json+go-encoding-json", "tools/call b"],
        ["first-key-wins", "tools/call a"],
      ],
    ],
    [
      "a case-variant name (Go)",
      enc.encode(frame(`{"name":"a","Name":"b"}`)),
      [
        ["json-parse+python-json", "tools/call a"],
        ["go-encoding-json", "tools/call b"],
      ],
    ],
    [
      "a case-variant method with U+017F",
      enc.encode(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"name":"a"},"Method":"tools/call"}`),
      [
        ["json-parse+python-json", "tools/list a"],
        ["go-encoding-json", "tools/call a"],
      ],
    ],
    [
      "NaN: Python only",
      enc.encode(frame(`{"name":"a","arguments":{"x":NaN}}`)),
      [
        ["python-json", "tools/call a"],
        ["json-parse+go-encoding-json", "NaN or Infinity is not JSON"],
      ],
    ],
    [
      "invalid UTF-8 in the name",
      cat(frame(`{"name":"a`).slice(0, -1), [0xff], `"}}`),
      [
        ["json-parse+go-encoding-json", "tools/call a\ufffd"],
        ["python-json", "invalid UTF-8"],
      ],
    ],
    [
      "a lone surrogate escape in the name (Go writes U+FFFD)",
      enc.encode(frame(`{"name":"a\\ud800"}`)),
      [
        ["json-parse+python-json", "tools/call a\ud800"],
        ["go-encoding-json", "tools/call a\ufffd"],
      ],
    ],
    [
      "id 1.0: an integer to JSON.parse, a float (no id) to Python",
      enc.encode(`{"jsonrpc":"2.0","id":1.0,"method":"tools/call","params":{"name":"a"}}`),
      "checked by id below",
    ],
    [
      "a BOM",
      cat([0xef, 0xbb, 0xbf], frame(`{"name":"a"}`)),
      { kind: "unparsed", reason: "unexpected byte order mark" },
    ],
    ["a form feed", enc.encode(`\f${frame(`{"name":"a"}`)}`), { kind: "unparsed", reason: "expecting value" }],
    ["blank", enc.encode(" \t\r"), { kind: "blank" }],
  ];
  test.each(cases)("%s", (_name, bytes, want) => {
    if (_name.startsWith("id 1.0")) {
      const r = readFrame(bytes, { readings: true });
      expect(r.kind === "parsed" && r.readings?.map((x) => [x.stacks.join("+"), x.id ?? null])).toEqual([
        ["json-parse+go-encoding-json", 1],
        ["python-json", null],
      ]);
      return;
    }
    expect(summary(bytes)).toEqual(want);
  });
});

describe("the digest recipe for frames only the lenient reader reads", () => {
  const argsDigest = (bytes: Uint8Array) => {
    const r = readFrame(bytes, { readings: true });
    if (r.kind !== "parsed") throw new Error("not parsed");
    return r.readings?.[0]?.args_digest;
  };

  test("invalid UTF-8: json-c14n of the value with U+FFFD", () => {
    const d = argsDigest(cat(frame(`{"name":"a","arguments":{"s":"x`).slice(0, -1), [0xc0, 0xaf], `"}}}`));
    expect(d).toBe(digestJson(new Map([["s", "x\ufffd\ufffd"]])));
  });

  test("deeper than the canonical form goes: raw-bytes of the arguments' own text", () => {
    const args = `{"d":${"[".repeat(1200)}${"]".repeat(1200)}}`;
    expect(() => compactForm(parseLenient(args).value)).toThrow();
    const bytes = enc.encode(frame(`{"name":"a","arguments":${args}}`));
    expect(argsDigest(bytes)).toBe(digestBytes(enc.encode(args)));
    // 901..1000 levels still have a canonical form: json-c14n.
    const shallow = `{"d":${"[".repeat(950)}${"]".repeat(950)}}`;
    expect(argsDigest(enc.encode(frame(`{"name":"a","arguments":${shallow}}`)))).toBe(
      digestJson(parseLenient(shallow).value),
    );
  });

  test("an integer of more than 4300 digits: raw-bytes of the arguments' own text", () => {
    const args = `{"n":${"5".repeat(5000)}}`;
    expect(argsDigest(enc.encode(frame(`{"name":"a","arguments":${args}}`)))).toBe(digestBytes(enc.encode(args)));
  });

  test("frames the strict parser reads keep their digests", () => {
    const bytes = enc.encode(frame(`{"name":"a","arguments":{"s":"\\ud800","n":1.0}}`));
    const r = readFrame(bytes, { readings: true });
    expect(r.kind === "parsed" && r.lenient).toBe(undefined);
    const args = getField(getField((r as { msg: Json }).msg, "params")!, "arguments")!;
    expect(digestJson(args)).toBe("undigestible:UnicodeEncodeError");
  });
});

describe("long answers: read without the payload of their result", () => {
  const PAD = `"${"p".repeat(SKIM_AT)}"`;
  /** What a reading of a server frame says: the message without its result, and the result's digest and members. */
  const reading = (bytes: Uint8Array, skim: boolean) => {
    const r = readFrame(bytes, { readings: false, skim });
    if (r.kind !== "parsed") return { kind: r.kind };
    const msg = r.msg;
    if (!(msg instanceof Map)) return { kind: "parsed", msg: digestJson(msg) };
    const result = msg.get("result");
    const rest = new Map(msg);
    rest.delete("result");
    const kept =
      result instanceof Map ? new Map([...result].filter(([k]) => !BULK_MEMBERS.has(k))) : (result ?? "(none)");
    return {
      kind: "parsed",
      rest: digestJson(rest),
      result: result === undefined ? undefined : answerDigest(result),
      kept: digestJson(kept),
      lenient: r.lenient !== undefined,
    };
  };
  const same = (text: string | Uint8Array) => {
    const bytes = typeof text === "string" ? enc.encode(text) : text;
    expect(bytes.length).toBeGreaterThanOrEqual(SKIM_AT);
    expect(reading(bytes, true)).toEqual(reading(bytes, false));
  };

  test("a plain long answer is skimmed: its payload is not in the model, its digest is the whole result's", () => {
    const text = `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":${PAD}}],"structuredContent":{"v":[1,2.50,-0.0]},"isError":false}}`;
    const r = readFrame(enc.encode(text), { readings: false, skim: true });
    const result = (r as { msg: Map<string, Json> }).msg.get("result") as Map<string, Json>;
    expect([...result.keys()]).toEqual(["isError"]);
    expect(answerDigest(result)).toBe(digestJson(getField(parseJson(text), "result")!));
    same(text);
  });

  const frames: [string, string | Uint8Array][] = [
    [
      "every bulk member, other members kept",
      `{"id":1,"jsonrpc":"2.0","result":{"contents":[${PAD}],"messages":[],"_meta":{"a":1},"content":${PAD},"structuredContent":null,"resultType":"complete","nextCursor":"c"}}`,
    ],
    [
      "a result's repeated member: the last wins",
      `{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":${PAD},"isError":false,"content":[]}}`,
    ],
    ["a repeated result: read whole", `{"jsonrpc":"2.0","id":1,"result":{"content":${PAD}},"result":{"content":[]}}`],
    ["an error answer", `{"jsonrpc":"2.0","id":"x","error":{"code":-1,"message":${PAD}}}`],
    ["a result that is no object", `{"jsonrpc":"2.0","id":1,"result":[${PAD}]}`],
    ["a server request", `{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"messages":[${PAD}]}}`],
    ["a batch", `[{"jsonrpc":"2.0","id":1,"result":{"content":${PAD}}}]`],
    ["NaN in the payload", `{"jsonrpc":"2.0","id":1,"result":{"content":[${PAD},NaN]}}`],
    ["a lone surrogate in the payload", `{"jsonrpc":"2.0","id":1,"result":{"content":[${PAD},"\\udc00"]}}`],
    [
      "an integer of 5000 digits in the payload",
      `{"jsonrpc":"2.0","id":1,"result":{"content":[${PAD},${"7".repeat(5000)}]}}`,
    ],
    [
      "nested 950 deep in the payload",
      `{"jsonrpc":"2.0","id":1,"result":{"content":[${PAD},${"[".repeat(950)}${"]".repeat(950)}]}}`,
    ],
    [
      "the frame nested 900 deep (the limit)",
      `{"jsonrpc":"2.0","id":1,"result":{"content":[${PAD},${"[".repeat(897)}${"]".repeat(897)}]}}`,
    ],
    [
      "the frame nested 901 deep (one past it)",
      `{"jsonrpc":"2.0","id":1,"result":{"content":[${PAD},${"[".repeat(898)}${"]".repeat(898)}]}}`,
    ],
    [
      "a member 900 deep outside the result",
      `{"jsonrpc":"2.0","id":1,"x":${"[".repeat(899)}${"]".repeat(899)},"result":{"content":${PAD}}}`,
    ],
    [
      "a member 901 deep outside the result",
      `{"jsonrpc":"2.0","id":1,"x":${"[".repeat(900)}${"]".repeat(900)},"result":{"content":${PAD}}}`,
    ],
    [
      "a result member 901 deep",
      `{"jsonrpc":"2.0","id":1,"result":{"content":${PAD},"_meta":${"[".repeat(899)}${"]".repeat(899)}}}`,
    ],
    ["a syntax error in the payload", `{"jsonrpc":"2.0","id":1,"result":{"content":[${PAD},]}}`],
    ["trailing data", `{"jsonrpc":"2.0","id":1,"result":{"content":${PAD}}} x`],
    [
      "whitespace everywhere",
      ` {\t"jsonrpc" : "2.0" ,\r\n"id":1 , "result" : { "content" : ${PAD} , "isError" : true } } \t`,
    ],
    ["escaped keys", `{"jsonrpc":"2.0","\\u0069d":1,"result":{"con\\u0074ent":${PAD},"\\u005fmeta":{}}}`],
    [
      "invalid UTF-8 in the payload",
      cat(`{"jsonrpc":"2.0","id":1,"result":{"content":[${PAD},"`, [0xc0, 0xaf], `"]}}`),
    ],
    ["a byte order mark", cat([0xef, 0xbb, 0xbf], `{"jsonrpc":"2.0","id":1,"result":{"content":${PAD}}}`)],
  ];
  test.each(frames)("%s: as read whole", (_, text) => same(text));

  test("300 generated values in a long answer, and 300 near-JSON ones: as read whole", () => {
    const g = new Gen(19);
    for (let i = 0; i < 600; i++) {
      const doc = i < 300 ? g.document() : g.mutant();
      const where = g.int(4);
      const text =
        where === 0
          ? `{"jsonrpc":"2.0","id":${i},"result":{"content":${PAD},"v":${doc}}}`
          : where === 1
            ? `{"jsonrpc":"2.0","id":${i},"result":{"structuredContent":${doc},"x":${PAD}}}`
            : where === 2
              ? `{"jsonrpc":"2.0","id":${doc},"result":{"content":${PAD}}}`
              : `{"jsonrpc":"2.0","id":${i},"result":{"content":[${PAD}]}, "error":${doc}}`;
      try {
        same(text);
      } catch (err) {
        throw new Error(`${JSON.stringify(text.replace(PAD, "PAD")).slice(0, 400)}: ${err}`);
      }
    }
  });

  test("short answers are read whole as always", () => {
    const text = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"short"}]}}`;
    const r = readFrame(enc.encode(text), { readings: false, skim: true });
    expect(((r as { msg: Map<string, Json> }).msg.get("result") as Map<string, Json>).has("content")).toBe(true);
  });
});

describe("a frame read plainly", () => {
  // A payload of such a frame is kept without a second digest (src/observe/payloads.ts): its bytes,
  // digested by the recipe's own reading of bytes, must give what the row's digest of its parse is.
  test("gives each value's digest from its bytes, by both recipes, as from its parse", () => {
    const g = new Gen(11);
    let plain = 0;
    for (let i = 0; i < 4000; i++) {
      const doc = i % 2 === 0 ? g.document() : g.mutant();
      const frame = enc.encode(`{"jsonrpc":"2.0","id":1,"result":${doc}}`);
      const r = readFrame(frame, { readings: false });
      if (r.kind !== "parsed" || r.plain !== true) continue;
      plain++;
      const span = valueSpan(frame, -1, ["result"])!;
      const value = getField(r.msg, "result")!;
      for (const recipe of ["json-c14n", "jcs"] as const) {
        const fromParse = attempt(() => digestJson(value, recipe));
        expect({ i, doc, recipe, d: attempt(() => digestJsonUtf8(span, recipe)) }).toEqual({
          i,
          doc,
          recipe,
          d: fromParse,
        });
      }
    }
    expect(plain).toBeGreaterThan(1500);
  });

  test.each([
    ['{"jsonrpc":"2.0","id":1,"result":{"a":[1,{"b":"x"}]}}', true],
    ['{"jsonrpc":"2.0","id":1,"result":{"a":{"b":1,"b":2}}}', false],
    ['{"jsonrpc":"2.0","id":1,"result":{"a":NaN}}', false],
    ['{"jsonrpc":"2.0","id":1,"result":{"a":1,}}', false],
    ['{"jsonrpc":"2.0","id":1,"id":1,"result":1}', false],
  ])("%s: plain %p", (text, want) => {
    const r = readFrame(enc.encode(text), { readings: false });
    expect(r.kind === "parsed" && r.plain === true).toBe(want);
  });
});

/** What `f` gives, or that it throws. */
function attempt(f: () => string): string {
  try {
    return f();
  } catch {
    return "throws";
  }
}
