/**
 * The writer's side of checkpoints (`seam wrap --sign`): keeps the Merkle
 * tree of every line in the ledger file and makes the fields of signed
 * `checkpoint` rows; src/ledger/ledger-writer.ts decides when, and writes them.
 *
 * The tree is kept incrementally, never by rereading the file: the file is
 * read once when the writer opens it (in the background; the first write
 * waits for it; from where another writer of this process had hashed it to,
 * when there is one: `seeds`), after that only bytes other processes appended since this
 * writer's last write are read (under the ledger lock, where the chain's
 * tail is read too), and this writer's own lines are hashed as they are
 * written. A write that fails rewinds the tree to before it; the next write
 * then reads back whatever of it did land.
 *
 * What a checkpoint row holds (size, root, signed note) is
 * docs/ledger-format.md, "Checkpoints".
 *
 * When: after every `every` rows this writer appended since its last
 * checkpoint (default 1000), when `intervalMs` passed (default 60 s) and
 * rows came meanwhile, and after session_end. Checkpoint rows are fsynced
 * before they count (unless --fsync never), and only then appended to the
 * witness file (and sent to witnesses, src/checkpoint/submit.ts), so a
 * witness never holds a checkpoint the ledger can lose to a crash.
 */

import type { Json, JsonObject } from "../core/json.ts";
import type { AppendFile } from "../runtime/types.ts";
import { checkpointText, ledgerOrigin, parseCheckpointText, witnessLine } from "./checkpoint.ts";
import { LineTree } from "./merkle.ts";
import { encodeBase64, type Signer, signNote } from "./note.ts";
import type { WitnessSubmitter } from "./submit.ts";

export const DEFAULT_CHECKPOINT_EVERY = 1000;
export const DEFAULT_CHECKPOINT_INTERVAL_MS = 60_000;
const READ_CHUNK = 1 << 20;

export interface CheckpointConfig {
  signer: Signer;
  /** Rows this writer appends between checkpoints. */
  every: number;
  /** Longest time rows stay unsealed while the session is active. */
  intervalMs: number;
  /** A file that also receives every checkpoint (one JSON line each; see witnessLine). */
  witness?: string;
  /** --witness-url: sends every checkpoint to witnesses, whose cosignatures become rows (src/checkpoint/submit.ts). */
  submitter?: WitnessSubmitter;
}

interface CheckpointerDeps {
  openAppend: (path: string) => Promise<AppendFile>;
  warn: (message: string) => void;
  /** An I/O error in words, as the ledger's own warnings put it. */
  describe: (err: unknown) => string;
  /** fsync the witness file after each append. */
  sync: boolean;
  /**
   * The trees other writers of this process keep of the files they write, by
   * file (AppendFile.identity): a writer starts from the one of its file, if
   * there is one, and keeps its own there after each write. `seam proxy` has a
   * writer per MCP session, all on one file: without them, each session read
   * and hashed the whole ledger when it began.
   */
  seeds?: CheckpointSeeds;
}

/** By file (AppendFile.identity): its tree as a writer left it, or the reading of it under way. */
export type CheckpointSeeds = Map<string, TreeMark | Promise<void>>;

/** Where the tree was: restored when a write fails. */
export interface TreeMark {
  tree: LineTree;
  end: number;
  /** Where the line the tree is inside of began (`end` when it is at a line's start). */
  lineStart: number;
}

export class Checkpointer {
  private tree = new LineTree();
  /** Bytes of the file hashed into the tree. */
  private end = 0;
  /** Where the last line hashed began: `end`, unless the file's last bytes have no "\n" yet. */
  private lineStart = 0;
  private stopped = false;
  /** The first catchUp has been (where the tree may start from a seed). */
  private begun = false;
  /** The file's AppendFile.identity, taken at the first catchUp when there are `seeds` to share the tree in. */
  private fileId: string | undefined;
  private sinceLast = 0;
  private timer: ReturnType<typeof setInterval> | null = null;
  private witnessFile: AppendFile | null = null;
  private witnessBroken = false;

  constructor(
    readonly cfg: CheckpointConfig,
    private readonly deps: CheckpointerDeps,
  ) {}

  /** Calls `due` every intervalMs while rows came since the last checkpoint; the timer never keeps the process alive. */
  startTimer(due: () => void): void {
    if (this.cfg.intervalMs <= 0) return;
    this.timer = setInterval(() => {
      if (this.sinceLast > 0) due();
    }, this.cfg.intervalMs);
    (this.timer as { unref?: () => void }).unref?.();
  }

  /** Counts one row; true when a checkpoint is due by count. */
  rowAdded(): boolean {
    return ++this.sinceLast >= this.cfg.every;
  }

  /** A checkpoint was queued: counting starts again. */
  queued(): void {
    this.sinceLast = 0;
  }

