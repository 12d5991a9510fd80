/**
 * Reading a ledger as operations, verified as it is read. The bytes go to the
 * same LedgerVerifier `seam verify` uses, so the verdict at the end is the
 * one `seam verify` gives (with keys, the one `seam verify --key` gives), and
 * each operation carries `vouched`:
 *   - every row of it carried a chain that was checked (no prechain row), and
 *   - every row of it lies before the first break, and is not the row just
 *     before the break: a break at line B means the link between B and the
 *     chained row before it does not hold, and either of the two may be the
 *     one that was changed (an edited row whose own chain was recomputed
 *     breaks the line after it).
 * An operation is therefore handed out once the row after its last row has
 * been checked (or the file ended). The first break is handed out in place,
 * between the operations before it and those after it.
 *
 * Use:
 *   for await (const e of readLedgers(paths, { filters })) {
 *     if (e.type === "op") …e.op (its `vouched`, `line`, `lines`, `status`, `ms`, …)
 *     else if (e.type === "break") …the marker: e.line, e.message
 *     else …e.report, the verdict of e.file, exactly as `seam verify` gives it
 *   }
 * and feed the operations to a StatsAccumulator (stats.ts) for aggregates.
 *
 * `follow` keeps reading as writers append (told by the file system, with a
 * slow poll besides: followChunks in src/read/follow.ts), handing the verifier
 * whole lines only: a line still being written is waited for, never judged
 * torn. Each time it has caught up with the writers, the operations held
 * back are handed out (vouched as far as the head of the chain is, as at the
 * end of a file). It stops when `signal` aborts; the verdict then covers
 * what was read.
 */
import { statSync } from "node:fs";
import { guardSource } from "../base/byte-source.ts";
import type { Verifier } from "../checkpoint/note.ts";
import { verifyCheckpointedSource } from "../checkpoint/verify-file.ts";
import type { Json } from "../core/json.ts";
import { isWriterAlive } from "../runtime/alive.ts";
import { runtime } from "../runtime/index.ts";
import type { Thread } from "../runtime/types.ts";
import { type Break, fileChunks, LedgerVerifier, type VerifyReport } from "../verify/ledger-verifier.ts";
import { type Filters, OpFilter } from "./filters.ts";
import { type FollowWatch, followChunks } from "./follow.ts";
import { type Operation, OperationJoiner } from "./read-model.ts";
import { CallMarks } from "./tool-defs.ts";
import { startAhead, type VerifierCalls } from "./verify-ahead.ts";

/** Bytes pushed to the verifier at a time (see ledgerBatches). */
const PIECE = 64 << 10;
/**
 * Reading leaves garbage several times the bytes read, and a reader that
 * keeps more (stats' durations) lets the collector wait longer: past this
 * many bytes read, the runtime is asked to give the memory back (bench/read.ts
 * holds `seam stats`' peak RSS to its goal).
 */
const RECLAIM_EVERY = 16 << 20;

export interface ReadOptions {
  filters?: Filters;
  /** Keep reading as the file grows, until `signal` aborts. */
  follow?: boolean;
  signal?: AbortSignal;
  /** As `seam verify --strict`: leading unchained rows are breaks. */
  strict?: boolean;
  /** As for `seam verify`: whether the writer of an unfinished session still runs. */
  isWriterAlive?: (pid: number, host: string) => boolean;
  /**
   * Verifier keys (`--key`): the file is first checked as `seam verify --key`
   * checks it (the verdict is that one), then read again; operations under the
   * latest valid checkpoint are `sealed`. Not with `follow` or stdin.
   */
  keys?: readonly Verifier[];
  /** Only the last N operations that pass the filters (the whole file is still read and verified). */
  last?: number;
  /** How `follow` learns of appends (default: notifications, and a look every 500 ms besides). */
  followWatch?: FollowWatch;
  /**
   * How a file's bytes are read for its operations (default fileChunks);
   * `seam report` keeps the lines it hands over. Each chunk must be a buffer
   * the source does not reuse (as fileChunks'): pieces of it are held while
   * a thread verifies them.
   */
  chunks?: (path: string) => AsyncIterable<Uint8Array>;
  /** Where "-" reads from (default: this process's stdin). */
  stdin?: AsyncIterable<Uint8Array>;
  /**
   * Where the verifier runs: "here" (the default), on this thread; "auto", on
   * a thread of its own for a file of 16 MiB or more (src/read/verify-ahead.ts),
   * started from this process's own script, so only seam's own entry point
   * (commands/seam.ts) may ask for it; or a function that starts the thread,
   * used for every file (tests). A thread is faster but holds a second
   * verifier's heap, so `seam stats`, which promises to stay small
   * (bench/read.ts), verifies here.
   */
  verifier?: "auto" | "here" | ((role: string, data: unknown) => Thread | null);
  /** Test-only defect (`seam selftest`): breaks are not acted on, so nothing is marked. */
  faults?: { skipVerify?: boolean };
}

