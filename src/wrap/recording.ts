/**
 * The recording side of one wrapped session: what crossed in each direction
 * (byte counts, stream digests, frames), the observer that turns frames into
 * rows, and the ledger they go to.
 *
 * It runs on the forwarding thread as the bytes cross (--write-ahead,
 * --fail-closed and --map, whose calls wait for their rows), behind the
 * forwarding on that thread (src/wrap/recording-queue.ts), or on a thread of
 * its own (src/wrap/recorder-thread.ts), fed the same chunks in the same
 * order. Behind the forwarding, rows are made after the bytes crossed; `at`
 * carries the moment they crossed, so a row's `ts` and `ms` are the same
 * either way.
 */

import { isMainThread } from "node:worker_threads";
import type { ActionRecorder } from "../actions/recorder.ts";
import type { Log } from "../base/log.ts";
import type { CheckpointConfig } from "../checkpoint/checkpoint-writer.ts";
import { StreamDigest } from "../core/digest.ts";
import { streamFields } from "../format/row.ts";
import { LedgerWriter } from "../ledger/ledger-writer.ts";
import { FrameSplitter } from "../observe/frames.ts";
import { McpObserver } from "../observe/observer.ts";
import type { Fields, ObserverFaults, RowSink } from "../observe/observer-options.ts";
import { PayloadKeeper } from "../observe/payloads.ts";
import type { RecordingSettings } from "../observe/session-fields.ts";
import { PayloadStore } from "../runtime/payload-store.ts";
import { ThreadedPayloadStore } from "../runtime/payload-thread.ts";
import type { Runtime } from "../runtime/types.ts";
import { Reclaimer } from "./reclaim.ts";

export type Dir = "c2s" | "s2c";

/** What a recording needs that can cross to another thread (plain data only). */
export interface RecordingInit extends RecordingSettings {
  ledger: string;
  session: string;
  server: string;
  allowForeignLedger?: boolean;
  /** The session_begin row's fields, made where the session starts. */
  begin: Fields;
}

/** What cannot cross to another thread; a thread makes its own from plain data. */
export interface RecordingDeps {
  actions?: ActionRecorder;
  checkpoints?: CheckpointConfig;
  faults?: ObserverFaults;
  /** The process's resident size in bytes, for when to reclaim (src/wrap/reclaim.ts); the tests give their own. */
  rss?: () => number;
}

/** When bytes crossed: wall-clock ms (a row's ts) and monotonic ms (its durations). */
export interface Moment {
  wall: number;
  mono: number;
}

/** How the session ended, as the forwarding side saw it. */
export interface SessionEnd {
  reason: string;
  exitCode: number;
  signal?: string;
  clientGone?: boolean;
  /** The high-water mark of bytes waiting for the recorder behind the forwarding (absent as calls cross). */
  backlogMax?: number;
}

export class Recording {
  readonly observer: McpObserver;
  private readonly digests = { c2s: new StreamDigest(), s2c: new StreamDigest() };
  private readonly bytes = { c2s: 0, s2c: 0 };
  private readonly frames: Record<Dir, FrameSplitter>;
  /** Set while rows are made for bytes that crossed earlier (on a recording thread). */
  private at: Moment | undefined;
  private readonly reclaimer: Reclaimer;
  /** The thread writing payload files, if there is one: ended once they are all written. */
  payloadWriter: ThreadedPayloadStore | null = null;

  private constructor(
    rt: Runtime,
    readonly ledger: LedgerWriter,
    init: RecordingInit,
    deps: RecordingDeps,
    payloads: PayloadKeeper | undefined,
  ) {
    const rows: RowSink = {
      row(evt, fields) {
        ledger.add(evt, fields);
      },
      durable: (evt, fields) => ledger.appendDurable(evt, fields),
    };
    this.observer = new McpObserver({
      rows,
      raw: init.raw,
      payloads,
      writeAhead: init.writeAhead || init.failClosed,
      failClosed: init.failClosed,
      actions: deps.actions,
      now: () => this.at?.mono ?? performance.now(),
      faults: deps.faults,
      nextSeq: () => ledger.lastSeq + 1,
    });
    this.reclaimer = new Reclaimer(() => rt.reclaim(), deps.rss);
    const observer = this.observer;
    this.frames = {
      s2c: new FrameSplitter(init.maxFrame, {
        frame: (f) => {
          observer.fromServer(f);
          this.reclaimAfter(f.length);
        },
        oversize: (n) => observer.oversize("s2c", n),
      }),
      c2s: new FrameSplitter(init.maxFrame, {
        frame: (f) => {
          void observer.fromClient(f);
          this.reclaimAfter(f.length);
        },
        oversize: (n) => observer.oversize("c2s", n),
        longFrame: (f) => void observer.longFrame(f),
      }),
    };
  }

