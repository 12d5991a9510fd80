/**
 * --payloads DIR, as the commands take it: the store recording writes to
 * (wrap, proxy), and the store verify reads and erase removes from
 * (src/runtime/payload-store.ts).
 */
import { resolve } from "node:path";
import { UsageError } from "../src/base/exit.ts";
import { describeIoError } from "../src/base/io-error.ts";
import { terminalText } from "../src/base/terminal-text.ts";
import { UnsafeFileError } from "../src/runtime/file.ts";
import type { PayloadStore } from "../src/runtime/payload-store.ts";

const HINT = "use a directory only you can write to (mode 0700)";

/**
 * --payloads DIR: the store's directory, made (mode 0700) when missing and
 * checked before anything is spawned or listened on: a symlink, or a
 * directory of another user's or open to others' writes, stops seam.
 */
export async function payloadsFlag(value: string | undefined): Promise<string | undefined> {
  if (value === undefined) return undefined;
  if (value === "") throw new UsageError("--payloads must not be empty");
  const dir = resolve(value);
  // Loaded only when asked for: a session without --payloads starts its server without it.
  const { PayloadStore } = await import("../src/runtime/payload-store.ts");
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
export async function existingPayloadStore(
  value: string | undefined,
  anyOwner: boolean,
): Promise<PayloadStore | undefined> {
  if (value === undefined) return undefined;
  if (value === "") throw new UsageError("--payloads must not be empty");
  const dir = resolve(value);
  const { PayloadStore } = await import("../src/runtime/payload-store.ts");
  try {
    return PayloadStore.existing(dir, anyOwner);
  } catch (e) {
    if (e instanceof UnsafeFileError) throw new UsageError(`payload directory ${terminalText(dir)} ${e.why}`, HINT);
    throw new UsageError(`cannot read the payload directory ${terminalText(dir)}: ${describeIoError(e)}`);
  }
}
