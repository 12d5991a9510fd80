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
 * ledger is: src/runtime/file.ts); nothing planted inside it is followed.
 * A payload's file is made under its name (O_CREAT|O_EXCL, so nothing there
 * is followed) and written whole before any row of this store's writer names
 * it: one file operation per payload, the cost the store exists to keep low.
 * A write that fails removes the file it made. A name already taken (the same
 * value from an earlier session, a file torn by a crash, one planted there)
 * is replaced by a whole file: written to a fresh temporary file and renamed
 * over the name (rename replaces a link, not its target). Each store writes a
 * digest's payload once: the names it has written are remembered, so a value
 * that recurs costs no file operation at all.
 */

import { randomBytes } from "node:crypto";
import {
  close,
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  open,
  openSync,
  readdirSync,
  readSync,
  rename,
  renameSync,
  type Stats,
  unlink,
  unlinkSync,
  writeFile,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { describeIoError } from "../base/io-error.ts";
import { digestJsonUtf8, digestParts, isJsonDigest } from "../core/digest.ts";
import { UnsafeFileError } from "./file.ts";

/** The sub-directory and file name of a digest's payload, or null for a digest no payload is kept under. */
export function payloadPath(digest: string): { dir: string; name: string } | null {
  const p = digestParts(digest);
  if (p === null) return null;
  return { dir: p.recipe === "json-c14n" ? "sha256" : "sha256-jcs", name: p.hex };
}

/** Whether a payload is kept under `digest` (payloadPath is not null), without taking it apart. */
export function isPayloadDigest(digest: string): boolean {
  return isJsonDigest(digest);
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

/** How many names a store remembers having written before it forgets them all (bounds its memory; forgetting costs a rewrite). */
const WRITTEN_LIMIT = 1 << 16;

export class PayloadStore {
  private readonly ready = new Set<string>();
  /** The names (sub-directory/hex) this store has written: not written again. */
  private readonly written = new Set<string>();
  /** Its temporary files' names: a prefix of its own, then a count. */
  private tempPrefix = tempPrefix();
  private temps = 0;
  /** Writes a payload's temporary file (a test makes it fail part way). */
  writeFile: typeof writeFile = writeFile;

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

  /** Whether this store has written the payload of `digest` (so `put` would not write it again). */
  wrote(digest: string): boolean {
    const p = payloadPath(digest);
    return p !== null && this.written.has(`${p.dir}/${p.name}`);
  }

  /**
   * Claims the name of `digest`'s payload for a write of `bytes`: where it
   * goes, "exists" when this store has written it or is writing it,
   * "skipped" for a digest no payload is kept under; throws when `bytes` do
   * not digest to it (nothing is ever written under another value's name),
   * which is not checked again when they are `vouched` for (the caller
   * digested these very bytes' parse: src/observe/frame-reading.ts, "plain").
   * A write that fails gives the claim back.
   */
  private claim(
    digest: string,
    bytes: Uint8Array,
    vouched: boolean,
  ): { key: string; sub: string; final: string } | "exists" | "skipped" {
    const p = payloadPath(digest);
    if (p === null) return "skipped";
    const key = `${p.dir}/${p.name}`;
    if (this.written.has(key)) return "exists";
    // A frame read leniently (src/observe/json-stacks.ts) can hold bytes whose strict digest is not the row's.
    if (!vouched && digestJsonUtf8(bytes, digestParts(digest)!.recipe) !== digest)
      throw new Error("its bytes do not digest to the row's digest");
    const sub = `${this.dir}/${p.dir}`;
    if (!this.ready.has(p.dir)) {
      safeDir(sub);
      this.ready.add(p.dir);
    }
    if (this.written.size >= WRITTEN_LIMIT) this.written.clear();
    this.written.add(key);
    return { key, sub, final: `${sub}/${p.name}` };
  }

  /** The next temporary file's name in `sub`; `fresh`: under a new prefix (a name of this store's was planted). */
  private nextTemp(sub: string, fresh = false): string {
    if (fresh) this.tempPrefix = tempPrefix();
    return join(sub, `${this.tempPrefix}${this.temps++}`);
  }

  /**
   * Keeps `bytes` as the payload of `digest` on this thread: "written",
   * "exists" when this store has written it, "skipped" for a digest no
   * payload is kept under. Whatever else is under the name is replaced by a
   * whole file. Throws when `bytes` do not give `digest`, or the I/O error
   * (or UnsafeFileError).
   */
  putNow(digest: string, bytes: Uint8Array, vouched = false): "written" | "exists" | "skipped" {
    const c = this.claim(digest, bytes, vouched);
    if (typeof c === "string") return c;
    try {
      try {
        writeNewSync(c.final, bytes);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
        this.replaceNow(c.sub, c.final, bytes);
      }
    } catch (e) {
      this.written.delete(c.key);
      throw e;
    }
    return "written";
  }

  /** Puts a whole file of `bytes` in place of whatever is under `final` (putNow's slow way). */
  private replaceNow(sub: string, final: string, bytes: Uint8Array): void {
    let temp = this.nextTemp(sub);
    try {
      writeNewSync(temp, bytes);
    } catch (e) {
      // A name of this store's taken already (planted): not ours to remove; go on under a new prefix.
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      temp = this.nextTemp(sub, true);
      writeNewSync(temp, bytes);
    }
    try {
      renameSync(temp, final);
    } catch (e) {
      unlinkQuietly(temp);
      throw e;
    }
  }

  /**
   * Keeps `bytes` as the payload of `digest`, off this thread (the file
   * operations run on the runtime's I/O threads): "writing", then `done`
   * once the file is under its name (null) or could not be (the error; a
   * later put tries again); "exists" when this store has written it or is
   * writing it; "skipped" for a digest no payload is kept under (neither
   * calls `done`). `bytes` must stay as they are until `done`. Whatever else
   * is under the name is replaced by a whole file. Throws when `bytes` do
   * not give `digest`, or UnsafeFileError (or the I/O error) when the
   * payload's sub-directory cannot be used.
   */
  putLater(
    digest: string,
    bytes: Uint8Array,
    done: (error: Error | null) => void,
    vouched = false,
  ): "writing" | "exists" | "skipped" {
    const c = this.claim(digest, bytes, vouched);
    if (typeof c === "string") return c;
    const finish = (e: Error | null) => {
      if (e !== null) this.written.delete(c.key);
      done(e);
    };
    // The slow way, for a name taken already: a whole file renamed over whatever is there.
    const replace = (temp: string, retry: boolean) => {
      // Both runtimes take open(2)'s flags as a number here, though it is typed as a string.
      this.writeFile(temp, bytes, { flag: NEW_FLAGS as unknown as string, mode: 0o600 }, (e) => {
        if (e !== null) {
          // A name of this store's taken already (planted): not ours to remove; go on under a new prefix.
          if (e.code === "EEXIST" && retry) replace(this.nextTemp(c.sub, true), false);
          else if (e.code === "EEXIST") finish(e);
          else unlink(temp, () => finish(e));
          return;
        }
        rename(temp, c.final, (e2) => {
          if (e2 === null) finish(null);
          else unlink(temp, () => finish(e2));
        });
      });
    };
    open(c.final, NEW_FLAGS, 0o600, (e, fd) => {
      if (e?.code === "EEXIST") return replace(this.nextTemp(c.sub), true);
      if (e !== null) return finish(e);
      this.writeFile(fd, bytes, {}, (e2) => {
        close(fd, (e3) => {
          const failed = e2 ?? e3;
          // The name is this store's (O_EXCL made it): nothing torn is left under it.
          if (failed !== null) unlink(c.final, () => finish(failed));
          else finish(null);
        });
      });
    });
    return "writing";
  }

  /** putLater, as a promise: "written", "exists" or "skipped"; rejects with the error. */
  put(digest: string, bytes: Uint8Array): Promise<"written" | "exists" | "skipped"> {
    return new Promise((resolve, reject) => {
      try {
        const now = this.putLater(digest, bytes, (e) => (e === null ? resolve("written") : reject(e)));
        if (now !== "writing") resolve(now);
      } catch (e) {
        reject(e);
      }
    });
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

const NEW_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/** A prefix of temporary files' names no other store (of this process or another) uses. */
function tempPrefix(): string {
  return `.tmp-${process.pid}-${randomBytes(6).toString("hex")}-`;
}

/** Removes `path` if it is there. */
function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Gone already.
  }
}

/**
 * A new file at `path` (O_EXCL: EEXIST when the name is taken, nothing there
 * followed) holding all of `bytes`; a write that fails removes the file it made.
 */
function writeNewSync(path: string, bytes: Uint8Array): void {
  const fd = openSync(path, NEW_FLAGS, 0o600);
  try {
    try {
      writeAll(fd, bytes);
    } finally {
      closeSync(fd);
    }
  } catch (e) {
    unlinkQuietly(path);
    throw e;
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
