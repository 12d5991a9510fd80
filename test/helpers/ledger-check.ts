/**
 * An independent re-walk of a ledger for the writer's tests: every line is
 * parsed and its chain recomputed with chainOf from the previous row's claimed
 * chain. Deliberately small: it reports what it finds and leaves verdicts to
 * `seam verify`'s own tests.
 */
import { chainOf, GENESIS } from "../../src/core/chain.ts";
import { getField, type Json, type JsonObject, parseJson } from "../../src/core/json.ts";

export interface ChainCheck {
  /** Parsed object rows (ledger_repair rows included). */
  rows: number;
  /** "line N: …" for each line that is unparseable, torn, unchained or does not match its chain. */
  breaks: string[];
  /** The seq values of each session's rows, in file order. */
  seqs: Record<string, number[]>;
}

export function checkChain(text: string): ChainCheck {
  const lines = text.split("\n");
  const terminated = lines.at(-1) === "";
  if (terminated) lines.pop();
  const out: ChainCheck = { rows: 0, breaks: [], seqs: {} };
  let prev = GENESIS;
  lines.forEach((line, i) => {
    const n = i + 1;
    if (line.trim() === "") return;
    let row: Json;
    try {
      row = parseJson(line);
    } catch {
      out.breaks.push(`line ${n}: ${!terminated && i === lines.length - 1 ? "torn" : "unparseable"}`);
      return;
    }
    if (!(row instanceof Map)) {
      out.breaks.push(`line ${n}: not a JSON object`);
      return;
    }
    out.rows++;
    const claimed = getField(row, "chain");
    const body: JsonObject = new Map(row);
    body.delete("chain");
    if (typeof claimed !== "string" || claimed === "") {
      out.breaks.push(`line ${n}: unchained`);
      prev = GENESIS;
      return;
    }
    if (chainOf(prev, body) !== claimed) out.breaks.push(`line ${n}: chain mismatch`);
    prev = claimed;
    const session = getField(row, "session");
    const seq = getField(row, "seq");
    if (typeof session === "string" && typeof seq === "number") (out.seqs[session] ??= []).push(seq);
  });
  return out;
}