export type ReadEvent =
  | { type: "op"; op: Operation }
  /** The first break of a file, where it stands among its operations; `line` null for `unreadable: …`. */
  | { type: "break"; file: string; line: number | null; message: string }
  /** A file is done: the verdict exactly as `seam verify` (with keys, `seam verify --key`) gives it. */
  | {
      type: "end";
      file: string;
      report: VerifyReport;
      /** With keys: lines 1..N are under the latest valid checkpoint (0: none); null without keys. */
      sealed_through: number | null;
      /** With keys: the `seal` object of `seam verify --key --json`. */
      seal: Record<string, Json> | null;
      /** Operations read (before filters). */
      operations: number;
      /** Bytes of a last line still being written when `follow` stopped (not read). */
      unread_tail: number;
    };

/** Reads each ledger in turn (see readLedger). */
export async function* readLedgers(paths: readonly string[], opts: ReadOptions = {}): AsyncGenerator<ReadEvent> {
  for await (const batch of readLedgerBatches(paths, opts)) yield* batch;
}

/**
 * The events of readLedgers in the batches they come in (one per PIECE of
 * the file read, a hundred operations or so): a reader that keeps up with a
 * big file takes them so, as one await per operation costs more than the
 * reading model's own work on it.
 */
export async function* readLedgerBatches(
  paths: readonly string[],
  opts: ReadOptions = {},
): AsyncGenerator<ReadEvent[]> {
  for (const p of paths) {
    if (opts.signal?.aborted) return;
    yield* ledgerBatches(p, opts);
  }
}

/** Reads one ledger ("-": stdin): operations that pass the filters, the first break in place, then the verdict. */
export async function* readLedger(path: string, opts: ReadOptions = {}): AsyncGenerator<ReadEvent> {
  for await (const batch of ledgerBatches(path, opts)) yield* batch;
}

