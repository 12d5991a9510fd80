import { createHash } from "node:crypto";
import { CHAIN, feedUtf8, type Style, streamForm } from "./canonical/index.ts";
import type { Json } from "./json.ts";

/** The `prev` of a ledger's first row. */
export const GENESIS = "genesis";

/**
 * A row's chain value:
 *   chain = first 32 hex of SHA-256(utf8Surrogatepass(prev + chainForm(row without "chain")))
 * where prev is the previous row's chain, or "genesis" for the first row, and
 * chainForm is `json.dumps(row, sort_keys=True, ensure_ascii=False)`.
 * `rowWithoutChain` must not hold a "chain" key; the caller removes it.
 * `style` is for `seam selftest` only (src/core/canonical/reference.ts).
 */
export function chainOf(prev: string, rowWithoutChain: Json, style: Style = CHAIN): string {
  const hash = createHash("sha256");
  // In pieces (none split inside a surrogate pair), so a long row is never one more string and its UTF-8 copy.
  feedUtf8(
    hash,
    streamForm(rowWithoutChain, style, (piece) => feedUtf8(hash, piece), prev),
  );
  return hash.digest("hex").slice(0, 32);
}
