/**
 * Reading a file that configures seam (a client's MCP config, a rules file,
 * an action map, a key, a witness file, credentials): whole, as text, but
 * only when it is a regular file of at most `max` bytes. These names can
 * come from where others write: `seam install --scope project` and `seam
 * check --rules` read files of the repository they run in, and a repository
 * can hold a symlink to /dev/zero (read whole, it fills memory) or, on a
 * shared disk, a FIFO (a read never returns). Opened without blocking, so a
 * FIFO is found out by fstat instead of hanging the open.
 */

import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  openSync,
  readSync,
  renameSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { SeamError } from "../base/error.ts";

/** The most such a file may hold (Claude Code's ~/.claude.json, the largest known, grows to a few MiB). */
export const SMALL_FILE_MAX = 64 << 20;

/** A file refused by readSmallFile; `code` as an errno is, and said by describeIoError. */
export class NotSmallFileError extends SeamError {
  override readonly name = "NotSmallFileError";
  declare readonly code: "ENOTREG" | "EFBIG";
  constructor(code: "ENOTREG" | "EFBIG", path: string) {
    super(code, `${code}: ${code === "ENOTREG" ? "not a regular file" : "file too large"}, read '${path}'`);
  }
}

/** The file's bytes; throws the open's or read's error, or NotSmallFileError. */
export function readSmallFile(path: string, max = SMALL_FILE_MAX): Buffer {
  return readSmallFileMode(path, max).bytes;
}

/**
 * readSmallFile, with the file's mode (st_mode) from the descriptor the bytes
 * were read from: a second stat of the path could see another file.
 */
export function readSmallFileMode(path: string, max = SMALL_FILE_MAX): { bytes: Buffer; mode: number } {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new NotSmallFileError("ENOTREG", path);
    // Read to the end rather than to the size fstat gave: the file may grow meanwhile (a client writing it).
    const parts: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buf = Buffer.allocUnsafe(Math.min(1 << 20, max + 1 - total));
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      parts.push(buf.subarray(0, n));
      total += n;
      if (total > max) throw new NotSmallFileError("EFBIG", path);
    }
    return { bytes: Buffer.concat(parts, total), mode: st.mode };
  } finally {
    closeSync(fd);
  }
}

/**
 * Replaces `path` with `text` so that a crash or power cut leaves the old
 * file or the new one, never a mix, and the new one once this returns: a
 * temporary file beside it written and fsynced, renamed over it, then the
 * directory fsynced so the rename itself is on disk. Throws the failing
 * call's error (the temporary file is removed).
 */
export function replaceFileDurably(path: string, text: string | Uint8Array, mode = 0o600): void {
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.${randomBytes(6).toString("hex")}`);
  try {
    const fd = openSync(tmp, "wx", mode);
    try {
      writeSync(fd, typeof text === "string" ? Buffer.from(text, "utf8") : text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {}
    throw e;
  }
  const d = openSync(dir, constants.O_RDONLY);
  try {
    fsyncSync(d);
  } finally {
    closeSync(d);
  }
}
