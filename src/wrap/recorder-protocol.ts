/**
 * Recording on a thread of its own, so that the thread that forwards does
 * nothing per chunk but copy it on: parsing, digesting, building and chaining
 * rows no longer delay the next frame (bench/relay.ts, "round trip", shows
 * each thread's CPU a call).
 *
 * The bytes go through a ring of shared memory (the backlog, at most
 * BACKLOG_LIMIT bytes; it starts at RING_START and grows as the traffic asks
 * for room): the forwarding side copies each chunk in, in the order the chunks
 * crossed (both directions share the ring, so an answer is never seen before
 * its request), and writes a note of its direction, length and the moment
 * it crossed into a second ring (NOTE_SLOTS notes; an eof is a note too, so
 * that it keeps its place among the chunks). The recording side
 * (src/wrap/recording.ts, the same code that runs inline) reads both. A ring,
 * not a message per chunk, because transferred buffers became garbage in the
 * recorder's heap faster than it was collected (peak RSS relaying large
 * answers: bench/relay.ts); notes in shared memory too, because a message
 * costs both threads about as much CPU as recording a call, and gathering
 * notes for a message under a timer cost the forwarding thread more than
 * copying the bytes.
 *
 * The recorder looks for notes NOTE_DELAY_MS after it last found some; when
 * it finds none it says so (a shared flag) and waits, and the forwarding
 * side wakes it with a message at its next note. A client making one call
 * after another wakes it at most once in NOTE_DELAY_MS; a burst, not at all.
 *
 * When either ring is full, or the oldest bytes have waited
 * BACKLOG_MAX_AGE_MS, the forwarding side stops reading, as it does when a
 * pipe is full, until the recorder has caught up: nothing is dropped, memory
 * stays bounded, and what a SIGKILL can take is about what --fsync batch's
 * window already may. session_end has the backlog's high-water mark. At the
 * end the backlog drains before session_end. Shared counters keep the
 * recorder from saying anything back per chunk.
 */
import type { Dir, RecordingInit, SessionEnd } from "./recording.ts";

/** The role name a recorder thread is started in (see src/runtime/thread.ts). */
export const RECORDER_ROLE = "recorder";

/** Bytes that may wait for the recorder (the ring's largest size) before the relay stops reading. */
export const BACKLOG_LIMIT = 16 * 1024 * 1024;

/**
 * The ring's size at first. It grows (doubling, up to BACKLOG_LIMIT) when a
 * chunk finds no room in it: the pages of a ring are resident from the first
 * time its write position passes over them, so a ring of the full size
 * would, after a few megabytes of quiet traffic, hold all of them for the
 * rest of a session that uses a small part of it.
 */
export const RING_START = 64 * 1024;

/** A SharedArrayBuffer of `size` bytes that may grow to `max` (ES2024; Node 20 and Bun have it). */
export function growableRing(size: number, max: number): SharedArrayBuffer {
  const Growable = SharedArrayBuffer as unknown as new (n: number, o: { maxByteLength: number }) => SharedArrayBuffer;
  return new Growable(size, { maxByteLength: max });
}

/** Grows a ring made by growableRing. */
export function growRing(ring: SharedArrayBuffer, size: number): void {
  (ring as unknown as { grow(n: number): void }).grow(size);
}

/** What the recorder thread is started with (plain data). */
export interface RecorderData {
  init: RecordingInit;
  /** Shared counters (Int32, at the indexes below: WRITTEN …), counts modulo 2^32. */
  counters: SharedArrayBuffer;
  /** The ring the bytes pass through (growable; its size in use is the SIZE counter). */
  ring: SharedArrayBuffer;
  /** The ring of notes (Float64, NOTE_FIELDS a note). */
  notes: SharedArrayBuffer;
  /** For the thread to make what cannot cross (a signer, a selftest fault) from plain data. */
  plain: unknown;
}

/**
 * The oldest bytes may wait for the recorder this long before the relay waits
 * for it: --fsync batch's window, so that killing seam (SIGKILL) loses about
 * what batch already may, not a burst's worth of calls.
 */
export const BACKLOG_MAX_AGE_MS = 100;

/** Bytes put into the ring. */
export const WRITTEN = 0;
/** Bytes whose rows are in the file. */
export const RECORDED = 1;
/** 1 while the forwarding side waits for RECORDED to reach TARGET. */
export const WAITING = 2;
/** The recorded count the forwarding side waits for (modulo 2^32). */
export const TARGET = 3;
/** Notes put into the notes ring. */
export const NOTES_PUT = 4;
/** Notes the recorder has taken (their slots are free again). */
export const NOTES_TAKEN = 5;
/** 1 while the recorder waits for a message before it looks for notes again. */
export const IDLE = 6;
/**
 * The ring's size, which the positions of its bytes wrap at. The forwarding
 * side grows it only while the bytes not yet recorded do not wrap (so the
 * notes before the change read the same bytes at either size), and stores it
 * before the notes that follow.
 */
export const SIZE = 7;
/** How many counters there are. */
export const COUNTERS = 8;

/**
 * How long after it last found notes the recorder looks again. Looking
 * costs next to nothing; being woken by a message costs about as much CPU
 * as recording a call (two threads passing a message to and fro, twice
 * that). Calls a client makes one after another, less than a millisecond
 * apart, are then recorded a handful at a time.
 */
export const NOTE_DELAY_MS = 2;

/** Notes the notes ring holds, by default (a power of two: slots follow the counts modulo 2^32). */
export const NOTE_SLOTS = 8192;

/** A note's fields in the notes ring: its kind, the wall-clock and monotonic ms it crossed at, its length. */
export const NOTE_FIELDS = 4;

/** A note's kind: a piece of a chunk in the ring, by direction, or the end of a direction (NOTE_EOF added). */
export const NOTE_C2S = 0;
export const NOTE_S2C = 1;
export const NOTE_EOF = 2;

export function noteKind(d: Dir, eof: boolean): number {
  return (d === "c2s" ? NOTE_C2S : NOTE_S2C) + (eof ? NOTE_EOF : 0);
}

export function noteDir(kind: number): Dir {
  return (kind & 1) === NOTE_C2S ? "c2s" : "s2c";
}

export type ToRecorder =
  | { k: "wake" }
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
