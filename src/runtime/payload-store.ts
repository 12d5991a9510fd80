/**
 * The payload store (`--payloads DIR`): each argument, result or params value
 * a row holds the digest of, kept once as the bytes that crossed, under the
 * name its digest gives it (docs/ledger-format.md, "Payloads"):
 *
 *   sha256:json-c14n:v1:<hex>  →  DIR/sha256/<hex>
 *   sha256:jcs:v1:<hex>        →  DIR/sha256-jcs/<hex>
 *
 * The name is the digest of the value's canonical form, not of the file's
 * bytes (whitespace and key order as they crossed): a reader recomputes the
 * row's digest from the file by the recipe the row names.
 *
 * DIR may sit where others reach it, so it is refused when it is a symlink,
 * not a directory, another user's, or writable by group or others (as the
 * ledger is: src/runtime/file.ts); nothing planted inside it is followed: a
 * payload is opened with O_NOFOLLOW, written to a fresh temporary file
 * (O_EXCL) and linked to its name, which never replaces what is there
 * (an existing payload is not written again), so a crash leaves at most a
 * temporary file, never half a payload under a payload's name.
 */

import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  fstatSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  type Stats,
  unlinkSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { describeIoError } from "../base/io-error.ts";
import { digestParts } from "../core/digest.ts";
import { UnsafeFileError } from "./file.ts";

/** The sub-directory and file name of a digest's payload, or null for a digest no payload is kept under. */
export function payloadPath(digest: string): { dir: string; name: string } | null {
  const p = digestParts(digest);
  if (p === null) return null;
  return { dir: p.recipe === "json-c14n" ? "sha256" : "sha256-jcs", name: p.hex };
}

/** The digest a payload file stands for (the inverse of payloadPath), or null for a name that is no payload's. */
export function payloadDigest(dir: string, name: string): string | null {
  if (!/^[0-9a-f]{64}$/.test(name)) return null;
  if (dir === "sha256") return `sha256:json-c14n:v1:${name}`;
  if (dir === "sha256-jcs") return `sha256:jcs:v1:${name}`;
  return null;
}

const SUBDIRS = ["sha256", "sha256-jcs"] as const;

/** What looking a payload up found. */
export type PayloadLookup =
  | { kind: "present"; bytes: Uint8Array }
  | { kind: "absent" }
  /** There is a file under its name that is no payload seam would read: a link, not a regular file, or unreadable. */
  | { kind: "refused"; why: string };

/** Why `dir` may not hold payloads, or null when it may (`anyOwner`: only read, so another user's will do). */
function unsafeDir(st: Stats, anyOwner = false): string | null {
  const uid = process.getuid?.();
  if (st.isSymbolicLink()) return "is a symbolic link";
  if (!st.isDirectory()) return "is not a directory";
  if (!anyOwner && uid !== undefined && st.uid !== uid) return `belongs to another user (uid ${st.uid})`;
  if ((st.mode & 0o022) !== 0) return `can be written by others (mode ${(st.mode & 0o777).toString(8)})`;
  return null;
}

