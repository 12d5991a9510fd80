/**
 * The forwarding side of a recorder thread (src/wrap/recorder-protocol.ts):
 * it starts the thread, copies each chunk that crossed into the ring and its
 * note into the notes ring (waking the recorder with a message only when it
 * said it was idle), and makes the relay wait, as a full pipe would, when a
 * ring is full or the oldest bytes are too old.
 */
import type { Log } from "../base/log.ts";
import { threadOrNull } from "../runtime/thread.ts";
import type { Runtime, Thread } from "../runtime/types.ts";
import {
  BACKLOG_LIMIT,
  BACKLOG_MAX_AGE_MS,
  backlogOf,
  COUNTERS,
  type FromRecorder,
  growableRing,
  growRing,
  IDLE,
  NOTE_FIELDS,
  NOTE_SLOTS,
  NOTES_PUT,
  NOTES_TAKEN,
  noteKind,
  RECORDER_ROLE,
  type RecorderData,
  RING_START,
  reached,
  SIZE,
  TARGET,
  type ToRecorder,
  WAITING,
  WRITTEN,
} from "./recorder-protocol.ts";
import type { Dir, RecordingInit, SessionEnd } from "./recording.ts";

/** A chunk (or an eof: no bytes) that crossed while a ring was full (or others waited before it): kept, in order. */
interface Waiting {
  dir: Dir;
  bytes: Uint8Array;
  wall: number;
  mono: number;
  eof?: true;
}

/** The forwarding side's handle on a recorder thread. */
export class RecorderLink {
  private readonly counters: Int32Array;
  /** The ring's bytes (length-tracking: it grows with the ring). */
  private readonly ring: Uint8Array;
  private readonly shared: SharedArrayBuffer;
  /** The ring's size now, which positions wrap at (also the SIZE counter), and the most it may grow to. */
  private size: number;
  private readonly limit: number;
  private readonly notes: Float64Array;
  private readonly slots: number;
  /** Notes put (modulo 2^32, as the shared counter). */
  private notesPut = 0;
  /** For each note slot, the bytes put (`written`) once its note was: what the recorder has recorded when that note is taken. */
  private readonly noteEnds: Int32Array;
  /** Bytes put into the ring (modulo 2^32, as the shared counter). */
  private written = 0;
  /** Where the next byte goes in the ring. */
  private at = 0;
  /** When each piece still in the ring crossed: its end (bytes put, unwrapped) and monotonic ms; oldest first from `oldest`. */
  private pieces: { end: number; mono: number }[] = [];
  private oldest = 0;
  private putTotal = 0;
  /** Set while the relay waits for the recorder to reach this count (the age bound). */
  private caughtUpTo: number | undefined;
  private max = 0;
  private lost = 0;
  private gone: string | undefined;
  /** Chunks that crossed and are not in the ring yet, oldest first. */
  private queue: Waiting[] = [];
  /** Resolved when the queue has gone into the ring. */
  private room: { promise: Promise<void>; resolve: () => void } | undefined;
  private ended: (() => void) | undefined;

  private constructor(
    private readonly thread: Thread,
    data: RecorderData,
    private readonly log: Log,
    private readonly maxAgeMs: number,
  ) {
    this.counters = new Int32Array(data.counters);
    this.shared = data.ring;
    this.ring = new Uint8Array(data.ring);
    this.size = Atomics.load(this.counters, SIZE);
    this.limit = (data.ring as unknown as { maxByteLength: number }).maxByteLength;
    this.notes = new Float64Array(data.notes);
    this.slots = this.notes.length / NOTE_FIELDS;
    this.noteEnds = new Int32Array(this.slots);
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
    maxAgeMs = BACKLOG_MAX_AGE_MS,
    noteSlots = NOTE_SLOTS,
    ringStart = RING_START,
  ): Promise<RecorderLink | string | null> {
    const size = Math.min(ringStart, limit);
    const data: RecorderData = {
      init,
      counters: new SharedArrayBuffer(4 * COUNTERS),
      ring: growableRing(size, limit),
      notes: new SharedArrayBuffer(8 * NOTE_FIELDS * noteSlots),
      plain,
    };
    Atomics.store(new Int32Array(data.counters), SIZE, size);
    const thread = threadOrNull(rt.startThread, RECORDER_ROLE, data);
    if (thread === null) return null;
    const link = new RecorderLink(thread, data, log, maxAgeMs);
    return new Promise<RecorderLink | string | null>((resolve) => {
      let opened = false;
      thread.onMessage((m) => {
        const msg = m as FromRecorder;
        if (msg.k === "log") process.stderr.write(msg.line);
        else if (msg.k === "opened") {
          opened = true;
          resolve(link);
        } else if (msg.k === "refused") resolve(msg.message);
        else if (msg.k === "drained") link.fill();
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
        link.lost += link.queue.reduce((n, w) => n + w.bytes.length, 0);
        link.queue = [];
        link.room?.resolve();
        link.ended?.();
      });
    });
  }

