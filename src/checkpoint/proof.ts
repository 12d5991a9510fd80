/**
 * Inclusion proofs of ledger lines (`seam verify --prove`, `--check-proof`):
 * the C2SP tlog-proof of a line against the latest holding checkpoint, and
 * its check without the ledger (docs/ledger-format.md, "Checkpoints").
 */
import type { Result } from "../base/result.ts";
import { LineSplitter } from "../core/lines.ts";
import type { VerifyOptions } from "../verify/ledger-verifier.ts";
import { type Checkpoint, formatTlogProof, parseCheckpointText, parseTlogProof } from "./checkpoint.ts";
import { type CheckpointCheckOptions, verifyCheckpointed } from "./checkpoint-verifier.ts";
import { type Hash, inclusionRanges, LineTree, leafHash, RangeHasher, verifyInclusion } from "./merkle.ts";
import { keyLabel, NoteError, openNote, parseNote, type Verifier } from "./note.ts";
import { type Policy, quorumOn } from "./policy.ts";

/**
 * The tlog-proof of ledger line `line` against the latest holding
 * checkpoint: one pass to verify (with `sopts`), a second over the lines to
 * hash the proof's ranges. `open` gives the ledger's bytes afresh each time.
 * The proof's extra data is the line itself, so that it checks without the
 * ledger. Resolves to the proof text, or why there is none.
 */
export async function proveLine(
  open: () => AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  line: number,
  vopts: VerifyOptions,
  sopts: CheckpointCheckOptions,
): Promise<Result<{ proof: string }>> {
  const { checkpointReport: cr } = await verifyCheckpointed(open(), vopts, sopts);
  const cp = cr.latest;
  if (cp === null)
    return {
      ok: false,
      reason: cr.checkpoints > 0 ? "no checkpoint in the ledger holds" : "the ledger has no checkpoint",
      hint: "checkpoints are written by seam wrap --sign KEYFILE",
    };
  if (line > cp.size)
    return {
      ok: false,
      reason: `line ${line} is not sealed: the latest checkpoint (line ${cp.line}) covers lines 1..${cp.size}`,
    };
  const index = line - 1;
  const hasher = new RangeHasher(inclusionRanges(index, cp.size));
  const entry = await collectLeaves(open(), cp.size, index, (leaf) => hasher.append(leaf));
  if (entry === null) return { ok: false, reason: "the ledger changed between the two passes" };
  const proof = { extra: entry, index, hashes: hasher.hashes(), checkpoint: cp.note };
  const check = verifyInclusion(index, cp.size, leafHash(entry), proof.hashes, Buffer.from(cp.root, "base64"));
  if (!check.ok)
    return {
      ok: false,
      reason: `the proof does not verify (${check.reason}): the ledger changed between the two passes`,
    };
  return { ok: true, proof: formatTlogProof(proof) };
}

/** Feeds the leaf hashes of lines 1..size to `onLeaf`; returns the bytes of leaf `keep`, or null when the file has fewer lines. */
async function collectLeaves(
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  size: number,
  keep: number,
  onLeaf: (leaf: Hash) => void,
): Promise<Uint8Array | null> {
  const tree = new LineTree();
  const lines = new LineSplitter(0);
  let kept: Uint8Array | null = null;
  let pieces: Uint8Array[] = [];
  for await (const chunk of source as AsyncIterable<Uint8Array>) {
    lines.feed(chunk);
    for (let p = lines.next(); p !== null && tree.size < size; p = lines.next()) {
      if (tree.size === keep) pieces.push(p.bytes.slice());
      if (p.kind === "over") {
        tree.add(p.bytes);
        continue;
      }
      onLeaf(tree.endLine(p.bytes));
      if (tree.size === keep + 1) {
        kept = Buffer.concat(pieces);
        pieces = [];
      }
    }
    if (tree.size >= size) break;
  }
  return tree.size >= size ? kept : null;
}

export interface ProofCheck {
  verdict: "ok" | "broken" | "inconclusive";
  /** Why, when not ok. */
  problem: string | null;
  origin: string | null;
  index: number | null;
  size: number | null;
  signedBy: string[];
  /** With a policy: its witnesses whose cosignatures on the checkpoint verify, and whether they make its quorum. */
  witnessed: { quorum: string; ok: boolean; by: string[] } | null;
  entry: Uint8Array | null;
}

/**
 * Checks a tlog-proof without the ledger: its checkpoint opens with `keys`
 * (none given: not checked, and the verdict is at best inconclusive), and
 * its extra data (the ledger line) is leaf `index` of the checkpoint's tree.
 * With a policy (its log keys are `keys`), the cosignature lines on the
 * checkpoint must make its quorum, or the verdict is inconclusive.
 */
export function checkProof(text: string, keys: readonly Verifier[], policy?: Policy): ProofCheck {
  const out: ProofCheck = {
    verdict: "broken",
    problem: null,
    origin: null,
    index: null,
    size: null,
    signedBy: [],
    witnessed: null,
    entry: null,
  };
  let p;
  try {
    p = parseTlogProof(text);
  } catch (e) {
    return { ...out, problem: `not a tlog-proof: ${e instanceof Error ? e.message : String(e)}` };
  }
  out.index = p.index;
  out.entry = p.extra;
  let noteText: string;
  try {
    if (keys.length > 0) {
      const opened = openNote(p.checkpoint, keys);
      noteText = opened.text;
      out.signedBy = opened.verified.map((s) => keyLabel(s.name, s.id));
    } else {
      noteText = parseNote(p.checkpoint).text;
    }
  } catch (e) {
    const m =
      e instanceof NoteError && e.kind === "unverified"
        ? `the checkpoint is not signed by ${keys.map((k) => keyLabel(k.name, k.id)).join(" or ")}`
        : `the checkpoint ${e instanceof NoteError ? e.message.replace(/^malformed note$/, "note is malformed") : String(e)}`;
    return { ...out, problem: m };
  }
  let c: Checkpoint;
  try {
    c = parseCheckpointText(noteText);
  } catch (e) {
    return {
      ...out,
      problem: `the checkpoint note is not a checkpoint: ${e instanceof Error ? e.message : String(e)}`,
    };
  }
  out.origin = c.origin;
  out.size = c.size;
  if (p.extra === null)
    return { ...out, problem: "the proof carries no entry (no extra line): there is nothing to check it for" };
  const v = verifyInclusion(p.index, c.size, leafHash(p.extra), p.hashes, c.root);
  if (!v.ok) return { ...out, problem: `the inclusion proof does not hold: ${v.reason}` };
  if (keys.length === 0)
    return {
      ...out,
      verdict: "inconclusive",
      problem: "the proof holds, but no key was given to check who signed its checkpoint",
    };
  if (policy !== undefined) {
    out.witnessed = { quorum: policy.quorumName, ...quorumOn(policy, p.checkpoint) };
    if (!out.witnessed.ok)
      return {
        ...out,
        verdict: "inconclusive",
        problem: `the proof holds, but its checkpoint is not cosigned by quorum ${policy.quorumName}`,
      };
  }
  return { ...out, verdict: "ok" };
}
