/**
 * The ledger writer: turns events into hash-chained rows and appends them to
 * the ledger file without ever blocking or failing the relay. What a row and
 * a line are, and how rows chain, is docs/ledger-format.md (src/format/).
 *
 * `append` assigns seq and ts at once and queues the row; one flush loop
 * takes everything queued, takes the cross-process locks (kept while flushes
 * keep coming: src/ledger/held-lock.ts), reads back the file's tail only if
 * its size is not where this writer left it (src/ledger/tail.ts), computes
 * the chains and writes all lines in one write. The first flush takes the
 * rows appended in the same turn (batchByTurn: the same turn of the event
 * loop); rows queued meanwhile go in the next flush, so batches grow with
 * load. When they are fsynced is the
 * --fsync policy (src/ledger/file-sync.ts); `appendDurable` rows are fsynced
 * whatever the policy. With `checkpoints` (wrap --sign), signed `checkpoint`
 * rows join the queue too; src/checkpoint/checkpoint-writer.ts says when they come.
 * With witnesses (--witness-url), each checkpoint written is handed to
 * src/checkpoint/submit.ts, and the cosignatures it brings back join the
 * queue as `cosignature` rows whenever they come.
 */

import { describeIoError } from "../base/io-error.ts";
import { VERSION } from "../base/version.ts";
import { parseCheckpointText } from "../checkpoint/checkpoint.ts";
import {
  type CheckpointConfig,
  Checkpointer,
  type CheckpointSeeds,
  type TreeMark,
} from "../checkpoint/checkpoint-writer.ts";
import type { SubmitOutcome } from "../checkpoint/submit.ts";
import { LF } from "../core/ascii.ts";
import { GENESIS } from "../core/chain.ts";
import type { Json, JsonObject } from "../core/json.ts";
import { chainedLine, chainedRow } from "../format/line.ts";
import {
  buildRow,
  type Envelope,
  type FieldsIn,
  repairFields,
  sessionEndFields,
  type TornLine,
} from "../format/row.ts";
import type { AppendFile } from "../runtime/types.ts";
import { FileSync, type FsyncPolicy } from "./file-sync.ts";
import { HeldLock, LOCK_TIMEOUT_MS } from "./held-lock.ts";
import { LineBatch } from "./line-batch.ts";
import { acquireLock, type Release } from "./lock.ts";
import { lockPaths } from "./open.ts";
import { settleTail } from "./tail.ts";

/** Every row's seam_impl. */
const IMPL = `seam/${VERSION}`;

export type RowFields = Record<string, Json | undefined>;

export interface LedgerConfig {
  path: string;
  session: string;
  server: string;
  fsync: FsyncPolicy;
  /** Opens the ledger for appending (from src/runtime). */
  openAppend: (path: string, opts?: { allowForeign?: boolean }) => Promise<AppendFile>;
  /** Append to a symlinked ledger, or one another user owns or others may write (else open rejects). */
  allowForeign?: boolean;
  /**
   * A ledger that is refused (not `allowForeign`) is not written to, as an
   * unwritable one is (warned once, every row unlogged), instead of open
   * rejecting: for a writer opened while traffic already flows.
   */
  refusedIsUnwritable?: boolean;
  /** Takes the cross-process lock at `lockPath`; default: the lock file of src/ledger/lock.ts. */
  lock?: (lockPath: string) => Promise<Release>;
  /** When a row is made, as epoch milliseconds (its `ts`); default Date.now. */
  now?: () => number;
  warn?: (message: string) => void;
  /** Written into the lock file; default process.pid. */
  pid?: number;
  /** Longest time a written row waits for its fsync under `batch`. */
  batchMs?: number;
  /** Sign checkpoints of the file's Merkle root (src/checkpoint/checkpoint-writer.ts). */
  checkpoints?: CheckpointConfig;
  /** The Merkle trees this process's other writers keep, by file (src/checkpoint/checkpoint-writer.ts, `seeds`). */
  checkpointSeeds?: CheckpointSeeds;
  /** The rows' `seam` field: how the traffic was reached (default "mcp-stdio"; `seam proxy`: "mcp-http"). */
  seam?: string;
  /**
   * When the first batch of a flush is taken (default: one promise step
   * later). Given, it calls `go` when the rows of a while have joined: seam
   * proxy's recording queue (src/proxy/deferred-recording.ts), so the rows are
   * written after what was sent on sockets, together. Not for a recorder fed
   * by a flood of messages (wrap's thread), whose turns never end while the
   * flood lasts: its rows would wait and the relay with them.
   */
  batchWhen?: (go: () => void) => void;
  /**
   * Waited for before a batch's lines are written, every row of the batch
   * queued: what must be in its files no later than those rows are in the
   * ledger (the payloads they name, --payloads: src/observe/payloads.ts).
   * Never rejects.
   */
  beforeWrite?: () => Promise<void>;
  /** How long the lock is kept after a flush for the next one (default LOCK_LINGER_MS, src/ledger/held-lock.ts). */
  lockLingerMs?: number;
  /**
   * Append only under a lock (--fail-closed): when none of the ledger's locks
   * can be taken, a flush writes nothing and its rows count as unlogged, so
   * a call waiting for its rows is refused rather than run while another
   * writer may be mid-append.
   */
  lockedOnly?: boolean;
}

