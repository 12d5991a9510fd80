/**
 * `seam verify --state DIR`: what a verifier remembers between runs, like
 * the Go checksum database client's cached latest tree. Two kinds of file:
 *
 *   DIR/<32 hex of SHA-256(origin)>.checkpoint   the highest checkpoint note verified for that origin
 *   DIR/<32 hex of SHA-256(ledger path)>.origin  the origin last seen at that path, and "\n"
 *
 * (the path is made absolute and symlinks resolved first). A checkpoint is
 * only ever replaced by a larger one; writes go to a temporary file renamed
 * into place, so a crash leaves the old state or the new, never half. Two
 * verifiers racing on one DIR can both write, and the larger still wins on
 * the next run, which only reads.
 */

import { randomBytes } from "node:crypto";
import { mkdirSync, realpathSync, renameSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { SeamError } from "../base/error.ts";
import { describeIoError } from "../base/io-error.ts";
import { sha256Hex } from "../core/sha256.ts";
import { readSmallFile } from "../runtime/small-file.ts";
import { parseCheckpointText } from "./checkpoint.ts";

const name = (s: string) => sha256Hex(s, 16);

/** The --state directory could not be read or written: verification cannot keep its promise. */
export class StateDirError extends SeamError {
  override readonly name = "StateDirError";
  declare readonly hint: string;
  constructor(message: string, hint: string) {
    super("state_dir", message, { hint });
  }
}

export class StateDir {
  constructor(readonly dir: string) {}

  /** The remembered checkpoint note for `origin`, or null. */
  noteFor(origin: string): string | null {
    return this.read(`${name(origin)}.checkpoint`);
  }

  /** The origin remembered for the ledger at `path`, or null. */
  originAt(path: string): string | null {
    return this.read(`${name(canonicalPath(path))}.origin`)?.trimEnd() ?? null;
  }

  /** Remembers `note` (a checkpoint of `origin`) unless one at least as large is there; returns the size now remembered. */
  remember(origin: string, note: string, size: number): number {
    const had = this.noteFor(origin);
    const hadSize = had === null ? -1 : sizeOf(had);
    if (hadSize >= size) return hadSize;
    this.write(`${name(origin)}.checkpoint`, note);
    return size;
  }

  bind(path: string, origin: string): void {
    if (this.originAt(path) !== origin) this.write(`${name(canonicalPath(path))}.origin`, `${origin}\n`);
  }

  /**
   * A file that is not there is nothing remembered. One that is there but
   * cannot be read (a FIFO, another user's, a directory) is an error, not
   * "nothing remembered": read as absent, the check it keeps would be dropped
   * without a word and the file replaced.
   */
  private read(file: string): string | null {
    const path = join(this.dir, file);
    try {
      return readSmallFile(path).toString("utf8");
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      if (code === "ENOENT") return null;
      if (code === "ENOTDIR")
        throw new StateDirError(
          `--state ${this.dir} is not a directory`,
          "name a directory; seam makes it if it is missing",
        );
      throw new StateDirError(
        `cannot read state file ${path}: ${describeIoError(e)}`,
        "seam writes only regular files there; move this one away, and seam remembers nothing for that ledger until the next run",
      );
    }
  }

  private write(file: string, text: string): void {
    const tmp = join(this.dir, `.${file}.${randomBytes(6).toString("hex")}`);
    try {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      writeFileSync(tmp, text, { mode: 0o600 });
      renameSync(tmp, join(this.dir, file));
    } catch (e) {
      throw new StateDirError(
        `cannot write state file ${join(this.dir, file)}: ${describeIoError(e)}`,
        "--state needs a directory this user can write to",
      );
    }
  }
}

function canonicalPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

function sizeOf(note: string): number {
  try {
    return parseCheckpointText(note.slice(0, note.lastIndexOf("\n\n") + 1)).size;
  } catch {
    return -1;
  }
}
