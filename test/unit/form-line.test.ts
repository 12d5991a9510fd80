/**
 * The verifier's quick reading of a line (src/core/canonical/fast-line.ts) against
 * the one rule and the one parser: chainFromLine must give chainOf on the
 * parsed row, or null; a FormRow must give for each key what parseJson
 * reads, and must not take a line parseJson refuses. Lines near the form
 * that the form would write differently, and lines that are not JSON, are
 * the point of the tables; seeded random rows, in seam's own layout and in
 * any layout, are the point of the rest.
 */
import { describe, expect, test } from "bun:test";
import {
  chainFromLine,
  FormRow,
  formScratchBytes,
  lineForm,
  parsePlainLine,
  pyFloatRepr,
  readLayout,
} from "../../src/core/canonical/index.ts";
import { chainOf, GENESIS } from "../../src/core/chain.ts";
import { type Json, type JsonObject, parseJson } from "../../src/core/json.ts";
import { Gen } from "../helpers/jsongen.ts";

const enc = new TextEncoder();

/** The one rule: chainOf(prev, the row without its chain). */
function slow(prev: string, text: string): string {
  const row = parseJson(text) as JsonObject;
  row.delete("chain");
  return chainOf(prev, row);
}

/** The shortcut's answer; never a chain other than the rule's, never a field other than the parser's. */
function quick(prev: string, text: string): string | null {
  const got = chainFromLine(prev, enc.encode(text));
  if (got !== null) expect(got).toBe(slow(prev, text));
  const row = FormRow.read(enc.encode(text));
  if (isAscii(prev)) expect(row === null).toBe(got === null);
  if (row !== null) sameFields(row, text);
  return got;
}

function isAscii(s: string): boolean {
  return /^[\x00-\x7f]*$/.test(s);
}

/** Every member as parseJson reads it, type for type (JsonFloat, bigint, Map order), and nothing else. */
function sameFields(row: FormRow, text: string): void {
  const parsed = parseJson(text) as JsonObject;
  for (const [k, v] of parsed) {
    expect(row.has(k)).toBe(true);
    expect(row.get(k)).toStrictEqual(v);
    expect(row.get(k)).toStrictEqual(v); // again: from what it kept
  }
  for (const k of ["", "missing", "chai", "chainx", "é"]) {
    if (!parsed.has(k)) {
      expect(row.has(k)).toBe(false);
      expect(row.get(k)).toBeUndefined();
    }
  }
  expect(row.model()).toStrictEqual(parsed);
  if (row.plain) samePlain(text, parsed);
}

/** parsePlainLine gives parseJson's row: type for type, and key order (lineForm writes in the Map's order) at every depth. */
function samePlain(text: string, parsed: JsonObject = parseJson(text) as JsonObject): void {
  plainSeen++;
  const got = parsePlainLine(enc.encode(text));
  expect(got).toStrictEqual(parsed);
  expect(lineForm(got)).toBe(lineForm(parsed));
}
let plainSeen = 0;

const PREVS = [GENESIS, "bfd5f35b43681d586db0f4a547a500ca"];

describe("lines in seam's layout are read off the line", () => {
  const taken: [string, string][] = [
    ["a row with its chain last", '{"evt": "x", "b": 1, "a": 2.5, "chain": "bfd5f35b43681d586db0f4a547a500ca"}'],
    ["chain in the middle", '{"b": 1, "chain": "x", "a": 2}'],
    ["nested objects already sorted", '{"z": {"a": 1, "b": [1, {"c": null}]}, "a": true}'],
    ["every escape json.dumps writes", '{"s": "\\" \\\\ \\b \\f \\n \\r \\t \\u0000 \\u001f \u007f"}'],
    ["non-ASCII and U+2028 raw", '{"é": "ü\u2028😀", "a": "\ue000"}'],
    ["keys sorted by code point", '{"😀": 1, "\ufb00": 2, "a": 3}'],
    ["a key that goes on where another ends", '{"a ": 1, "a": 2, "a!": 3, "b": {"a": 1, "a ": 2}}'],
    [
      "floats in repr",
      '{"a": 1.0, "b": -0.0, "c": 1e-05, "d": 1e+16, "e": 0.1, "f": 5e-324, "g": 1.7976931348623157e+308}',
    ],
    ["ints of any size", '{"a": 0, "b": -1, "c": 123456789012345678901234567890}'],
    ["empty containers", '{"a": {}, "b": [], "c": ""}'],
    ["nothing but a chain", '{"chain": "abc"}'],
    ["empty", "{}"],
  ];
  test.each(taken)("%s", (_, text) => {
    for (const prev of PREVS) expect(quick(prev, text)).not.toBeNull();
  });
});

