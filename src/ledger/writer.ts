/**
 * The ledger writer: turns events into hash-chained rows and appends them to
 * the ledger file without ever blocking or failing the relay. What a row and
 * a line are, and how rows chain, is docs/ledger-format.md (src/format/).
 *
 * An unterminated last line (torn by a crash mid-write, or bytes someone
 * appended to be taken in as a row) is cut off under the lock before the next
 * rows, and recorded in its place by a ledger_repair row (its first bytes in
 * torn_text), with no seq (it is in no session's sequence), chained from the
 * last row before it. Without the lock another writer may be mid-line, so
 * nothing is cut: "\n" is written so the tail stands on its own line, a torn
 * one gets a ledger_repair row that names it, one that parses is continued
 * from.
 *
 * How rows reach the file: `append` assigns seq and ts at once and queues the
 * row; one flush loop takes everything queued, takes the cross-process locks
 * (`<real path>.lock`, then one named by the file's device and inode, which
 * every name of it shares: src/ledger/open.ts), reads back the file's tail only if its size is not where
 * this writer left it, computes the chains and writes all lines in one write.
 * The lock is kept for the next flush while flushes keep coming (one row per
 * call would otherwise pay for taking it every time), and let go after 2 ms
 * without one, after 50 ms at most, and at close. Rows queued meanwhile go in
 * the next flush, so batches grow with load. fsync: `always` before any row resolves; `batch` at the
 * latest `batchMs` after a write and at end; `never` not at all (the OS
 * decides). `appendDurable` rows are fsynced whatever the policy.
 *
 * With `checkpoints` (wrap --sign), signed `checkpoint` rows join the queue too;
 * src/checkpoint/writer.ts says when they come.
 */
import { lineForm } from "../core/canonical.ts";
import { GENESIS } from "../core/chain.ts";
import { StreamDigest } from "../core/digest.ts";
import type { Json, JsonObject } from "../core/json.ts";
import {
  CHAIN_TAIL_BYTES,
  MAX_LINE_BYTES,
  chainClaim,
  chainFromTail,
  classifyLine,
  passedOn,
  setChain,
} from "../format/line.ts";
import { TORN_TEXT_BYTES, type TornLine, buildRow, repairFields } from "../format/row.ts";
import { describeIoError } from "../base/io-error.ts";
import { acquireLock, type Release } from "./lock.ts";
import { lockPaths } from "./open.ts";

/**
 * Longest a flush waits for the ledger's lock (a holder keeps it for one
 * write, LOCK_MAX_HOLD_MS at most); then it writes without it, warned, so a
 * lock nobody releases delays rows (and --fail-closed answers) by this much at most.
 */
export const LOCK_TIMEOUT_MS = 5000;

/** Idle time after which the writer lets the ledger's lock go. */
const LOCK_LINGER_MS = 2;
/** Longest the writer keeps the lock across back-to-back flushes. */
const LOCK_MAX_HOLD_MS = 50;
import type { AppendFile } from "../runtime/types.ts";
import { type CheckpointConfig, type TreeMark, Checkpointer } from "../checkpoint/writer.ts";
import { VERSION } from "../base/version.ts";

export type FsyncPolicy = "batch" | "always" | "never";
export const FSYNC_POLICIES: readonly FsyncPolicy[] = ["batch", "always", "never"];

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
  /** Takes the cross-process lock at `lockPath`; default: the lock file of src/ledger/lock.ts. */
  lock?: (lockPath: string) => Promise<Release>;
  now?: () => Date;
  warn?: (message: string) => void;
  /** Written into the lock file; default process.pid. */
  pid?: number;
  /** Longest time a written row waits for its fsync under `batch`. */
  batchMs?: number;
  /** Sign checkpoints of the file's Merkle root (src/checkpoint/writer.ts). */
  checkpoints?: CheckpointConfig;
  /** The rows' `seam` field: how the traffic was reached (default "mcp-stdio"; `seam proxy`: "mcp-http"). */
  seam?: string;
}

