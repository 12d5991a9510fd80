/** Runs the verifier (src/verify/ledger-verifier.ts) over a whole ledger: from a byte source, or from bytes in memory. */
import { guardSource } from "../base/byte-source.ts";
import { LedgerVerifier } from "./ledger-verifier.ts";
import type { VerifyOptions } from "./options.ts";
import type { VerifyReport } from "./verdict.ts";

/** Verifies a whole ledger from a byte source; a source that throws gives `unreadable: <reason>`. Never throws. */
export async function verifyLedger(
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  opts: VerifyOptions & { onProgress?: (p: { bytes: number; rows: number }) => void } = {},
  /** What the bytes go to: a LedgerVerifier, or one that wraps it (src/checkpoint/checkpoint-verifier.ts). */
  v: Pick<LedgerVerifier, "push" | "fail" | "end" | "progress"> = new LedgerVerifier(opts),
): Promise<VerifyReport> {
  for await (const chunk of guardSource(source)) {
    // Only the source's own failures are `unreadable`; nothing else here throws.
    if (!(chunk instanceof Uint8Array)) return v.fail(chunk.failed);
    v.push(chunk);
    opts.onProgress?.(v.progress);
  }
  return v.end();
}

/** Verifies bytes already in memory (tests, small files). */
export function verifyBytes(bytes: Uint8Array, opts: VerifyOptions = {}): VerifyReport {
  const v = new LedgerVerifier(opts);
  v.push(bytes);
  return v.end();
}
