/**
 * A cross-process lock beside the ledger, so several seam processes appending
 * to one file never fork its chain nor interleave a line: `<ledger>.lock`,
 * created with O_EXCL and held only for one append. Plain node:fs calls, the
 * same under Bun and Node.
 *
 * The lock file holds one line naming its holder:
 *   {"pid":1234,"host":"build-7","since":1764473047123,"proc":"6f1c9a0e4b2d"}
 * `proc` is random per process, so a lock left by an earlier process that had
 * this same pid (a restarted container) is not mistaken for our own.
 *
 * A lock is stale when its holder is a dead pid on this host, or it is older
 * than `staleMs` (a holder on another host, a reused pid, a hung process), or
 * it is not ours to read (another tool's file) and as old. Breaking a stale lock is itself serialized by
 * `<ledger>.lock.break`, and the lock is moved aside and compared before it is
 * deleted, so two waiters that both saw the same stale lock never both end up
 * holding the lock.
 */
import { randomBytes } from "node:crypto";
import { link, readFile, rename, stat, unlink, writeFile } from "node:fs/promises";
import { hostname } from "node:os";

export type Release = () => Promise<void>;

export interface LockOptions {
  pid: number;
  host?: string;
  /** A lock this old is stale whoever holds it. */
  staleMs?: number;
  /** Give up waiting after this long (the caller then decides what to do). */
  timeoutMs?: number;
  isAlive?: (pid: number) => boolean;
  now?: () => number;
}

export class LockTimeoutError extends Error {
  readonly code = "ELOCKTIMEOUT";
}

/** Generous: a lock is held for one write of at most a few frames. */
export const DEFAULT_STALE_MS = 60_000;
const BREAK_STALE_MS = 10_000;
const MAX_DELAY_MS = 25;

const PROC = randomBytes(6).toString("hex");

/** Whether `pid` is a live process on this host (EPERM: alive, someone else's). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

interface Holder {
  pid: number;
  host: string;
  since: number;
  proc: string;
}

function parseHolder(text: string): Holder | null {
  try {
    const h = JSON.parse(text) as Partial<Holder>;
    if (
      typeof h.pid === "number" &&
      typeof h.host === "string" &&
      typeof h.since === "number" &&
      typeof h.proc === "string"
    ) {
      return h as Holder;
    }
  } catch {}
  return null;
}

function code(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * Creates `path` holding `content`, atomically: the content is written to a
 * file of our own and hard-linked into place (link fails if `path` exists), so
 * no one ever sees the lock empty, even if we die halfway. False if `path`
 * already exists.
 */
async function createExclusive(path: string, content: string): Promise<boolean> {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}`;
  await writeFile(tmp, content, { flag: "wx", mode: 0o644 });
  try {
    await link(tmp, path);
    return true;
  } catch (e) {
    if (code(e) === "EEXIST") return false;
    throw e;
  } finally {
    await unlink(tmp).catch(() => {});
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Waits for and takes the lock at `lockPath`; resolves to its release.
 * Rejects with the open error when the lock cannot be created at all (EACCES,
 * EROFS, …) and with LockTimeoutError after `timeoutMs`.
 */
export async function acquireLock(lockPath: string, opts: LockOptions): Promise<Release> {
  const host = opts.host ?? hostname();
  const staleMs = opts.staleMs ?? DEFAULT_STALE_MS;
  const timeoutMs = opts.timeoutMs ?? 2 * staleMs;
  const isAlive = opts.isAlive ?? pidAlive;
  const now = opts.now ?? Date.now;
  const started = now();
  let delay = 1;
  for (;;) {
    const since = now();
    const mine = `${JSON.stringify({ pid: opts.pid, host, since, proc: PROC })}\n`;
    if (await createExclusive(lockPath, mine)) return () => release(lockPath, mine, since, staleMs, now);

    let seen: string;
    try {
      seen = await readFile(lockPath, "utf8");
    } catch (e) {
      if (code(e) !== "ENOENT") await sleep(delay);
      continue; // released meanwhile: try again at once
    }
    if (await isStale(lockPath, seen, opts.pid, host, staleMs, isAlive, now)) {
      await breakStale(lockPath, seen, staleMs, isAlive, host, now, opts.pid);
      continue;
    }
    if (now() - started > timeoutMs) throw new LockTimeoutError(`lock ${lockPath} held too long by ${seen.trim()}`);
    await sleep(delay * (0.5 + Math.random()));
    delay = Math.min(delay * 2, MAX_DELAY_MS);
  }
}

async function isStale(
  lockPath: string,
  seen: string,
  pid: number,
  host: string,
  staleMs: number,
  isAlive: (pid: number) => boolean,
  now: () => number,
): Promise<boolean> {
  const h = parseHolder(seen);
  if (h === null) {
    const st = await stat(lockPath).catch(() => null);
    return st !== null && now() - st.mtimeMs > staleMs;
  }
  if (h.host === host) {
    if (h.proc === PROC) return false; // another writer in this very process
    if (h.pid === pid || !isAlive(h.pid)) return true; // our pid but not us: an earlier process's leftover
  }
  return now() - h.since > staleMs;
}

async function breakStale(
  lockPath: string,
  seen: string,
  staleMs: number,
  isAlive: (pid: number) => boolean,
  host: string,
  now: () => number,
  pid: number,
): Promise<void> {
  const breakPath = `${lockPath}.break`;
  try {
    if (!(await createExclusive(breakPath, `${pid}\n`))) {
      // Someone else is breaking it; a break lock left by a crash goes after a while.
      const st = await stat(breakPath).catch(() => null);
      if (st !== null && now() - st.mtimeMs > BREAK_STALE_MS) await unlink(breakPath).catch(() => {});
      await sleep(1);
      return;
    }
  } catch {
    return;
  }
  try {
    // Judged again under the break lock: another breaker may have replaced it with a live lock.
    const current = await readFile(lockPath, "utf8").catch(() => null);
    if (current !== seen || !(await isStale(lockPath, current, pid, host, staleMs, isAlive, now))) return;
    const aside = `${lockPath}.stale.${pid}.${randomBytes(4).toString("hex")}`;
    try {
      await rename(lockPath, aside);
    } catch {
      return;
    }
    // Only a holder releasing and someone relocking in that instant makes these differ: put theirs back.
    if ((await readFile(aside, "utf8").catch(() => null)) !== seen) await link(aside, lockPath).catch(() => {});
    await unlink(aside).catch(() => {});
  } finally {
    await unlink(breakPath).catch(() => {});
  }
}

async function release(
  lockPath: string,
  mine: string,
  since: number,
  staleMs: number,
  now: () => number,
): Promise<void> {
  // Held long enough to be judged stale: it may have been broken and retaken; delete only our own.
  if (now() - since > staleMs / 2) {
    const current = await readFile(lockPath, "utf8").catch(() => null);
    if (current !== mine) return;
  }
  await unlink(lockPath).catch(() => {});
}
