/**
 * A release folder's checksums and their signature.
 *
 *   SHA256SUMS       one line per file, `<64 lowercase hex>  <name>\n` (the
 *                    form `sha256sum` writes and `sha256sum -c` reads), sorted
 *                    by name;
 *   SHA256SUMS.note  a C2SP signed note (c2sp.org/signed-note) whose text is
 *                    SHA256SUMS byte for byte, signed with a `seam keygen` key.
 *
 * Checking a folder opens the note with the verifier keys the caller trusts,
 * requires SHA256SUMS to be the note's text, and hashes every file it lists.
 * The folder is someone else's download: names are plain file names (no
 * folders, no "..") and a check returns findings rather than throwing.
 */
import { createHash } from "node:crypto";
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import { describeIoError } from "../base/io-error.ts";
import { keyLabel, NoteError, noteProblem, openNote, type Verifier } from "../checkpoint/note.ts";
import { readSmallFile } from "../runtime/small-file.ts";

export const SUMS_FILE = "SHA256SUMS";
export const NOTE_FILE = "SHA256SUMS.note";

export interface SumEntry {
  name: string;
  sha256: string;
}

/** A file name a sums line may carry: one path segment, printable ASCII, no leading dot. */
export function isReleaseName(name: string): boolean {
  return /^[A-Za-z0-9_][A-Za-z0-9._+-]*$/.test(name) && name.length <= 200;
}

/** SHA256SUMS for these entries, sorted by name. Throws on a name isReleaseName refuses or a bad digest. */
export function formatSums(entries: readonly SumEntry[]): string {
  const sorted = [...entries].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  let out = "";
  for (const e of sorted) {
    if (!isReleaseName(e.name) || !/^[0-9a-f]{64}$/.test(e.sha256))
      throw new Error(`cannot list ${JSON.stringify(e.name)} in ${SUMS_FILE}`);
    out += `${e.sha256}  ${e.name}\n`;
  }
  return out;
}

/** The entries of a SHA256SUMS text, or the number of the first line that is not one (1-based). */
export function parseSums(text: string): { entries: SumEntry[] } | { badLine: number } {
  if (text === "" || !text.endsWith("\n")) return { badLine: 1 };
  const entries: SumEntry[] = [];
  const seen = new Set<string>();
  const lines = text.slice(0, -1).split("\n");
  for (let i = 0; i < lines.length; i++) {
    const m = /^([0-9a-f]{64}) {2}(.+)$/.exec(lines[i]!);
    if (m === null || !isReleaseName(m[2]!) || seen.has(m[2]!)) return { badLine: i + 1 };
    seen.add(m[2]!);
    entries.push({ name: m[2]!, sha256: m[1]! });
  }
  return { entries };
}

/** The SHA-256 of a regular file, read in chunks (executables are tens of megabytes). */
export function sha256File(path: string): string {
  const fd = openSync(path, "r");
  try {
    if (!fstatSync(fd).isFile()) throw Object.assign(new Error(`not a regular file: ${path}`), { code: "ENOTREG" });
    const hash = createHash("sha256");
    const buf = Buffer.allocUnsafe(1 << 20);
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      hash.update(buf.subarray(0, n));
    }
    return hash.digest("hex");
  } finally {
    closeSync(fd);
  }
}

export type ReleaseFindingKind =
  | "note-unreadable"
  | "note-unsigned"
  | "sums-unreadable"
  | "sums-mismatch"
  | "sums-malformed"
  | "file-missing"
  | "file-changed";

export interface ReleaseFinding {
  kind: ReleaseFindingKind;
  /** The file it is about, when it is about one. */
  file?: string;
  message: string;
}

export interface ReleaseReport {
  ok: boolean;
  /** The keys whose signature verified, as `name+id`. */
  signedBy: string[];
  /** The files whose digest matched. */
  checked: string[];
  findings: ReleaseFinding[];
}

/** Checks a release folder against the keys given; never throws for what the folder holds. */
export function checkRelease(dir: string, verifiers: readonly Verifier[]): ReleaseReport {
  const report: ReleaseReport = { ok: false, signedBy: [], checked: [], findings: [] };
  const find = (f: ReleaseFinding) => report.findings.push(f);
  let note: string;
  try {
    note = readSmallFile(join(dir, NOTE_FILE), 1 << 20).toString("utf8");
  } catch (e) {
    find({ kind: "note-unreadable", file: NOTE_FILE, message: `cannot read ${NOTE_FILE}: ${describeIoError(e)}` });
    return report;
  }
  let text: string;
  try {
    const opened = openNote(note, verifiers);
    text = opened.text;
    report.signedBy = opened.verified.map((s) => keyLabel(s.name, s.id));
  } catch (e) {
    if (!(e instanceof NoteError)) throw e;
    const labels = verifiers.map((v) => keyLabel(v.name, v.id));
    find({ kind: "note-unsigned", file: NOTE_FILE, message: `${NOTE_FILE} ${noteProblem(e, labels)}` });
    return report;
  }
  let sums: string;
  try {
    sums = readSmallFile(join(dir, SUMS_FILE), 1 << 20).toString("utf8");
  } catch (e) {
    find({ kind: "sums-unreadable", file: SUMS_FILE, message: `cannot read ${SUMS_FILE}: ${describeIoError(e)}` });
    return report;
  }
  if (sums !== text) {
    find({ kind: "sums-mismatch", file: SUMS_FILE, message: `${SUMS_FILE} is not the text ${NOTE_FILE} signs` });
    return report;
  }
  const parsed = parseSums(text);
  if ("badLine" in parsed) {
    find({
      kind: "sums-malformed",
      file: SUMS_FILE,
      message: `${SUMS_FILE} line ${parsed.badLine} is not "<sha256>  <file name>"`,
    });
    return report;
  }
  for (const e of parsed.entries) {
    let actual: string;
    try {
      actual = sha256File(join(dir, e.name));
    } catch (err) {
      find({ kind: "file-missing", file: e.name, message: `cannot read ${e.name}: ${describeIoError(err)}` });
      continue;
    }
    if (actual !== e.sha256) find({ kind: "file-changed", file: e.name, message: `${e.name} does not match its sum` });
    else report.checked.push(e.name);
  }
  report.ok = report.findings.length === 0;
  return report;
}
