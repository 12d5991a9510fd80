import { createHash } from "node:crypto";
import { CHAIN, type Style, chainForm, isWellFormed, utf8Surrogatepass } from "./canonical.ts";
import type { Json } from "./json.ts";

/** The `prev` of a ledger's first row. */
export const GENESIS = "genesis";

/**
 * A row's chain value:
 *   chain = first 32 hex of SHA-256(utf8Surrogatepass(prev + chainForm(row without "chain")))
 * where prev is the previous row's chain, or "genesis" for the first row, and
 * chainForm is `json.dumps(row, sort_keys=True, ensure_ascii=False)`.
 * `rowWithoutChain` must not hold a "chain" key; the caller removes it.
 * `style` is for `seam selftest` only (src/core/canonical.ts).
 */
export function chainOf(prev: string, rowWithoutChain: Json, style: Style = CHAIN): string {
  const body = prev + chainForm(rowWithoutChain, style);
  const hash = createHash("sha256");
  if (isWellFormed(body)) hash.update(body, "utf8");
  else hash.update(utf8Surrogatepass(body));
  return hash.digest("hex").slice(0, 32);
}
