/**
 * Recording on a thread of its own, so that the thread that forwards does
 * nothing per chunk but pass a copy on: parsing, digesting, building and
 * chaining rows (tens of µs a call) no longer delay the next frame.
 *
 * The forwarding side posts every chunk, in the order the chunks crossed (one
 * port carries both directions, so an answer is never seen before its
 * request), stamped with the moment it crossed. The recording side
 * (src/wrap/recording.ts) is the same code that runs inline.
 *
 * The backlog (bytes posted, not yet recorded) is bounded: past BACKLOG_LIMIT
 * the forwarding side stops reading, as it does when a pipe is full, until the
 * recorder is back under half of it. Nothing is dropped and memory stays
 * bounded; session_end has the backlog's high-water mark. At the end the
 * backlog drains before session_end. The two sides share three counters
 * (bytes posted, bytes recorded, "waiting") so that the recorder says
 * nothing back per chunk.
 */
import type { Log } from "../base/log.ts";
import type { Runtime, Thread } from "../runtime/types.ts";
import type { MessagePort } from "node:worker_threads";
import { type Dir, Recording, type RecordingDeps, type RecordingInit, type SessionEnd } from "./recording.ts";

/** The role name a recorder thread is started in (see src/runtime/thread.ts). */
export const RECORDER_ROLE = "recorder";

/** Bytes that may wait for the recorder before the relay stops reading. */
export const BACKLOG_LIMIT = 64 * 1024 * 1024;

/** What the recorder thread is started with (plain data). */
export interface RecorderData {
  init: RecordingInit;
  /** Shared counters: [bytes posted, bytes recorded, waiting], each modulo 2^32. */
  counters: SharedArrayBuffer;
  limit: number;
  /** For the thread to make what cannot cross (a signer, a selftest fault) from plain data. */
  plain: unknown;
}

/** Rows that may wait for the disk before the recorder stops taking chunks (they then wait as backlog). */
const ROWS_WAITING_LIMIT = 512;

const POSTED = 0;
const RECORDED = 1;
const WAITING = 2;

type ToRecorder =
  | { k: "chunk"; d: Dir; wall: number; mono: number; b: Uint8Array }
  | { k: "eof"; d: Dir }
  | { k: "spawn_failed"; error: string; exitCode: number }
  | ({ k: "end"; wall: number; mono: number } & SessionEnd);

type FromRecorder =
  | { k: "opened" }
  | { k: "refused"; message: string }
  | { k: "log"; line: string }
  | { k: "drained" }
  | { k: "ended" };

function backlogOf(c: Int32Array): number {
  return (Atomics.load(c, POSTED) - Atomics.load(c, RECORDED)) >>> 0;
}

/** The forwarding side's handle on a recorder thread. */
export class RecorderLink {
  private readonly counters: Int32Array;
  private posted = 0;
  private max = 0;
  private lost = 0;
  private gone: string | undefined;
  private waiting: (() => void) | undefined;
  private ended: (() => void) | undefined;

  private constructor(
    private readonly thread: Thread,
    shared: SharedArrayBuffer,
    private readonly limit: number,
    private readonly log: Log,
  ) {
    this.counters = new Int32Array(shared);
  }

  /**
   * Starts a recorder thread, which opens the ledger and writes
   * session_begin. Resolves to the link, to the refusal's message when the
   * ledger is refused, or to null when no thread could be started (the
   * caller records inline instead).
   */
  static async start(
    rt: Runtime,
    init: RecordingInit,
    plain: unknown,
    log: Log,
    limit = BACKLOG_LIMIT,
  ): Promise<RecorderLink | string | null> {
    const shared = new SharedArrayBuffer(3 * 4);
    const data: RecorderData = { init, counters: shared, limit, plain };
    let thread: Thread | null;
    try {
      thread = rt.startThread?.(RECORDER_ROLE, data) ?? null;
    } catch {
      thread = null;
    }
    if (!thread) return null;
    const link = new RecorderLink(thread, shared, limit, log);
    return new Promise<RecorderLink | string | null>((resolve) => {
      let opened = false;
      thread.onMessage((m) => {
        const msg = m as FromRecorder;
        if (msg.k === "log") process.stderr.write(msg.line);
        else if (msg.k === "opened") {
          opened = true;
          resolve(link);
        } else if (msg.k === "refused") resolve(msg.message);
        else if (msg.k === "drained") link.resume();
        else if (msg.k === "ended") link.ended?.();
      });
      thread.onExit((error) => {
        if (link.gone !== undefined) return; // ended by us, once it was done
        link.gone = error ?? "it ended early";
        if (!opened) {
          // It never opened the ledger: nothing is lost yet, so record inline.
          resolve(null);
          return;
        }
        link.log.error(`the recorder thread stopped (${link.gone}); what crosses from now on is not recorded`);
        link.resume();
        link.ended?.();
      });
    });
  }

