/**
 * A recording as seam mock and seam replay take it: the ledger verified
 * once, and the payloads its answers need, each checked against its digest
 * (kept apart from commands/_payloads.ts, which seam wrap loads).
 */
import type { Log } from "../src/base/log.ts";
import { terminalText } from "../src/base/terminal-text.ts";
import { digestJsonUtf8, digestParts } from "../src/core/digest.ts";
import { isWriterAlive } from "../src/runtime/alive.ts";
import type { PayloadStore } from "../src/runtime/payload-store.ts";
import { fileChunks, type VerifyOptions } from "../src/verify/ledger-verifier.ts";
import { verifyLedger } from "../src/verify/verify-ledger.ts";

/**
 * The payloads of `digests` read from `store` (null: not there), each checked
 * against its digest; a changed payload, or a file seam will not read, is
 * `refused` (seam mock and seam replay serve or send none of a store that
 * does not hold).
 */
export function checkedPayloads(
  store: PayloadStore,
  digests: Iterable<string>,
):
  | { ok: true; payloads: Map<string, Uint8Array | null>; missing: number }
  | { ok: false; digest: string; why: string } {
  const payloads = new Map<string, Uint8Array | null>();
  let missing = 0;
  for (const d of digests) {
    if (payloads.has(d)) continue;
    const got = store.get(d);
    if (got.kind === "refused") return { ok: false, digest: d, why: got.why };
    if (got.kind === "absent") {
      missing++;
      payloads.set(d, null);
      continue;
    }
    let actual: string;
    try {
      actual = digestJsonUtf8(got.bytes, digestParts(d)!.recipe);
    } catch {
      actual = "not JSON";
    }
    if (actual !== d) return { ok: false, digest: d, why: "does not give its digest: it was changed" };
    payloads.set(d, got.bytes);
  }
  return { ok: true, payloads, missing };
}

/**
 * A recording seam mock or seam replay works from (`doing`: "serving",
 * "replaying"): the ledger at `path` read once, its rows handed to `onRow` as
 * it is verified. False, and said, when it does not verify ok: neither uses
 * a ledger the chain does not vouch for.
 */
export async function verifiedRecording(
  path: string,
  onRow: NonNullable<VerifyOptions["onRow"]>,
  doing: string,
  log: Log,
): Promise<boolean> {
  const report = await verifyLedger(fileChunks(path), { isWriterAlive, onRow });
  if (report.verdict === "ok") return true;
  const why =
    report.first_break !== null
      ? `broken (${report.first_break.message})`
      : `${report.verdict} (${report.findings[0] ?? report.notes[0] ?? "not everything could be proven"})`;
  log.error(`${terminalText(path)} does not verify: ${why}; not ${doing} it`, `run 'seam verify ${path}' to see why`);
  return false;
}

/** checkedPayloads for a recording at `path` (its store given as `dir`); null, and said, when the store does not hold. */
export function recordingPayloads(
  store: PayloadStore,
  digests: Iterable<string>,
  path: string,
  dir: string,
  doing: string,
  log: Log,
): { payloads: Map<string, Uint8Array | null>; missing: number } | null {
  const loaded = checkedPayloads(store, digests);
  if (loaded.ok) return loaded;
  log.error(
    `the payload of ${loaded.digest} ${loaded.why}; not ${doing} ${terminalText(path)}`,
    `run 'seam verify ${path} --payloads ${dir}' to see all of them`,
  );
  return null;
}