/** Makes `path` (mode 0700) unless it is there, then refuses it when it is unsafe (UnsafeFileError). */
function safeDir(path: string): void {
  try {
    mkdirSync(path, { mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
  }
  const why = unsafeDir(lstatSync(path));
  if (why !== null) throw new UnsafeFileError(path, why);
}

export class PayloadStore {
  private readonly ready = new Set<string>();
  /** Writes a payload's bytes to its temporary file (a test makes it fail part way). */
  writeBytes: (fd: number, bytes: Uint8Array) => void = writeAll;

  private constructor(readonly dir: string) {}

  /**
   * The store at `dir`, made (mode 0700) when missing and its parent is
   * there. Throws UnsafeFileError for a DIR seam will not use, or the I/O error.
   */
  static open(dir: string): PayloadStore {
    safeDir(dir);
    return new PayloadStore(dir);
  }

  /**
   * The store at `dir` to read (verify) or remove from (erase), never made:
   * throws the I/O error when it is missing, UnsafeFileError when it is a
   * symlink, no directory, or open to others' writes (`anyOwner`: another
   * user's will do).
   */
  static existing(dir: string, anyOwner = false): PayloadStore {
    const why = unsafeDir(lstatSync(dir), anyOwner);
    if (why !== null) throw new UnsafeFileError(dir, why);
    return new PayloadStore(dir);
  }

  /** The path of a digest's payload (whether or not it is there), or null for a digest no payload is kept under. */
  pathOf(digest: string): string | null {
    const p = payloadPath(digest);
    return p === null ? null : join(this.dir, p.dir, p.name);
  }

  /**
   * Keeps `bytes` as the payload of `digest` unless one is there already:
   * "written", "exists", or "skipped" for a digest no payload is kept under.
   * Throws the I/O error (or UnsafeFileError) when it cannot be written.
   */
  put(digest: string, bytes: Uint8Array): "written" | "exists" | "skipped" {
    const p = payloadPath(digest);
    if (p === null) return "skipped";
    const sub = join(this.dir, p.dir);
    if (!this.ready.has(p.dir)) {
      safeDir(sub);
      this.ready.add(p.dir);
    }
    const final = join(sub, p.name);
    if (lstatSync(final, { throwIfNoEntry: false }) !== undefined) return "exists";
    const temp = join(sub, `.tmp-${process.pid}-${randomBytes(8).toString("hex")}`);
    const fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      try {
        this.writeBytes(fd, bytes);
      } finally {
        closeSync(fd);
      }
      return publish(temp, final);
    } finally {
      try {
        unlinkSync(temp);
      } catch {
        // Gone already: renamed into place.
      }
    }
  }

  /** The payload of `digest`, read without following a link. */
  get(digest: string): PayloadLookup {
    const path = this.pathOf(digest);
    if (path === null) return { kind: "absent" };
    let fd: number;
    try {
      fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return { kind: "absent" };
      if (code === "ELOOP") return { kind: "refused", why: "is a symbolic link" };
      return { kind: "refused", why: describeIoError(e) };
    }
    try {
      const st = fstatSync(fd);
      if (!st.isFile()) return { kind: "refused", why: "is not a regular file" };
      const bytes = new Uint8Array(st.size);
      let got = 0;
      while (got < bytes.length) {
        const n = readSync(fd, bytes, got, bytes.length - got, got);
        if (n === 0) break;
        got += n;
      }
      return { kind: "present", bytes: got === bytes.length ? bytes : bytes.subarray(0, got) };
    } catch (e) {
      return { kind: "refused", why: describeIoError(e) };
    } finally {
      closeSync(fd);
    }
  }

  /** Removes the payload of `digest` (a link planted in its place is removed, not followed): whether one was there. */
  remove(digest: string): boolean {
    const path = this.pathOf(digest);
    if (path === null) return false;
    try {
      unlinkSync(path);
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return false;
      throw e;
    }
  }

  /** Whether a payload of `digest` is there (any file under its name, not followed). */
  has(digest: string): boolean {
    const path = this.pathOf(digest);
    return path !== null && lstatSync(path, { throwIfNoEntry: false }) !== undefined;
  }

  /** The digests of the payloads in the store (files under a payload's name). */
  *digests(): Generator<string> {
    for (const sub of SUBDIRS) {
      let names: string[];
      try {
        names = readdirSync(join(this.dir, sub));
      } catch {
        continue;
      }
      for (const name of names) {
        const d = payloadDigest(sub, name);
        if (d !== null) yield d;
      }
    }
  }
}

/** All of `bytes` to `fd`, over short writes. */
function writeAll(fd: number, bytes: Uint8Array): void {
  let done = 0;
  while (done < bytes.length) {
    const n = writeSync(fd, bytes, done, bytes.length - done);
    if (n <= 0) throw new Error(`short write (${done} of ${bytes.length} bytes)`);
    done += n;
  }
}

/**
 * Gives `temp` the name `final` unless a file has it: a hard link, which
 * never replaces one; where links cannot be made, a rename after looking.
 */
function publish(temp: string, final: string): "written" | "exists" {
  try {
    linkSync(temp, final);
    return "written";
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return "exists";
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "ENOSYS") throw e;
  }
  if (lstatSync(final, { throwIfNoEntry: false }) !== undefined) return "exists";
  renameSync(temp, final);
  return "written";
}
