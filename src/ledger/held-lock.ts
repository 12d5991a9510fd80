/**
 * The ledger's cross-process locks as the writer (src/ledger/ledger-writer.ts) holds
 * them: every lock file of the ledger in order (src/ledger/open.ts), kept
 * between flushes while they keep coming. Taking them costs several
 * file-system round trips, which one row per call would pay every time
 * (bench/proxy.ts shows it in a call's CPU). They are let go once no flush has come for a linger (LOCK_LINGER_MS)
 * (at once if another writer of this process waits for them: src/ledger/
 * shared-lock.ts), after LOCK_MAX_HOLD_MS at the latest so that other writers
 * of the same ledger get their turn, and at close.
 */
import { describeIoError } from "../base/io-error.ts";
import type { Release } from "./lock.ts";
import type { SharedRelease } from "./shared-lock.ts";

/**
 * Longest a flush waits for the ledger's lock (a holder keeps it for one
 * write, LOCK_MAX_HOLD_MS at most); then it writes without it, warned, so a
 * lock nobody releases delays rows (and --fail-closed answers) by this much at most.
 */
export const LOCK_TIMEOUT_MS = 5000;

/**
 * Idle time after which the writer lets the ledger's lock go, by default. A
 * writer whose rows come a few ms apart (seam proxy, one row or two a call)
 * keeps it longer (LedgerConfig.lockLingerMs), so that a client making calls
 * one after another does not cost a take and a release of the lock files a
 * call. wrap's recorder keeps the default: under a burst its flushes come
 * back to back anyway, and a longer linger held the pipelined burst of
 * bench/relay.ts back rather than helping it (weak evidence, that figure
 * being a threshold; but nothing asked for a longer linger).
 */
export const LOCK_LINGER_MS = 2;
/** Longest the writer keeps the lock across back-to-back flushes. */
const LOCK_MAX_HOLD_MS = 50;

interface Held {
  release: Release;
  since: number;
  timer: ReturnType<typeof setTimeout> | null;
  /** Another writer of this process waits for the lock. */
  wanted: boolean;
}

export class HeldLock {
  private heldLock: Held | null = null;
  private warnedLock = false;

  constructor(
    private readonly lockFn: (lockPath: string) => Promise<Release>,
    /** The lock files taken for each append, in order (src/ledger/open.ts), so that every name of one file shares them. */
    public lockPaths: string[],
    private readonly warn?: (message: string) => void,
    private readonly lingerMs = LOCK_LINGER_MS,
  ) {}

  /** The locks for a flush: still held from the last one, or taken now; null when they cannot be (warned once). */
  async take(): Promise<Release | null> {
    const held = this.heldLock;
    if (held) {
      if (held.timer) clearTimeout(held.timer);
      held.timer = null;
      if (!held.wanted && performance.now() - held.since < LOCK_MAX_HOLD_MS) return held.release;
      this.heldLock = null;
      await held.release().catch(() => {});
    }
    const next: Held = { release: async () => {}, since: 0, timer: null, wanted: false };
    const release = await this.lockOnce(() => {
      next.wanted = true;
      // Wanted while lingering: let it go now.
      if (this.heldLock === next && next.timer !== null) void this.letGo();
    });
    if (release) {
      next.release = release;
      next.since = performance.now();
      this.heldLock = next;
    }
    return release;
  }

  /** After a flush: keep the lock a moment for the next one, unless another writer waits for it. */
  linger(): void {
    const held = this.heldLock;
    if (!held) return;
    if (held.wanted) void this.letGo();
    else held.timer = setTimeout(() => void this.letGo(), this.lingerMs);
  }

  async letGo(): Promise<void> {
    const held = this.heldLock;
    if (!held) return;
    this.heldLock = null;
    if (held.timer) clearTimeout(held.timer);
    await held.release().catch(() => {});
  }

  /**
   * Every lock of the ledger that can be taken, in order. One that cannot (another user's file
   * planted at its name in a sticky directory, a holder that never lets go) is passed over, warned
   * once, and the append goes on under the others: the per-user lock (src/ledger/open.ts) is one
   * no other user can plant, so writers of this user on this host still take turns. Only when none
   * can be taken does the append go on without a lock (warned once).
   */
  private async lockOnce(onWanted: () => void): Promise<Release | null> {
    const taken: Release[] = [];
    const releaseAll = async () => {
      for (let i = taken.length - 1; i >= 0; i--) await taken[i]!().catch(() => {});
    };
    const missed: { path: string; error: unknown }[] = [];
    for (const path of this.lockPaths) {
      try {
        const release = await this.lockFn(path);
        taken.push(release);
        (release as Partial<SharedRelease>).whenWanted?.(onWanted);
      } catch (e) {
        missed.push({ path, error: e });
      }
    }
    if (missed.length > 0 && !this.warnedLock) {
      this.warnedLock = true;
      const m = missed[0]!;
      const under = this.lockPaths.filter((p) => !missed.some((x) => x.path === p));
      this.warn?.(
        taken.length > 0
          ? `ledger lock ${m.path} cannot be taken (${describeIoError(m.error)}): appending under ${under.join(", ")} only, which writers on other hosts do not see`
          : `ledger lock ${m.path} cannot be taken (${describeIoError(m.error)}): appending without it, so another process writing the same ledger could fork its chain`,
      );
    }
    return taken.length > 0 ? releaseAll : null;
  }
}
