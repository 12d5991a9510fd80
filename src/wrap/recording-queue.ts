/**
 * Recording on the forwarding thread, behind the forwarding: each chunk that
 * crossed is kept with the moment it crossed, and recorded in slices between
 * the event loop's turns, so that what crosses goes on crossing while it is
 * recorded, as with a thread of its own (src/wrap/recorder-link.ts), without
 * the second JavaScript runtime a thread holds for the whole session. The
 * relay waits under the same bounds: too many bytes or reads not yet in the
 * ledger, or the oldest of them too old.
 */
import { availableParallelism } from "node:os";
import type { Log } from "../base/log.ts";
import { BACKLOG_LIMIT, BACKLOG_MAX_AGE_MS, NOTE_DELAY_MS, NOTE_SLOTS } from "./recorder-protocol.ts";
import type { Dir, Recording, SessionEnd } from "./recording.ts";

/** A chunk (or an eof: no bytes) kept until it is recorded. */
interface Kept {
  dir: Dir;
  bytes: Uint8Array;
  wall: number;
  mono: number;
  eof?: true;
}

/**
 * Recorded in one go at most: a chunk is cut into pieces of this size (the
 * frame splitter keeps what it needs of a frame cut in two), so that a slice
 * can end between them.
 */
const PIECE = 8 * 1024;

/**
 * How long one slice of recording may run: short while chunks keep coming,
 * so that forwarding is not held up behind it; longer once they stop, or
 * while the relay waits for the recorder.
 */
const SLICE_BUSY_MS = 1;
const SLICE_MS = 8;

/** Rows that may wait for the disk before recording pauses for them (their bytes count as not recorded). */
const ROWS_WAITING_LIMIT = 512;

export class RecordingQueue {
  private kept: Kept[] = [];
  private next = 0;
  /** Bytes kept and not yet recorded. */
  private unread = 0;
  /** Bytes recorded whose rows may not be in the file yet, and when the oldest of them crossed. */
  private unwritten = 0;
  private unwrittenSince: number | undefined;
  private watching = false;
  /** The most bytes there were at once not yet in the ledger. */
  private max = 0;
  private scheduled = false;
  /** A chunk came since the last slice began. */
  private busy = false;
  /** Set while the relay waits for the recorder to catch up. */
  private room: { promise: Promise<void>; resolve: () => void } | undefined;
  private ending = false;
  /** Why recording stopped, when it failed; what crosses after that is counted, not recorded. */
  private failed: string | undefined;
  private lost = 0;

  constructor(
    readonly recording: Recording,
    private readonly log: Log,
    private readonly limit = BACKLOG_LIMIT,
    private readonly maxAgeMs = BACKLOG_MAX_AGE_MS,
    private readonly maxChunks = NOTE_SLOTS,
    private readonly delayMs = availableParallelism() > 1 ? 0 : NOTE_DELAY_MS,
  ) {}

  /**
   * A chunk crossed (it is already forwarded): kept, and recorded later. The
   * returned promise, when there is one, resolves once the recorder has
   * caught up; until then the caller reads no more.
   */
  chunk(dir: Dir, chunk: Uint8Array): Promise<void> | undefined {
    if (this.failed !== undefined) {
      this.lost += chunk.length;
      return;
    }
    const mono = performance.now();
    // A copy: the caller's buffer may be reused once it reads again.
    this.keep({ dir, bytes: chunk.slice(), wall: Date.now(), mono });
    this.unread += chunk.length;
    const backlog = this.unread + this.unwritten;
    if (backlog > this.max) this.max = backlog;
    if (this.room) return this.room.promise;
    if (backlog > this.limit || this.kept.length - this.next > this.maxChunks || mono - this.oldest()! > this.maxAgeMs)
      return this.wait();
    return undefined;
  }

  /** One direction ended: recorded in its place after the chunks that crossed before it. */
  eof(dir: Dir): void {
    if (this.failed === undefined)
      this.keep({ dir, bytes: new Uint8Array(0), wall: Date.now(), mono: performance.now(), eof: true });
  }

  /** The server never started: nothing crossed, so session_end follows at once. */
  spawnFailed(error: string, exitCode: number): Promise<void> {
    return this.recording.spawnFailed(error, exitCode);
  }

  /** The session ended: what is kept is recorded, then session_end; resolves once it is written. */
  async end(e: SessionEnd): Promise<void> {
    const at = { wall: Date.now(), mono: performance.now() };
    this.ending = true;
    while (this.failed === undefined && this.next < this.kept.length) {
      this.step(Number.POSITIVE_INFINITY);
      await this.recording.ledger.caughtUp();
    }
    if (this.lost > 0) this.log.error(`${this.lost} bytes crossed after recording stopped and are not in the ledger`);
    this.recording.crossedAt(at);
    await this.recording.end({ ...e, backlogMax: this.max });
  }

