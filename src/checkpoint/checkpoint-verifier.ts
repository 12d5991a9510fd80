/**
 * The checkpoint layer of `seam verify --key` (and `--witness`, `--state`;
 * proofs are src/checkpoint/proof.ts, its report lines src/checkpoint/checkpoint-report.ts).
 * It wraps the chain verifier of src/verify/ledger-verifier.ts: the same bytes, one
 * line at a time, go to both, and the Merkle tree of the lines
 * (src/checkpoint/merkle.ts) is kept alongside, so memory stays flat.
 *
 * Each `checkpoint` row (of either transport, mcp-stdio or mcp-http) on line L must hold as docs/ledger-format.md
 * ("Checkpoints") says, or it is a break at line L. The latest checkpoint
 * that holds seals the file through its size: the report says `sealed through line X; unsealed tail: Y rows` (Y counts the
 * object rows after line X, checkpoint and cosignature rows not included). With a key, a
 * file where no checkpoint holds is a finding (inconclusive), and so is a
 * session whose session_begin names one of the keys (`checkpoint_key`, as
 * `wrap --sign` writes it) without a holding checkpoint of its own.
 *
 * Against what the writer cannot roll back (a witness file, remembered
 * state): src/checkpoint/rollback.ts.
 */

import { guardSource } from "../base/byte-source.ts";
import { getField, type Json, type JsonObject } from "../core/json.ts";
import { LineSplitter } from "../core/lines.ts";
import type { Break, BreakKind, FindingKind } from "../format/kinds.ts";
import { isSeamsOwn } from "../format/row.ts";
import { LedgerVerifier, type VerifyOptions, type VerifyReport } from "../verify/ledger-verifier.ts";
import { verifyLedger } from "../verify/verify-ledger.ts";
import { type Checkpoint, checkpointText, FormatError, ledgerOrigin, parseCheckpointText } from "./checkpoint.ts";
import { equalHash, HASH_BYTES, type Hash, LineTree } from "./merkle.ts";
import { decodeBase64, encodeBase64, keyLabel, noteProblem, openNote, parseNote, type Verifier } from "./note.ts";
import { cosignersOn, type Policy, quorumHolds } from "./policy.ts";
import { type CheckpointFinding, RollbackCheck } from "./rollback.ts";

export interface CheckpointCheckOptions {
  /** The keys checkpoints must be signed with (--key); none: signatures are not checked. */
  keys: readonly Verifier[];
  /** The witness file: its name (for messages) and its text. */
  witness?: { name: string; text: string };
  /** The note remembered for an origin (--state), or null. */
  remembered?: (origin: string) => string | null;
  /** The origin remembered for this ledger's path (--state), or null. */
  rememberedOrigin?: string | null;
  /** --policy: the checkpoints that hold (rows, and the witness file's that the ledger extends) are judged by its quorum. */
  policy?: Policy;
  /**
   * The ledger's bytes afresh, for comparing cosigned checkpoints of sizes
   * the ledger has no holding checkpoint of with its own root at that size
   * (known only after the size has gone by). None (stdin): not compared, and
   * the report says so.
   */
  reread?: () => AsyncIterable<Uint8Array> | Iterable<Uint8Array>;
  /** Called with each checkpoint row that holds, in ledger order (--prove picks one of them). */
  onHeld?: (c: LedgerCheckpoint) => void;
}

export interface LedgerCheckpoint {
  line: number;
  size: number;
  root: string;
  note: string;
}

export interface CheckpointReport {
  origin: string | null;
  /** Complete lines in the file (the tree's size). */
  lines: number;
  /** Checkpoint rows seen, and those that hold. */
  checkpoints: number;
  valid: number;
  /** Lines the latest holding checkpoint seals; 0 when none. */
  sealed_through: number;
  /** Object rows after that line, checkpoint and cosignature rows not counted. */
  unsealed_rows: number;
  latest: LedgerCheckpoint | null;
  /** The given keys, as name+id. */
  keys: string[];
  witness: { file: string; checkpoints: number } | null;
  /** The size --state remembered for this origin, when it did. */
  remembered: number | null;
  /** With --policy: the largest checkpoint that holds and is cosigned by the quorum (through 0: none). */
  witnessed: { quorum: string; through: number; by: string[] } | null;
  breaks: Break[];
  findings: string[];
  /** The kind of each finding, in the same order. */
  finding_kinds: FindingKind[];
  /** The witness and state findings (each also a break), with their evidence. */
  evidence: CheckpointFinding[];
  notes: string[];
}

