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
 *                       plant anything. This lock is the one a writer can
 *                       always own (src/ledger/held-lock.ts appends under it
 *                       alone when the one beside the ledger is planted).
 * Every writer takes them in this order and holds one name's lock at most,
 * so two writers never wait on each other round a cycle.
 */
import { lstat, mkdir, realpath, stat } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { describeIoError } from "../base/io-error.ts";

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
  const dir = await userLockDir();
  if (typeof dir !== "string") return dir === null ? { paths } : { paths, problem: dir.problem };
  const st = await stat(path, { bigint: true }).catch(() => null);
  if (st !== null) paths.push(join(dir, `${st.dev}-${st.ino}.lock`));
  return { paths };
}

/**
 * The first usable of `<temp>/seam-<uid>`, `$XDG_RUNTIME_DIR/seam` and
 * `~/.cache/seam/locks`, made 0700 when missing. What is found there is used
 * only when it is a directory (not a symlink) of this user that nobody else
 * may write to; when none is, the first one's problem. null where there are
 * no user ids (Windows): there is no such lock there.
 */
async function userLockDir(): Promise<string | { problem: string } | null> {
  const uid = process.getuid?.();
  if (uid === undefined) return null;
  const candidates = [join(tmpdir(), `seam-${uid}`)];
  const runtimeDir = process.env.XDG_RUNTIME_DIR;
  if (runtimeDir && isAbsolute(runtimeDir)) candidates.push(join(runtimeDir, "seam"));
  const home = process.env.HOME || homedir();
  if (home && isAbsolute(home)) candidates.push(join(home, ".cache", "seam", "locks"));
  let first: { problem: string } | undefined;
  for (const dir of candidates) {
    const problem = await ownDir(dir, uid, dir !== candidates[0]);
    if (problem === null) return dir;
    first ??= { problem };
  }
  return first!;
}

/** Null when `dir` is (or has been made) a directory of `uid` that nobody else may write to; else why not. */
async function ownDir(dir: string, uid: number, parents: boolean): Promise<string | null> {
  try {
    if (parents) await mkdir(dirname(dir), { recursive: true, mode: 0o700 });
    await mkdir(dir, { mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") return `${dir} cannot be made: ${describeIoError(e)}`;
  }
  const st = await lstat(dir).catch(() => null);
  if (st === null || !st.isDirectory()) return `${dir} is not a directory`;
  if (st.uid !== uid) return `${dir} belongs to uid ${st.uid}`;
  if ((st.mode & 0o022) !== 0) return `${dir} is writable by other users`;
  return null;
}
