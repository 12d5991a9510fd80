/**
 * Which file a ledger path names, for the locks a writer takes around each
 * append (src/ledger/lock.ts), in this order:
 *   `<real path>.lock`  beside the ledger's real path (every symlink
 *                       resolved): the lock writers on other hosts see too,
 *                       when the ledger is on a shared file system;
 *   `<temp>/seam-<uid>/<device>-<inode>.lock`
 *                       named by the file itself, in a directory of this
 *                       user's own: the lock every name of the file shares on
 *                       this host, a hard link in any directory as much as a
 *                       symlink, which no path can tell apart. Temp is shared,
 *                       so another user can take that directory's name first;
 *                       then the lock directory is `$XDG_RUNTIME_DIR/seam`, or
 *                       else `~/.cache/seam/locks`, where no other user can
 *                       plant anything. On Windows (no uids) the
 *                       directory is `%LOCALAPPDATA%\seam\locks`
 *                       (lockDirCandidates). This lock is the one a writer can
 *                       always own (src/ledger/held-lock.ts appends under it
 *                       alone when the one beside the ledger is planted).
 * Every writer takes them in this order and holds one name's lock at most,
 * so two writers never wait on each other round a cycle.
 */
import { lstat, mkdir, realpath, stat } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { dirname, isAbsolute, join, win32 } from "node:path";
import { describeIoError } from "../base/io-error.ts";
import { userId } from "../runtime/user.ts";

export interface LockPaths {
  /** The lock files, in the order they are taken. */
  paths: string[];
  /** Why the lock named by the file is missing (the directory for it is not safe to use), when it is. */
  problem?: string;
}

/** The locks a writer of the ledger at `path` takes (see above); the path as given when it cannot be resolved. */
export async function lockPaths(path: string): Promise<LockPaths> {
  const real = await realpath(path).catch(() => path);
  const paths = [`${real}.lock`];
  const dir = await userLockDir(lockDirFacts());
  if (typeof dir !== "string") return dir === null ? { paths } : { paths, problem: dir.problem };
  const st = await stat(path, { bigint: true }).catch(() => null);
  if (st !== null) paths.push(join(dir, `${st.dev}-${st.ino}.lock`));
  return { paths };
}

/** What the user's lock directory depends on: this process's own, or another OS's for a test. */
export interface LockDirFacts {
  platform: NodeJS.Platform;
  /** The user id; undefined where there are none (Windows). */
  uid: number | undefined;
  tmpdir: string;
  home: string;
  env: { XDG_RUNTIME_DIR?: string; LOCALAPPDATA?: string };
}

export function lockDirFacts(): LockDirFacts {
  return {
    platform: process.platform,
    uid: userId(),
    tmpdir: tmpdir(),
    home: process.env.HOME || homedir(),
    env: { XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR, LOCALAPPDATA: process.env.LOCALAPPDATA },
  };
}

/**
 * Where the user's lock directory may be, in order, and the uid that must
 * own it. On Windows, which has no uids nor a temp folder shared between
 * users, it is `%LOCALAPPDATA%\seam\locks` (else `<home>\AppData\Local\…`):
 * a folder of the user's profile that other users cannot write to by
 * default, whose ACLs seam does not read (`owner` undefined: no owner or
 * mode check). Elsewhere (Linux, macOS) `<temp>/seam-<uid>`,
 * `$XDG_RUNTIME_DIR/seam`, `~/.cache/seam/locks`, owned by `uid`. null
 * where neither holds (no uid off Windows): there is no such lock there.
 */
export function lockDirCandidates(f: LockDirFacts): { dirs: string[]; owner: number | undefined } | null {
  if (f.platform === "win32") {
    const local = f.env.LOCALAPPDATA;
    const base = local && win32.isAbsolute(local) ? local : f.home ? win32.join(f.home, "AppData", "Local") : "";
    return win32.isAbsolute(base) ? { dirs: [win32.join(base, "seam", "locks")], owner: undefined } : null;
  }
  const uid = f.uid;
  if (uid === undefined) return null;
  const dirs = [join(f.tmpdir, `seam-${uid}`)];
  const runtimeDir = f.env.XDG_RUNTIME_DIR;
  if (runtimeDir && isAbsolute(runtimeDir)) dirs.push(join(runtimeDir, "seam"));
  if (f.home && isAbsolute(f.home)) dirs.push(join(f.home, ".cache", "seam", "locks"));
  return { dirs, owner: uid };
}

/**
 * The first usable of lockDirCandidates(), made (0700) when missing. What
 * is found there is used only when it is a directory (not a symlink) and,
 * where there are uids, of this user with nobody else allowed to write to
 * it; when none is, the first one's problem.
 */
export async function userLockDir(f: LockDirFacts): Promise<string | { problem: string } | null> {
  const c = lockDirCandidates(f);
  if (c === null) return null;
  let first: { problem: string } | undefined;
  for (const dir of c.dirs) {
    const problem = await ownDir(dir, c.owner, dir !== c.dirs[0] || c.owner === undefined);
    if (problem === null) return dir;
    first ??= { problem };
  }
  return first!;
}

/**
 * Null when `dir` is (or has been made) a directory of `uid` that nobody
 * else may write to; else why not. Without a uid (Windows, where mode bits
 * say nothing of who may write) only that it is a directory.
 */
export async function ownDir(dir: string, uid: number | undefined, parents: boolean): Promise<string | null> {
  try {
    if (parents) await mkdir(dirname(dir), { recursive: true, mode: 0o700 });
    await mkdir(dir, { mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") return `${dir} cannot be made: ${describeIoError(e)}`;
  }
  const st = await lstat(dir).catch(() => null);
  if (st === null || !st.isDirectory()) return `${dir} is not a directory`;
  if (uid === undefined) return null;
  if (st.uid !== uid) return `${dir} belongs to uid ${st.uid}`;
  if ((st.mode & 0o022) !== 0) return `${dir} is writable by other users`;
  return null;
}
