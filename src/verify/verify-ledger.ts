/** Runs the verifier (src/verify/verifier.ts) over a whole ledger: from a byte source, or from bytes in memory. */
import { describeIoError } from "../base/io-error.ts";
import { LedgerVerifier } from "./verifier.ts";
import type { VerifyOptions } from "./options.ts";
import type { VerifyReport } from "./verdict.ts";

/** Verifies a whole ledger from a byte source; a source that throws gives `unreadable: <reason>`. Never throws. */
export async function verifyLedger(
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  opts: VerifyOptions & { onProgress?: (p: { bytes: number; rows: number }) => void } = {},
  /** What the bytes go to: a LedgerVerifier, or one that wraps it (src/checkpoint/verifier.ts). */
  v: Pick<LedgerVerifier, "push" | "fail" | "end" | "progress"> = new LedgerVerifier(opts),
): Promise<VerifyReport> {
  const it: AsyncIterator<Uint8Array> | Iterator<Uint8Array> =
    Symbol.asyncIterator in source ? source[Symbol.asyncIterator]() : source[Symbol.iterator]();
  try {
    for (;;) {
      let step: IteratorResult<Uint8Array>;
      // Only the source's own failures are `unreadable`; nothing else here throws.
      try {
        step = await it.next();
      } catch (err) {
        return v.fail(describeIoError(err));
      }
      if (step.done) return v.end();
      v.push(step.value);
      opts.onProgress?.(v.progress);
    }
  } finally {
    await Promise.resolve(it.return?.()).catch(() => {});
  }
}

/** Verifies bytes already in memory (tests, small files). */
export function verifyBytes(bytes: Uint8Array, opts: VerifyOptions = {}): VerifyReport {
  const v = new LedgerVerifier(opts);
  v.push(bytes);
  return v.end();
}