describe("lines the form would write otherwise take the long way", () => {
  const refused: [string, string][] = [
    ["-0 (Python reads the int 0)", '{"a": -0}'],
    ["a float not in repr", '{"a": 1.50}'],
    ["an exponent repr writes otherwise", '{"a": 1E5}'],
    ["an integral float without .0", '{"a": 1e5}'],
    ["\\/", '{"a": "\\/"}'],
    ["an escape of printable text", '{"a": "\\u0041"}'],
    ["uppercase hex", '{"a": "\\u001F"}'],
    ["DEL escaped (json.dumps writes it raw)", '{"a": "\\u007f"}'],
    ["\\u000a where json.dumps writes \\n", '{"a": "\\u000a"}'],
    ["an escaped non-ASCII character", '{"a": "\\u00e9"}'],
    ["a surrogate pair escaped", '{"a": "\\ud83d\\ude00"}'],
    ["a lone surrogate", '{"a": "\\ud800"}'],
    ["a key with an escape", '{"\\u0062": 1, "a": 2}'],
    ["no space after the colon", '{"a":1}'],
    ["no space after the comma", '{"a": 1,"b": 2}'],
    ["white space inside", '{ "a": 1}'],
    ["white space at the end", '{"a": 1} '],
    ["a nested object out of order", '{"a": {"b": 1, "a": 2}}'],
    ["a nested key repeated", '{"a": {"b": 1, "b": 2}}'],
    ["a top-level key repeated", '{"a": 1, "a": 2}'],
    ["chain repeated", '{"chain": "x", "a": 1, "chain": "y"}'],
    ["NaN", '{"a": NaN}'],
    ["-Infinity", '{"a": -Infinity}'],
    ["an overflowing float", '{"a": 1e400}'],
    ["nested past 64 levels", `{"a": ${"[".repeat(70)}${"]".repeat(70)}}`],
  ];
  test.each(refused)("%s", (_, text) => {
    for (const prev of PREVS) expect(quick(prev, text)).toBeNull();
  });

  const notJson: [string, string | Uint8Array][] = [
    ["a raw control character in a string", '{"a": "x\u0001y"}'],
    ["a raw tab in a key", '{"a\tb": 1}'],
    ["a leading zero", '{"a": 01}'],
    ["a leading zero after a minus", '{"a": -01}'],
    ["a lone minus", '{"a": -}'],
    ["an int of 4301 digits", `{"a": 1${"0".repeat(4300)}}`],
    ["an unterminated string", '{"a": "x}'],
    ["a trailing comma", '{"a": 1, }'],
    ["a missing value", '{"a": , "b": 1}'],
    ["true misspelt", '{"a": tru}'],
    ["an unclosed object", '{"a": {"b": 1}'],
    ["text after the object", '{"a": 1}x'],
    ["an overlong UTF-8 slash", new Uint8Array([...enc.encode('{"a": "'), 0xc0, 0xaf, ...enc.encode('"}')])],
    ["a lone continuation byte", new Uint8Array([...enc.encode('{"a": "'), 0x80, ...enc.encode('"}')])],
    ["an encoded surrogate", new Uint8Array([...enc.encode('{"a": "'), 0xed, 0xa0, 0x80, ...enc.encode('"}')])],
    ["a byte order mark", "\ufeff{}"],
  ];
  test.each(notJson)("not JSON: %s", (_, text) => {
    const bytes = typeof text === "string" ? enc.encode(text) : text;
    expect(FormRow.read(bytes)).toBeNull();
    expect(chainFromLine(GENESIS, bytes)).toBeNull();
  });

  test("a prev that is not ASCII", () => {
    expect(quick("é", '{"a": 1}')).toBeNull();
    expect(quick("\ud800", '{"a": 1}')).toBeNull();
  });
});

