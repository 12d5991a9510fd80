/**
 * One process, several writers of one ledger (`seam proxy` keeps one
 * LedgerWriter per MCP session): each still takes the cross-process lock
 * file, and within the process they take turns first, so that two of them
 * never wait on a lock file the other holds (that holder is alive, so it
 * never looks stale) and never poll for it.
 *
 * A writer keeps the lock a moment after each flush (src/ledger/held-lock.ts)
 * so that a steady trickle of rows does not take and let go the lock file for
 * each one; the holder is told as soon as another writer of the process waits
 * for it, and lets it go then rather than at the end of that moment.
 */
import { acquireLock, type LockOptions, type Release } from "./lock.ts";

/** A release that also says when another writer of this process is waiting for the lock. */
export type SharedRelease = Release & { whenWanted(f: () => void): void };

/** One lock path's queue of writers in this process. */
interface Line {
  tail: Promise<void>;
  /** Writers holding or waiting. */
  turns: number;
  /** Calls the holder's whenWanted callback; null while nobody holds it. */
  holder: { want(): void } | null;
}

export function sharedLock(opts: LockOptions): (lockPath: string) => Promise<SharedRelease> {
  const lines = new Map<string, Line>();
  return async (lockPath) => {
    let line = lines.get(lockPath);
    if (line === undefined) {
      line = { tail: Promise.resolve(), turns: 0, holder: null };
      lines.set(lockPath, line);
    }
    const l = line;
    const before = l.tail;
    let letNext!: () => void;
    const mine = new Promise<void>((r) => {
      letNext = r;
    });
    l.tail = before.then(() => mine);
    l.turns++;
    l.holder?.want();
    const done = () => {
      if (--l.turns === 0 && lines.get(lockPath) === l) lines.delete(lockPath);
      letNext();
    };
    await before;
    let release: Release;
    try {
      release = await acquireLock(lockPath, opts);
    } catch (e) {
      done();
      throw e;
    }
    let wanted = l.turns > 1;
    let onWanted: (() => void) | null = null;
    const holder = {
      want() {
        if (wanted) return;
        wanted = true;
        onWanted?.();
      },
    };
    l.holder = holder;
    let released = false;
    const shared = async () => {
      if (released) return;
      released = true;
      if (l.holder === holder) l.holder = null;
      try {
        await release();
      } finally {
        done();
      }
    };
    return Object.assign(shared, {
      whenWanted(f: () => void) {
        if (wanted) f();
        else onWanted = f;
      },
    });
  };
}