  /**
   * A chunk crossed (it is already forwarded). Its bytes go into the ring
   * now, or, when the ring is full, are kept and go in, in order, as the
   * recorder makes room; then the returned promise resolves, and until then
   * the caller reads no more.
   */
  chunk(dir: Dir, chunk: Uint8Array): Promise<void> | undefined {
    if (this.gone !== undefined) {
      this.lost += chunk.length;
      return;
    }
    const wall = Date.now();
    const mono = performance.now();
    const n = this.queue.length === 0 ? this.put(dir, chunk, wall, mono) : 0;
    if (n < chunk.length) {
      // A copy: the caller's buffer may be reused once it reads again.
      this.queue.push({ dir, bytes: new Uint8Array(chunk.subarray(n)), wall, mono });
      return this.wait();
    }
    if (this.room) return this.room.promise;
    if (this.tooOld(mono)) {
      // Wait until what crossed more than half the bound ago is recorded: the traffic keeps flowing behind it.
      this.caughtUpTo = this.recordedBy(mono - this.maxAgeMs / 2);
      return this.wait();
    }
    return undefined;
  }

  /** One direction ended: a note, in its place after the chunks that crossed before it. */
  eof(dir: Dir): void {
    if (this.gone !== undefined) return;
    const w: Waiting = { dir, bytes: new Uint8Array(0), wall: Date.now(), mono: performance.now(), eof: true };
    if (this.queue.length === 0 && this.putEof(w)) return;
    this.queue.push(w);
    void this.wait();
  }

  /** The server never started: session_end says why, once the recorder wrote it. */
  async spawnFailed(error: string, exitCode: number): Promise<void> {
    await this.finish({ k: "spawn_failed", error, exitCode });
  }

  /** The session ended: the backlog drains, then session_end; resolves once it is written. */
  async end(e: SessionEnd): Promise<void> {
    const wall = Date.now();
    const mono = performance.now();
    while (this.room && this.gone === undefined) await this.room.promise;
    await this.finish({ k: "end", wall, mono, ...e, backlogMax: this.max });
    if (this.lost > 0)
      this.log.error(`${this.lost} bytes crossed after the recorder thread stopped and are not in the ledger`);
  }

  private post(m: ToRecorder): void {
    this.thread.post(m);
  }

  /**
   * Copies as much of `bytes` as fits into the ring, with a note for each
   * piece; returns how many bytes went in.
   */
  private put(dir: Dir, bytes: Uint8Array, wall: number, mono: number): number {
    const kind = noteKind(dir, false);
    let from = 0;
    while (from < bytes.length) {
      const waiting = backlogOf(this.counters);
      if (this.size - waiting < bytes.length - from && this.canGrow(waiting)) this.grow(waiting + bytes.length - from);
      const size = this.size;
      const free = size - waiting;
      if (free === 0 || !this.noteRoom()) break;
      const n = Math.min(free, bytes.length - from);
      const at = this.at;
      const first = Math.min(n, size - at);
      this.ring.set(bytes.subarray(from, from + first), at);
      if (first < n) this.ring.set(bytes.subarray(from + first, from + n), 0);
      this.at = (at + n) % size;
      this.written = (this.written + n) >>> 0;
      this.putTotal += n;
      this.pieces.push({ end: this.putTotal, mono });
      Atomics.store(this.counters, WRITTEN, this.written | 0);
      const backlog = backlogOf(this.counters);
      if (backlog > this.max) this.max = backlog;
      this.putNote(kind, wall, mono, n);
      from += n;
    }
    if (from > 0) this.wakeIfIdle();
    return from;
  }

  /**
   * The ring may grow now: it is below its limit, and the bytes waiting in
   * it do not wrap around its end (they lie just before the write
   * position). Then every note the recorder has yet to take reads the same
   * bytes at either size, and the bytes that follow go on past the old end.
   */
  private canGrow(waiting: number): boolean {
    return this.size < this.limit && waiting <= this.at;
  }

  /** Doubles the ring (up to its limit) until `need` bytes fit. */
  private grow(need: number): void {
    let size = this.size * 2;
    while (size < need) size *= 2;
    size = Math.min(size, this.limit);
    growRing(this.shared, size);
    this.size = size;
    Atomics.store(this.counters, SIZE, size);
  }

  /** A slot is free in the notes ring. */
  private noteRoom(): boolean {
    return (this.notesPut - Atomics.load(this.counters, NOTES_TAKEN)) >>> 0 < this.slots;
  }

