/**
 * A long line in no chain form is verified without its parsed row
 * (src/verify/shallow-row.ts): the report must be the one the whole parse
 * gives (a reader's onRow forces that path), but for the note that says
 * what the session checks did not read.
 */
import { describe, expect, test } from "bun:test";
import { chainOf, GENESIS } from "../../src/core/chain.ts";
import { type Json, parseJson } from "../../src/core/json.ts";
import { SHALLOW_FROM } from "../../src/verify/shallow-row.ts";
import { verifyBytes } from "../../src/verify/verify-ledger.ts";

const enc = new TextEncoder();

/** A ledger of rows written as given (not in chain form), each chained after the one before unless `chain` is in it. */
function ledger(rows: string[]): Uint8Array {
  let prev = GENESIS;
  const lines = rows.map((text) => {
    let row: Json;
    try {
      row = parseJson(text);
    } catch {
      return text;
    }
    if (!(row instanceof Map) || row.has("chain")) return text;
    prev = chainOf(prev, row);
    // Compact, keys as given: no chain form, so neither fast path takes it.
    return `${text.slice(0, -1)},"chain":"${prev}"}`;
  });
  return enc.encode(`${lines.join("\n")}\n`);
}

const big = (n: number) =>
  `[${Array.from({ length: n }, (_, i) => (i % 3 === 0 ? "{}" : i % 3 === 1 ? "[]" : `{"k":${i}}`)).join(",")}]`;
const begin =
  '{"evt":"session_begin","seam":"mcp-stdio","session":"s","seq":1,"server":"x","ts":"2026-01-01T00:00:00.000Z"}';
const end = (seq: number) =>
  `{"evt":"session_end","seam":"mcp-stdio","session":"s","seq":${seq},"server":"x","rows_before_end":${seq - 1},"calls":1,"ts":"2026-01-01T00:00:01.000Z"}`;
const call = (args: string, extra = "") =>
  `{"evt":"tool_call","seam":"mcp-stdio","session":"s","seq":2,"server":"x","tool":"t","rpc_id":2,"status":"ok"${extra},"args":${args},"ts":"2026-01-01T00:00:00.500Z"}`;

function both(bytes: Uint8Array) {
  const shallow = verifyBytes(bytes);
  const whole = verifyBytes(bytes, { onRow: () => {} });
  const strip = (r: ReturnType<typeof verifyBytes>) => ({
    ...r,
    notes: r.notes.filter((n) => !n.includes("not in chain form")),
  });
  return { shallow, whole, same: () => expect(strip(shallow)).toEqual(strip(whole)) };
}

describe("a long line in no chain form", () => {
  const arg = big(Math.ceil(SHALLOW_FROM / 4));
  // An object of keys spelled with escapes and without, in no order, over SHALLOW_FROM.
  const keys = Array.from({ length: Math.ceil(SHALLOW_FROM / 12) }, (_, i) => {
    const k = ((i * 7919) % 100_003).toString(36);
    return i % 3 === 0 ? `"\\u006b${k}":${i}` : i % 3 === 1 ? `"k\\/${k}":${i}` : `"k${k}\u00e9":${i}`;
  }).join(",");
  test.each([
    ["a session whose call holds a large value: ok", [begin, call(arg), end(3)], "ok"],
    ["a wrong chain on it", [begin, `${call(arg).slice(0, -1)},"chain":"0123"}`, end(3)], "broken"],
    [
      "a repeated key, nested and at the top",
      [begin, call(`{"a":${arg},"a":1,"b":{"c":1,"c":2}}`, ',"tool":"u"'), end(3)],
      "broken",
    ],
    ["its large value cut short: unparseable", [begin, call(arg).slice(0, -30), end(3)], "broken"],
    ["no object: an array", [begin, arg, end(3)], "broken"],
    ["a chain that is no string", [begin, `${call(arg).slice(0, -1)},"chain":[${arg}]}`, end(3)], "broken"],
    ["NaN and Infinity in it, a lone surrogate", [begin, call(`[NaN,-Infinity,1e999,"\\ud800",${arg}]`), end(3)], "ok"],
    ["many keys, some escaped, out of order", [begin, call(`{${keys},"\\ud83d\\ude00":1,"\ue000":2}`), end(3)], "ok"],
    [
      "many keys, one repeated in another spelling",
      [begin, call(`{"b":0,${keys},"\\u0062":1,"\\u0063hain":2}`), end(3)],
      "broken",
    ],
  ])("%s: the report of the whole parse", (_name, rows, verdict) => {
    const { shallow, same } = both(ledger(rows));
    same();
    expect(shallow.verdict as string).toBe(verdict);
  });

  test("the note says which members the checks did not read", () => {
    const { shallow } = both(ledger([begin, call(arg), end(3)]));
    expect(shallow.notes).toContainEqual(
      expect.stringMatching(
        /^line 2: \d+ bytes, not in chain form: its chain computed from its bytes; 1 of its members \("args"\) not read/,
      ),
    );
  });

  test("many members: the envelope's are read past the first 1024", () => {
    const many = Array.from({ length: 100_000 }, (_, i) => `"k${i}":${i}`).join(",");
    const row = `{"tool":"t","rpc_id":2,"status":"ok",${many},"evt":"tool_call","seam":"mcp-stdio","session":"s","seq":2,"server":"x","ts":"2026-01-01T00:00:00.500Z"}`;
    const { shallow, same } = both(ledger([begin, row, end(3)]));
    same();
    expect(shallow.verdict).toBe("ok");
    expect(shallow.notes.join("\n")).toContain('98979 of its members ("k1021", "k1022", "k1023", …)');
  });
});
