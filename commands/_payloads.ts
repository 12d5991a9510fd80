/**
 * --payloads DIR, as the commands take it: the store recording writes to
 * (wrap, proxy), and the store verify reads and erase removes from
 * (src/runtime/payload-store.ts).
 */
import { resolve } from "node:path";
import { UsageError } from "../src/base/exit.ts";
import { describeIoError } from "../src/base/io-error.ts";
import { terminalText } from "../src/base/terminal-text.ts";
import { digestJsonUtf8, digestParts } from "../src/core/digest.ts";
import { UnsafeFileError } from "../src/runtime/file.ts";
import { PayloadStore } from "../src/runtime/payload-store.ts";

const HINT = "use a directory only you can write to (mode 0700)";

/**
 * --payloads DIR: the store's directory, made (mode 0700) when missing and
 * checked before anything is spawned or listened on: a symlink, or a
 * directory of another user's or open to others' writes, stops seam.
 */
export function payloadsFlag(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value === "") throw new UsageError("--payloads must not be empty");
  const dir = resolve(value);
  try {
    PayloadStore.open(dir);
  } catch (e) {
    const why = e instanceof UnsafeFileError ? e.why : describeIoError(e);
    throw new UsageError(
      `payload directory ${terminalText(dir)} ${e instanceof UnsafeFileError ? why : `cannot be used: ${why}`}; not writing to it`,
      HINT,
    );
  }
  return dir;
}

/**
 * --payloads DIR of a store that must be there (verify: `anyOwner`, since
 * reading another user's store is an auditor's job; erase: only one's own).
 */
export function existingPayloadStore(value: string | undefined, anyOwner: boolean): PayloadStore | undefined {
  if (value === undefined) return undefined;
  if (value === "") throw new UsageError("--payloads must not be empty");
  const dir = resolve(value);
  try {
    return PayloadStore.existing(dir, anyOwner);
  } catch (e) {
    if (e instanceof UnsafeFileError) throw new UsageError(`payload directory ${terminalText(dir)} ${e.why}`, HINT);
    throw new UsageError(`cannot read the payload directory ${terminalText(dir)}: ${describeIoError(e)}`);
  }
}

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