  /** When the oldest bytes not yet in the ledger crossed (monotonic ms), if any wait. */
  private oldest(): number | undefined {
    const first = this.kept[this.next]?.mono;
    if (this.unwrittenSince === undefined) return first;
    return first === undefined ? this.unwrittenSince : Math.min(first, this.unwrittenSince);
  }

  private keep(k: Kept): void {
    this.kept.push(k);
    this.busy = true;
    this.schedule(this.delayMs);
  }

  /**
   * Records what is kept `delayMs` from now, or after this turn of the event
   * loop. With a core to spare, what crosses is recorded at once, beside the
   * client and the server at work on theirs. Where seam shares its one core
   * with them (`delayMs`: NOTE_DELAY_MS), what crosses once all is recorded
   * waits a little, as for a recorder thread: calls a client makes one after
   * another are then recorded a handful at a time, while it waits for an
   * answer, rather than each while its next call waits to be forwarded.
   */
  private schedule(delayMs = 0): void {
    if (this.scheduled || this.ending || this.failed !== undefined) return;
    this.scheduled = true;
    if (delayMs > 0) setTimeout(this.run, delayMs);
    else setImmediate(this.run);
  }

  private readonly run = (): void => {
    this.scheduled = false;
    if (this.ending || this.failed !== undefined) return;
    const budget = this.busy && !this.room ? SLICE_BUSY_MS : SLICE_MS;
    this.busy = false;
    this.step(budget);
    // Rows pile up for a slow disk: recording waits for it (the relay too, once the bounds are reached).
    if (this.recording.ledger.waiting >= ROWS_WAITING_LIMIT) return;
    if (this.next < this.kept.length) this.schedule();
  };

  /** One slice of recording; a failure stops recording for the rest of the session, never the traffic. */
  private step(budget: number): void {
    try {
      this.slice(budget);
    } catch (e) {
      this.failed = e instanceof Error ? e.message : String(e);
      this.log.error(`recording stopped (${this.failed}); what crosses from now on is not recorded`);
      this.lost += this.unread;
      this.kept = [];
      this.next = 0;
      this.unread = 0;
      this.free();
    }
  }

  /** Records kept chunks, piece by piece, until none is left, `budget` ms have passed, or rows wait for the disk. */
  private slice(budget: number): void {
    const start = performance.now();
    const r = this.recording;
    while (this.next < this.kept.length) {
      const k = this.kept[this.next]!;
      r.crossedAt(k);
      try {
        if (k.eof) r.eof(k.dir);
        else {
          const n = Math.min(PIECE, k.bytes.length);
          r.chunk(k.dir, k.bytes.subarray(0, n));
          k.bytes = k.bytes.subarray(n);
          this.unread -= n;
          this.unwritten += n;
          this.unwrittenSince ??= k.mono;
        }
      } finally {
        r.crossedAt(undefined);
      }
      if (k.eof || k.bytes.length === 0) this.kept[this.next++] = undefined as unknown as Kept;
      if (r.ledger.waiting >= ROWS_WAITING_LIMIT || performance.now() - start >= budget) break;
    }
    if (this.next === this.kept.length) {
      this.kept = [];
      this.next = 0;
    } else if (this.next > 1024 && this.next * 2 > this.kept.length) {
      this.kept = this.kept.slice(this.next);
      this.next = 0;
    }
    this.watch();
  }

  /** Once no write is in progress, every row made so far is in the file: their bytes are recorded. */
  private watch(): void {
    if (this.watching || this.unwritten === 0) return;
    this.watching = true;
    void this.recording.ledger.caughtUp().then(() => {
      this.watching = false;
      this.unwritten = 0;
      this.unwrittenSince = undefined;
      this.free();
      this.schedule();
    });
  }

  /** The relay may read again once what is not yet in the ledger is down to half of each bound. */
  private free(): void {
    const r = this.room;
    if (!r) return;
    if (this.failed === undefined) {
      if (this.unread + this.unwritten > this.limit / 2 || this.kept.length - this.next > this.maxChunks / 2) return;
      const oldest = this.oldest();
      if (oldest !== undefined && performance.now() - oldest > this.maxAgeMs / 2) return;
    }
    this.room = undefined;
    r.resolve();
  }

  private wait(): Promise<void> {
    if (!this.room) {
      let resolve!: () => void;
      const promise = new Promise<void>((res) => {
        resolve = res;
      });
      this.room = { promise, resolve };
    }
    return this.room.promise;
  }
}
