/**
 * Writing a client's config file without losing anyone's bytes. Clients
 * rewrite these files themselves (Claude Code rewrites ~/.claude.json while
 * it runs), so:
 *   - the edit is a function of the text, computed on what was read;
 *   - a timestamped backup of what was read goes next to the file first;
 *   - the new text goes to a temp file in the same directory (same mode),
 *     then the file is read again: if it changed since it was read, the edit
 *     is computed again on the new text (a few times), never written blind;
 *   - only then is the temp file renamed over the file (atomic on one
 *     filesystem). A writer that lands between that last read and the rename
 *     is still lost; the window is one rename long, and the backup holds
 *     what seam read.
 * A symlinked config (dotfile managers) is written through to its target, so
 * the link stays a link. A read-only file is refused, not replaced.
 */
import { randomBytes } from "node:crypto";
import { chmodSync, closeSync, fsyncSync, openSync, realpathSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { describeIoError } from "../base/io-error.ts";
import { readSmallFile, readSmallFileMode } from "../runtime/small-file.ts";

export interface WriteHooks {
  /** Called after the new text is staged and before the file is read again (tests rewrite the file here). */
  beforeCommit?: (file: string, attempt: number) => void;
  /** The backup's timestamp (tests fix it). */
  now?: () => Date;
}

export type WriteResult =
  | { ok: true; changed: false; text: string }
  | { ok: true; changed: true; before: string; after: string; backup: string; attempts: number }
  | { ok: false; error: string; hint?: string };

export const MAX_ATTEMPTS = 5;

/**
 * Applies `edit` to the file's text and writes the result safely. `edit`
 * returns the new text, or an error string to leave the file as it is.
 */
export function editFile(
  file: string,
  edit: (text: string) => { text: string } | { error: string },
  hooks: WriteHooks = {},
): WriteResult {
  let real: string;
  try {
    real = realpathSync(file);
  } catch (e) {
    return { ok: false, error: `cannot read ${file}: ${describeIoError(e)}` };
  }
  let before: Buffer;
  let mode: number;
  try {
    const read = readSmallFileMode(real);
    mode = read.mode & 0o7777;
    before = read.bytes;
  } catch (e) {
    return { ok: false, error: `cannot read ${file}: ${describeIoError(e)}` };
  }
  let backup: string | undefined;
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const text = before.toString("utf8");
    const r = edit(text);
    if ("error" in r) return { ok: false, error: r.error };
    if (r.text === text) return { ok: true, changed: false, text };
    if ((mode & 0o222) === 0)
      return {
        ok: false,
        error: `${file} is read-only; seam left it as it is`,
        hint: `make it writable (chmod u+w) and run again`,
      };
    const dir = dirname(real);
    if (backup === undefined) {
      // What was read, not what is on disk now: a backup of the text the edit was made on.
      const base = join(dir, `${basename(real)}.seam-backup-${stamp(hooks.now?.() ?? new Date())}`);
      for (let n = 1; backup === undefined; n++) {
        const name = n === 1 ? base : `${base}-${n}`;
        try {
          const fd = openSync(name, "wx", mode);
          try {
            writeSync(fd, before);
            fsyncSync(fd);
          } finally {
            closeSync(fd);
          }
          chmodSync(name, mode);
          backup = name;
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === "EEXIST" && n < 100) continue;
          return { ok: false, error: `cannot back up ${file}: ${describeIoError(e)}` };
        }
      }
    }
    const tmp = join(dir, `.${basename(real)}.seam-${process.pid}-${randomBytes(4).toString("hex")}`);
    try {
      const fd = openSync(tmp, "wx", mode);
      try {
        writeSync(fd, r.text);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      chmodSync(tmp, mode);
    } catch (e) {
      try {
        unlinkSync(tmp);
      } catch {}
      return { ok: false, error: `cannot write next to ${file}: ${describeIoError(e)}` };
    }
    hooks.beforeCommit?.(file, attempt);
    let now: Buffer;
    try {
      now = readSmallFile(real);
    } catch (e) {
      unlinkSync(tmp);
      return { ok: false, error: `cannot read ${file} again: ${describeIoError(e)}` };
    }
    if (!now.equals(before)) {
      // The client wrote the file meanwhile: start again from what it wrote.
      // The backup is to hold what the edit is made on.
      unlinkSync(tmp);
      unlinkSync(backup);
      backup = undefined;
      before = now;
      continue;
    }
    try {
      renameSync(tmp, real);
    } catch (e) {
      try {
        unlinkSync(tmp);
      } catch {}
      return { ok: false, error: `cannot replace ${file}: ${describeIoError(e)}` };
    }
    return { ok: true, changed: true, before: text, after: r.text, backup, attempts: attempt };
  }
  return {
    ok: false,
    error: `${file} kept changing while seam edited it (${MAX_ATTEMPTS} tries); left as it is`,
    hint: "quit the client and run again",
  };
}

function stamp(d: Date): string {
  return d
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
}
