import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { compactForm } from "../src/canonical.ts";
import { StreamDigest, digestBytes, digestJson } from "../src/digest.ts";
import { JsonFloat, parseJson } from "../src/json.ts";

interface C14nCase {
  input: string;
  canonical?: string;
  digest: string;
}
const cases: C14nCase[] = JSON.parse(readFileSync(new URL("./vectors/json-c14n-v1.json", import.meta.url), "utf8"));

describe("json-c14n-v1 vectors (made by the reference recipe)", () => {
  test("all 48 are here", () => expect(cases.length).toBe(48));
  test.each(cases.map((c) => [c.input, c] as const))("%s", (_, c) => {
    const v = parseJson(c.input);
    expect(digestJson(v)).toBe(c.digest);
    if (c.canonical !== undefined) expect(compactForm(v)).toBe(c.canonical);
    else expect(() => compactForm(v)).toThrow();
  });
});
