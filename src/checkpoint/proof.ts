/**
 * Inclusion proofs of ledger lines (`seam verify --prove`, `--check-proof`):
 * the C2SP tlog-proof of a line against a holding checkpoint, cosigned as
 * the ledger's cosignature rows say, and its check without the ledger (docs/ledger-format.md, "Checkpoints").
 */
import type { Result } from "../base/result.ts";
import { getField, type Json, type JsonObject } from "../core/json.ts";
import { LineSplitter } from "../core/lines.ts";
import { isSeamsOwn } from "../format/row.ts";
import type { VerifyOptions } from "../verify/ledger-verifier.ts";
import { type Checkpoint, formatTlogProof, parseCheckpointText, parseTlogProof } from "./checkpoint.ts";
import { type CheckpointCheckOptions, type LedgerCheckpoint, verifyCheckpointed } from "./checkpoint-verifier.ts";
import { type Hash, inclusionRanges, LineTree, leafHash, RangeHasher, verifyInclusion } from "./merkle.ts";
import { keyLabel, NoteError, openNote, parseNote, type Verifier } from "./note.ts";
import { cosignersOn, type Policy, quorumOn } from "./policy.ts";

/**
 * The tlog-proof of ledger line `line`: one pass to verify (with `sopts`),
 * a second over the lines to hash the proof's ranges. `open` gives the
 * ledger's bytes afresh each time. The proof's extra data is the line
 * itself, so that it checks without the ledger, and its checkpoint note
 * carries the cosignature lines of the ledger's `cosignature` rows for that
 * checkpoint (c2sp.org/signed-note: a cosignature is one more signature
 * line), so that `--check-proof --policy` needs nothing else. Which
 * checkpoint (pickCheckpoint): with a policy, the smallest holding one that
 * covers the line and is cosigned by its quorum; without, the smallest
 * covering one cosigned by the most witnesses, or the latest when none is
 * cosigned. Resolves to the proof text, or why there is none.
 */
export async function proveLine(
  open: () => AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  line: number,
  vopts: VerifyOptions,
  sopts: CheckpointCheckOptions,
): Promise<Result<{ proof: string }>> {
  const held: LedgerCheckpoint[] = [];
  /** The cosignature rows of sizes from `line` on, by size. */
  const rows = new Map<number, CosignatureRow[]>();
  const onRow = vopts.onRow;
  const { checkpointReport: cr } = await verifyCheckpointed(
    open(),
    {
      ...vopts,
      onRow: (row, n, chained) => {
        const c = cosignatureRow(row, line);
        if (c !== null) {
          const same = rows.get(c.size);
          if (same === undefined) rows.set(c.size, [c]);
          else same.push(c);
        }
        onRow?.(row, n, chained);
      },
    },
    // The policy picks the checkpoint below; the pass itself checks the log's signatures only.
    { ...sopts, policy: undefined, onHeld: (c) => held.push(c) },
  );
  const latest = cr.latest;
  if (latest === null)
    return {
      ok: false,
      reason: cr.checkpoints > 0 ? "no checkpoint in the ledger holds" : "the ledger has no checkpoint",
      hint: "checkpoints are written by seam wrap --sign KEYFILE",
    };
  if (line > latest.size)
    return {
      ok: false,
      reason: `line ${line} is not sealed: the latest checkpoint (line ${latest.line}) covers lines 1..${latest.size}`,
    };
  const picked = pickCheckpoint(
    held.filter((c) => c.size >= line),
    rows,
    sopts.policy,
  );
  if (picked === null)
    return {
      ok: false,
      reason: `no checkpoint covering line ${line} is cosigned by quorum ${sopts.policy!.quorumName}`,
      hint: "without --policy, --prove uses the checkpoint cosigned by the most witnesses",
    };
  const cp = picked.checkpoint;
  const index = line - 1;
  const hasher = new RangeHasher(inclusionRanges(index, cp.size));
  const entry = await collectLeaves(open(), cp.size, index, (leaf) => hasher.append(leaf));
  if (entry === null) return { ok: false, reason: "the ledger changed between the two passes" };
  const proof = { extra: entry, index, hashes: hasher.hashes(), checkpoint: picked.note };
  const check = verifyInclusion(index, cp.size, leafHash(entry), proof.hashes, Buffer.from(cp.root, "base64"));
  if (!check.ok)
    return {
      ok: false,
      reason: `the proof does not verify (${check.reason}): the ledger changed between the two passes`,
    };
  return { ok: true, proof: formatTlogProof(proof) };
}