describe("a line whose chain form is longer than 1 MiB", () => {
  // Members before and after the long one in key order, and the chain among them, as seam writes it.
  // Its members are read each from its own bytes (no text of the whole line): escapes, numbers and literals among them.
  const text = `{"evt": "tool_call", "blob": "${"x".repeat(3 << 20)}", "z": [1, {"a": 2.5}], "chain": "ab", "seq": 7, "esc": "q\\"\\u0001\\\\", "neg": -12, "big": 123456789012345678, "t": true, "f": false, "nul": null, "ms": 1.5}`;
  test("is hashed from the line in pieces, to the rule's chain", () => {
    expect(quick(GENESIS, text)).not.toBeNull();
    expect(quick("0123456789abcdef0123456789abcdef", text)).not.toBeNull();
    expect(quick("é", text)).toBeNull();
  });
  test("leaves the reused form buffer as small as it was", () => {
    // Otherwise it grows to the longest line a process ever saw and keeps it: seam verify of a 48 MiB row peaked higher by that much.
    chainFromLine(GENESIS, enc.encode(text));
    expect(formScratchBytes()).toBeLessThan(3 << 20);
  });
});

/** A random object row, in any layout the generator likes. */
function randomRow(g: Gen): string {
  const n = g.int(8);
  const items: string[] = [];
  for (let i = 0; i < n; i++) items.push(`${g.ws() + g.key() + g.ws()}:${g.ws()}${g.value(1)}${g.ws()}`);
  if (g.chance(0.5)) items.push(`"chain": "${g.digits(8)}"`);
  return `{${items.join(",")}}`;
}

describe("seeded random rows agree with the rule", () => {
  test("as the generator writes them, and as seam writes them", () => {
    const g = new Gen(20261130);
    let asWritten = 0;
    let asSeam = 0;
    let seamLines = 0;
    for (let i = 0; i < 4000; i++) {
      const text = randomRow(g);
      let row: Json;
      try {
        row = parseJson(text);
      } catch {
        continue;
      }
      const prev = g.pick(PREVS);
      if (quick(prev, text) !== null) asWritten++;
      const seamLine = lineForm(row);
      seamLines++;
      if (quick(prev, seamLine) !== null) asSeam++;
    }
    // Plain lines were met among them, and lines in chain form that are not plain.
    expect(plainSeen).toBeGreaterThan(100);
    // Both kinds were met: the shortcut answered for some lines and declined others.
    expect(asWritten).toBeGreaterThan(100);
    expect(asSeam).toBeGreaterThan(asWritten);
    expect(asSeam).toBeLessThan(seamLines);
  });
});

describe("decimals written without an exponent", () => {
  // The scanner takes most of these from their digits alone, without pyFloatRepr: each must be
  // taken exactly when it is Python's repr of the float it reads as.
  test("are taken when they are repr, and only then", () => {
    const g = new Gen(20261201);
    const digits = (n: number, zeros: number) => {
      let t = "";
      for (let i = 0; i < n; i++) t += g.chance(zeros) ? "0" : String(g.int(10));
      return t;
    };
    let taken = 0;
    let refused = 0;
    for (let i = 0; i < 20000; i++) {
      const intPart = g.chance(0.4) ? "0" : String(1 + g.int(9)) + digits(g.int(17), 0.3);
      const text = `${g.chance(0.2) ? "-" : ""}${intPart}.${digits(1 + g.int(18), 0.4)}`;
      const x = Number(text);
      const isRepr = Number.isFinite(x) && pyFloatRepr(x) === text;
      const got = quick(PREVS[i % 2]!, `{"a": ${text}, "b": [${text}]}`);
      expect([text, got !== null]).toEqual([text, isRepr]);
      if (isRepr) taken++;
      else refused++;
    }
    expect(taken).toBeGreaterThan(3000);
    expect(refused).toBeGreaterThan(3000);
  });

  const cases: [string, boolean][] = [
    ["0.0", true],
    ["-0.0", true],
    ["0.0001", true],
    ["0.00001", false],
    ["0.000123456789012345", true],
    ["0.10", false],
    ["100.0", true],
    ["1.5", true],
    ["1.50", false],
    ["123456789012345.0", true],
    ["1234567890123456.0", true],
    ["12345678901234567.0", false],
    ["0.30000000000000004", true],
    ["0.3000000000000000", false],
  ];
  test.each(cases)("%s", (text, taken) => {
    expect(quick(GENESIS, `{"a": ${text}}`) !== null).toBe(taken);
  });
});