/** The error for a ledger refused at the start (`why`: the refusal's message, which names the file). */
export function refusedLedgerMessage(why: string): string {
  return `ledger ${why}; not writing to it`;
}
export const REFUSED_LEDGER_HINT = "use a ledger in a directory only you can write to";

/**
 * How long the end of a session waits for witnesses (the traffic is over by
 * then, but a client that stops seam may not wait long for it): for requests
 * in flight before session_end, which counts what they came to, and for the
 * answers to its last checkpoint, which follows session_end. A witness
 * known to be failing then is waited for by neither: session_end counts it
 * as not reached (src/checkpoint/submit.ts).
 */
const WITNESS_QUIET_MS = 1000;
const WITNESS_END_WAIT_MS = 3000;

/** The outcome of a row added with `add`. */
function ignoreOutcome(_written: boolean): void {}

type Queued = {
  durable: boolean;
  resolve: (written: boolean) => void;
} & (
  | {
      checkpoint?: false;
      /** The row's envelope and fields, as buildRow takes them (its line is written from them: chainedRow). */
      env: Envelope;
      fields: FieldsIn;
    }
  | {
      /** A checkpoint: its row is made when it is sealed, from the lines before it; it counts in no session. */
      checkpoint: true;
      row?: JsonObject;
    }
);

export class LedgerWriter {
  private queue: Queued[] = [];
  private draining: Promise<void> | null = null;
  private seq = 0;
  /** File size right after this writer's last write; -1 when unknown. */
  private lastEnd = -1;
  private lastChain = GENESIS;
  /** The last row's time and its text (see timestamp). */
  private tsMs = Number.NaN;
  private tsText = "";
  /** The lines of the write being made (one write at a time: drain flushes batch after batch). */
  private readonly lines = new LineBatch();
  private ended = false;
  private warnedWrite = false;
  private warnedLockless = false;
  private readonly lock: HeldLock;
  private readonly fsync: FileSync;
  private written = 0;
  private unlogged = 0;
  private repaired = 0;
  private checkpointer: Checkpointer | null = null;
  /** The checkpointer's first read of the file; the first write waits for it. */
  private checkpointerReady: Promise<void> | null = null;
  private checkpointsWritten = 0;
  /** The promise of the checkpoint last queued. */
  private pendingCheckpoint: Promise<boolean> | null = null;
  /** --witness-url: cosignatures received (each one a row) and requests to witnesses that failed. */
  private witnessCosigned = 0;
  private witnessFailed = 0;
  private closed = false;

