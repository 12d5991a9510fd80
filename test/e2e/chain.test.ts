import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import {
  type CanonicalError,
  chainForm,
  compactForm,
  lineForm,
  utf8Surrogatepass,
} from "../../src/core/canonical/index.ts";
import { chainOf, GENESIS } from "../../src/core/chain.ts";
import { digestJson, digestOfCanonical } from "../../src/core/digest.ts";
import { type Json, JsonFloat, parseJson } from "../../src/core/json.ts";
import { HAVE_PYTHON } from "../helpers/verify-helpers.ts";

interface ChainRow {
  prev: string;
  row_json: string;
  hashed_body: string;
  chain: string;
}
const rows: ChainRow[] = JSON.parse(readFileSync(new URL("../../vectors/chain-v1.json", import.meta.url), "utf8"));

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
    expect(chainOf("abc", row)).toBe(createHash("sha256").update(`abc${body}`).digest("hex").slice(0, 32));
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

describe("a long row goes to the hash in pieces, hashed as Python hashes it whole", () => {
  // Pieces are cut near every 65,536 characters: values that put a surrogate pair, a lone
  // surrogate or an escape right at a cut, and arrays long enough to be handed on in parts.
  const CUT = 1 << 16;
  const values: [string, Json][] = [
    ["a pair across the cut", `${"a".repeat(CUT - 1)}\u{1F600}${"b".repeat(10)}`],
    ["a lone high surrogate at the cut", `${"a".repeat(CUT - 1)}\ud800${"b".repeat(CUT + 7)}`],
    ["a lone low surrogate after the cut", `${"a".repeat(CUT)}\udc00b`],
    ["escapes on both sides of the cut", `${"x".repeat(CUT - 2)}"\\\n\u0001${'q"'.repeat(CUT)}`],
    ["two-byte characters", "é".repeat(3 * CUT + 5)],
    ["an array of 100,000 floats", Array.from({ length: 100_000 }, (_, i) => i * 0.5 + 0.25)],
    ["objects in an array", Array.from({ length: 20_000 }, (_, i) => ({ k: i, s: "\u{1F600}".repeat(i % 5) }))],
  ];
  const rows = values.map(
    ([, v]) =>
      new Map<string, Json>([
        ["evt", "long"],
        ["v", v],
      ]),
  );

  test.each(values.map(([name], i) => [name, i] as const))("%s: as the whole form hashes", (_, i) => {
    const row = rows[i]!;
    const whole = createHash("sha256")
      .update(utf8Surrogatepass(`p${chainForm(row)}`))
      .digest("hex")
      .slice(0, 32);
    expect(chainOf("p", row)).toBe(whole);
    let want: string;
    try {
      want = digestOfCanonical(compactForm(values[i]![1]));
    } catch (err) {
      want = `undigestible:${(err as CanonicalError).kind}`;
    }
    expect(digestJson(values[i]![1])).toBe(want);
  });

  test.skipIf(!HAVE_PYTHON)("every one: chain and digest as Python's json module computes them", () => {
    const script = [
      "import hashlib, json, sys",
      "for line in sys.stdin:",
      "    row = json.loads(line)",
      "    chain = hashlib.sha256(('p' + json.dumps(row, sort_keys=True, ensure_ascii=False)).encode('utf-8', 'surrogatepass')).hexdigest()[:32]",
      "    try:",
      "        digest = 'sha256:json-c14n:v1:' + hashlib.sha256(json.dumps(row['v'], sort_keys=True, separators=(',', ':'), ensure_ascii=False, allow_nan=False).encode('utf-8')).hexdigest()",
      "    except (ValueError, UnicodeEncodeError) as e:",
      "        digest = 'undigestible:' + type(e).__name__",
      "    print(chain, digest)",
    ].join("\n");
    const r = spawnSync("python3", ["-c", script], {
      input: rows.map((r) => `${lineForm(r)}\n`).join(""),
      maxBuffer: 1 << 26,
    });
    expect(r.status).toBe(0);
    const want = r.stdout.toString().trimEnd().split("\n");
    expect(rows.map((row, i) => `${chainOf("p", row)} ${digestJson(values[i]![1])}`)).toEqual(want);
  });
});
