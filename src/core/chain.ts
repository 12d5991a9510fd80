import { createHash } from "node:crypto";
import { chainForm, isWellFormed, utf8Surrogatepass } from "./canonical.ts";
import type { Json } from "./json.ts";

/** The `prev` of a ledger's first row. */
export const GENESIS = "genesis";

/**
 * A row's chain value:
 *   chain = first 32 hex of SHA-256(utf8Surrogatepass(prev + chainForm(row without "chain")))
 * where prev is the previous row's chain, or "genesis" for the first row, and
 * chainForm is `json.dumps(row, sort_keys=True, ensure_ascii=False)`.
 * `rowWithoutChain` must not hold a "chain" key; the caller removes it.
 */
export function chainOf(prev: string, rowWithoutChain: Json): string {
  const body = prev + chainForm(rowWithoutChain);
  const hash = createHash("sha256");
  if (isWellFormed(body)) hash.update(body, "utf8");
  else hash.update(utf8Surrogatepass(body));
  return hash.digest("hex").slice(0, 32);
}