async function* ledgerBatches(path: string, opts: ReadOptions): AsyncGenerator<ReadEvent[]> {
  const filter = new OpFilter(opts.filters);
  let sealedThrough: number | null = null;
  let sealed: { report: VerifyReport; json: Record<string, Json> } | null = null;
  if (opts.keys !== undefined && opts.keys.length > 0 && path !== "-") {
    const r = await verifyCheckpointedSource(
      path,
      fileChunks(path),
      { strict: opts.strict, isWriterAlive: opts.isWriterAlive },
      { keys: opts.keys },
    );
    const st = r.json.sealed_through;
    sealedThrough = typeof st === "number" ? st : 0;
    sealed = { report: r.report, json: r.json };
  }

  const joiner = new OperationJoiner(path);
  const marks = new CallMarks();
  let out: ReadEvent[] = [];
  /** Finished operations waiting for the row after their last row to be checked. */
  const held: Operation[] = [];
  let broken = false;
  let chainBegan = Number.POSITIVE_INFINITY;
  let operations = 0;
  const ring: ReadEvent[] = [];
  let ringOps = 0;
  let ringBreak: ReadEvent | null = null;
  let last = opts.last;

  const emit = (e: ReadEvent) => {
    if (last === undefined) {
      out.push(e);
      return;
    }
    ring.push(e);
    if (e.type === "op") ringOps++;
    while (ringOps > last) {
      const dropped = ring.shift()!;
      if (dropped.type === "op") ringOps--;
      // The marker stays: the operations kept are below it.
      else if (dropped.type === "break") ringBreak = dropped;
    }
  };
  const release = (vouchedLink: boolean) => {
    if (held.length === 0) return;
    for (const op of held) {
      op.vouched = vouchedLink && !broken && op.lines[0]! >= chainBegan;
      if (sealedThrough !== null) op.sealed = op.vouched && op.line <= sealedThrough;
      if (filter.test(op)) emit({ type: "op", op });
    }
    held.length = 0;
  };
  const take = (ops: Operation[]) => {
    for (const op of ops) {
      operations++;
      marks.see(op);
      held.push(op);
    }
  };
  /** What is ready to hand out, as one batch. */
  const ready = (): ReadEvent[] => {
    const b = out;
    out = [];
    return b;
  };

  const calls: VerifierCalls = {
    onBreak: (b: Break) => {
      if (opts.faults?.skipVerify) return;
      // Everything held touches the broken link (or is before it by one row).
      release(false);
      if (!broken) emit({ type: "break", file: path, line: b.line, message: b.message });
      broken = true;
    },
    onRow: (row, line, chained) => {
      if (chained && chainBegan === Number.POSITIVE_INFINITY) chainBegan = line;
      // This row's link to the one before it held (a break would have come first).
      release(chained);
      take(joiner.add(row, line));
    },
  };
  const starter = typeof opts.verifier === "function" ? opts.verifier : runtime.startThread;
  const ahead = aheadWanted(path, opts)
    ? startAhead(starter, { strict: opts.strict === true, writerAlive: opts.isWriterAlive === isWriterAlive }, calls)
    : null;
  const v =
    ahead === null ? new LedgerVerifier({ strict: opts.strict, isWriterAlive: opts.isWriterAlive, ...calls }) : null;
  const tail = { bytes: 0 };
  const source: AsyncIterable<Uint8Array> =
    path === "-"
      ? (opts.stdin ?? (process.stdin as AsyncIterable<Uint8Array>))
      : opts.follow
        ? followChunks(path, opts.signal, tail, opts.followWatch)
        : (opts.chunks ?? fileChunks)(path);
  let failed: string | null = null;
  let sinceReclaim = 0;
  try {
    for await (const chunk of guardSource(source)) {
      // Only the source's own failures are `unreadable`, as in verifyLedger.
      if (!(chunk instanceof Uint8Array)) {
        failed = chunk.failed;
        break;
      }
      if (chunk.length === 0) {
        // A follow caught up with the writers: what is held is shown now, as vouched as the head is (as at the
        // end of a file), and --last has had its say.
        release(true);
        if (last !== undefined) {
          if (ringBreak !== null) out.push(ringBreak);
          for (const e of ring) out.push(e);
          ring.length = 0;
          ringBreak = null;
          last = undefined;
        }
      } else {
        // In pieces, each one's operations handed out before the next is read: what was read is soon garbage.
        sinceReclaim += chunk.length;
        if (sinceReclaim >= RECLAIM_EVERY) {
          sinceReclaim = 0;
          runtime.reclaim();
        }
        if (v === null) {
          // Whole: a message to the thread costs about as much as a row.
          await ahead!.push(chunk);
          if (out.length > 0) yield ready();
        } else
          for (let at = 0; at < chunk.length; at += PIECE) {
            v.push(chunk.subarray(at, at + PIECE));
            if (out.length > 0) yield ready();
          }
      }
      if (out.length > 0) yield ready();
    }
    const report = v === null ? await ahead!.end(failed) : failed === null ? v.end() : v.fail(failed);
    take(joiner.flush());
    release(true);
    // With --last everything went to the ring, else all of it is in `out`.
    const end = ready();
    if (ringBreak !== null) end.push(ringBreak);
    for (const e of ring) end.push(e);
    end.push({
      type: "end",
      file: path,
      report: sealed?.report ?? report,
      sealed_through: sealedThrough,
      seal: sealed?.json ?? null,
      operations,
      unread_tail: tail.bytes,
    });
    yield end;
  } finally {
    // A reader that stops early (`seam log | head`) leaves no thread behind.
    ahead?.close();
  }
}

/**
 * From this size on, a file's verifier runs on a thread of its own (a
 * thread costs tens of milliseconds to start; a smaller file is read by then).
 */
const AHEAD_FROM = 16 << 20;

/**
 * Whether to verify `path` ahead on a thread: not when following a file
 * (what is held is handed out each time the reader catches up, which must
 * not wait for a thread) nor with an isWriterAlive other than the runtime's
 * (a function does not cross to a thread; the thread imports that one).
 */
function aheadWanted(path: string, opts: ReadOptions): boolean {
  if (opts.follow || opts.verifier === undefined || opts.verifier === "here") return false;
  if (opts.isWriterAlive !== undefined && opts.isWriterAlive !== isWriterAlive) return false;
  if (typeof opts.verifier === "function") return true;
  if (path === "-") return false;
  try {
    return statSync(path).size >= AHEAD_FROM;
  } catch {
    return false;
  }
}
