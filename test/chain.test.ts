import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { chainForm, lineForm } from "../src/core/canonical.ts";
import { GENESIS, chainOf } from "../src/core/chain.ts";
import { JsonFloat, parseJson } from "../src/core/json.ts";

interface ChainRow {
  prev: string;
  row_json: string;
  hashed_body: string;
  chain: string;
}
const rows: ChainRow[] = JSON.parse(readFileSync(new URL("../vectors/chain-v1.json", import.meta.url), "utf8"));

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

describe("chainOf", () => {
  test("is the first 32 hex of SHA-256(prev + chainForm(row))", () => {
    const row = { evt: "x", n: 1.5, z: [true, null] };
    const body = '{"evt": "x", "n": 1.5, "z": [true, null]}';
    expect(chainForm(row)).toBe(body);
    expect(chainOf("abc", row)).toBe(
      createHash("sha256")
        .update("abc" + body)
        .digest("hex")
        .slice(0, 32),
    );
    expect(chainOf(GENESIS, row)).toHaveLength(32);
  });
  test("hashes NaN/Infinity as Python writes them and lone surrogates with surrogatepass", () => {
    // Python: json.dumps({"k": "\ud800", "n": nan, "i": inf, "j": -inf, "\udc00": 1}, sort_keys=True, ensure_ascii=False)
    //         hashed as ("genesis" + that).encode("utf-8", "surrogatepass")
    const row = parseJson('{"k": "\\ud800", "n": NaN, "i": Infinity, "j": -Infinity, "\\udc00": 1}');
    expect(chainForm(row)).toBe('{"i": Infinity, "j": -Infinity, "k": "\ud800", "n": NaN, "\udc00": 1}');
    expect(chainOf(GENESIS, row)).toBe("d2f363b438f947c0e0820628c86bc10e");
  });
  test("a row read back from its line chains the same (lone surrogates survive the \\udXXX escape)", () => {
    const row = { evt: "raw", payload: "a\ud800b", "\udfff": [new JsonFloat(1), NaN] };
    expect(chainOf("p", parseJson(lineForm(row)))).toBe(chainOf("p", row));
  });
});
