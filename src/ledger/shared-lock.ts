/**
 * One process, several writers of one ledger (`seam proxy` keeps one
 * LedgerWriter per MCP session): each still takes the cross-process lock
 * file, and within the process they take turns first, so that two of them
 * never wait on a lock file the other holds (that holder is alive, so it
 * never looks stale) and never poll for it.
 */
import { acquireLock, type LockOptions, type Release } from "./lock.ts";

export function sharedLock(opts: LockOptions): (lockPath: string) => Promise<Release> {
  const tails = new Map<string, Promise<void>>();
  return async (lockPath) => {
    const before = tails.get(lockPath) ?? Promise.resolve();
    let letNext!: () => void;
    const mine = new Promise<void>((r) => {
      letNext = r;
    });
    const tail = before.then(() => mine);
    tails.set(lockPath, tail);
    await before;
    let release: Release;
    try {
      release = await acquireLock(lockPath, opts);
    } catch (e) {
      if (tails.get(lockPath) === tail) tails.delete(lockPath);
      letNext();
      throw e;
    }
    let released = false;
    return async () => {
      if (released) return;
      released = true;
      try {
        await release();
      } finally {
        if (tails.get(lockPath) === tail) tails.delete(lockPath);
        letNext();
      }
    };
  };
}