describe("a FormRow is a whole Map to whoever asks more than get and has", () => {
  const lines = [
    '{"evt": "tool_call", "seq": 3, "ms": 1.5, "args": {"a": [1, 2.0, "x"]}, "chain": "abc"}',
    '{"evt": "ünïcode", "server": "é", "n": 12345678901234567890, "chain": "abc"}',
    "{}",
  ];
  const views: [string, (m: Map<string, Json>) => unknown][] = [
    ["size", (m) => m.size],
    ["entries", (m) => [...m.entries()]],
    ["keys", (m) => [...m.keys()]],
    ["values", (m) => [...m.values()]],
    ["iteration", (m) => [...m]],
    [
      "forEach",
      (m) => {
        const seen: [string, Json][] = [];
        m.forEach((v, k) => seen.push([k, v]));
        return seen;
      },
    ],
    ["delete, then entries", (m) => [m.delete("chain"), [...m]]],
    ["set, then entries", (m) => [m.set("evt", "changed") === m, [...m]]],
    ["clear, then size", (m) => (m.clear(), m.size)],
  ];
  for (const text of lines) {
    test.each(views)(`${text.slice(0, 24)}…: %s`, (_, view) => {
      const parsed = parseJson(text) as JsonObject;
      const row = FormRow.read(enc.encode(text), true)!;
      expect(row).not.toBeNull();
      const first = row.get("args");
      expect(view(row)).toStrictEqual(view(parsed));
      // A value handed out before is the one the whole Map holds.
      if (first !== undefined && row.has("args")) expect(row.get("args")).toBe(first);
      expect(row.get("evt")).toStrictEqual(parsed.get("evt"));
      expect(row.has("nothing")).toBe(false);
    });
  }

  test("own: the row keeps its bytes when the caller's buffer changes", () => {
    const bytes = enc.encode('{"evt": "begin", "chain": "abc"}');
    const row = FormRow.read(bytes, true)!;
    bytes.fill(0x20);
    expect(row.get("evt")).toBe("begin");
    expect(row.chain(GENESIS)).toBe(slow(GENESIS, '{"evt": "begin", "chain": "abc"}'));
  });
});

describe("dropChain takes the chain out as delete would", () => {
  const lines = ['{"evt": "x", "chain": "abc", "n": 1}', '{"evt": "é", "chain": "abc"}', '{"evt": "x"}'];
  test.each(lines)("%s", (text) => {
    const parsed = parseJson(text) as JsonObject;
    parsed.delete("chain");
    for (const readFirst of [false, true]) {
      const row = FormRow.read(enc.encode(text), true)!;
      if (readFirst) expect(row.size).toBe(parsed.size + (text.includes('"chain"') ? 1 : 0));
      row.dropChain();
      expect(row.has("chain")).toBe(false);
      expect(row.get("chain")).toBeUndefined();
      expect(row.get("evt")).toStrictEqual(parsed.get("evt"));
      expect([...row]).toStrictEqual([...parsed]);
      expect(row.size).toBe(parsed.size);
    }
  });
});

describe("plain: JSON.parse reads the line as parseJson does", () => {
  const plain: string[] = [
    '{"evt": "tool_call", "ms": 1.5, "rpc_id": 123456789012345, "n": -123456789012345, "chain": "ab"}',
    '{"a": {"b": [1, {"c": "\\u0001\\n\\"", "d": null}], "e": true}, "z": []}',
    '{"a": 1e-05, "b": 0.1, "c": -2.5e-300, "d": 5e-324}',
    '{"é": "ü😀", "__proto__": {"x": 1}, "constructor": 2}',
    '{"a1": 1, "a": {"_0": 2}}',
    "{}",
  ];
  test.each(plain)("%s", (text) => {
    expect(readLayout(enc.encode(text))?.plain).toBe(true);
    samePlain(text);
  });
  const notPlain: [string, string][] = [
    ["a float that is a whole number", '{"a": 1.0}'],
    ["one past the exponent", '{"a": 1e+16}'],
    ["minus zero", '{"a": -0.0}'],
    ["an int of 16 digits", '{"a": 1234567890123456}'],
    ["a negative int of 16 digits", '{"a": -1234567890123456}'],
    ["a nested key that starts with a digit", '{"a": {"1": 1, "b": 2}}'],
    ["a top-level key that starts with a digit", '{"10": 1, "9": 2}'],
    ["deep in an array", '{"a": [[{"b": 2.0}]]}'],
  ];
  test.each(notPlain)("%s", (_, text) => {
    const layout = readLayout(enc.encode(text));
    expect(layout).not.toBeNull();
    expect(layout!.plain).toBe(false);
  });
});