/** A `cosignature` row's checkpoint (size, root) and signature line. */
interface CosignatureRow {
  size: number;
  root: string;
  line: string;
}

/** The cosignature row `row` when it is one of a checkpoint of at least `size` lines; else null. */
function cosignatureRow(row: JsonObject | { readonly [k: string]: Json }, size: number): CosignatureRow | null {
  if (getField(row, "evt") !== "cosignature" || !isSeamsOwn(getField(row, "seam"))) return null;
  const s = getField(row, "size");
  const root = getField(row, "root");
  const line = getField(row, "cosignature");
  if (typeof s !== "number" || s < size || typeof root !== "string" || typeof line !== "string") return null;
  return line.includes("\n") ? null : { size: s, root, line };
}

/**
 * The note of checkpoint `c` with the cosignature rows' lines for it
 * appended (those of its size and root), one line per key, leaving out keys
 * that sign the note already; with a policy, only lines that verify for one
 * of its witnesses (a bad line by a known key would make the note open for
 * none). Returns the note and how many lines it gained.
 */
function cosignedNote(
  c: LedgerCheckpoint,
  rows: ReadonlyMap<number, readonly CosignatureRow[]>,
  policy: Policy | undefined,
): { note: string; added: number } {
  let note = c.note;
  let added = 0;
  const keys = new Set<string>();
  try {
    for (const s of parseNote(note).sigs) keys.add(keyLabel(s.name, s.id));
  } catch {
    return { note, added };
  }
  for (const r of rows.get(c.size) ?? []) {
    if (r.root !== c.root) continue;
    const withLine = `${note}${r.line}\n`;
    let label: string;
    try {
      const s = parseNote(withLine).sigs.at(-1)!;
      label = keyLabel(s.name, s.id);
    } catch {
      continue;
    }
    if (keys.has(label)) continue;
    if (policy !== undefined && cosignersOn(policy, `${c.note}${r.line}\n`).length === 0) continue;
    keys.add(label);
    note = withLine;
    added++;
  }
  return { note, added };
}

/**
 * Which of the holding checkpoints covering the line (`covering`, in ledger
 * order) a proof is made against, with its note cosigned. With a policy: the
 * smallest whose cosignatures make its quorum (null when none does), a
 * proof that --check-proof --policy accepts. Without: the one cosigned by
 * the most witnesses, the smallest of those (it is the first made, and
 * stays the same as the ledger grows); the latest when none is cosigned.
 */
function pickCheckpoint(
  covering: readonly LedgerCheckpoint[],
  rows: ReadonlyMap<number, readonly CosignatureRow[]>,
  policy: Policy | undefined,
): { checkpoint: LedgerCheckpoint; note: string } | null {
  const bySize = [...covering].sort((a, b) => a.size - b.size);
  if (policy !== undefined) {
    for (const c of bySize) {
      const { note } = cosignedNote(c, rows, policy);
      if (quorumOn(policy, note).ok) return { checkpoint: c, note };
    }
    return null;
  }
  let best: { checkpoint: LedgerCheckpoint; note: string; added: number } | null = null;
  for (const c of bySize) {
    const n = cosignedNote(c, rows, undefined);
    if (best === null || n.added > best.added) best = { checkpoint: c, ...n };
  }
  if (best === null) return null;
  if (best.added === 0) {
    const latest = bySize.at(-1)!;
    return { checkpoint: latest, note: latest.note };
  }
  return best;
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