/** Pushes bytes to the chain verifier and the tree in step; `end()` merges both verdicts. */
export class CheckpointVerifier {
  private readonly v: LedgerVerifier;
  private readonly tree = new LineTree();
  /** Keeps nothing: the tree hashes a line's pieces as they come (an unterminated last line is no leaf). */
  private readonly lines = new LineSplitter(0);
  private readonly keyLabels: string[];
  private origin: string | null = null;
  /** The witness and the remembered state, which the ledger must extend. */
  private readonly rollback: RollbackCheck;
  private readonly bySize = new Map<number, LedgerCheckpoint>();
  /** With --policy: the policy witnesses whose cosignature rows hold, by the size of the checkpoint they cosign. */
  private readonly cosignedBy = new Map<number, Set<string>>();
  /** With --policy: cosignature rows of sizes with no holding checkpoint, compared with the ledger's root at the end. */
  private readonly unmatched: { line: number; size: number; root: Uint8Array; by: string[] }[] = [];
  private latest: LedgerCheckpoint | null = null;
  private checkpoints = 0;
  private valid = 0;
  private unsealed = 0;
  private ignoredSignatures = 0;
  /** Sessions whose session_begin names a checkpoint key among the given ones, and whether a checkpoint of theirs held. */
  private readonly announced = new Map<string, boolean>();
  private readonly breaks: Break[] = [];
  private readonly notes: string[] = [];
  private failed = false;
  private result: { report: VerifyReport; checkpointReport: CheckpointReport } | null = null;

  constructor(
    vopts: VerifyOptions,
    private readonly opts: CheckpointCheckOptions,
  ) {
    // Three fields of most rows, read while onRow runs: lent, not parsed whole.
    const onRow = vopts.onRow;
    this.v = new LedgerVerifier({
      ...vopts,
      onRow: (row, n, chained) => {
        this.row(row, n);
        onRow?.(row, n, chained);
      },
      rowsOnLoan: true,
    });
    this.keyLabels = opts.keys.map((k) => keyLabel(k.name, k.id));
    this.rollback = new RollbackCheck(
      opts,
      (note) => (opts.keys.length > 0 ? openNote(note, opts.keys).text : parseNote(note).text),
      this.keyLabels,
      this.breaks,
      this.tree,
    );
  }

  get progress(): { bytes: number; rows: number } {
    return this.v.progress;
  }

  /** The checkpoint layer's own report (after end() or fail()). */
  get checkpointReport(): CheckpointReport {
    return this.finish().checkpointReport;
  }

  push(chunk: Uint8Array): void {
    this.lines.feed(chunk);
    for (let p = this.lines.next(); p !== null; p = this.lines.next()) {
      // The chain verifier judges the line first: a checkpoint on it sees the tree of the lines before it.
      this.v.push(p.raw);
      if (p.kind === "over") this.tree.add(p.bytes);
      else {
        this.tree.endLine(p.bytes);
        this.lineDone();
      }
    }
  }

  fail(reason: string): VerifyReport {
    this.failed = true;
    this.v.fail(reason);
    return this.finish().report;
  }

  end(): VerifyReport {
    return this.finish().report;
  }

  // ---- lines and rows ----

  private lineDone(): void {
    const size = this.tree.size;
    if (size === 1) {
      this.origin = ledgerOrigin(this.tree.firstLeaf!);
      this.rollback.firstLine(this.origin);
    }
    this.rollback.lineDone(size);
  }

  private row(row: JsonObject | { readonly [k: string]: Json }, n: number): void {
    const evt = getField(row, "evt");
    const session = getField(row, "session");
    if (evt === "cosignature" && isSeamsOwn(getField(row, "seam"))) return this.cosignature(row, n);
    if (evt !== "checkpoint" || !isSeamsOwn(getField(row, "seam"))) {
      this.unsealed++;
      const key = getField(row, "checkpoint_key");
      if (
        evt === "session_begin" &&
        typeof session === "string" &&
        typeof key === "string" &&
        this.keyLabels.includes(key)
      )
        this.announced.set(session, false);
      return;
    }
    this.checkpoints++;
    const problem = this.checkCheckpoint(row, n);
    if (problem !== null) this.breaks.push({ line: n, kind: problem.kind, message: `line ${n}: ${problem.message}` });
    else if (typeof session === "string" && this.announced.has(session)) this.announced.set(session, true);
  }

