/**
 * Recording on a thread of its own, so that the thread that forwards does
 * nothing per chunk but copy it on: parsing, digesting, building and chaining
 * rows (tens of µs a call) no longer delay the next frame.
 *
 * The bytes go through a ring of shared memory (the backlog, BACKLOG_LIMIT
 * bytes): the forwarding side copies each chunk in, in the order the chunks
 * crossed (both directions share the ring, so an answer is never seen before
 * its request), and posts a small note of its direction, length and the
 * moment it crossed (notes gathered for NOTE_DELAY_MS, in one message); the
 * recording side (src/wrap/recording.ts, the same code that runs inline)
 * reads it from there. A ring, not a message per chunk,
 * because transferred buffers became garbage in the recorder's heap faster
 * than it was collected (peak RSS relaying large answers: bench/relay.ts).
 *
 * When the ring is full, or its oldest bytes have waited BACKLOG_MAX_AGE_MS,
 * the forwarding side stops reading, as it does when a pipe is full, until
 * the recorder has caught up: nothing is dropped, memory stays bounded, and
 * what a SIGKILL can take is about what --fsync batch's window already may.
 * session_end has the backlog's high-water mark. At the end the backlog drains
 * before session_end. Shared counters (bytes written, bytes recorded, a count
 * waited for) keep the recorder from saying anything back per chunk.
 */
import type { Dir, RecordingInit, SessionEnd } from "./recording.ts";

/** The role name a recorder thread is started in (see src/runtime/thread.ts). */
export const RECORDER_ROLE = "recorder";

/** Bytes that may wait for the recorder (the ring's size) before the relay stops reading. */
export const BACKLOG_LIMIT = 16 * 1024 * 1024;

/** What the recorder thread is started with (plain data). */
export interface RecorderData {
  init: RecordingInit;
  /** Shared counters: [bytes written, bytes recorded, waiting, recorded count waited for], counts modulo 2^32. */
  counters: SharedArrayBuffer;
  /** The ring the bytes pass through. */
  ring: SharedArrayBuffer;
  /** For the thread to make what cannot cross (a signer, a selftest fault) from plain data. */
  plain: unknown;
}

/**
 * The oldest bytes may wait for the recorder this long before the relay waits
 * for it: --fsync batch's window, so that killing seam (SIGKILL) loses about
 * what batch already may, not a burst's worth of calls.
 */
export const BACKLOG_MAX_AGE_MS = 100;

export const WRITTEN = 0;
export const RECORDED = 1;
export const WAITING = 2;
/** The recorded count the forwarding side waits for (modulo 2^32). */
export const TARGET = 3;

/**
 * How long the forwarding side gathers its notes before it posts them, as
 * one message: a message wakes the recorder thread, and a wake costs about
 * as much CPU as recording a call (some 15 µs under Bun here: two threads
 * passing a message to and fro, 30 µs). Calls a client makes one after
 * another, a few hundred µs apart, are then recorded a handful at a time
 * rather than woken for twice each. Notes are posted at once when they
 * reach NOTES_MAX or NOTES_POST_BYTES, when the relay is about to wait for
 * the recorder, and before eof and the end.
 */
export const NOTE_DELAY_MS = 2;

/** Most notes in one message (a burst of many small chunks is posted as it goes). */
export const NOTES_MAX = 1024;

/**
 * Notes of this many bytes are posted at once: traffic that fills reads
 * (a burst) keeps the recorder busy anyway, and must not find it waiting
 * for the timer; it is traffic of small chunks far apart that is gathered.
 */
export const NOTES_POST_BYTES = 16 * 1024;

/** A piece of a chunk now in the ring: its direction, length, and when it crossed. */
export interface ChunkNote {
  d: Dir;
  wall: number;
  mono: number;
  n: number;
}

export type ToRecorder =
  | { k: "chunks"; notes: ChunkNote[] }
  | { k: "eof"; d: Dir }
  | { k: "spawn_failed"; error: string; exitCode: number }
  | ({ k: "end"; wall: number; mono: number } & SessionEnd);

export type FromRecorder =
  | { k: "opened" }
  | { k: "refused"; message: string }
  | { k: "log"; line: string }
  | { k: "drained" }
  | { k: "ended" };

export function backlogOf(c: Int32Array): number {
  return (Atomics.load(c, WRITTEN) - Atomics.load(c, RECORDED)) >>> 0;
}

/** The recorder has recorded at least `target` bytes (counts modulo 2^32, so compared as a signed difference). */
export function reached(c: Int32Array, target: number): boolean {
  return ((Atomics.load(c, RECORDED) - target) | 0) >= 0;
}