  private constructor(
    private readonly cfg: LedgerConfig,
    private file: AppendFile | null,
  ) {
    const pid = cfg.pid ?? process.pid;
    const lockFn = cfg.lock ?? ((p) => acquireLock(p, { pid, timeoutMs: LOCK_TIMEOUT_MS }));
    this.lock = new HeldLock(lockFn, [`${cfg.path}.lock`], (m) => cfg.warn?.(m), cfg.lockLingerMs);
    this.fsync = new FileSync(
      () => this.file,
      cfg.batchMs ?? 100,
      (e) => this.writeFailed(e),
    );
  }

  /** Rows queued behind the write in progress. */
  get waiting(): number {
    return this.queue.length;
  }

  /** Resolves once every row queued so far is written (or could not be). */
  async caughtUp(): Promise<void> {
    while (this.draining) await this.draining;
  }

  /** Rows of this session written to the file (ledger_repair rows not included). */
  get rowsWritten(): number {
    return this.written;
  }
  /** Rows of this session that could not be written (their seq is a gap). */
  get rowsUnlogged(): number {
    return this.unlogged;
  }
  /** ledger_repair rows this writer wrote. */
  get repairs(): number {
    return this.repaired;
  }
  /** checkpoint rows this writer wrote. */
  get checkpoints(): number {
    return this.checkpointsWritten;
  }

  /**
   * An unwritable ledger is a state (warned once; every row then counts as
   * unlogged). Rejects only with the runtime's EUNSAFE error: a ledger that
   * is a symlink, another user's, or writable by others, is refused outright
   * (unless `refusedIsUnwritable`; either way nothing is written to it).
   */
  static async open(cfg: LedgerConfig): Promise<LedgerWriter> {
    let file: AppendFile | null = null;
    let failure: unknown;
    try {
      file = await cfg.openAppend(cfg.path, cfg.allowForeign ? { allowForeign: true } : undefined);
    } catch (e) {
      if ((e as { code?: unknown }).code === "EUNSAFE" && !cfg.refusedIsUnwritable) throw e;
      failure = e;
    }
    const w = new LedgerWriter(cfg, file);
    if (file === null) w.writeFailed(failure);
    else {
      const locks = await lockPaths(cfg.path);
      w.lock.lockPaths = locks.paths;
      if (locks.problem !== undefined)
        cfg.warn?.(
          `ledger lock directory ${locks.problem}: its lock is not taken, so a hard-linked name of this ledger written meanwhile could fork its chain`,
        );
    }
    if (file !== null && cfg.checkpoints) {
      const checkpointer = new Checkpointer(cfg.checkpoints, {
        openAppend: cfg.openAppend,
        warn: (m) => cfg.warn?.(m),
        describe: describeIoError,
        sync: cfg.fsync !== "never",
        seeds: cfg.checkpointSeeds,
      });
      w.checkpointer = checkpointer;
      // A failed size() leaves it all to the first write's catch-up, under the lock.
      w.checkpointerReady = file.size().then(
        (size) => checkpointer.catchUp(file, size),
        () => {},
      );
      checkpointer.startTimer(() => void w.queueCheckpoint());
    }
    return w;
  }

  /**
   * Queues a row; seq and ts are assigned now, `fields` are read when the
   * row is written (pass an object that is not changed afterwards). Resolves
   * true once the row is in the file (and fsynced under `always`), false if
   * it could not be written. Never rejects, never waits: the relay does not await it.
   */
  append(evt: string, fields: RowFields): Promise<boolean> {
    return new Promise((resolve) => this.enqueue(evt, fields, false, resolve));
  }

  /**
   * As append, for a row whose outcome nobody waits for (the rows an observer
   * writes as it goes): no promise is made for it, which a recorded call
   * would otherwise pay for with every row.
   */
  add(evt: string, fields: RowFields): void {
    this.enqueue(evt, fields, false, ignoreOutcome);
  }

  /** The seq the last queued row got (0 before the first): the next row's is one more. */
  get lastSeq(): number {
    return this.seq;
  }

