import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { compactForm } from "../../src/core/canonical/index.ts";
import { digestBytes, digestJson, StreamDigest } from "../../src/core/digest.ts";
import { type Json, JsonFloat, parseJson } from "../../src/core/json.ts";

interface C14nCase {
  input: string;
  canonical?: string;
  digest: string;
}
const cases: C14nCase[] = JSON.parse(readFileSync(new URL("../../vectors/json-c14n-v1.json", import.meta.url), "utf8"));

describe("json-c14n-v1 vectors (made by the reference recipe)", () => {
  test("all 48 are here", () => expect(cases.length).toBe(48));
  test.each(cases.map((c) => [c.input, c] as const))("%s", (_, c) => {
    const v = parseJson(c.input);
    expect(digestJson(v)).toBe(c.digest);
    if (c.canonical !== undefined) expect(compactForm(v)).toBe(c.canonical);
    else expect(() => compactForm(v)).toThrow();
  });
});

describe("raw-bytes digests", () => {
  test("SHA-256 of the bytes (FIPS 180-2 'abc' and the empty input)", () => {
    expect(digestBytes(new TextEncoder().encode("abc"))).toBe(
      "sha256:raw-bytes:v1:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
    expect(digestBytes(new Uint8Array())).toBe(
      "sha256:raw-bytes:v1:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    );
  });
  test("StreamDigest over any chunking equals digestBytes of the whole", () => {
    const all = new Uint8Array(40_000).map((_, i) => (i * 31) & 255);
    // One chunk, small and large; a small first chunk then more; large chunks.
    for (const size of [1, 7, 64, 1000, 16_384, 16_385, 20_000, 40_000]) {
      // Held chunks (seam proxy's): a first chunk alone is hashed in one shot at the end, a second one starts a hash.
      for (const held of [false, true]) {
        const d = new StreamDigest(held);
        for (let i = 0; i < all.length; i += size) d.update(all.subarray(i, i + size));
        expect(d.digest()).toBe(digestBytes(all));
      }
    }
    expect(new StreamDigest().digest()).toBe(digestBytes(new Uint8Array()));
    expect(new StreamDigest(true).digest()).toBe(digestBytes(new Uint8Array()));
  });
  test("StreamDigest digests what it was fed when the caller reuses its buffer", () => {
    const whole = new Uint8Array([1, 2, 3, 4, 5, 6]);
    const buf = new Uint8Array(3);
    for (const chunks of [[whole.subarray(0, 3)], [whole.subarray(0, 3), whole.subarray(3)]]) {
      const d = new StreamDigest();
      for (const c of chunks) {
        buf.set(c);
        d.update(buf);
        buf.fill(0);
      }
      expect(d.digest()).toBe(digestBytes(whole.subarray(0, chunks.length * 3)));
    }
    const d = new StreamDigest();
    const node = Buffer.from([9, 8, 7]);
    d.update(node);
    node.fill(0);
    expect(d.digest()).toBe(digestBytes(new Uint8Array([9, 8, 7])));
  });
});

describe("digestJson never throws", () => {
  const cyclic: { [k: string]: Json } = {};
  cyclic.me = cyclic;
  const odd: [string, unknown, string][] = [
    ["NaN number", NaN, "undigestible:ValueError"],
    ["Infinity JsonFloat", new JsonFloat(Infinity), "undigestible:ValueError"],
    ["lone surrogate key", { "\udc00": 1 }, "undigestible:UnicodeEncodeError"],
    ["a cycle", cyclic, "undigestible:ValueError"],
    ["undefined", undefined, "undigestible:ValueError"],
    ["a function", () => 1, "undigestible:ValueError"],
    ["a symbol", Symbol("x"), "undigestible:ValueError"],
    ["a Date", new Date(0), "undigestible:ValueError"],
    ["a Set", new Set([1]), "undigestible:ValueError"],
    ["an object with no prototype", Object.assign(Object.create(null), { a: 1 }), digestJson({ a: 1 })],
  ];
  test.each(odd)("%s", (_, v, want) => {
    expect(digestJson(v as Json)).toBe(want);
    expect(digestJson(v as Json, "jcs")).toStartWith(want.startsWith("undigestible") ? want : "sha256:jcs:v1:");
  });
  test("digests of equal values built in code and parsed agree", () => {
    const built: Json = { b: [1, new JsonFloat(2), 3.5, 2n ** 64n], a: "é" };
    expect(digestJson(built)).toBe(digestJson(parseJson('{"a":"\\u00e9","b":[1,2.0,3.5,18446744073709551616]}')));
  });
});
