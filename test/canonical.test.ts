import { describe, expect, test } from "bun:test";
import { readFileSync, readdirSync } from "node:fs";
import { jcsForm } from "../src/canonical.ts";
import { parseJson } from "../src/json.ts";

const JCS = new URL("./vectors/jcs/", import.meta.url);
const jcsNames = readdirSync(new URL("input/", JCS)).sort();

describe("RFC 8785 published input/output pairs", () => {
  test("all six are here", () => expect(jcsNames).toEqual(["arrays.json", "french.json", "structures.json", "unicode.json", "values.json", "weird.json"]));
  test.each(jcsNames)("%s", (name) => {
    const input = readFileSync(new URL(`input/${name}`, JCS), "utf8");
    const output = readFileSync(new URL(`output/${name}`, JCS), "utf8");
    expect(jcsForm(parseJson(input))).toBe(output);
  });
});
