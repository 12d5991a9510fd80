/**
 * The recorder thread's side (src/wrap/recorder-protocol.ts): it opens the
 * recording (src/wrap/recording.ts, the same code that runs inline) and
 * records each chunk from the ring as it finds its note, dated when it
 * crossed; it tells the forwarding side through the shared counters how far
 * it has got, and when it waits to be woken.
 */
import type { MessagePort } from "node:worker_threads";
import type { Log } from "../base/log.ts";
import { yieldToOtherThreads } from "../runtime/thread.ts";
import type { Runtime } from "../runtime/types.ts";
import {
  type FromRecorder,
  IDLE,
  NOTE_DELAY_MS,
  NOTE_EOF,
  NOTE_FIELDS,
  NOTES_PUT,
  NOTES_TAKEN,
  noteDir,
  RECORDED,
  type RecorderData,
  reached,
  SIZE,
  TARGET,
  type ToRecorder,
  WAITING,
} from "./recorder-protocol.ts";
import { Recording, type RecordingDeps } from "./recording.ts";

/** The last message: the session is over once the notes before it are recorded. */
type Final = Exclude<ToRecorder, { k: "wake" }>;

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
  // Length-tracking: it sees the ring grow.
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
  // in their ring, in order, while the ledger catches up.
  const notes = new Float64Array(data.notes);
  const slots = notes.length / NOTE_FIELDS;
  /** Notes taken (modulo 2^32, as the shared counter). */
  let taken = 0;
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
  const chunk = (kind: number, wall: number, mono: number, n: number) => {
    // The piece is read in place (the splitter copies what it keeps of an open frame), in at most two views.
    const size = Atomics.load(counters, SIZE);
    const at = readAt;
    readAt = (readAt + n) % size;
    const first = Math.min(n, size - at);
    const d = noteDir(kind);
    recording.crossedAt({ wall, mono });
    try {
      recording.chunk(d, ring.subarray(at, at + first));
      if (first < n) recording.chunk(d, ring.subarray(0, n - first));
    } finally {
      recording.crossedAt(undefined);
    }
    handled = (handled + n) >>> 0;
  };
  const pending = () => Atomics.load(counters, NOTES_PUT) !== taken;
  /** Records the next note; its slot is free once its fields are read. */
  const take = () => {
    const at = ((taken >>> 0) % slots) * NOTE_FIELDS;
    const kind = notes[at]!;
    const wall = notes[at + 1]!;
    const mono = notes[at + 2]!;
    const n = notes[at + 3]!;
    taken = (taken + 1) | 0;
    Atomics.store(counters, NOTES_TAKEN, taken);
    if (kind >= NOTE_EOF) recording.eof(noteDir(kind));
    else {
      chunk(kind, wall, mono, n);
      watch();
    }
  };
  let final: Final | null = null;
  let over = false;
  let running = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const end = (m: Final) => {
    over = true;
    if (m.k === "spawn_failed") {
      void recording.spawnFailed(m.error, m.exitCode).then(() => say({ k: "ended" }));
      return;
    }
    recording.crossedAt({ wall: m.wall, mono: m.mono });
    void recording.end(m).then(() => say({ k: "ended" }));
  };
  /** Says it waits for a message; a note put meanwhile, whose putter did not see the flag, is looked at now. */
  const idle = () => {
    Atomics.store(counters, IDLE, 1);
    if (pending() && Atomics.compareExchange(counters, IDLE, 1, 0) === 1) void run();
  };
  /**
   * Records every note there is, note by note (the rows waiting for the disk
   * are looked at between any two), then the end if it came; then looks
   * again NOTE_DELAY_MS later, or, having found none, waits to be woken.
   */
  const run = async () => {
    if (running || over) return;
    running = true;
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    let found = false;
    try {
      while (pending()) {
        found = true;
        take();
        if (recording.ledger.waiting >= ROWS_WAITING_LIMIT) await recording.ledger.caughtUp();
      }
      if (final !== null) end(final);
    } finally {
      running = false;
    }
    if (over) return;
    if (found) timer = setTimeout(() => void run(), NOTE_DELAY_MS);
    else idle();
  };
  port.on("message", (m: ToRecorder) => {
    if (m.k !== "wake") final = m;
    void run();
  });
  say({ k: "opened" });
  idle();
}

/** A log whose lines the forwarding thread writes (a thread's own stderr may not be flushed before it ends). */
export function threadLog(port: MessagePort, make: (sink: (line: string) => void) => Log): Log {
  return make((line) => port.postMessage({ k: "log", line } satisfies FromRecorder));
}
