/**
 * The recorder thread's side (src/wrap/recorder-protocol.ts): it opens the
 * recording (src/wrap/recording.ts, the same code that runs inline) and
 * records each chunk from the ring as its note arrives, dated when it
 * crossed; it tells the forwarding side through the shared counters how far
 * it has got.
 */
import type { MessagePort } from "node:worker_threads";
import type { Log } from "../base/log.ts";
import { yieldToOtherThreads } from "../runtime/thread.ts";
import type { Runtime } from "../runtime/types.ts";
import {
  type ChunkNote,
  type FromRecorder,
  RECORDED,
  type RecorderData,
  TARGET,
  type ToRecorder,
  WAITING,
  reached,
} from "./recorder-protocol.ts";
import { Recording, type RecordingDeps } from "./recording.ts";

/** What the recorder does next: a message, a message's notes one by one. */
type Step = Exclude<ToRecorder, { k: "chunks" }> | { k: "chunk"; note: ChunkNote };

/** Rows that may wait for the disk before the recorder stops taking chunks (they then wait as backlog). */
const ROWS_WAITING_LIMIT = 512;

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
  // Where the recorder and the relay compete for a core, forwarding goes first;
  // the backlog's bounds make the relay wait for the recorder when it must.
  yieldToOtherThreads();
  const say = (m: FromRecorder) => port.postMessage(m);
  const counters = new Int32Array(data.counters);
  const ring = new Uint8Array(data.ring);
  const opened = await Recording.open(rt, data.init, deps, log);
  if (typeof opened === "string") {
    say({ k: "refused", message: opened });
    return;
  }
  const recording = opened;
  // Bytes count as recorded once the rows made from them are in the file (not
  // merely queued for it): the forwarding side's backlog, and so what a
  // SIGKILL could take, covers rows waiting for a slow disk too. Notes wait
  // in the inbox, in order, while the ledger catches up.
  const inbox: Step[] = [];
  let next = 0;
  let running = false;
  /** Bytes whose rows are made (modulo 2^32). */
  let handled = 0;
  let watching = false;
  const publish = () => {
    Atomics.store(counters, RECORDED, handled | 0);
    if (Atomics.load(counters, WAITING) === 1 && reached(counters, Atomics.load(counters, TARGET))) {
      Atomics.store(counters, WAITING, 0);
      say({ k: "drained" });
    }
  };
  // Once no write is in progress, every row made so far is in the file.
  const watch = () => {
    if (watching) return;
    watching = true;
    void recording.ledger.caughtUp().then(() => {
      watching = false;
      publish();
    });
  };
  /** Where the next piece starts in the ring. */
  let readAt = 0;
  const chunk = (note: ChunkNote) => {
    // The piece is read in place (the splitter copies what it keeps of an open frame), in at most two views.
    const at = readAt;
    readAt = (readAt + note.n) % ring.length;
    const first = Math.min(note.n, ring.length - at);
    recording.crossedAt({ wall: note.wall, mono: note.mono });
    try {
      recording.chunk(note.d, ring.subarray(at, at + first));
      if (first < note.n) recording.chunk(note.d, ring.subarray(0, note.n - first));
    } finally {
      recording.crossedAt(undefined);
    }
    handled = (handled + note.n) >>> 0;
  };
  const handle = (m: Step) => {
    switch (m.k) {
      case "chunk":
        chunk(m.note);
        watch();
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
    // Note by note, so that the rows waiting for the disk are looked at between any two chunks.
    if (m.k === "chunks") for (const note of m.notes) inbox.push({ k: "chunk", note });
    else inbox.push(m);
    if (!running) void run();
  });
  say({ k: "opened" });
}

/** A log whose lines the forwarding thread writes (a thread's own stderr may not be flushed before it ends). */
export function threadLog(port: MessagePort, make: (sink: (line: string) => void) => Log): Log {
  return make((line) => port.postMessage({ k: "log", line } satisfies FromRecorder));
}
