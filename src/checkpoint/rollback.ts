/**
 * The ledger against what its writer cannot roll back (`seam verify
 * --witness`, `--state`), for src/checkpoint/checkpoint-verifier.ts:
 *   - a witness file (what `wrap --witness` appended): every checkpoint in it
 *     must verify and be extended by the ledger. A ledger with fewer lines
 *     than a witnessed size is `truncated or rolled back`; lines that hash to
 *     another root at a witnessed size, or a first line that gives another
 *     origin, is `forked or rewritten`;
 *   - remembered state (--state): the highest checkpoint seen for the origin,
 *     and the origin seen at the ledger's path, judged the same way.
 * Those findings are breaks (exit 1) and carry both checkpoints as evidence.
 * The roots they need are caught as the ledger's tree passes each size named.
 */
import type { Break, BreakKind } from "../format/kinds.ts";
import { type Checkpoint, checkpointText, FormatError, parseCheckpointText, parseWitnessLine } from "./checkpoint.ts";
import { EMPTY_ROOT, equalHash, type Hash, type LineTree } from "./merkle.ts";
import { noteProblem } from "./note.ts";

/** A checkpoint shown as evidence: where it comes from, and its note (or, for a computed one, its unsigned text). */
export interface Evidence {
  label: string;
  note: string;
}

export interface CheckpointFinding {
  message: string;
  evidence: Evidence[];
}

/** The ledger's side, once it is read: its origin, and its own checkpoints (the latest, and each by size). */
export interface LedgerSide {
  origin: string | null;
  latest: { line: number; note: string } | null;
  bySize: ReadonlyMap<number, { line: number; note: string }>;
}

interface WitnessEntry {
  line: number;
  checkpoint: Checkpoint;
  note: string;
}

export class RollbackCheck {
  /** Sizes whose root is wanted (witness and state), and the root once the tree got there. */
  private readonly targets = new Map<number, Hash | null>();
  readonly witnessed: WitnessEntry[] = [];
  remembered: WitnessEntry | null = null;
  readonly evidence: CheckpointFinding[] = [];
  private ledger: LedgerSide | null = null;

  constructor(
    private readonly sources: {
      witness?: { name: string; text: string };
      remembered?: (origin: string) => string | null;
      rememberedOrigin?: string | null;
    },
    /** A note's text, opened with the keys given (throws when it does not open). */
    private readonly openText: (note: string) => string,
    private readonly keyLabels: readonly string[],
    /** The verifier's breaks, which these join. */
    private readonly breaks: Break[],
    private readonly tree: LineTree,
  ) {
    if (sources.witness) this.readWitness(sources.witness.name, sources.witness.text);
  }

  /** The ledger's first line gives its origin: the checkpoint remembered for it (--state) is read now. */
  firstLine(origin: string): void {
    const note = this.sources.remembered?.(origin) ?? null;
    if (note === null) return;
    const e = this.openEntry(note, (m) =>
      this.breaks.push({
        line: null,
        kind: "state_entry",
        message: `state: the checkpoint remembered for ${origin} ${m}`,
      }),
    );
    if (e === null) return;
    this.remembered = { line: 0, ...e };
    this.targets.set(e.checkpoint.size, null);
  }

  /** The tree holds `size` lines: its root is kept when a witness or the state names that size. */
  lineDone(size: number): void {
    if (this.targets.has(size)) this.targets.set(size, this.tree.root());
  }

  /** Whether the ledger, read whole, extends checkpoint `c` (one of the witness file's): its tree had c's root at c's size. */
  extendedTo(c: Checkpoint): boolean {
    const root = this.targets.get(c.size);
    return root != null && equalHash(root, c.root);
  }

  /** At the end (the ledger read whole): every way it does not extend the witness or the remembered state is a break with its evidence. */
  judge(ledger: LedgerSide): void {
    this.ledger = ledger;
    if (this.sources.witness) this.compare(`witness`, this.sources.witness.name, this.witnessed);
    if (this.remembered !== null) this.compare("state", "remembered state", [this.remembered]);
    const was = this.sources.rememberedOrigin;
    if (was != null && ledger.origin !== null && was !== ledger.origin) {
      const prior = this.sources.remembered?.(was) ?? null;
      this.flag(
        "state_forked",
        `state: forked or rewritten: this ledger's path held origin ${was}; its line 1 now gives ${ledger.origin}`,
        [
          ...(prior === null ? [] : [{ label: `remembered checkpoint for ${was}`, note: prior }]),
          this.ledgerSide(this.tree.size),
        ],
      );
    }
  }