  /**
   * A cosignature row (docs/ledger-format.md, "Cosignature row"), judged
   * only under --policy: its line, appended to the note of the checkpoint
   * that holds at its size with its root, counts for the policy witnesses it
   * verifies for. A policy witness's valid cosignature of a root that is not
   * the ledger's own at that size is a break: the witness saw lines that are
   * not these. Where no checkpoint holds at the size (a rewrite that moved
   * or dropped the checkpoint rows), the ledger's root at it is known only
   * once the size has gone by, so the row waits for compareUnmatched().
   */
  private cosignature(row: JsonObject | { readonly [k: string]: Json }, n: number): void {
    const policy = this.opts.policy;
    const size = getField(row, "size");
    const root = getField(row, "root");
    const line = getField(row, "cosignature");
    if (policy === undefined || typeof size !== "number" || typeof root !== "string" || typeof line !== "string")
      return;
    if (line.includes("\n") || !Number.isSafeInteger(size) || size < 1) return;
    const held = this.bySize.get(size);
    if (held === undefined) {
      const other = decodeBase64(root);
      if (other === null || other.length !== HASH_BYTES || this.origin === null) return;
      const by = cosignersOn(policy, `${checkpointText({ origin: this.origin, size, root: other })}\n${line}\n`);
      if (by.length > 0) this.unmatched.push({ line: n, size, root: other, by });
      return;
    }
    if (held.root === root) {
      const by = cosignersOn(policy, `${held.note}${line}\n`);
      if (by.length === 0) return;
      const set = this.cosignedBy.get(size) ?? new Set<string>();
      for (const w of by) set.add(w);
      this.cosignedBy.set(size, set);
      return;
    }
    const other = decodeBase64(root);
    if (other === null || other.length !== HASH_BYTES || this.origin === null) return;
    const by = cosignersOn(policy, `${checkpointText({ origin: this.origin, size, root: other })}\n${line}\n`);
    if (by.length > 0)
      this.breaks.push({
        line: n,
        kind: "cosignature_fork",
        message: `line ${n}: ${by.join(", ")} cosigned another root for size ${size} than the checkpoint on line ${held.line}: the lines it witnessed are not these`,
      });
  }

  /** null when the checkpoint row on line n holds; else what does not. */
  private checkCheckpoint(
    row: JsonObject | { readonly [k: string]: Json },
    n: number,
  ): { kind: BreakKind; message: string } | null {
    const note = getField(row, "note");
    if (typeof note !== "string") return { kind: "checkpoint_no_note", message: "checkpoint row without a note" };
    let text: string;
    try {
      if (this.opts.keys.length > 0) {
        const opened = openNote(note, this.opts.keys);
        this.ignoredSignatures += opened.unverified.length;
        text = opened.text;
      } else {
        text = parseNote(note).text;
      }
    } catch (e) {
      return { kind: "checkpoint_signature", message: `checkpoint ${noteProblem(e, this.keyLabels)}` };
    }
    let c: Checkpoint;
    try {
      c = parseCheckpointText(text);
    } catch (e) {
      const why = e instanceof FormatError ? e.message : String(e);
      return { kind: "checkpoint_not_checkpoint", message: `checkpoint note is not a checkpoint: ${why}` };
    }
    const root = encodeBase64(c.root);
    if (getField(row, "size") !== c.size || getField(row, "root") !== root)
      return { kind: "checkpoint_fields", message: "checkpoint row's size or root differ from its note's" };
    if (this.origin === null) return { kind: "checkpoint_before_lines", message: "checkpoint before any line" };
    if (c.origin !== this.origin)
      return {
        kind: "checkpoint_origin",
        message: `checkpoint origin ${c.origin} is not this ledger's (${this.origin})`,
      };
    if (c.size !== n - 1)
      return {
        kind: "checkpoint_size",
        message: `checkpoint size ${c.size}, but ${n - 1} line${n - 1 === 1 ? "" : "s"} precede it`,
      };
    if (!equalHash(this.tree.root(), c.root))
      return { kind: "checkpoint_root", message: `checkpoint root does not match lines 1..${c.size}` };
    this.valid++;
    this.unsealed = 0;
    this.latest = { line: n, size: c.size, root, note };
    this.bySize.set(c.size, this.latest);
    this.opts.onHeld?.(this.latest);
    return null;
  }

  // ---- the end ----