const LF = 0x0a;
const READ_CHUNK = 64 * 1024;

interface Queued {
  row: JsonObject;
  durable: boolean;
  resolve: (written: boolean) => void;
  /** A checkpoint: its row is made when it is sealed, from the lines before it; it counts in no session. */
  checkpoint?: boolean;
}

export class LedgerWriter {
  private queue: Queued[] = [];
  private draining: Promise<void> | null = null;
  private seq = 0;
  /** File size right after this writer's last write; -1 when unknown. */
  private lastEnd = -1;
  private lastChain = GENESIS;
  private ended = false;
  private warnedWrite = false;
  private warnedLock = false;
  private syncTimer: ReturnType<typeof setTimeout> | null = null;
  private syncing: Promise<boolean> | null = null;
  private unsynced = false;
  private readonly lockFn: (lockPath: string) => Promise<Release>;
  /** The lock files taken for each append, in order (src/ledger/open.ts), so that every name of one file shares them. */
  private lockPaths: string[];
  private readonly batchMs: number;
  private written = 0;
  private unlogged = 0;
  private repaired = 0;
  private checkpointer: Checkpointer | null = null;
  /** The checkpointer's first read of the file; the first write waits for it. */
  private checkpointerReady: Promise<void> | null = null;
  private checkpointsWritten = 0;
  /** The promise of the checkpoint last queued. */
  private pendingCheckpoint: Promise<boolean> | null = null;

