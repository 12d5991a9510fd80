/**
 * The ledger file, alike under Bun and Node: opened through node:fs/promises
 * (checks, creation), written with blocking write(2) calls (node:fs
 * writeSync) in a loop until the bytes are out, each failure thrown at once
 * after the bytes that did land, so the writer can measure them.
 *
 * Blocking, because a write of a regular file is a copy into the page cache:
 * under Node each promise write took a trip through the thread pool (two
 * thread switches and a futex wake) that cost more than the write
 * (bench/proxy.ts shows it in a proxied call's CPU). Not Bun's
 * `Bun.file(fd).writer()` either: when the disk fills part way through a
 * chunk, that sink neither throws from write() nor from flush(); it reports
 * the ENOSPC itself, as an uncaught error with a stack trace on stderr (the
 * MCP client's log), and the writer would count lines as written that are not
 * in the file (test/e2e/runtime-file.test.ts, a full file system). What this
 * costs: a disk that stalls stalls the thread that writes (seam wrap's
 * recorder thread; seam proxy's only thread).
 */

import { constants, fstatSync, writeSync } from "node:fs";
import { type FileHandle, mkdir, open } from "node:fs/promises";
import { dirname } from "node:path";
import { SeamError } from "../base/error.ts";
import type { AppendFile } from "./types.ts";
import { userId } from "./user.ts";

/**
 * Opens `path` read/write with O_APPEND, creating missing parent directories
 * and the file itself (mode 0600: with `--raw` a ledger holds call payloads).
 * Readable too, because a writer reads the file's tail to continue its chain.
 *
 * The directory may be someone else's to write in (a sticky /tmp), so unless
 * `allowForeign`: a symlink at the last component is not followed, and a file
 * that is not a regular one, belongs to another user or is writable by group
 * or others is refused (UnsafeFileError) rather than written to: rows (with
 * --raw, payloads) would go where another user reads or rewrites them.
 */
async function openAppendHandle(path: string, opts: OpenOptions = {}): Promise<FileHandle> {
  await mkdir(dirname(path), { recursive: true });
  if (opts.allowForeign) return open(path, "a+", 0o600);
  const flags = constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;
  let fh: FileHandle;
  try {
    fh = await open(path, flags, 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ELOOP") throw new UnsafeFileError(path, "is a symbolic link");
    throw e;
  }
  try {
    const why = unsafeFile(await fh.stat(), opts.platform ?? process.platform);
    if (why !== null) throw new UnsafeFileError(path, why);
  } catch (e) {
    await fh.close().catch(() => {});
    throw e;
  }
  return fh;
}

export interface OpenOptions {
  /** Follow a symlink and accept a file of another owner or open to others' writes. */
  allowForeign?: boolean;
  /** Whose file facts judge the file (unsafeFile); this process's own by default. */
  platform?: NodeJS.Platform;
}

/**
 * Why a ledger file is no safe one to append to, or null. On Windows only
 * that it is not a regular file: there are no uids, and the mode bits Node
 * reports there are made up from the read-only attribute (every writable
 * file shows 0666), so they say nothing of who else may write; the ACLs
 * that do are not read. O_NOFOLLOW does not exist there either, so a
 * symlink at the ledger's name is followed.
 */
export function unsafeFile(
  st: { isFile(): boolean; uid: number; mode: number },
  platform: NodeJS.Platform,
  uid: number | undefined = userId(platform),
): string | null {
  if (!st.isFile()) return "is not a regular file";
  if (platform === "win32") return null;
  if (uid !== undefined && st.uid !== uid) return `belongs to another user (uid ${st.uid})`;
  if ((st.mode & 0o022) !== 0) return `can be written by others (mode ${(st.mode & 0o777).toString(8)})`;
  return null;
}

/** A file seam will not append to unless told to (`code` EUNSAFE). */
export class UnsafeFileError extends SeamError {
  override readonly name = "UnsafeFileError";
  constructor(
    readonly path: string,
    readonly why: string,
  ) {
    super("EUNSAFE", `${path} ${why}`);
  }
}

/** Writes all of `bytes` to `fd`, looping over short writes (a full disk or a file-size limit gives one). */
async function writeAll(fd: number, bytes: Uint8Array): Promise<void> {
  let done = 0;
  while (done < bytes.length) {
    const n = writeSync(fd, bytes, done, bytes.length - done);
    if (n <= 0) throw new Error(`short write (${done} of ${bytes.length} bytes)`);
    done += n;
  }
}

/** An AppendFile over an open handle. */
function appendFileOver(fh: FileHandle): AppendFile {
  return {
    write: (bytes) => writeAll(fh.fd, bytes),
    sync: () => fh.sync(),
    // fstat(2) on an open local descriptor returns at once; a thread-pool round
    // trip for it cost more than the rest of a small flush (bench/relay.ts profile).
    size: async () => fstatSync(fh.fd).size,
    async readAt(position, length) {
      const buf = new Uint8Array(length);
      let got = 0;
      while (got < length) {
        const { bytesRead } = await fh.read(buf, got, length - got, position + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      return got === length ? buf : buf.subarray(0, got);
    },
    truncate: (size) => fh.truncate(size),
    close: () => fh.close(),
    identity: () => {
      const st = fstatSync(fh.fd);
      return `${st.dev}:${st.ino}`;
    },
  };
}

export async function openAppend(path: string, opts?: OpenOptions): Promise<AppendFile> {
  return appendFileOver(await openAppendHandle(path, opts));
}