  /** As append, but resolves true only once the row is written and fsynced (for --write-ahead). */
  appendDurable(evt: string, fields: RowFields): Promise<boolean> {
    return new Promise((resolve) => this.enqueue(evt, fields, true, resolve));
  }

  /**
   * Writes every queued row, then `session_end` with `rows_before_end` (rows
   * of this session written) and `rows_unlogged` (when not zero) placed among
   * `fields` (sessionEndFields), fsyncs unless the policy is `never`, and
   * closes. Resolves whether session_end was written.
   */
  async end(fields: RowFields): Promise<boolean> {
    if (this.ended) return false;
    while (this.draining) await this.draining;
    const submitter = this.cfg.checkpoints?.submitter;
    const witnessed = submitter !== undefined;
    // Witnesses known to be failing (in backoff, or refused) are not waited for: each counts as one
    // more failed request, the last checkpoint's, which is not waited for.
    let unreached: ReadonlySet<string> = new Set();
    if (witnessed) {
      await submitter.quiet(WITNESS_QUIET_MS);
      while (this.draining) await this.draining;
      unreached = submitter.unreached();
    }
    const entries = sessionEndFields(fields, {
      rows_before_end: this.written,
      rows_unlogged: this.unlogged || undefined,
      witness_cosigned: witnessed ? this.witnessCosigned : undefined,
      witness_failed: witnessed ? this.witnessFailed + unreached.size : undefined,
    });
    const done = new Promise<boolean>((resolve) =>
      this.enqueue("session_end", entries, this.cfg.fsync !== "never", resolve),
    );
    const sealed = this.checkpointer ? this.queueCheckpoint(true) : null;
    this.ended = true;
    const ok = await done;
    await sealed;
    while (this.draining) await this.draining;
    // The witnesses' answers for the last checkpoint become rows after session_end, like that checkpoint.
    if (witnessed) {
      await submitter.settled(WITNESS_END_WAIT_MS, unreached);
      while (this.draining) await this.draining;
    }
    await this.close();
    return ok;
  }

  /**
   * A witness's answer for one of this writer's checkpoints: each
   * cosignature is a `cosignature` row (no seq, like a checkpoint's), a
   * failed request is counted for session_end. Taken after session_end too,
   * until the writer closes.
   */
  private witnessReport(o: SubmitOutcome): void {
    if (o.kind === "failed") {
      this.witnessFailed++;
      return;
    }
    for (const c of o.cosignatures) {
      if (this.closed) return;
      this.witnessCosigned++;
      this.queue.push({
        env: this.envelope("cosignature", null),
        fields: {
          witness: c.witness,
          key_id: c.keyId.toString(16).padStart(8, "0"),
          url: c.url,
          size: c.size,
          root: c.root,
          cosignature: c.line,
        },
        durable: false,
        resolve: ignoreOutcome,
      });
      this.draining ??= this.drain();
    }
  }

  /** Hands the checkpoints just written (and fsynced) to the witnesses, if there are any. */
  private submit(rows: readonly JsonObject[]): void {
    const submitter = this.cfg.checkpoints?.submitter;
    if (submitter === undefined) return;
    for (const row of rows) {
      const note = row.get("note") as string;
      submitter.submit({
        path: this.cfg.path,
        checkpoint: parseCheckpointText(note.slice(0, note.lastIndexOf("\n\n") + 1)),
        note,
        report: (o) => this.witnessReport(o),
      });
    }
  }

  // ---- internals ----

  private timestamp(): string {
    const ms = this.cfg.now?.() ?? Date.now();
    // Rows made in one millisecond (a burst) share its text: toISOString costs as much as a small row's other fields.
    if (ms === this.tsMs) return this.tsText;
    let text: string;
    try {
      text = new Date(ms).toISOString();
    } catch {
      return new Date().toISOString();
    }
    this.tsMs = ms;
    this.tsText = text;
    return text;
  }