  private constructor(
    private readonly cfg: LedgerConfig,
    private file: AppendFile | null,
  ) {
    const pid = cfg.pid ?? process.pid;
    this.lockFn = cfg.lock ?? ((p) => acquireLock(p, { pid, timeoutMs: LOCK_TIMEOUT_MS }));
    this.lockPaths = [`${cfg.path}.lock`];
    this.batchMs = cfg.batchMs ?? 100;
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
   * is a symlink, another user's, or writable by others, is refused outright.
   */
  static async open(cfg: LedgerConfig): Promise<LedgerWriter> {
    let file: AppendFile | null = null;
    let failure: unknown;
    try {
      file = await cfg.openAppend(cfg.path, cfg.allowForeign ? { allowForeign: true } : undefined);
    } catch (e) {
      if ((e as { code?: unknown }).code === "EUNSAFE") throw e;
      failure = e;
    }
    const w = new LedgerWriter(cfg, file);
    if (file === null) w.writeFailed(failure);
    else {
      const locks = await lockPaths(cfg.path);
      w.lockPaths = locks.paths;
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
   * Queues a row; seq and ts are assigned now. Resolves true once the row is
   * in the file (and fsynced under `always`), false if it could not be
   * written. Never rejects, never waits: the relay does not await it.
   */
  append(evt: string, fields: RowFields): Promise<boolean> {
    return this.enqueue(evt, Object.entries(fields), false);
  }

  /** The seq the last queued row got (0 before the first): the next row's is one more. */
  get lastSeq(): number {
    return this.seq;
  }

  /** As append, but resolves true only once the row is written and fsynced (for --write-ahead). */
  appendDurable(evt: string, fields: RowFields): Promise<boolean> {
    return this.enqueue(evt, Object.entries(fields), true);
  }

  /**
   * Writes every queued row, then `session_end` with `rows_before_end` (rows
   * of this session written) and `rows_unlogged` (when not zero), fsyncs
   * unless the policy is `never`, and closes. `rows_before_end` goes where
   * `fields` has that key, else before `calls` (else last); `rows_unlogged`
   * where `fields` has it, else before `bytes`/`stream_digests` (else last).
   * Resolves whether session_end was written.
   */
  async end(fields: RowFields): Promise<boolean> {
    if (this.ended) return false;
    while (this.draining) await this.draining;
    const counters: Record<string, Json | undefined> = {
      rows_before_end: this.written,
      rows_unlogged: this.unlogged || undefined,
    };
    const given = Object.entries(fields);
    const pending = new Set(Object.keys(counters).filter((k) => !Object.hasOwn(fields, k)));
    const entries: [string, Json | undefined][] = [];
    const place = (k: string) => {
      if (pending.delete(k)) entries.push([k, counters[k]]);
    };
    for (const [k, v] of given) {
      if (k === "calls") place("rows_before_end");
      if (k === "bytes" || k === "stream_digests") place("rows_unlogged");
      entries.push([k, k in counters ? counters[k] : v]);
    }
    for (const k of pending) entries.push([k, counters[k]]);
    const done = this.enqueue("session_end", entries, this.cfg.fsync !== "never");
    const sealed = this.checkpointer ? this.queueCheckpoint(true) : null;
    this.ended = true;
    const ok = await done;
    await sealed;
    while (this.draining) await this.draining;
    await this.close();
    return ok;
  }

  // ---- internals ----

  private timestamp(): string {
    try {
      const d = this.cfg.now?.() ?? new Date();
      return d.toISOString();
    } catch {
      return new Date().toISOString();
    }
  }

  private buildRow(evt: string, seq: number | null, fields: Iterable<[string, Json | undefined]>): JsonObject {
    const { session, server } = this.cfg;
    return buildRow(
      { evt, seam: this.cfg.seam, impl: `seam/${VERSION}`, session, seq, server, ts: this.timestamp() },
      fields,
    );
  }

  private enqueue(evt: string, fields: Iterable<[string, Json | undefined]>, durable: boolean): Promise<boolean> {
    if (this.ended) {
      this.unlogged++;
      return Promise.resolve(false);
    }
    let row: JsonObject;
    try {
      row = this.buildRow(evt, ++this.seq, fields);
    } catch {
      this.unlogged++;
      return Promise.resolve(false);
    }
    return new Promise<boolean>((resolve) => {
      this.queue.push({ row, durable, resolve });
      this.draining ??= this.drain();
      if (this.checkpointer?.rowAdded()) void this.queueCheckpoint();
    });
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
      this.queue.push({ row: new Map(), durable: this.cfg.fsync !== "never", resolve, checkpoint: true });
      this.draining ??= this.drain();
    });
    return this.pendingCheckpoint;
  }

  private async drain(): Promise<void> {
    await null; // let rows appended in this same turn join the first batch
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
    else if (inFile) this.written++;
    else this.unlogged++;
    p.resolve(result);
  }

  private writeFailed(err: unknown): void {
    this.lastEnd = -1;
    if (this.warnedWrite) return;
    this.warnedWrite = true;
    this.cfg.warn?.(`ledger ${this.cfg.path} cannot be written: ${describeIoError(err)}`);
  }

  /**
   * The cross-process lock, kept between flushes while they keep coming:
   * taking it costs several file-system round trips (about 85 µs here), which
   * one row per call would pay every time. It is let go once no flush has come
   * for LOCK_LINGER_MS, after LOCK_MAX_HOLD_MS at the latest so that other
   * writers of the same ledger get their turn, and at close.
   */
  private heldLock: { release: Release; since: number; timer: ReturnType<typeof setTimeout> | null } | null = null;

  private async takeLock(): Promise<Release | null> {
    const held = this.heldLock;
    if (held) {
      if (held.timer) clearTimeout(held.timer);
      held.timer = null;
      if (performance.now() - held.since < LOCK_MAX_HOLD_MS) return held.release;
      this.heldLock = null;
      await held.release().catch(() => {});
    }
    const release = await this.lockOnce();
    if (release) this.heldLock = { release, since: performance.now(), timer: null };
    return release;
  }

  /** After a flush: keep the lock a moment for the next one. */
  private lingerLock(): void {
    const held = this.heldLock;
    if (!held) return;
    held.timer = setTimeout(() => void this.letGo(), LOCK_LINGER_MS);
  }

  private async letGo(): Promise<void> {
    const held = this.heldLock;
    if (!held) return;
    this.heldLock = null;
    if (held.timer) clearTimeout(held.timer);
    await held.release().catch(() => {});
  }

  /** Every lock of the ledger, in order, or none (then the append goes on without, warned once). */
  private async lockOnce(): Promise<Release | null> {
    const taken: Release[] = [];
    const releaseAll = async () => {
      for (let i = taken.length - 1; i >= 0; i--) await taken[i]!().catch(() => {});
    };
    for (const path of this.lockPaths) {
      try {
        taken.push(await this.lockFn(path));
      } catch (e) {
        await releaseAll();
        if (!this.warnedLock) {
          this.warnedLock = true;
          this.cfg.warn?.(
            `ledger lock ${path} cannot be taken (${describeIoError(e)}): appending without it, so another process writing the same ledger could fork its chain`,
          );
        }
        return null;
      }
    }
    return releaseAll;
  }

  private async flush(batch: Queued[]): Promise<void> {
    const file = this.file;
    if (file === null) {
      for (const p of batch) this.settle(p, false, false);
      return;
    }
    if (this.checkpointerReady) await this.checkpointerReady;
    const release = await this.takeLock();
    const parts: Uint8Array[] = [];
    let total = 0;
    const add = (b: Uint8Array) => {
      parts.push(b);
      total += b.length;
      this.checkpointer?.feed(b);
    };
    let mark: TreeMark | undefined; // the tree before this write, to go back to if it fails
    let repairEnd = -1; // where the ledger_repair line ends within this write, if there is one
    const ends: number[] = []; // where each row's line ends within this write
    let rows: Queued[] = [];
    let start = -1;
    let landed = -1; // bytes of this write in the file: -1 all of them
    try {
      start = await file.size();
      if (this.checkpointer) await this.checkpointer.catchUp(file, start);
      let prev = this.lastChain;
      let repair: TornLine | null = null;
      let terminate = false;
      if (start !== this.lastEnd) {
        const tail = await inspectTail(file, start);
        prev = tail.prev;
        if (tail.terminate && release) {
          // Under the lock, an unterminated tail (torn by a crash, or bytes someone
          // appended to be taken in as a row) is cut off and kept only as a record.
          const torn = tail.torn ?? (await describeTorn(file, tail.lineStart, start));
          const cut = await file.readAt(tail.lineStart, Math.min(torn.bytes, TORN_TEXT_BYTES));
          await file.truncate(tail.lineStart);
          this.checkpointer?.cut(tail.lineStart);
          start = tail.lineStart;
          repair = { ...torn, cut };
        } else if (tail.terminate) {
          // Without the lock another writer may be mid-line: nothing is cut, the tail gets its own line.
          terminate = true;
          if (tail.keptChain) prev = tail.keptChain;
          if (tail.torn) repair = tail.torn;
        }
      }
      if (this.checkpointer) mark = this.checkpointer.mark();
      if (terminate) add(new Uint8Array([LF]));
      if (repair) {
        prev = chainLine(prev, this.buildRow("ledger_repair", null, repairFields(repair)), add);
        repairEnd = total;
      }
      for (const p of batch) {
        try {
          if (p.checkpoint) p.row = this.buildRow("checkpoint", null, this.checkpointer!.fields());
          prev = chainLine(prev, p.row, add);
          rows.push(p);
          ends.push(total);
        } catch {
          this.settle(p, false, false); // a row that cannot be serialized is lost, not the batch
        }
      }
      batch = [];
      try {
        await file.write(parts.length === 1 ? parts[0]! : Buffer.concat(parts, total));
      } catch (e) {
        // A short write may have put whole lines in the file before failing; measured under the lock.
        landed = Math.max(0, Math.min(total, (await file.size().catch(() => start)) - start));
        throw e;
      }
      this.lastEnd = start + total;
      this.lastChain = prev;
    } catch (e) {
      this.writeFailed(e);
      if (mark) this.checkpointer!.rewind(mark);
      rows = [...batch, ...rows]; // batch: rows not yet sealed when it failed
      if (landed < 0) landed = 0;
    } finally {
      if (release) {
        if (landed < 0) this.lingerLock();
        else await this.letGo(); // after a failure, start the next flush from a fresh look at the file
      }
    }

    const ok = landed < 0;
    if (ok || landed > 0) this.unsynced = true;
    if (repairEnd >= 0 && (ok || landed >= repairEnd)) this.repaired++;
    if (!ok) {
      for (let i = 0; i < rows.length; i++) {
        const inFile = i < ends.length && landed >= ends[i]!;
        this.settle(rows[i]!, inFile, inFile && !rows[i]!.durable && this.cfg.fsync !== "always");
      }
      return;
    }
    const mustSync = this.cfg.fsync === "always" || rows.some((p) => p.durable);
    const synced = mustSync ? await this.sync() : true;
    if (this.checkpointer && synced)
      await this.checkpointer.witness(rows.filter((p) => p.checkpoint).map((p) => p.row));
    for (const p of rows) this.settle(p, true, synced || (this.cfg.fsync !== "always" && !p.durable));
    if (!mustSync && this.cfg.fsync === "batch") this.scheduleSync();
  }

  /** fsyncs now (joining one already running); false if it failed. */
  private sync(): Promise<boolean> {
    if (this.syncTimer) {
      clearTimeout(this.syncTimer);
      this.syncTimer = null;
    }
    const file = this.file;
    if (file === null) return Promise.resolve(false);
    const run = async (): Promise<boolean> => {
      if (this.syncing) await this.syncing;
      this.unsynced = false;
      try {
        await file.sync();
        return true;
      } catch (e) {
        this.unsynced = true;
        this.writeFailed(e);
        return false;
      }
    };
    const p = run().finally(() => {
      if (this.syncing === p) this.syncing = null;
    });
    this.syncing = p;
    return p;
  }

  private scheduleSync(): void {
    if (this.syncTimer) return;
    this.syncTimer = setTimeout(() => {
      this.syncTimer = null;
      if (this.unsynced) void this.sync();
    }, this.batchMs);
    (this.syncTimer as { unref?: () => void }).unref?.();
  }

  private async close(): Promise<void> {
    await this.letGo();
    if (this.syncTimer) {
      clearTimeout(this.syncTimer);
      this.syncTimer = null;
    }
    if (this.unsynced && this.cfg.fsync === "batch") await this.sync();
    if (this.syncing) await this.syncing;
    const file = this.file;
    this.file = null;
    if (file) await file.close().catch(() => {});
    await this.checkpointer?.close();
  }
}

const encoder = new TextEncoder();

/** Sets the row's chain (last key), adds its line, returns the chain. Throws if the row cannot be serialized. */
function chainLine(prev: string, row: JsonObject, add: (b: Uint8Array) => void): string {
  const chain = setChain(prev, row);
  add(encoder.encode(`${lineForm(row)}\n`));
  return chain;
}

// ---- reading the file's tail ----

interface Tail {
  /** The chain the next row continues from. */
  prev: string;
  /** The last line has no "\n". */
  terminate: boolean;
  /** Where that last line starts. */
  lineStart: number;
  /** That last line is torn (unparseable): described. */
  torn?: TornLine;
  /** It parses: the chain it passes on (null: none), continued from when it cannot be cut. */
  keptChain?: string | null;
}

/** Reads a file backwards from `end`, a chunk at a time, to find line starts. */
class BackReader {
  private buf: Uint8Array = new Uint8Array(0);
  private bufStart = 0;
  constructor(private readonly file: AppendFile) {}

