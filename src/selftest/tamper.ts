/**
 * Tampering as someone who can write the ledger would do it, shared by the
 * selftest's chain and checkpoint cases and by the tests.
 */
import { lineForm } from "../core/canonical/index.ts";
import { chainOf, GENESIS } from "../core/chain.ts";
import { getField, type JsonObject, parseJson } from "../core/json.ts";

/** Re-chains lines from index `from` on, as someone who can write the file would after changing them. */
export function rechainLines(lines: readonly string[], from: number): string[] {
  let prev = from === 0 ? GENESIS : (getField(parseJson(lines[from - 1]!), "chain") as string);
  return lines.map((l, i) => {
    if (i < from) return l;
    const m = new Map(parseJson(l) as JsonObject);
    m.delete("chain");
    prev = chainOf(prev, m);
    m.set("chain", prev);
    return lineForm(m);
  });
}

/** The line with the first hex digit of its args_digest changed (0 ↔ 1, anything else to 0): still valid JSON. */
export function flipArgsDigest(line: string): string {
  return line.replace(/"args_digest": "sha256:json-c14n:v1:./, (m) => m.slice(0, -1) + (m.endsWith("0") ? "1" : "0"));
}
