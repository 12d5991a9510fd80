/**
 * The texts that carry a seam ledger's Merkle root: C2SP checkpoints
 * (c2sp.org/tlog-checkpoint), the witness file's lines, and C2SP proofs
 * (c2sp.org/tlog-proof). Pure functions of strings and bytes.
 *
 * The ledger's tree (one leaf per physical line), its origin
 * (`seam-ledger/<hex of line 1's leaf hash>`) and these texts are specified
 * in docs/ledger-format.md, "Checkpoints".
 */
import { SeamError } from "../base/error.ts";
import { lineForm } from "../core/canonical/index.ts";
import { getField, isObject, type Json, parseJson } from "../core/json.ts";
import { HASH_BYTES, type Hash } from "./merkle.ts";
import { decodeBase64, encodeBase64 } from "./note.ts";

export const ORIGIN_PREFIX = "seam-ledger/";

/** Thrown for a text that is not the format it should be; the message says what is wrong. */
export class FormatError extends SeamError {
  override readonly name = "FormatError";
  constructor(message: string) {
    super("checkpoint_format", message);
  }
}

export interface Checkpoint {
  origin: string;
  /** Leaves (lines) the tree holds. */
  size: number;
  root: Hash;
}

export function ledgerOrigin(firstLeaf: Hash): string {
  return ORIGIN_PREFIX + Buffer.from(firstLeaf.subarray(0, 16)).toString("hex");
}

/**
 * A checkpoint's note text:
 *   seam-ledger/0123456789abcdef0123456789abcdef\n
 *   12\n
 *   <base64 of the 32-byte root>\n
 */
export function checkpointText(c: Checkpoint): string {
  return `${c.origin}\n${c.size}\n${encodeBase64(c.root)}\n`;
}

const DECIMAL = /^(0|[1-9][0-9]*)$/;

/** A size or index as the C2SP formats write it (no leading zeroes), up to 2^53 - 1; null otherwise. */
export function parseDecimal(s: string): number | null {
  if (!DECIMAL.test(s) || s.length > 16) return null;
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : null;
}

/** A note text as a checkpoint: origin, size, root, then optional non-empty extension lines (ignored). */
export function parseCheckpointText(text: string): Checkpoint {
  const lines = text.split("\n");
  if (lines.pop() !== "" || lines.length < 3)
    throw new FormatError("a checkpoint is at least three lines: origin, size, root");
  const [origin, sizeText, rootText] = lines as [string, string, string];
  if (origin === "") throw new FormatError("the checkpoint's origin is empty");
  const size = parseDecimal(sizeText);
  if (size === null) throw new FormatError(`the checkpoint's size ${JSON.stringify(sizeText)} is not a decimal number`);
  const root = decodeBase64(rootText);
  if (root === null || root.length !== HASH_BYTES)
    throw new FormatError("the checkpoint's root is not the base64 of 32 bytes");
  if (lines.slice(3).some((l) => l === "")) throw new FormatError("a checkpoint's extension lines must not be empty");
  return { origin, size, root };
}

// ---- the witness file ----

/**
 * One line of a witness file, Python's json.dumps form like a ledger row:
 *   {"origin": "seam-ledger/…", "size": 12, "root": "<base64>", "note": "<the signed checkpoint note>"}
 * origin, size and root repeat the note's text so that the file reads at a
 * glance; a verifier requires them to agree with it.
 */
export function witnessLine(c: Checkpoint, note: string): string {
  return `${lineForm(
    new Map<string, Json>([
      ["origin", c.origin],
      ["size", c.size],
      ["root", encodeBase64(c.root)],
      ["note", note],
    ]),
  )}\n`;
}

/** A witness line's checkpoint and note; throws FormatError when it is not one, or its fields disagree with its note. */
export function parseWitnessLine(line: string): { checkpoint: Checkpoint; note: string } {
  let v: Json;
  try {
    v = parseJson(line);
  } catch {
    throw new FormatError("not JSON");
  }
  if (!isObject(v)) throw new FormatError("not a JSON object");
  const note = getField(v, "note");
  if (typeof note !== "string") throw new FormatError("no note");
  const split = note.lastIndexOf("\n\n");
  if (split < 0) throw new FormatError("the note has no signature block");
  const checkpoint = parseCheckpointText(note.slice(0, split + 1));
  if (
    getField(v, "origin") !== checkpoint.origin ||
    getField(v, "size") !== checkpoint.size ||
    getField(v, "root") !== encodeBase64(checkpoint.root)
  ) {
    throw new FormatError("origin, size or root differ from the note's");
  }
  return { checkpoint, note };
}

// ---- tlog-proof ----

export const TLOG_PROOF_HEADER = "c2sp.org/tlog-proof@v1";

export interface TlogProof {
  /** Opaque data carried along; seam puts the ledger line itself here. */
  extra: Uint8Array | null;
  /** The entry's 0-based index: line number - 1. */
  index: number;
  /** The inclusion proof, from the leaf's sibling up. */
  hashes: Hash[];
  /** The signed checkpoint note, verbatim. */
  checkpoint: string;
}

/**
 * The proof text:
 *   c2sp.org/tlog-proof@v1\n
 *   extra <base64 of the ledger line>\n        (when there is extra data)
 *   index 11\n
 *   <base64 hash>\n                            (one per proof hash, sibling first)
 *   \n
 *   <the checkpoint note, verbatim>
 */
export function formatTlogProof(p: TlogProof): string {
  let out = `${TLOG_PROOF_HEADER}\n`;
  if (p.extra !== null) out += `extra ${encodeBase64(p.extra)}\n`;
  out += `index ${p.index}\n`;
  for (const h of p.hashes) out += `${encodeBase64(h)}\n`;
  return `${out}\n${p.checkpoint}`;
}

/** Parses a proof text; throws FormatError naming the first line that is wrong. */
export function parseTlogProof(text: string): TlogProof {
  const blank = text.indexOf("\n\n");
  if (blank < 0) throw new FormatError("no blank line before the checkpoint");
  const lines = text.slice(0, blank).split("\n");
  const checkpoint = text.slice(blank + 2);
  if (lines[0] !== TLOG_PROOF_HEADER) throw new FormatError(`the first line is not ${TLOG_PROOF_HEADER}`);
  let at = 1;
  let extra: Uint8Array | null = null;
  if (lines[at]?.startsWith("extra ")) {
    extra = decodeBase64(lines[at]!.slice(6));
    if (extra === null) throw new FormatError(`line ${at + 1}: the extra data is not base64`);
    at++;
  }
  const indexLine = lines[at] ?? "";
  const index = indexLine.startsWith("index ") ? parseDecimal(indexLine.slice(6)) : null;
  if (index === null) throw new FormatError(`line ${at + 1}: expected "index N"`);
  at++;
  const hashes: Hash[] = [];
  for (; at < lines.length; at++) {
    const h = decodeBase64(lines[at]!);
    if (h === null || h.length !== HASH_BYTES)
      throw new FormatError(`line ${at + 1}: not the base64 of a 32-byte hash`);
    hashes.push(h);
  }
  if (hashes.length > 64) throw new FormatError("more than 64 proof hashes");
  return { extra, index, hashes, checkpoint };
}