  /**
   * A chunk crossed: a copy of exactly its bytes goes to the recorder (a view
   * would take its whole buffer along). Returns a promise when the backlog is
   * over the limit: the caller reads no more until it resolves.
   */
  chunk(dir: Dir, chunk: Uint8Array): Promise<void> | undefined {
    if (this.gone !== undefined) {
      this.lost += chunk.length;
      return;
    }
    // A copy (Node's Buffer#slice would be a view of a shared pool, which must not be transferred).
    const b = new Uint8Array(chunk);
    const msg: ToRecorder = { k: "chunk", d: dir, wall: Date.now(), mono: performance.now(), b };
    this.thread.post(msg, [b.buffer as ArrayBuffer]);
    this.posted = (this.posted + chunk.length) >>> 0;
    Atomics.store(this.counters, POSTED, this.posted | 0);
    const backlog = backlogOf(this.counters);
    if (backlog > this.max) this.max = backlog;
    if (backlog <= this.limit) return;
    return new Promise<void>((resolve) => {
      this.waiting = resolve;
      Atomics.store(this.counters, WAITING, 1);
      // The recorder may have caught up before it could see the flag.
      if (backlogOf(this.counters) <= this.limit / 2) this.resume();
    });
  }

  eof(dir: Dir): void {
    if (this.gone === undefined) this.thread.post({ k: "eof", d: dir } satisfies ToRecorder);
  }

  /** The server never started: session_end says why, once the recorder wrote it. */
  async spawnFailed(error: string, exitCode: number): Promise<void> {
    await this.finish({ k: "spawn_failed", error, exitCode });
  }

  /** The session ended: the backlog drains, then session_end; resolves once it is written. */
  async end(e: SessionEnd): Promise<void> {
    await this.finish({ k: "end", wall: Date.now(), mono: performance.now(), ...e, backlogMax: this.max });
    if (this.lost > 0)
      this.log.error(`${this.lost} bytes crossed after the recorder thread stopped and are not in the ledger`);
  }

  private async finish(msg: ToRecorder): Promise<void> {
    if (this.gone === undefined) {
      const done = new Promise<void>((resolve) => {
        this.ended = resolve;
      });
      this.thread.post(msg);
      await done;
    }
    this.gone ??= "ended";
    await this.thread.terminate();
  }

  private resume(): void {
    Atomics.store(this.counters, WAITING, 0);
    const w = this.waiting;
    this.waiting = undefined;
    w?.();
  }
}

/**
 * The recorder thread's side: opens the recording, then records each chunk
 * as it arrives, dated when it crossed. `deps` are made by the caller from
 * `data.plain`.
 */
export async function serveRecorder(
  rt: Runtime,
  port: MessagePort,
  data: RecorderData,
  deps: RecordingDeps,
  log: Log,
): Promise<void> {
  const say = (m: FromRecorder) => port.postMessage(m);
  const counters = new Int32Array(data.counters);
  const opened = await Recording.open(rt, data.init, deps, log);
  if (typeof opened === "string") {
    say({ k: "refused", message: opened });
    return;
  }
  const recording = opened;
  // Messages wait here, in order, while the ledger catches up with a slow
  // disk: they count as recorded only once handled, so the forwarding side's
  // backlog covers them too.
  const inbox: ToRecorder[] = [];
  let next = 0;
  let running = false;
  let recorded = 0;
  const handle = (m: ToRecorder) => {
    switch (m.k) {
      case "chunk":
        recording.crossedAt({ wall: m.wall, mono: m.mono });
        try {
          recording.chunk(m.d, m.b);
        } finally {
          recording.crossedAt(undefined);
        }
        recorded = (recorded + m.b.length) >>> 0;
        Atomics.store(counters, RECORDED, recorded | 0);
        if (Atomics.load(counters, WAITING) === 1 && backlogOf(counters) <= data.limit / 2) {
          Atomics.store(counters, WAITING, 0);
          say({ k: "drained" });
        }
        return;
      case "eof":
        recording.eof(m.d);
        return;
      case "spawn_failed":
        void recording.spawnFailed(m.error, m.exitCode).then(() => say({ k: "ended" }));
        return;
      case "end":
        recording.crossedAt({ wall: m.wall, mono: m.mono });
        void recording.end(m).then(() => say({ k: "ended" }));
        return;
    }
  };
  const run = async () => {
    running = true;
    while (next < inbox.length) {
      handle(inbox[next++]!);
      if (next > 1024 && next * 2 > inbox.length) {
        inbox.splice(0, next);
        next = 0;
      }
      if (recording.ledger.waiting >= ROWS_WAITING_LIMIT) await recording.ledger.caughtUp();
    }
    running = false;
  };
  port.on("message", (m: ToRecorder) => {
    inbox.push(m);
    if (!running) void run();
  });
  say({ k: "opened" });
}

/** A log whose lines the forwarding thread writes (a thread's own stderr may not be flushed before it ends). */
export function threadLog(port: MessagePort, make: (sink: (line: string) => void) => Log): Log {
  return make((line) => port.postMessage({ k: "log", line } satisfies FromRecorder));
}