  /** A witness or remembered note, opened with the keys; null (after `problem`) when it does not hold. */
  private openEntry(note: string, problem: (m: string) => void): { checkpoint: Checkpoint; note: string } | null {
    try {
      const text = this.openText(note);
      return { checkpoint: parseCheckpointText(text), note };
    } catch (e) {
      problem(
        e instanceof FormatError
          ? `is not a checkpoint: ${e.message}`
          : noteProblem(e, this.keyLabels).replace(/^note /, ""),
      );
      return null;
    }
  }

  private readWitness(name: string, text: string): void {
    const lines = text.split("\n");
    lines.forEach((raw, i) => {
      if (raw.trim() === "") return;
      const where = `witness ${name} line ${i + 1}`;
      let entry: { checkpoint: Checkpoint; note: string };
      try {
        entry = parseWitnessLine(raw);
      } catch (e) {
        this.breaks.push({
          line: null,
          kind: "witness_entry",
          message: `${where}: not a witness line (${e instanceof Error ? e.message : String(e)})`,
        });
        return;
      }
      const opened = this.openEntry(entry.note, (m) =>
        this.breaks.push({ line: null, kind: "witness_entry", message: `${where}: ${m}` }),
      );
      if (opened === null) return;
      this.witnessed.push({ line: i + 1, ...opened });
      this.targets.set(opened.checkpoint.size, null);
    });
  }

  /** Requires the ledger to extend each checkpoint: one finding for the first truncation, one for the first fork. */
  private compare(kind: "witness" | "state", name: string, entries: readonly WitnessEntry[]): void {
    const lines = this.tree.size;
    const label = (e: WitnessEntry) =>
      kind === "witness" ? `witness checkpoint (${name} line ${e.line})` : "remembered checkpoint";
    const { origin, latest } = this.ledger!;
    const foreign = origin === null ? undefined : entries.find((e) => e.checkpoint.origin !== origin);
    if (foreign) {
      this.flag(
        `${kind}_forked`,
        `${kind}: forked or rewritten: ${kind === "witness" ? `${name} line ${foreign.line}` : "the remembered checkpoint"} is for origin ${foreign.checkpoint.origin}; this ledger's line 1 gives ${origin}`,
        [{ label: label(foreign), note: foreign.note }, this.ledgerSide(lines)],
      );
    }
    const mine = entries.filter((e) => origin === null || e.checkpoint.origin === origin);
    const longest = mine.reduce<WitnessEntry | null>(
      (a, e) => (a === null || e.checkpoint.size > a.checkpoint.size ? e : a),
      null,
    );
    if (longest !== null && longest.checkpoint.size > lines) {
      this.flag(
        `${kind}_rolled_back`,
        `${kind}: truncated or rolled back: ${label(longest)} has size ${longest.checkpoint.size}; the ledger holds ${lines} line${lines === 1 ? "" : "s"}`,
        [
          { label: label(longest), note: longest.note },
          latest !== null
            ? { label: `ledger's latest checkpoint (line ${latest.line})`, note: latest.note }
            : this.ledgerSide(lines),
        ],
      );
    }
    const forked = mine
      .filter((e) => e.checkpoint.size <= lines)
      .sort((a, b) => a.checkpoint.size - b.checkpoint.size)
      .find((e) => !equalHash(this.rootAt(e.checkpoint.size), e.checkpoint.root));
    if (forked) {
      const size = forked.checkpoint.size;
      this.flag(
        `${kind}_forked`,
        `${kind}: forked or rewritten: the ledger's lines 1..${size} do not hash to the root of the ${label(forked)}`,
        [{ label: label(forked), note: forked.note }, this.ledgerSide(size)],
      );
    }
  }

  /** The ledger's side of the evidence for `size` lines: its checkpoint of that size, else the lines' root as computed (unsigned). */
  private ledgerSide(size: number): Evidence {
    const { origin, bySize } = this.ledger!;
    const own = bySize.get(size);
    if (own) return { label: `ledger checkpoint (line ${own.line})`, note: own.note };
    if (origin === null) return { label: "the ledger (empty: no line, no origin)", note: "" };
    const root = this.rootAt(size);
    return {
      label: `the ledger's lines 1..${size} (computed, unsigned)`,
      note: checkpointText({ origin, size, root }),
    };
  }

  /** The root of lines 1..size: every size a witness or the state names was caught on the way. */
  private rootAt(size: number): Hash {
    if (size === 0) return EMPTY_ROOT;
    if (size === this.tree.size) return this.tree.root();
    return this.targets.get(size) ?? EMPTY_ROOT;
  }

  private flag(kind: BreakKind, message: string, evidence: Evidence[]): void {
    this.breaks.push({ line: null, kind, message });
    this.evidence.push({ message, evidence });
  }
}