  /** A row's envelope: seq as given, ts now. */
  private envelope(evt: string, seq: number | null): Envelope {
    const { session, server } = this.cfg;
    return { evt, seam: this.cfg.seam, impl: IMPL, session, seq, server, ts: this.timestamp() };
  }

  private buildRow(evt: string, seq: number | null, fields: FieldsIn): JsonObject {
    return buildRow(this.envelope(evt, seq), fields);
  }

  /** Queues a row; `resolve` is told whether it was written (at once, false, when it cannot be queued). */
  private enqueue(evt: string, fields: FieldsIn, durable: boolean, resolve: (written: boolean) => void): void {
    if (this.ended) {
      this.unlogged++;
      resolve(false);
      return;
    }
    // The row is written from its envelope and fields when its batch is (no row is made for it here).
    this.queue.push({ env: this.envelope(evt, ++this.seq), fields, durable, resolve });
    this.draining ??= this.drain();
    if (this.checkpointer?.rowAdded()) void this.queueCheckpoint();
  }

  /**
   * Queues a checkpoint behind every row queued so far (one already last in
   * the queue serves instead); resolves whether it was written. After end
   * only the final one is taken.
   */
  private queueCheckpoint(final = false): Promise<boolean> {
    if (this.ended && !final) return Promise.resolve(false);
    if (this.queue.at(-1)?.checkpoint && this.pendingCheckpoint) return this.pendingCheckpoint;
    this.checkpointer!.queued();
    this.pendingCheckpoint = new Promise<boolean>((resolve) => {
      this.queue.push({ durable: this.cfg.fsync !== "never", resolve, checkpoint: true });
      this.draining ??= this.drain();
    });
    return this.pendingCheckpoint;
  }

