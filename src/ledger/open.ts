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
 *                       symlink, which no path can tell apart.
 * Every writer takes them in this order and holds one name's lock at most,
 * so two writers never wait on each other round a cycle.
 */
import { lstat, mkdir, realpath, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
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
 * `<temp>/seam-<uid>`, made 0700 when missing. Temp is shared with other
 * users, so what is found there is used only when it is a directory (not a
 * symlink) of this user that nobody else may write to; otherwise the problem.
 * null where there are no user ids (Windows): there is no such lock there.
 */
async function userLockDir(): Promise<string | { problem: string } | null> {
  const uid = process.getuid?.();
  if (uid === undefined) return null;
  const dir = join(tmpdir(), `seam-${uid}`);
  try {
    await mkdir(dir, { mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST")
      return { problem: `${dir} cannot be made: ${describeIoError(e)}` };
  }
  const st = await lstat(dir).catch(() => null);
  if (st === null || !st.isDirectory()) return { problem: `${dir} is not a directory` };
  if (st.uid !== uid) return { problem: `${dir} belongs to uid ${st.uid}` };
  if ((st.mode & 0o022) !== 0) return { problem: `${dir} is writable by other users` };
  return dir;
}
