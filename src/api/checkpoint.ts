/**
 * seam's signed checkpoints as a library: open a checkpoint note with
 * verifier keys, and check an inclusion proof (a c2sp.org/tlog-proof made by
 * `seam verify --prove LINE`) without the ledger. Formats: C2SP
 * signed-note, tlog-checkpoint and tlog-proof; docs/ledger-format.md says how
 * seam uses them. Nothing here throws for bad input: results say why.
 *
 *   import { verifyProof } from "seam-mcp/checkpoint";
 *   const r = verifyProof(proofText, [verifierKey]);
 *   if (r.verdict === "ok") console.log(r.entry); // the ledger line, proven
 */
import { parseCheckpointText } from "../checkpoint/checkpoint.ts";
import { encodeBase64, keyLabel, NoteError, newVerifier, openNote, type Verifier } from "../checkpoint/note.ts";
import { checkProof } from "../checkpoint/proof.ts";

export type CheckpointResult =
  | {
      ok: true;
      /** `seam-ledger/<32 hex>`: which ledger. */
      origin: string;
      /** How many ledger lines the checkpoint covers. */
      size: number;
      /** The Merkle root of those lines, base64 as in the note. */
      root: string;
      /** The keys (name+id) whose signatures verified. */
      signedBy: string[];
    }
  | { ok: false; reason: string };

export interface ProofResult {
  /** ok: the line is in the signed checkpoint's tree; inconclusive: no key given to check the signature. */
  verdict: "ok" | "broken" | "inconclusive";
  problem: string | null;
  origin: string | null;
  /** The proven line's number (1-based), and the checkpoint's size in lines. */
  line: number | null;
  size: number | null;
  signedBy: string[];
  /** The ledger line the proof carries. */
  entry: string | null;
}

/** Verifier keys in the note format (`name+hash+base64`); one that is not a key is a reason, never an echo of it. */
function verifiers(keys: readonly string[]): Verifier[] | { reason: string } {
  const out: Verifier[] = [];
  for (const [i, k] of keys.entries()) {
    try {
      out.push(newVerifier(k.trim()));
    } catch (err) {
      return { reason: `key ${i + 1} is not a verifier key (${err instanceof Error ? err.message : String(err)})` };
    }
  }
  return out;
}

/** Opens a signed checkpoint note: at least one of `keys` must have signed it, and its text must be a checkpoint. */
export function verifyCheckpoint(note: string, keys: readonly string[]): CheckpointResult {
  const vs = verifiers(keys);
  if (!Array.isArray(vs)) return { ok: false, reason: vs.reason };
  if (vs.length === 0) return { ok: false, reason: "no key given: a checkpoint is only as good as its signature" };
  try {
    const opened = openNote(note, vs);
    const c = parseCheckpointText(opened.text);
    return {
      ok: true,
      origin: c.origin,
      size: c.size,
      root: encodeBase64(c.root),
      signedBy: opened.verified.map((s) => keyLabel(s.name, s.id)),
    };
  } catch (err) {
    if (err instanceof NoteError && err.kind === "unverified")
      return { ok: false, reason: "not signed by any of the given keys" };
    return { ok: false, reason: err instanceof Error ? err.message : String(err) };
  }
}

/** Checks a tlog-proof: its checkpoint is signed by one of `keys` and the line it carries is in that checkpoint's tree. */
export function verifyProof(proof: string, keys: readonly string[]): ProofResult {
  const vs = verifiers(keys);
  if (!Array.isArray(vs))
    return {
      verdict: "broken",
      problem: vs.reason,
      origin: null,
      line: null,
      size: null,
      signedBy: [],
      entry: null,
    };
  const c = checkProof(proof, vs);
  return {
    verdict: c.verdict,
    problem: c.problem,
    origin: c.origin,
    line: c.index === null ? null : c.index + 1,
    size: c.size,
    signedBy: c.signedBy,
    entry: c.entry === null ? null : new TextDecoder().decode(c.entry),
  };
}
