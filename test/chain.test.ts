import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { chainForm, lineForm } from "../src/canonical.ts";
import { GENESIS, chainOf } from "../src/chain.ts";
import { parseJson } from "../src/json.ts";

interface ChainRow {
  prev: string;
  row_json: string;
  hashed_body: string;
  chain: string;
}
const rows: ChainRow[] = JSON.parse(readFileSync(new URL("./vectors/chain-v1.json", import.meta.url), "utf8"));

describe("chain-v1 vectors (a 6-row chain made by the reference)", () => {
  test("six rows, linked from genesis", () => {
    expect(rows.length).toBe(6);
    expect(rows[0]!.prev).toBe(GENESIS);
    for (let i = 1; i < rows.length; i++) expect(rows[i]!.prev).toBe(rows[i - 1]!.chain);
  });
  test.each(rows.map((r, i) => [i + 1, r] as const))("row %d", (_, r) => {
    const row = parseJson(r.row_json);
    expect(chainForm(row)).toBe(r.hashed_body);
    expect(lineForm(row)).toBe(r.row_json);
    expect(chainOf(r.prev, row)).toBe(r.chain);
  });
});
