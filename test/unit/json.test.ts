import { describe, expect, test } from "bun:test";
import { entries, getField, isObject, type Json, JsonFloat, parseJson } from "../../src/core/json.ts";
import { JsonParseError } from "../../src/core/json-error.ts";
import { DEFAULT_MAX_DEPTH, MAX_INT_DIGITS } from "../../src/core/json-scanner.ts";
import { Gen } from "../helpers/jsongen.ts";

const F = (x: number) => new JsonFloat(x);
const M = (...kv: [string, Json][]) => new Map<string, Json>(kv);

describe("parseJson keeps what JSON.parse loses", () => {
  const cases: [string, Json][] = [
    ["1", 1],
    ["-1", -1],
    ["0", 0],
    ["-0", 0], // the int -0 is 0
    ["1.0", F(1)],
    ["-0.0", F(-0)],
    ["0.0", F(0)],
    ["1E2", F(100)],
    ["1e2", F(100)],
    ["1.5e3", F(1500)],
    ["1e300", F(1e300)],
    ["1e400", F(Infinity)],
    ["-1e400", F(-Infinity)],
    ["1e-400", F(0)],
    ["0.5", 0.5],
    ["2.5e-5", 2.5e-5],
    ["123456789012345", 123456789012345],
    ["9007199254740991", 9007199254740991],
    ["-9007199254740991", -9007199254740991],
    ["9007199254740992", 9007199254740992n],
    ["-9007199254740993", -9007199254740993n],
    ["18446744073709551616", 18446744073709551616n],
    ["123456789012345678901234567890", 123456789012345678901234567890n],
    ["NaN", F(NaN)],
    ["Infinity", F(Infinity)],
    ["-Infinity", F(-Infinity)],
    ["true", true],
    ["false", false],
    ["null", null],
    ['""', ""],
    ['"\\ud800"', "\ud800"],
    ['"\\udc00\\ud800"', "\udc00\ud800"],
    ['"\\ud83d\\ude00"', "😀"],
    ['"\\uD83D\\uDE00"', "😀"],
    ['"\\ud800\\u0041"', "\ud800A"],
    ['"\\u00e9\\u00E9é\\/\\b\\f\\n\\r\\t\\"\\\\"', 'ééé/\b\f\n\r\t"\\'],
    ['"\u007f\u2028\ufeff"', "\u007f\u2028\ufeff"],
    ["[]", []],
    ["{}", M()],
    [' \t\r\n[1, 2.0 ,"x"] \n', [1, F(2), "x"]],
    ['{"b":1,"a":2}', M(["b", 1], ["a", 2])],
    ['{"dup":1,"x":0,"dup":2}', M(["dup", 2], ["x", 0])],
    ['{"__proto__":1,"constructor":2}', M(["__proto__", 1], ["constructor", 2])],
  ];
  test.each(cases)("%s", (text, want) => {
    expect(parseJson(text)).toEqual(want);
  });

  test("ints are numbers, floats that look integral are JsonFloat, others are plain numbers", () => {
    expect(typeof parseJson("7")).toBe("number");
    expect(parseJson("7.0")).toBeInstanceOf(JsonFloat);
    expect(typeof parseJson("7.5")).toBe("number");
    expect(Object.is((parseJson("-0.0") as JsonFloat).value, -0)).toBe(true);
    expect(Object.is(parseJson("-0"), 0)).toBe(true);
  });

  test("a duplicate key keeps the first position and the last value, as a Python dict does", () => {
    const v = parseJson('{"a":1,"b":2,"a":3}') as Map<string, Json>;
    expect([...v.entries()]).toEqual([
      ["a", 3],
      ["b", 2],
    ]);
  });
});