  /** Writes a note into the notes ring, then publishes it; false when the ring has no free slot. */
  private putNote(kind: number, wall: number, mono: number, n: number): boolean {
    if (!this.noteRoom()) return false;
    const slot = (this.notesPut >>> 0) % this.slots;
    const at = slot * NOTE_FIELDS;
    this.notes[at] = kind;
    this.notes[at + 1] = wall;
    this.notes[at + 2] = mono;
    this.notes[at + 3] = n;
    this.noteEnds[slot] = this.written | 0;
    this.notesPut = (this.notesPut + 1) | 0;
    // The store publishes the note's fields to the recorder's load of the count (both sequentially consistent).
    Atomics.store(this.counters, NOTES_PUT, this.notesPut);
    return true;
  }

  /** An eof's note, the recorder woken for it if it waits; false when the notes ring has no free slot. */
  private putEof(w: Waiting): boolean {
    if (!this.putNote(noteKind(w.dir, true), w.wall, w.mono, 0)) return false;
    this.wakeIfIdle();
    return true;
  }

  /** The recorder said it waits for a message before it looks for notes again: this one. */
  private wakeIfIdle(): void {
    if (Atomics.load(this.counters, IDLE) === 1 && Atomics.compareExchange(this.counters, IDLE, 1, 0) === 1)
      this.post({ k: "wake" });
  }

  /** The ring's size now (it grows with the traffic). */
  get ringSize(): number {
    return this.size;
  }

  /** The oldest bytes not yet recorded crossed longer than maxAgeMs before `now`. */
  private tooOld(now: number): boolean {
    const recorded = this.putTotal - backlogOf(this.counters);
    while (this.oldest < this.pieces.length && this.pieces[this.oldest]!.end <= recorded) this.oldest++;
    if (this.oldest > 1024 && this.oldest * 2 > this.pieces.length) {
      this.pieces.splice(0, this.oldest);
      this.oldest = 0;
    }
    const first = this.pieces[this.oldest];
    return first !== undefined && now - first.mono > this.maxAgeMs;
  }

  /** The count (modulo 2^32) at which every piece that crossed by `time` is recorded. */
  private recordedBy(time: number): number {
    let i = this.oldest;
    while (i + 1 < this.pieces.length && this.pieces[i + 1]!.mono <= time) i++;
    return this.pieces[i]!.end >>> 0;
  }

  /**
   * Moves waiting chunks into the ring while there is room; resolves the
   * relay's wait once none is left and the recorder has caught up as far as
   * it was asked to.
   */
  private fill(): void {
    Atomics.store(this.counters, WAITING, 0);
    while (this.queue.length > 0) {
      const w = this.queue[0]!;
      if (w.eof) {
        if (!this.putEof(w)) {
          this.ask();
          return;
        }
        this.queue.shift();
        continue;
      }
      const n = this.put(w.dir, w.bytes, w.wall, w.mono);
      if (n < w.bytes.length) {
        w.bytes = w.bytes.subarray(n);
        this.ask();
        return;
      }
      this.queue.shift();
    }
    if (this.caughtUpTo !== undefined && !reached(this.counters, this.caughtUpTo)) {
      this.ask();
      return;
    }
    this.caughtUpTo = undefined;
    const r = this.room;
    this.room = undefined;
    r?.resolve();
  }

  private wait(): Promise<void> {
    if (!this.room) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => {
        resolve = r;
      });
      this.room = { promise, resolve };
      this.ask();
    }
    return this.room.promise;
  }

  /**
   * Asks the recorder to say when it has recorded what the relay waits for:
   * room for half of each ring when chunks wait, else the count
   * `caughtUpTo`. It may have got there before it could see the request.
   */
  private ask(): void {
    const target = this.queue.length > 0 ? this.roomTarget() : (this.caughtUpTo ?? this.written) | 0;
    Atomics.store(this.counters, TARGET, target);
    Atomics.store(this.counters, WAITING, 1);
    if (reached(this.counters, target)) queueMicrotask(() => this.fill());
  }

  /**
   * The recorded count at which half the byte ring is free (or, below its
   * limit, at which it can grow), and, when more than half the notes ring is in use,
   * half of it too (a note's slot is free once its bytes are recorded).
   */
  private roomTarget(): number {
    // A ring below its limit waits only until the bytes in it no longer wrap around its end, then grows.
    let target = (this.written - (this.size < this.limit ? this.at : Math.floor(this.size / 2))) | 0;
    const half = this.slots >>> 1;
    if ((this.notesPut - Atomics.load(this.counters, NOTES_TAKEN)) >>> 0 > half) {
      const notesTarget = this.noteEnds[((this.notesPut - half) >>> 0) % this.slots]!;
      if (((notesTarget - target) | 0) > 0) target = notesTarget;
    }
    return target;
  }

  private async finish(msg: ToRecorder): Promise<void> {
    if (this.gone === undefined) {
      const done = new Promise<void>((resolve) => {
        this.ended = resolve;
      });
      this.post(msg);
      await done;
    }
    this.gone ??= "ended";
    await this.thread.terminate();
  }
}
