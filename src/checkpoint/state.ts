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
import { sha256Hex } from "../core/sha256.ts";
import { parseCheckpointText } from "./checkpoint.ts";
import { readSmallFile } from "../runtime/small-file.ts";

const name = (s: string) => sha256Hex(s, 16);

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

  private read(file: string): string | null {
    try {
      return readSmallFile(join(this.dir, file)).toString("utf8");
    } catch {
      return null;
    }
  }

  private write(file: string, text: string): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const tmp = join(this.dir, `.${file}.${randomBytes(6).toString("hex")}`);
    writeFileSync(tmp, text, { mode: 0o600 });
    renameSync(tmp, join(this.dir, file));
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