  private async drain(): Promise<void> {
    // Let rows appended meanwhile join the first batch: one promise step, or until batchWhen says.
    const when = this.cfg.batchWhen;
    if (when !== undefined) await new Promise<void>((r) => when(r));
    else await null;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0);
        try {
          await this.flush(batch);
        } catch (e) {
          // Not expected (flush handles I/O errors); never let it reach the relay.
          this.writeFailed(e);
          for (const p of batch) this.settle(p, false, false);
        }
      }
    } finally {
      this.draining = null;
    }
  }

  /** `inFile`: the row's line is in the file (counted written, else unlogged); `result`: what its promise says. */
  private settle(p: Queued, inFile: boolean, result: boolean): void {
    if (p.checkpoint) this.checkpointsWritten += inFile ? 1 : 0;
    else if (p.env.seq === null) {
      // A cosignature row: seam's own, in no session's count.
    } else if (inFile) this.written++;
    else this.unlogged++;
    p.resolve(result);
  }

  private writeFailed(err: unknown): void {
    this.lastEnd = -1;
    if (this.warnedWrite) return;
    this.warnedWrite = true;
    this.cfg.warn?.(`ledger ${this.cfg.path} cannot be written: ${describeIoError(err)}`);
  }

  private async flush(batch: Queued[]): Promise<void> {
    if (this.cfg.beforeWrite !== undefined) await this.cfg.beforeWrite();
    const file = this.file;
    if (file === null) {
      for (const p of batch) this.settle(p, false, false);
      return;
    }
    if (this.checkpointerReady) await this.checkpointerReady;
    const release = await this.lock.take();
    if (release === null && this.cfg.lockedOnly) {
      if (!this.warnedLockless) {
        this.warnedLockless = true;
        this.cfg.warn?.(
          `ledger ${this.cfg.path}: no lock of it can be taken, and --fail-closed appends only under one: its rows are not written, its calls refused`,
        );
      }
      for (const p of batch) this.settle(p, false, false);
      return;
    }
    const lines = this.lines;
    lines.clear(); // what a flush that failed before its write left
    const add = (b: Uint8Array) => {
      lines.add(b);
      this.checkpointer?.feed(b);
    };
    let mark: TreeMark | undefined; // the tree before this write, to go back to if it fails
    let repairEnd = -1; // where the ledger_repair line ends within this write, if there is one
    const ends: number[] = []; // where each row's line ends within this write
    let rows: Queued[] = [];
    let start = -1;
    let landed = -1; // bytes of this write in the file: -1 all of them
    let total = 0; // bytes of this write
    try {
      start = await file.size();
      if (this.checkpointer) await this.checkpointer.catchUp(file, start);
      let prev = this.lastChain;
      let repair: TornLine | null = null;
      let terminate = false;
      if (start !== this.lastEnd) {
        ({ start, prev, repair, terminate } = await settleTail(file, start, release !== null, (at) =>
          this.checkpointer?.cut(at),
        ));
      }
      if (this.checkpointer) mark = this.checkpointer.mark();
      if (terminate) add(new Uint8Array([LF]));
      if (repair) {
        prev = chainLine(prev, this.buildRow("ledger_repair", null, repairFields(repair)), add);
        repairEnd = lines.total;
      }
      for (const p of batch) {
        try {
          if (p.checkpoint) {
            p.row = this.buildRow("checkpoint", null, this.checkpointer!.fields());
            prev = chainLine(prev, p.row, add);
          } else {
            const { chain, bytes } = chainedRow(prev, p.env, p.fields);
            add(bytes);
            prev = chain;
          }
          rows.push(p);
          ends.push(lines.total);
        } catch {
          this.settle(p, false, false); // a row that cannot be serialized is lost, not the batch
        }
      }
      batch = [];
      const bytes = lines.take();
      total = bytes.length;
      try {
        await file.write(bytes);
      } catch (e) {
        // A short write may have put whole lines in the file before failing; measured under the lock.
        landed = Math.max(0, Math.min(total, (await file.size().catch(() => start)) - start));
        throw e;
      }
      this.lastEnd = start + total;
      this.lastChain = prev;
      this.checkpointer?.share();
    } catch (e) {
      this.writeFailed(e);
      if (mark) this.checkpointer!.rewind(mark);
      rows = [...batch, ...rows]; // batch: rows not yet sealed when it failed
      if (landed < 0) landed = 0;
    } finally {
      if (release) {
        if (landed < 0) this.lock.linger();
        else await this.lock.letGo(); // after a failure, start the next flush from a fresh look at the file
      }
    }

    const ok = landed < 0;
    if (ok || landed > 0) this.fsync.unsynced = true;
    if (repairEnd >= 0 && (ok || landed >= repairEnd)) this.repaired++;
    if (!ok) {
      for (let i = 0; i < rows.length; i++) {
        const inFile = i < ends.length && landed >= ends[i]!;
        this.settle(rows[i]!, inFile, inFile && !rows[i]!.durable && this.cfg.fsync !== "always");
      }
      return;
    }
    const mustSync = this.cfg.fsync === "always" || rows.some((p) => p.durable);
    const synced = mustSync ? await this.fsync.sync() : true;
    if (this.checkpointer && synced) {
      const checkpoints = rows.flatMap((p) => (p.checkpoint ? [p.row!] : []));
      await this.checkpointer.witness(checkpoints);
      this.submit(checkpoints);
    }
    for (const p of rows) this.settle(p, true, synced || (this.cfg.fsync !== "always" && !p.durable));
    if (!mustSync && this.cfg.fsync === "batch") this.fsync.schedule();
  }

  private async close(): Promise<void> {
    this.closed = true;
    await this.lock.letGo();
    await this.fsync.close(this.cfg.fsync === "batch");
    const file = this.file;
    this.file = null;
    if (file) await file.close().catch(() => {});
    await this.checkpointer?.close();
  }
}

/** Sets the row's chain (last key), adds its line, returns the chain. Throws if the row cannot be serialized. */
function chainLine(prev: string, row: JsonObject, add: (b: Uint8Array) => void): string {
  const { chain, bytes } = chainedLine(prev, row, true);
  add(bytes);
  return chain;
}