describe("parseJson refuses what Python's json.loads refuses", () => {
  const bad: [string, string][] = [
    ["", "expecting value"],
    ["   ", "expecting value"],
    ["[", "expecting value"],
    ["[1", "expecting ',' or ']'"],
    ["[1,]", "expecting value"],
    ['{"a":1,}', "expecting property name"],
    ["{,}", "expecting property name"],
    ["{a:1}", "expecting property name"],
    ["{'a':1}", "expecting property name"],
    ['{"a" 1}', "expecting ':'"],
    ['{"a":1 "b":2}', "expecting ',' or '}'"],
    ["01", "extra data"],
    ["-01", "extra data"],
    ["1.", "digit after the decimal point"],
    [".5", "expecting value"],
    ["1e", "digit in the exponent"],
    ["1e+", "digit in the exponent"],
    ["+1", "expecting value"],
    ["-", "expecting value"],
    ["--1", "expecting value"],
    ["0x10", "extra data"],
    ["nan", "expecting value"],
    ["-NaN", "expecting value"],
    ["infinity", "expecting value"],
    ["-Inf", "expecting value"],
    ["tru", "expecting value"],
    ["nul", "expecting value"],
    ["True", "expecting value"],
    ["1 2", "extra data"],
    ["{} x", "extra data"],
    ['"abc', "unterminated string"],
    ['"abc\\', "unterminated string"],
    ['"\\x41"', "invalid escape"],
    ['"\\u12"', "invalid \\uXXXX escape"],
    ['"\\u12g4"', "invalid \\uXXXX escape"],
    ['"\\u 123"', "invalid \\uXXXX escape"],
    ['"\\u+123"', "invalid \\uXXXX escape"],
    ['"a\u0000b"', "invalid control character"],
    ['"a\nb"', "invalid control character"],
    ['"a\tb"', "invalid control character"],
    ['"a\u001fb"', "invalid control character"],
    ["\ufeff{}", "byte order mark"],
    ["[1]\u0000", "extra data"],
    ["\u00a0[]", "expecting value"],
    ["\f1", "expecting value"],
    ["[1,\u000b2]", "expecting value"],
    ["1\f", "extra data"],
    ["[1]\u2028", "extra data"],
    ['"\\ud800\udc00"', "unescaped surrogate"],
    ['"\ud800\\udc00"', "unescaped surrogate"],
    // After a short escape, what follows is read as it was before one.
    ['"a\\nb\\x"', "invalid escape"],
    ['"a\\n\u0001"', "invalid control character"],
    ['"a\\n', "unterminated string"],
    ['"a\\nb\\', "unterminated string"],
    ['"\\t\\u12"', "invalid \\uXXXX escape"],
    ['"\\n\ud800\\udc00"', "unescaped surrogate"],
  ];
  test.each(bad)("%j", (text, reason) => {
    let err: unknown;
    try {
      parseJson(text);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(JsonParseError);
    expect((err as JsonParseError).reason).toContain(reason);
  });

  test("the error names the line and column of the offending character", () => {
    let err: JsonParseError | undefined;
    try {
      parseJson('{\n  "a": 1,\n  "b": tru\n}');
    } catch (e) {
      err = e as JsonParseError;
    }
    expect(err?.offset).toBe(19);
    expect(err?.line).toBe(3);
    expect(err?.column).toBe(8);
    expect(err?.message).toBe("expecting value at line 3 column 8");
  });

  test(`an int of ${MAX_INT_DIGITS} digits is read exactly; one more digit is refused (Python 3.11's int limit)`, () => {
    const ok = "9".repeat(MAX_INT_DIGITS);
    expect(parseJson(ok)).toBe(BigInt(ok));
    expect(parseJson(`-${ok}`)).toBe(-BigInt(ok));
    expect(() => parseJson("9".repeat(MAX_INT_DIGITS + 1))).toThrow(JsonParseError);
    expect(() => parseJson(`[1,-${"9".repeat(MAX_INT_DIGITS + 1)}]`)).toThrow(/4300 digits/);
    // Floats have no such limit in Python.
    expect(parseJson(`${"9".repeat(MAX_INT_DIGITS + 1)}.0`)).toEqual(F(Infinity));
    expect(parseJson(`1${"0".repeat(5000)}e-5000`)).toEqual(F(1));
  });
});

describe("nesting", () => {
  const nest = (d: number, open = "[", close = "]") => `${open.repeat(d)}1${close.repeat(d)}`;
  test(`${DEFAULT_MAX_DEPTH} levels parse (Python manages about 995), one more does not`, () => {
    expect(() => parseJson(nest(DEFAULT_MAX_DEPTH))).not.toThrow();
    expect(() => parseJson(nest(DEFAULT_MAX_DEPTH, '{"k":', "}"))).not.toThrow();
    expect(() => parseJson(nest(DEFAULT_MAX_DEPTH + 1))).toThrow(/nesting deeper than 900 levels/);
    expect(() => parseJson(nest(DEFAULT_MAX_DEPTH + 1, '{"k":', "}"))).toThrow(JsonParseError);
  });
  test("maxDepth is honoured", () => {
    expect(parseJson("[[1]]", { maxDepth: 2 })).toEqual([[1]]);
    expect(() => parseJson("[[1]]", { maxDepth: 1 })).toThrow(JsonParseError);
    expect(parseJson("1", { maxDepth: 0 })).toBe(1);
  });
  test("deep input is a JsonParseError, never a stack overflow, even with no depth limit", () => {
    const deep = "[".repeat(1_000_000);
    expect(() => parseJson(deep)).toThrow(JsonParseError);
    expect(() => parseJson(deep, { maxDepth: Infinity })).toThrow(JsonParseError);
    expect(() => parseJson('{"a":'.repeat(300_000), { maxDepth: Infinity })).toThrow(JsonParseError);
  });
});

describe("parseJson never throws anything but JsonParseError", () => {
  test("on random bytes", () => {
    const g = new Gen(101);
    const dec = new TextDecoder("utf-8");
    for (let i = 0; i < 3000; i++) {
      const text = i % 2 ? dec.decode(g.bytes(g.int(64))) : String.fromCharCode(...g.bytes(g.int(64)));
      try {
        parseJson(text);
      } catch (e) {
        expect(e).toBeInstanceOf(JsonParseError);
      }
    }
  });
  test("on near-JSON (documents with characters deleted, inserted, replaced or cut off)", () => {
    const g = new Gen(102);
    let failed = 0;
    for (let i = 0; i < 3000; i++) {
      try {
        parseJson(g.mutant());
      } catch (e) {
        if (!(e instanceof JsonParseError)) throw e;
        failed++;
      }
    }
    // The mutants must exercise both sides.
    expect(failed).toBeGreaterThan(500);
    expect(failed).toBeLessThan(2900);
  });
});

describe("object helpers work on parsed Maps and on plain objects built in code", () => {
  const parsed = parseJson('{"a":1,"b":{"c":[2]}}');
  const plain: Json = { a: 1, b: { c: [2] } };
  test.each([
    ["Map", parsed],
    ["plain", plain],
  ] as const)("%s", (_, v) => {
    expect(isObject(v)).toBe(true);
    expect(getField(v, "a")).toBe(1);
    expect(getField(v, "missing")).toBeUndefined();
    expect(getField(v, "toString")).toBeUndefined();
    expect(getField(getField(v, "b")!, "c")).toEqual([2]);
    expect([...entries(v as Map<string, Json>)].map(([k]) => k)).toEqual(["a", "b"]);
  });
  test("non-objects", () => {
    for (const v of [null, 1, 1n, "s", true, [], new JsonFloat(1)] as Json[]) {
      expect(isObject(v)).toBe(false);
      expect(getField(v, "length")).toBeUndefined();
    }
  });
});

describe("strings with escapes", () => {
  // Short escapes are read by JSON.parse, \u escapes and the rest by the scanner; text that mixes
  // them, raw text past ASCII and U+2028 included, reads as JSON.parse reads it.
  const pieces = [
    "a",
    " ",
    "\\n",
    '\\"',
    "\\\\",
    "\\/",
    "\\b",
    "\\f",
    "\\r",
    "\\t",
    "\\u0041",
    "\\u00e9",
    "\\ud83d\\ude00",
    "é",
    "\u2028",
    "\u007f",
  ];
  test("every string reads as JSON.parse reads it", () => {
    const g = new Gen(7);
    for (let i = 0; i < 20000; i++) {
      let raw = "";
      for (let n = 1 + g.int(6); n > 0; n--) raw += g.pick(pieces);
      const text = `["${raw}", {"k": "${raw}"}]`;
      expect(parseJson(text)).toEqual([JSON.parse(text)[0], new Map([["k", JSON.parse(text)[1].k]])]);
    }
  });
  test("a raw lone surrogate beside short escapes stays as it is", () => {
    expect(parseJson('"\\n\ud800\\t"')).toBe("\n\ud800\t");
  });
});

describe("keys read again from the parser's cache of recent keys", () => {
  // Raw key pieces: plain text, and escapes that decode to other text of another length.
  const pieces = ["a", "b", "\\\\", "\\b", "\\n", "\\u0062", '\\"', "\\/", "é"];
  test("every key reads as JSON.parse reads it, however often keys of the same shape recur", () => {
    const g = new Gen(11);
    for (let i = 0; i < 20000; i++) {
      const keys: string[] = [];
      for (let k = 0; k < 3; k++) {
        let raw = "";
        for (let n = 1 + g.int(4); n > 0; n--) raw += g.pick(pieces);
        keys.push(raw);
      }
      const text = `{${keys.map((k, n) => `"${k}": ${n}`).join(", ")}}`;
      const want = new Map<string, Json>(Object.entries(JSON.parse(text) as Record<string, number>));
      const got = parseJson(text) as Map<string, Json>;
      expect([...got]).toEqual([...want]);
    }
  });
});