  private async load(pos: number): Promise<void> {
    const from = Math.max(0, pos + 1 - READ_CHUNK);
    this.buf = await this.file.readAt(from, pos + 1 - from);
    this.bufStart = from;
    if (this.buf.length !== pos + 1 - from) throw new Error("ledger shrank while being read");
  }

  async byteAt(pos: number): Promise<number> {
    if (pos < this.bufStart || pos >= this.bufStart + this.buf.length) await this.load(pos);
    return this.buf[pos - this.bufStart]!;
  }

  /** The offset where the line holding byte `end - 1` starts (just after the previous "\n", or 0). */
  async lineStart(end: number): Promise<number> {
    let pos = end - 1;
    while (pos >= 0) {
      if (pos < this.bufStart || pos >= this.bufStart + this.buf.length) await this.load(pos);
      const i = this.buf.lastIndexOf(LF, pos - this.bufStart);
      if (i >= 0) return this.bufStart + i + 1;
      pos = this.bufStart - 1;
    }
    return 0;
  }
}

type LineVerdict = { kind: "blank" } | { kind: "unparseable" } | { kind: "row"; chain: string | null };

/** What `seam verify` makes of the line [start, end): blank, unparseable, or a row and the chain it passes on (null: none). */
async function judgeLine(file: AppendFile, start: number, end: number): Promise<LineVerdict> {
  if (end - start > MAX_LINE_BYTES) {
    // Not parsed, not read whole: its chain is read from its end, as `seam verify` does.
    const claimed = chainFromTail(await file.readAt(end - CHAIN_TAIL_BYTES, CHAIN_TAIL_BYTES));
    return claimed === null ? { kind: "unparseable" } : { kind: "row", chain: claimed };
  }
  const line = classifyLine(await file.readAt(start, end - start));
  if (line.kind !== "row") return line;
  return { kind: "row", chain: passedOn(chainClaim(line.row)) };
}

/** The chain a row appended at `end` (a line boundary) continues from. */
async function chainBefore(file: AppendFile, reader: BackReader, end: number): Promise<string> {
  let pos = end;
  while (pos > 0) {
    const start = await reader.lineStart(pos - 1);
    const v = await judgeLine(file, start, pos - 1);
    if (v.kind === "row" && v.chain !== null) return v.chain;
    pos = start;
  }
  return GENESIS;
}

/**
 * What the end of the file holds. Without the lock a complete last row whose
 * "\n" never came is continued from; with it, any unterminated tail is cut,
 * so `prev` is always the chain before the last line's start for a tail.
 */
async function inspectTail(file: AppendFile, size: number): Promise<Tail> {
  if (size === 0) return { prev: GENESIS, terminate: false, lineStart: 0 };
  const reader = new BackReader(file);
  if ((await reader.byteAt(size - 1)) === LF)
    return { prev: await chainBefore(file, reader, size), terminate: false, lineStart: size };
  const start = await reader.lineStart(size);
  const v = await judgeLine(file, start, size);
  const prev = await chainBefore(file, reader, start);
  if (v.kind === "unparseable")
    return { prev, terminate: true, lineStart: start, torn: await describeTorn(file, start, size) };
  // Parseable: kept (and continued from) only where it cannot be cut.
  return { prev, terminate: true, lineStart: start, keptChain: v.kind === "row" ? v.chain : null };
}

async function describeTorn(file: AppendFile, start: number, end: number): Promise<TornLine> {
  let lines = 1;
  for (let pos = 0; pos < start; pos += READ_CHUNK * 16) {
    const chunk = await file.readAt(pos, Math.min(READ_CHUNK * 16, start - pos));
    for (let i = chunk.indexOf(LF); i >= 0; i = chunk.indexOf(LF, i + 1)) lines++;
    if (chunk.length === 0) break;
  }
  const digest = new StreamDigest();
  for (let pos = start; pos < end; pos += READ_CHUNK * 16) {
    const chunk = await file.readAt(pos, Math.min(READ_CHUNK * 16, end - pos));
    digest.update(chunk);
    if (chunk.length === 0) break;
  }
  return { line: lines, bytes: end - start, digest: digest.digest() };
}