  /**
   * With --policy, before end(): the cosignature rows of sizes with no
   * holding checkpoint, each compared with the root of the ledger's first
   * `size` lines, hashed on a second reading. One that differs is a
   * `cosignature_fork`; so is one of more lines than the ledger has. Two
   * cosigned checkpoints that are not consistent with each other cannot both
   * match the ledger, so at least one of them is reported this way.
   */
  async compareUnmatched(): Promise<void> {
    if (this.failed || this.unmatched.length === 0) return;
    const reread = this.opts.reread;
    const sizes = new Set(this.unmatched.map((u) => u.size));
    if (reread === undefined) {
      this.notes.push(
        `cosignatures of ${sizes.size} size${sizes.size === 1 ? "" : "s"} without a checkpoint of the ledger's own not compared with its lines (read once, from stdin)`,
      );
      return;
    }
    const roots = new Map<number, Hash>();
    let last = 0;
    for (const size of sizes) last = Math.max(last, size);
    const tree = new LineTree();
    const lines = new LineSplitter(0);
    try {
      for await (const chunk of guardSource(reread())) {
        if (!(chunk instanceof Uint8Array)) break;
        lines.feed(chunk);
        for (let p = lines.next(); p !== null && tree.size < last; p = lines.next()) {
          if (p.kind === "over") tree.add(p.bytes);
          else {
            tree.endLine(p.bytes);
            if (sizes.has(tree.size)) roots.set(tree.size, tree.root());
          }
        }
        if (tree.size >= last) break;
      }
    } catch {
      // A file that cannot be read again: what was hashed is compared, the rest is noted below.
    }
    let notCompared = 0;
    for (const u of this.unmatched) {
      const ours = roots.get(u.size);
      if (ours === undefined && u.size <= this.tree.size) notCompared++;
      else if (ours === undefined)
        this.breaks.push({
          line: u.line,
          kind: "cosignature_fork",
          message: `line ${u.line}: ${u.by.join(", ")} cosigned size ${u.size}, but the ledger has ${this.tree.size} lines: the lines it witnessed are not these`,
        });
      else if (!equalHash(ours, u.root))
        this.breaks.push({
          line: u.line,
          kind: "cosignature_fork",
          message: `line ${u.line}: ${u.by.join(", ")} cosigned another root for size ${u.size} than lines 1..${u.size} have: the lines it witnessed are not these`,
        });
    }
    if (notCompared > 0)
      this.notes.push(
        `${notCompared} cosignature${notCompared === 1 ? "" : "s"} not compared with the ledger's lines: the file could not be read again`,
      );
  }

  /**
   * With --policy: the largest checkpoint that holds and whose cosignatures
   * make the quorum. Candidates are the ledger's own checkpoint rows that
   * held, and the witness file's checkpoints that the ledger extends (a
   * cosigned note need not be in the ledger: witnesses answer the writer).
   */
  private witnessed(): CheckpointReport["witnessed"] {
    const policy = this.opts.policy;
    if (policy === undefined) return null;
    const notes: { size: number; note: string; rows?: Set<string> }[] = [...this.bySize.values()].map((c) => ({
      size: c.size,
      note: c.note,
      rows: this.cosignedBy.get(c.size),
    }));
    if (!this.failed)
      for (const w of this.rollback.witnessed)
        if (w.checkpoint.origin === this.origin && this.rollback.extendedTo(w.checkpoint))
          notes.push({ size: w.checkpoint.size, note: w.note });
    let best = { quorum: policy.quorumName, through: 0, by: [] as string[] };
    for (const n of notes) {
      if (n.size <= best.through) continue;
      // Cosignatures in the note itself (a --cosignatures file's) and in cosignature rows count together.
      const by = new Set([...cosignersOn(policy, n.note), ...(n.rows ?? [])]);
      if (quorumHolds(policy, by))
        best = {
          quorum: policy.quorumName,
          through: n.size,
          by: policy.witnesses.map((w) => w.name).filter((w) => by.has(w)),
        };
    }
    return best;
  }