  /** Hashes the file's bytes from where the tree stops to `size`. Never throws: a failure stops checkpoints, with one warning. */
  async catchUp(file: AppendFile, size: number): Promise<void> {
    if (this.stopped) return;
    let hashed: (() => void) | undefined;
    if (!this.begun) {
      this.begun = true;
      hashed = await this.seed(file);
      // A seed may have come from a writer that wrote since this one measured the file.
      size = Math.max(size, this.end);
    }
    try {
      // What was hashed of a line without its "\n" yet (a torn tail) is read again: another writer may have
      // cut it off since (src/ledger/tail.ts), and lines of its own now stand where its bytes were.
      if (this.lineStart < this.end) {
        this.tree.dropPartial();
        this.end = this.lineStart;
      }
      if (size < this.end) {
        this.deps.warn(
          `ledger shrank below what was already hashed (${size} < ${this.end} bytes): hashing it again from the start`,
        );
        this.tree = new LineTree();
        this.end = 0;
        this.lineStart = 0;
      }
      while (this.end < size) {
        const chunk = await file.readAt(this.end, Math.min(READ_CHUNK, size - this.end));
        if (chunk.length === 0) throw new Error("ledger shrank while being read");
        this.feed(chunk);
      }
      // The writers waiting for this reading start from its tree (later trees come from writes: share).
      if (hashed !== undefined) this.share();
    } catch (e) {
      this.stop(`cannot read the ledger back: ${this.deps.describe(e)}`);
    } finally {
      hashed?.();
    }
  }

  /**
   * Starts the tree from the one another writer of this process keeps of the
   * same file (`seeds`), waiting for it if that writer is still reading the
   * file. Without one, this writer reads it, and those that begin meanwhile
   * wait: the returned function, called once it has (or could not), lets them
   * go (to read it each on its own, if it could not).
   */
  private async seed(file: AppendFile): Promise<(() => void) | undefined> {
    const seeds = this.deps.seeds;
    if (seeds === undefined) return undefined;
    const id = file.identity?.();
    this.fileId = id;
    if (id === undefined) return undefined;
    const found = seeds.get(id);
    if (found instanceof Promise) await found;
    const s = seeds.get(id);
    if (s !== undefined && !(s instanceof Promise)) {
      this.rewind({ ...s, tree: s.tree.clone() });
      return undefined;
    }
    if (found !== undefined) return undefined;
    let done!: () => void;
    const reading = new Promise<void>((r) => {
      done = r;
    });
    seeds.set(id, reading);
    return () => {
      if (seeds.get(id) === reading) seeds.delete(id);
      done();
    };
  }

  /** The tree as it is now, for writers of the same file that begin later (`seeds`); the writer calls it after each write. */
  share(): void {
    if (this.fileId !== undefined && !this.stopped) this.deps.seeds?.set(this.fileId, this.mark());
  }

  /** The file was cut back to `size`, a line start: what followed it (a torn tail, no "\n" in it) is no line. */
  cut(size: number): void {
    if (this.stopped || size >= this.end) return;
    this.tree.dropPartial();
    this.end = size;
    this.lineStart = size;
  }

  /** The file's next bytes: this writer's own, in the order they go into the file, or others' read back. */
  feed(bytes: Uint8Array): void {
    this.tree.push(bytes);
    const nl = bytes.lastIndexOf(0x0a);
    if (nl >= 0) this.lineStart = this.end + nl + 1;
    this.end += bytes.length;
  }

  mark(): TreeMark {
    return { tree: this.tree.clone(), end: this.end, lineStart: this.lineStart };
  }

  rewind(m: TreeMark): void {
    this.tree = m.tree;
    this.end = m.end;
    this.lineStart = m.lineStart;
  }

  /**
   * The checkpoint fields for the lines hashed so far: size, root, note.
   * Throws when there is nothing to seal or checkpoints have stopped.
   */
  fields(): [string, Json][] {
    const first = this.tree.firstLeaf;
    if (this.stopped || first === null || !this.tree.atLineStart) throw new Error("no checkpoint possible here");
    const c = { origin: ledgerOrigin(first), size: this.tree.size, root: this.tree.root() };
    const note = signNote(checkpointText(c), [this.cfg.signer]);
    return [
      ["size", c.size],
      ["root", encodeBase64(c.root)],
      ["note", note],
    ];
  }

  /** Appends the checkpoints of these written rows to the witness file. Never throws: a failure is warned once. */
  async witness(rows: readonly JsonObject[]): Promise<void> {
    const path = this.cfg.witness;
    if (path === undefined || rows.length === 0 || this.witnessBroken) return;
    try {
      let text = "";
      for (const row of rows) {
        const note = row.get("note") as string;
        text += witnessLine(parseCheckpointText(note.slice(0, note.lastIndexOf("\n\n") + 1)), note);
      }
      this.witnessFile ??= await this.deps.openAppend(path);
      await this.witnessFile.write(new TextEncoder().encode(text));
      if (this.deps.sync) await this.witnessFile.sync();
    } catch (e) {
      this.witnessBroken = true;
      this.deps.warn(
        `witness file ${path} cannot be written: ${this.deps.describe(e)}; checkpoints go on in the ledger only`,
      );
    }
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const f = this.witnessFile;
    this.witnessFile = null;
    if (f) await f.close().catch(() => {});
  }

  private stop(why: string): void {
    if (this.stopped) return;
    this.stopped = true;
    this.deps.warn(`checkpoints stopped: ${why}`);
  }
}