  /**
   * Opens the ledger and writes session_begin. Resolves to the refusal's
   * message when the ledger is refused (symlink, another owner, open to
   * others' writes): nothing has started then. `behind`: rows are made after
   * their bytes crossed (on a recorder thread, or from a RecordingQueue), so
   * a payload is written as soon as it is observed, on a thread of its own
   * when `payloadThread`.
   */
  static async open(
    rt: Runtime,
    init: RecordingInit,
    deps: RecordingDeps,
    log: Log,
    behind = !isMainThread,
    payloadThread = behind,
  ): Promise<Recording | string> {
    let ledger: LedgerWriter;
    let recording: Recording | undefined;
    let payloads: PayloadKeeper | undefined;
    let writer: ThreadedPayloadStore | null = null;
    try {
      if (init.payloads !== undefined) {
        const store = PayloadStore.open(init.payloads);
        if (payloadThread) writer = ThreadedPayloadStore.start(rt.startThread, store);
        payloads = new PayloadKeeper(writer ?? store, (m) => log.warn(m), !behind);
      }
    } catch (e) {
      return `payload directory ${(e as Error).message}`;
    }
    try {
      ledger = await LedgerWriter.open({
        path: init.ledger,
        session: init.session,
        server: init.server,
        fsync: init.fsync,
        openAppend: rt.openAppend,
        allowForeign: init.allowForeignLedger,
        lockedOnly: init.failClosed,
        warn: (m) => log.warn(m),
        checkpoints: deps.checkpoints,
        now: () => recording?.at?.wall ?? Date.now(),
        // The payloads rows name are in their files before the rows are in the ledger.
        beforeWrite: payloads === undefined ? undefined : () => payloads.settled(),
      });
    } catch (e) {
      void writer?.close();
      return (e as Error).message;
    }
    recording = new Recording(rt, ledger, init, deps, payloads);
    recording.payloadWriter = writer;
    void ledger.append("session_begin", init.begin);
    return recording;
  }

  /** Rows made until `done` are dated `at` (when their bytes crossed). */
  crossedAt(at: Moment | undefined): void {
    this.at = at;
  }

  /** Bytes that crossed: counted and digested (frames are observed by `chunk`, or by the caller under --write-ahead). */
  tap(dir: Dir, chunk: Uint8Array): void {
    this.digests[dir].update(chunk);
    this.bytes[dir] += chunk.length;
  }

  /** Bytes that crossed, counted, digested and observed frame by frame. */
  chunk(dir: Dir, chunk: Uint8Array): void {
    this.tap(dir, chunk);
    this.frames[dir].push(chunk);
  }

  /** A direction ended: a final frame without "\n" is still a frame. */
  eof(dir: Dir): void {
    this.frames[dir].end();
  }

  /** `n` more bytes of frames were observed: memory is given back when it has grown (src/wrap/reclaim.ts). */
  reclaimAfter(n: number): void {
    this.reclaimer.observed(n);
  }

  /** The server never started: session_end says why. */
  async spawnFailed(error: string, exitCode: number): Promise<void> {
    void this.payloadWriter?.close();
    await this.ledger.end({ reason: "spawn_failed", error, exit_code: exitCode, calls: 0 });
  }

  /** Rows for what is still open, then session_end; resolves once it is written (or could not be). */
  async end(e: SessionEnd): Promise<void> {
    this.observer.finish(e.reason);
    // session_end counts the payloads that could not be kept: every write is done by then.
    await this.observer.payloadsSettled();
    void this.payloadWriter?.close();
    const end: Fields = {
      reason: e.reason,
      exit_code: e.exitCode,
      signal: e.signal,
      ...this.observer.endCounts(),
      client_gone: e.clientGone || undefined,
      recorder_backlog_max: e.backlogMax,
      ...streamFields([
        ["c2s", this.bytes.c2s, this.digests.c2s.digest()],
        ["s2c", this.bytes.s2c, this.digests.s2c.digest()],
      ]),
    };
    await this.ledger.end(end);
  }
}