  private finish(): { report: VerifyReport; checkpointReport: CheckpointReport } {
    if (this.result !== null) return this.result;
    const chain = this.v.end();
    if (this.failed)
      this.notes.push("reading stopped: the ledger was not compared with the witness or remembered state");
    else this.rollback.judge({ origin: this.origin, latest: this.latest, bySize: this.bySize });
    const findings: string[] = [];
    const finding_kinds: FindingKind[] = [];
    const find = (kind: FindingKind, message: string) => {
      findings.push(message);
      finding_kinds.push(kind);
    };
    if (this.opts.keys.length > 0 && this.valid === 0 && chain.rows > 0)
      find("no_checkpoint_holds", `no checkpoint signed by ${this.keyLabels.join(" or ")} holds: nothing is sealed`);
    const witnessed = this.witnessed();
    if (witnessed !== null && witnessed.through === 0 && this.valid > 0)
      find(
        "no_quorum_checkpoint",
        `no checkpoint that holds is cosigned by quorum ${witnessed.quorum}: nothing is witnessed`,
      );
    for (const [session, sealed] of this.announced) {
      if (!sealed)
        find(
          "session_checkpoint_missing",
          `session ${session}: its session_begin announces checkpoints, but none of its own holds (still running, or removed)`,
        );
    }
    if (this.ignoredSignatures > 0)
      this.notes.push(
        `${this.ignoredSignatures} checkpoint signature${this.ignoredSignatures === 1 ? "" : "s"} by other keys ignored`,
      );
    if (this.opts.keys.length === 0 && this.checkpoints > 0)
      this.notes.push("checkpoint signatures not checked (no key given)");
    const cr: CheckpointReport = {
      origin: this.origin,
      lines: this.tree.size,
      checkpoints: this.checkpoints,
      valid: this.valid,
      sealed_through: this.latest?.size ?? 0,
      unsealed_rows: this.unsealed,
      latest: this.latest,
      keys: this.keyLabels,
      witness: this.opts.witness ? { file: this.opts.witness.name, checkpoints: this.rollback.witnessed.length } : null,
      remembered: this.rollback.remembered?.checkpoint.size ?? null,
      witnessed,
      breaks: this.breaks,
      findings,
      finding_kinds,
      evidence: this.rollback.evidence,
      notes: this.notes,
    };
    this.result = { report: mergeCheckpoints(chain, cr), checkpointReport: cr };
    return this.result;
  }
}

/**
 * The chain report with the checkpoint layer's breaks, findings and notes
 * added: broken when either is; the first break is the one on the earliest
 * line (an unreadable file's stays first; witness and state breaks, with no
 * line, come last).
 */
export function mergeCheckpoints(r: VerifyReport, cr: CheckpointReport): VerifyReport {
  const breaks = r.breaks + cr.breaks.length;
  const candidates = [...(r.first_break ? [r.first_break] : []), ...cr.breaks];
  const rank = (b: Break) => (b === r.first_break && b.line === null ? -1 : (b.line ?? Infinity));
  const first_break = candidates.reduce<Break | null>((a, b) => (a === null || rank(b) < rank(a) ? b : a), null);
  const findings = [...r.findings, ...cr.findings];
  const break_kinds = { ...r.break_kinds };
  for (const b of cr.breaks) break_kinds[b.kind] = (break_kinds[b.kind] ?? 0) + 1;
  const verdict =
    breaks > 0 ? "broken" : r.verdict === "inconclusive" || cr.findings.length > 0 ? "inconclusive" : "ok";
  return {
    ...r,
    verdict,
    ok: verdict === "ok" ? true : verdict === "broken" ? false : null,
    breaks,
    first_break,
    break_kinds,
    findings,
    finding_kinds: [...r.finding_kinds, ...cr.finding_kinds],
    notes: [...r.notes, ...cr.notes],
  };
}

/** Verifies a ledger with its checkpoints from a byte source; never throws. */
export async function verifyCheckpointed(
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  vopts: VerifyOptions & { onProgress?: (p: { bytes: number; rows: number }) => void },
  sopts: CheckpointCheckOptions,
): Promise<{ report: VerifyReport; checkpointReport: CheckpointReport }> {
  const sv = new CheckpointVerifier(vopts, sopts);
  let failed: VerifyReport | null = null;
  await verifyLedger(source, vopts, {
    push: (chunk) => sv.push(chunk),
    fail: (reason) => {
      failed = sv.fail(reason);
      return failed;
    },
    // The report is made below, once the cosignatures that had to wait for the whole file are compared.
    end: () => null as unknown as VerifyReport,
    get progress() {
      return sv.progress;
    },
  });
  if (failed === null) await sv.compareUnmatched();
  const report = failed ?? sv.end();
  return { report, checkpointReport: sv.checkpointReport };
}
