/**
 * The direct text-to-canonical path (src/canonical-text.ts) must equal the
 * model path, compactForm(parseJson(text)) / jcsForm(parseJson(text)), on
 * every input: same bytes, same refusal, same parse error or acceptance.
 */
import { describe, expect, test } from "bun:test";
import { CanonicalError, compactForm, jcsForm } from "../src/canonical.ts";
import { canonicalText } from "../src/canonical-text.ts";
import { type Recipe, digestJson, digestJsonText } from "../src/digest.ts";
import { JsonParseError, parseJson } from "../src/json.ts";
import { Gen } from "./jsongen.ts";

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

function viaText(text: string, recipe: Recipe): Result {
  const chunks: string[] = [];
  let outcome;
  try {
    outcome = canonicalText(text, recipe, (b) => chunks.push(hex(b)));
  } catch (e) {
    if (!(e instanceof JsonParseError)) throw e;
    return { parse: "error" };
  }
  return outcome === "ok" ? { bytes: chunks.join("") } : { kind: outcome };
}

function hex(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("hex");
}

function same(text: string): void {
  for (const recipe of ["json-c14n", "jcs"] as const) {
    const want = viaModel(text, recipe);
    const got = viaText(text, recipe);
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      throw new Error(`${recipe} of ${JSON.stringify(text).slice(0, 300)}: text path ${JSON.stringify(got).slice(0, 200)}, model path ${JSON.stringify(want).slice(0, 200)}`);
    }
  }
}

describe("text path equals model path", () => {
  test("on 4000 generated documents", () => {
    const g = new Gen(11);
    for (let i = 0; i < 4000; i++) same(g.document());
  });
  test("on 4000 near-JSON mutants", () => {
    const g = new Gen(12);
    for (let i = 0; i < 4000; i++) same(g.mutant());
  });
  test("on random bytes", () => {
    const g = new Gen(13);
    for (let i = 0; i < 2000; i++) same(new TextDecoder().decode(g.bytes(g.int(40))));
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
    "1e400",
    "123456789012345678901234567890",
    '{"k":' + "9".repeat(4301) + "}",
    "[".repeat(900) + "]".repeat(900),
    "[".repeat(901) + "]".repeat(901),
    '"\\u0000\\u001f\\u007f\\u2028 \\"\\\\\\/\\b\\f\\n\\r\\t"',
    "\ufeff[]",
  ];
  test.each(cases)("%s", (text) => same(text));

  test("an object of many members, shuffled, with repeats (the Array#sort path)", () => {
    const g = new Gen(14);
    for (let round = 0; round < 50; round++) {
      const members: string[] = [];
      for (let i = 0; i < 10 + g.int(200); i++) members.push(`${g.key()}:${g.value(5)}`);
      same("{" + members.join(",") + "}");
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
    items.push('"' + "x\\n\\u00e9😀".repeat(200_000) + '"');
    same("[" + items.join(",") + "]");
    same("{" + items.map((v, i) => `"k${(i * 7919) % items.length}":${v}`).join(",") + "}");
  });

  test("digestJsonText equals digestJson(parseJson(text))", () => {
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
    }
  });

  test("a repeated key is a parse error for jcs only (I-JSON forbids it)", () => {
    expect(() => digestJsonText('{"a":1,"a":1}', "jcs")).toThrow(/duplicate key/);
    expect(() => parseJson('{"a":1,"a":1}', { rejectDuplicateKeys: true })).toThrow(/duplicate key/);
    expect(digestJsonText('{"a":0,"a":1}')).toBe(digestJsonText('{"a":1}'));
  });

  test("deep input is a JsonParseError, never a stack overflow", () => {
    expect(() => digestJsonText("[".repeat(1_000_000), "json-c14n", { maxDepth: Infinity })).toThrow(JsonParseError);
    expect(() => digestJsonText('{"a":'.repeat(1_000_000))).toThrow(JsonParseError);
  });
});
