/**
 * compactAscii (src/core/canonical/ascii-writer.ts), the bytes a small ASCII value's
 * json-c14n digest is hashed from: literal goldens for what it writes and
 * what it leaves to the general writer, and a differential against
 * compactForm over seeded values (every value it writes must be written
 * byte for byte as compactForm writes it).
 */
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { asciiFormScratch, compactAscii, compactForm } from "../../src/core/canonical/index.ts";
import { digestJson } from "../../src/core/digest.ts";
import { type Json, JsonFloat, parseJson } from "../../src/core/json.ts";
import { Gen } from "../helpers/jsongen.ts";

const text = (b: Uint8Array | null) => (b === null ? null : new TextDecoder().decode(b));
const map = (...pairs: [string, Json][]) => new Map<string, Json>(pairs);
const nest = (depth: number): Json => (depth === 0 ? 1 : [nest(depth - 1)]);

describe("compactAscii", () => {
  const written: [string, Json, string][] = [
    ["a Map's keys sorted", map(["b", 1], ["a", [true, false, null, "x"]]), '{"a":[true,false,null,"x"],"b":1}'],
    [
      "nested Maps, each sorted",
      map(["z", map(["y", 2], ["x", map(["q", []], ["p", {}])])], ["a", map()]),
      '{"a":{},"z":{"x":{"p":{},"q":[]},"y":2}}',
    ],
    [
      "a Map over eight keys (sorted as an array)",
      map(...Array.from({ length: 12 }, (_, i): [string, Json] => [`k${(i * 7) % 12}`, i])),
      '{"k0":0,"k1":7,"k10":10,"k11":5,"k2":2,"k3":9,"k4":4,"k5":11,"k6":6,"k7":1,"k8":8,"k9":3}',
    ],
    [
      "a plain object, an undefined member left out",
      { b: "x", a: undefined as unknown as Json, c: 3 },
      '{"b":"x","c":3}',
    ],
    [
      "escapes as json.dumps writes them",
      'q"b\\n\n\r\t\b\f\u0001\u001f\u007f',
      '"q\\"b\\\\n\\n\\r\\t\\b\\f\\u0001\\u001f\u007f"',
    ],
    ["an escaped key", map(['"k\n', 1]), '{"\\"k\\n":1}'],
    ["a long plain string (copied whole)", "ab~\u007f".repeat(30), `"${"ab~\u007f".repeat(30)}"`],
    ["a long string with a newline near its end", `${"x".repeat(100)}\n`, `"${"x".repeat(100)}\\n"`],
    ["a long string with a quote near its end", `${"x".repeat(100)}"`, `"${"x".repeat(100)}\\""`],
    ["a long string with a backslash near its end", `${"x".repeat(100)}\\`, `"${"x".repeat(100)}\\\\"`],
    [
      "negative zero and the largest safe integers",
      [-0, 9007199254740991, -9007199254740991],
      "[0,9007199254740991,-9007199254740991]",
    ],
    ["scalars alone", [null, true, false, "", 0], '[null,true,false,"",0]'],
    ["64 nested arrays", nest(64), `${"[".repeat(64)}1${"]".repeat(64)}`],
  ];
  for (const [name, v, want] of written) {
    test(`writes ${name}`, () => {
      expect(text(compactAscii(v))).toBe(want);
      expect(want).toBe(compactForm(v));
    });
  }

  class Point {
    x = 1;
  }
  const left: [string, Json][] = [
    ["a float", 1.5],
    ["an int past 2^53", 2 ** 53],
    ["a JsonFloat", new JsonFloat(2)],
    ["a bigint", 12345678901234567890n],
    ["text past ASCII", "café"],
    ["long text past ASCII near its end", `${"x".repeat(100)}é`],
    ["a key past ASCII", map(["ключ", 1])],
    [
      "a key past ASCII among eight",
      map(...Array.from({ length: 9 }, (_, i): [string, Json] => [i === 4 ? "é" : `k${i}`, i])),
    ],
    ["NaN", Number.NaN],
    ["65 nested arrays", nest(65)],
    ["a form past 64 KiB", "x".repeat(70_000)],
    ["a class instance", new Point() as unknown as Json],
    ["an undefined array item", [1, undefined as unknown as Json]],
  ];
  for (const [name, v] of left) {
    test(`leaves ${name} to the general writer`, () => {
      expect(compactAscii(v)).toBeNull();
    });
  }

  test("nothing is kept from a write, failed or not, but the buffer (within 64 KiB)", () => {
    expect(compactAscii(map(["a", map(["b", 1], ["c", "é"])]))).toBeNull();
    expect(asciiFormScratch().keys).toBe(0);
    expect(text(compactAscii(map(["y", 1], ["x", map(["b", 2], ["a", 3])])))).toBe('{"x":{"a":3,"b":2},"y":1}');
    expect(asciiFormScratch().keys).toBe(0);
    expect(compactAscii(["x".repeat(10_000), "y".repeat(900)])).not.toBeNull();
    expect(compactAscii("z".repeat(20_000))).toBeNull();
    expect(asciiFormScratch().bytes).toBeLessThanOrEqual(1 << 16);
  });

  test("seeded values: whatever it writes is compactForm's bytes, and most ASCII values are written", () => {
    const g = new Gen(11);
    const ascii = 'abcxyzAZ09 _-"\\/\n\t\u0001\u007f';
    const asciiString = () => Array.from({ length: g.int(10) }, () => ascii[g.int(ascii.length)]!).join("");
    const value = (depth: number): Json => {
      const k = depth > 5 ? g.int(4) : g.int(8);
      if (k === 0) return asciiString();
      if (k === 1) return g.int(2000) - 1000;
      if (k === 2) return g.pick([true, false, null]);
      if (k === 3) return g.chance(0.1) ? 0.5 : g.int(1 << 30);
      if (k === 4 || k === 5) {
        const m = new Map<string, Json>();
        for (let i = g.int(12); i > 0; i--) m.set(asciiString(), value(depth + 1));
        return m;
      }
      if (k === 6) return Array.from({ length: g.int(5) }, () => value(depth + 1));
      const o: { [k: string]: Json } = {};
      for (let i = g.int(5); i > 0; i--) o[asciiString()] = value(depth + 1);
      return o;
    };
    let wrote = 0;
    const cases = [
      ...Array.from({ length: 3000 }, () => value(0)),
      ...Array.from({ length: 2000 }, () => g.document()).flatMap((t) => {
        try {
          return [parseJson(t)];
        } catch {
          return []; // some documents nest deeper than the parser reads
        }
      }),
    ];
    for (const v of cases) {
      const got = compactAscii(v);
      if (got === null) continue;
      wrote++;
      expect(Buffer.from(got).equals(Buffer.from(compactForm(v), "utf8"))).toBe(true);
      expect(digestJson(v)).toBe(`sha256:json-c14n:v1:${createHash("sha256").update(compactForm(v)).digest("hex")}`);
    }
    expect(wrote).toBeGreaterThan(2000);
  });
});
