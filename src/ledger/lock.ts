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
 * A lock is stale when its holder on this host is a dead pid or a process
 * that does not have the ledger open (no writer of it: a forged or reused
 * pid), or when it is older than `staleMs` (a holder on another host, a hung
 * process).
 *
 * The directory may be writable by someone else, so what sits at the lock's
 * name is read as hostile: opened without following a symlink and without
 * blocking (a FIFO), judged by fstat before a byte is read, and read up to
 * MAX_LOCK_BYTES only. Anything that is not a regular file of our own user
 * (a FIFO, a device, a symlink to /dev/zero, another user's file; Windows
 * has no owner to compare) is no seam lock and is stale at once. Content
 * that seam never writes (not one line of our JSON, a `since` in the
 * future, pid 1 or less on this host) is stale once it has been seen
 * unchanged for IMPLAUSIBLE_GRACE_MS: a writer's lock is created whole
 * (hard link), so even a torn read does not last.
 * Every wait is bounded by `timeoutMs`; a stale lock that cannot be removed
 * (a sticky directory, another owner) rejects at once. Breaking a stale lock is itself serialized by
 * `<ledger>.lock.break`, and the lock is moved aside and compared before it is
 * deleted, so two waiters that both saw the same stale lock never both end up
 * holding the lock.
 *
 * Taking a free lock and releasing it are blocking calls (create, link,
 * unlink), as the ledger's own writes are: through the thread pool each was
 * a round trip between threads, and a writer takes its locks again every
 * LOCK_MAX_HOLD_MS (src/ledger/held-lock.ts) under steady traffic (seam
 * proxy under Node: about one thread-pool round trip a call, each waking the
 * forwarding thread). Waiting and judging a lock someone holds stay async.
 */

import { randomBytes } from "node:crypto";
import { constants, linkSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { link, lstat, open, rename, rmdir, unlink } from "node:fs/promises";
import { hostname } from "node:os";
import { SeamError } from "../base/error.ts";
import { holdsFileOpen } from "../runtime/alive.ts";
import { userId } from "../runtime/user.ts";

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
  /** Whose process and file facts judge a lock (src/runtime/alive.ts, user.ts); this process's own by default. */
  platform?: NodeJS.Platform;
}

export class LockTimeoutError extends SeamError {
  override readonly name = "LockTimeoutError";
  constructor(message: string) {
    super("ELOCKTIMEOUT", message);
  }
}

/** Generous: a lock is held for one write of at most a few frames. */
export const DEFAULT_STALE_MS = 60_000;
const BREAK_STALE_MS = 10_000;
const MAX_DELAY_MS = 25;
/** A lock file is one short line; more than this is not read. */
export const MAX_LOCK_BYTES = 4096;
/** How long content seam never writes is given before it counts as stale. */
export const IMPLAUSIBLE_GRACE_MS = 1000;
/** A `since` further ahead than this (clock skew between hosts allowed for) is implausible. */
const FUTURE_SLACK_MS = 5 * 60_000;

/** What sits at a lock's name: null when nothing does. */
type Seen = { kind: "file"; text: string } | { kind: "alien"; what: string };

const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * Reads what is at `path` without following a symlink, blocking on a FIFO or
 * reading more than MAX_LOCK_BYTES; null when nothing is there.
 */
export async function readLockFile(path: string, platform: NodeJS.Platform = process.platform): Promise<Seen | null> {
  let fh: Awaited<ReturnType<typeof open>>;
  try {
    fh = await open(path, READ_FLAGS);
  } catch (e) {
    if (code(e) === "ENOENT") return null;
    // ELOOP: a symlink; ENXIO: a socket or a FIFO nobody writes; EACCES: not ours.
    return { kind: "alien", what: code(e) === "ELOOP" ? "a symbolic link" : `unopenable (${code(e) ?? "error"})` };
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) return { kind: "alien", what: "not a regular file" };
    const uid = userId(platform);
    if (uid !== undefined && st.uid !== uid) return { kind: "alien", what: `owned by uid ${st.uid}` };
    const buf = new Uint8Array(MAX_LOCK_BYTES + 1);
    let got = 0;
    while (got < buf.length) {
      const { bytesRead } = await fh.read(buf, got, buf.length - got, got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    if (got > MAX_LOCK_BYTES) return { kind: "alien", what: `larger than ${MAX_LOCK_BYTES} bytes` };
    return { kind: "file", text: Buffer.from(buf.subarray(0, got)).toString("utf8") };
  } catch (e) {
    return { kind: "alien", what: `unreadable (${code(e) ?? "error"})` };
  } finally {
    await fh.close().catch(() => {});
  }
}

/** Compares two sightings of a lock: the same holder (or the same alien thing). */
function sameSeen(a: Seen | null, b: Seen | null): boolean {
  if (a === null || b === null) return a === b;
  return a.kind === b.kind && (a.kind === "file" ? a.text === (b as typeof a).text : a.what === (b as typeof a).what);
}

function describeSeen(s: Seen): string {
  return s.kind === "file" ? s.text.trim().slice(0, 200) : s.what;
}

const PROC = randomBytes(6).toString("hex");

/**
 * The default liveness of a lock's holder: a live process that has the file
 * the lock guards open, as every writer has while it appends. A lock that
 * names some other live process (a forged one, or a pid reused since) is not
 * waited for. Where that cannot be told (no /proc: macOS, Windows), a live
 * pid is enough, so there a lock naming a reused pid is waited out until it
 * is `staleMs` old.
 */
function writerAlive(lockPath: string, platform: NodeJS.Platform): (pid: number) => boolean {
  let guard: { dev: bigint; ino: bigint } | null | undefined;
  return (pid) => {
    if (!pidAlive(pid)) return false;
    if (guard === undefined) guard = guardedFile(lockPath);
    if (guard === null) return true;
    return holdsFileOpen(pid, guard.dev, guard.ino, platform) !== false;
  };
}

/** The file a lock guards: the ledger beside `<ledger>.lock`, or the `<dev>-<ino>.lock` of the user's lock directory (src/ledger/open.ts). */
function guardedFile(lockPath: string): { dev: bigint; ino: bigint } | null {
  if (!lockPath.endsWith(".lock")) return null;
  try {
    const st = statSync(lockPath.slice(0, -".lock".length), { bigint: true });
    return { dev: st.dev, ino: st.ino };
  } catch {}
  const m = /(?:^|[/\\])(\d+)-(\d+)\.lock$/.exec(lockPath);
  return m ? { dev: BigInt(m[1]!), ino: BigInt(m[2]!) } : null;
}

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
function createExclusive(path: string, content: string): boolean {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}`;
  writeFileSync(tmp, content, { flag: "wx", mode: 0o644 });
  try {
    linkSync(tmp, path);
    return true;
  } catch (e) {
    if (code(e) === "EEXIST") return false;
    throw e;
  } finally {
    try {
      unlinkSync(tmp);
    } catch {}
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
  const platform = opts.platform ?? process.platform;
  const isAlive = opts.isAlive ?? writerAlive(lockPath, platform);
  const now = opts.now ?? Date.now;
  const started = now();
  const judge: Judge = { pid: opts.pid, host, staleMs, isAlive, now, implausible: new Map(), platform };
  let delay = 1;
  for (;;) {
    const since = now();
    const mine = `${JSON.stringify({ pid: opts.pid, host, since, proc: PROC })}\n`;
    if (createExclusive(lockPath, mine)) return () => release(lockPath, mine, since, staleMs, now);

    const seen = await readLockFile(lockPath, platform);
    if (seen === null) continue; // released meanwhile: try again at once
    if (isStale(seen, judge)) {
      if (!(await breakStale(lockPath, seen, judge)) || now() - started > timeoutMs)
        throw new LockTimeoutError(`lock ${lockPath} is stale but cannot be removed (${describeSeen(seen)})`);
      continue;
    }
    if (now() - started > timeoutMs)
      throw new LockTimeoutError(`lock ${lockPath} held too long by ${describeSeen(seen)}`);
    await sleep(delay * (0.5 + Math.random()));
    delay = Math.min(delay * 2, MAX_DELAY_MS);
  }
}

interface Judge {
  pid: number;
  host: string;
  staleMs: number;
  isAlive: (pid: number) => boolean;
  now: () => number;
  /** Implausible content → when this waiter first saw it (its grace runs from there, not from an mtime anyone can set). */
  implausible: Map<string, number>;
  platform: NodeJS.Platform;
}

function isStale(seen: Seen, j: Judge): boolean {
  if (seen.kind === "alien") return true;
  const h = parseHolder(seen.text);
  const t = j.now();
  const implausible =
    h === null ||
    !Number.isSafeInteger(h.pid) ||
    !Number.isFinite(h.since) ||
    h.since > t + (h.host === j.host ? IMPLAUSIBLE_GRACE_MS : FUTURE_SLACK_MS) ||
    (h.host === j.host && h.pid <= 1 && h.pid !== j.pid);
  if (implausible) {
    const first = j.implausible.get(seen.text);
    if (first === undefined) {
      if (j.implausible.size > 64) j.implausible.clear();
      j.implausible.set(seen.text, t);
      return false;
    }
    return t - first >= IMPLAUSIBLE_GRACE_MS;
  }
  if (h.host === j.host) {
    if (h.proc === PROC) return false; // another writer in this very process
    if (h.pid === j.pid || !j.isAlive(h.pid)) return true; // our pid but not us: an earlier process's leftover
  }
  return t - h.since > j.staleMs;
}

/** False when the stale lock cannot be moved away at all (not ours to move: a sticky directory, another owner). */
async function breakStale(lockPath: string, seen: Seen, j: Judge): Promise<boolean> {
  const breakPath = `${lockPath}.break`;
  try {
    if (!createExclusive(breakPath, `${j.pid}\n`)) {
      // Someone else is breaking it; a break lock left by a crash goes after a while, a planted one at once.
      const st = await lstat(breakPath).catch(() => null);
      if (st !== null && (j.now() - st.mtimeMs > BREAK_STALE_MS || !st.isFile() || st.mtimeMs > j.now() + 1000)) {
        await (st.isDirectory() ? rmdir(breakPath) : unlink(breakPath)).catch(() => {});
        // Still there and no file seam makes (a directory with something in it): breaking cannot happen.
        if (!st.isFile() && (await lstat(breakPath).catch(() => null)) !== null) return false;
      }
      await sleep(1);
      return true;
    }
  } catch {
    await sleep(1);
    return true;
  }
  try {
    // Judged again under the break lock: another breaker may have replaced it with a live lock.
    const current = await readLockFile(lockPath, j.platform);
    if (current === null || !sameSeen(current, seen) || !isStale(current, j)) return true;
    const aside = `${lockPath}.stale.${j.pid}.${randomBytes(4).toString("hex")}`;
    try {
      await rename(lockPath, aside);
    } catch (e) {
      if (code(e) === "ENOENT") return true; // another breaker was quicker
      return false;
    }
    // Only a holder releasing and someone relocking in that instant makes these differ: put theirs back.
    if (!sameSeen(await readLockFile(aside, j.platform), seen)) await link(aside, lockPath).catch(() => {});
    await unlink(aside).catch(() => {});
    return true;
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
    const current = await readLockFile(lockPath);
    if (current?.kind !== "file" || current.text !== mine) return;
  }
  try {
    unlinkSync(lockPath);
  } catch {}
}
