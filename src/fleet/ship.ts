/**
 * `seam ship`: every complete line of a ledger, verbatim, to a JetStream
 * stream, on subject `seam.ledger.<host>.<origin>` with --host, else
 * `seam.ledger.<origin>` (the ledger's origin as checkpoints define it,
 * from line 1; src/fleet/nats.ts), one message a line with
 *   Nats-Msg-Id  <origin>:<line>   (JetStream drops a re-publish within its duplicate window)
 *   Seam-Line    <line>            (1-based)
 *   Seam-Host, Seam-File           (where it came from; informative only)
 * Where to start is asked of the stream (the last line it holds for the
 * origin) at start and after every failure, never taken from a local cursor
 * alone; that line must equal the local one, or the local file was rewritten
 * after it was shipped, which is refused. Lines go in batches; a batch is
 * read and published while the one before it awaits its acks, and no third
 * is read until those came: two batches are the in-memory buffer, and while
 * the server is away reading pauses. A line larger than the server's
 * max_payload cannot be shipped: that is an error, not a skip.
 *
 * The subject is not proof of who wrote a line: anyone with publish rights
 * on it can add lines (docs/fleet-permissions.md says how to give each host
 * rights to its own subjects alone). So a shipper compares every message it
 * finds on its subject with the file's line of that number, at start and
 * after every failure (from the last stream sequence it compared on), and
 * after shipping when the stream holds more messages there than it knows
 * of, or took one of its lines as a duplicate of another; a message that is
 * not the file's line stops it, named (its stream sequence and line).
 */

import { hostname } from "node:os";
import { SeamError } from "../base/error.ts";
import { ledgerOrigin } from "../checkpoint/checkpoint.ts";
import { leafHash } from "../checkpoint/merkle.ts";
import { equalBytes } from "../core/bytes.ts";
import { LineIndex, offsetAfterLine, readLines } from "./lines.ts";
import { subjectFor } from "./nats.ts";

/** The in-memory bound: lines and bytes of one batch (two are held: one awaiting its acks, one on its way). */
export const BATCH_LINES = 4096;
export const BATCH_BYTES = 8 << 20;

export class ShipError extends SeamError {
  override readonly name = "ShipError";
  constructor(message: string, hint?: string) {
    super("ship", message, { hint });
  }
}

/** The stream answered a line with an error (a limit of the stream, or a cluster without a leader). */
export class RefusedError extends SeamError {
  override readonly name = "RefusedError";
  constructor(message: string) {
    super("stream_refused", message);
  }
}

/** A batch that did not go through whole: the first `stored` of its lines are known to be in the stream. */
export class BatchError extends SeamError {
  override readonly name = "BatchError";
  constructor(
    readonly stored: number,
    readonly reason: Error,
  ) {
    super("batch_incomplete", reason.message, { cause: reason });
  }
}

/** What every line of one ledger carries besides its number. */
export interface LineHeaders {
  origin: string;
  host: string;
  file: string;
}

/** What the shipper needs of JetStream (publishing and the last-message lookup). */
export interface StreamPort {
  /**
   * Publishes `lines` as lines first, first + 1, … of `subject` (Nats-Msg-Id
   * `<origin>:<line>`, Seam-Line, Seam-Host, Seam-File); resolves when every
   * one is stored (or recognised as a duplicate), with how many the stream
   * called duplicates; rejects with a BatchError.
   */
  publishLines(subject: string, lines: Uint8Array[], first: number, headers: LineHeaders): Promise<number>;
  /** The messages on `subject` after stream sequence `afterSeq`, in order, up to its last now. */
  since(subject: string, afterSeq: number): AsyncIterable<StoredLine[]>;
  /** How many messages the stream holds on `subject`. */
  count(subject: string): Promise<number>;
  /**
   * The first line of 1…upTo that `subject` lacks, or null: null at once when
   * the stream holds at least upTo messages there.
   */
  firstMissing(subject: string, upTo: number): Promise<number | null>;
  /** The last message on `subject`: its Seam-Line header and bytes; null when none. */
  last(subject: string): Promise<{ line: number; data: Uint8Array } | null>;
  maxPayload(): number;
}

/** A message of the stream as a shipper checks it: its sequence, Seam-Line header (null: none) and bytes. */
export interface StoredLine {
  seq: number;
  line: string | null;
  data: Uint8Array;
}

export interface ShipDeps {
  warn(message: string): void;
  sleep(ms: number): Promise<void>;
  /** Stop asked (SIGINT/SIGTERM): finish the batch in flight, then return. */
  stopped(): boolean;
}

/** The origin of a ledger whose first line (without its "\n") is `line1`. */
export function originOf(line1: Uint8Array): string {
  return ledgerOrigin(leafHash(line1));
}

/** How long a stopping shipper asks the stream whether the lines it sent are stored, after a failure. */
const STOP_CONFIRM_MS = 15_000;

interface InFlightBatch {
  acked: Promise<number>;
  lines: number;
  /** The byte offset after its last line. */
  next: number;
}

export class LedgerShipper {
  origin: string | null = null;
  /** Lines the stream is known to hold for this origin. */
  shipped = 0;
  private offset = 0;
  private readonly host = hostname();
  /** Cleared after a failure: the stream is asked again where to go on from. */
  private synced = false;
  /** Whether `shipped` counts acknowledgements of this process (after its first sync). */
  private counting = false;
  /** The stream sequence through which every message on the subject was compared with the file, and how many there were. */
  private checkedSeq = 0;
  private checkedCount = 0;
  /** Lines stored since (acks that were not duplicates), and acks that said duplicate. */
  private storedSince = 0;
  private duplicates = 0;
  private readonly index: LineIndex;

  constructor(
    readonly path: string,
    private readonly port: StreamPort,
    private readonly deps: ShipDeps,
    /** The host named in the subject (`seam ship --host`); none: the subject names the origin alone. */
    private readonly subjectHost?: string,
  ) {
    this.index = new LineIndex(path);
  }

  /**
   * Ships what the file holds now. Returns lines shipped by this call; with
   * `retry`, a failure waits (backing off to 5 s) and resumes from what the
   * stream holds, until done or stopped.
   */
  async shipAvailable(retry: boolean): Promise<number> {
    let wait = 250;
    let sent = 0;
    let said = "";
    for (;;) {
      const before = this.shipped;
      try {
        await this.shipOnce();
        return sent + this.shipped - before;
      } catch (err) {
        sent += this.shipped - before;
        if (err instanceof RefusedError && !retry) throw new ShipError(`${this.path}: ${err.message}`);
        if (err instanceof ShipError || !retry) throw err;
        if (this.deps.stopped()) {
          await this.confirmStored(err, wait);
          return sent + this.shipped - before;
        }
        // A refusal may be for good (a line over the stream's size limit): said once, retried all the same.
        if (err instanceof RefusedError && err.message !== said) {
          said = err.message;
          this.deps.warn(`${this.path}: ${err.message}; retrying`);
        }
        await this.deps.sleep(wait);
        wait = Math.min(wait * 2, 5000);
        this.synced = false;
      }
    }
  }

  /**
   * Stopping after a failure: a batch whose acks were lost (its stream's
   * leader moving) may still be stored, and what the stream holds decides,
   * not the lost acks. It is asked, backing off, for up to STOP_CONFIRM_MS;
   * nothing more is sent. Throws `err` unless every line is there.
   */
  private async confirmStored(err: unknown, wait: number): Promise<void> {
    for (let waited = 0; ; ) {
      if (await this.allStored().catch(() => false)) return;
      if (waited >= STOP_CONFIRM_MS) throw err;
      await this.deps.sleep(wait);
      waited += wait;
      wait = Math.min(wait * 2, 5000);
    }
  }

  /**
   * The stream holds every complete line of the file, asked anew: its last
   * line is the file's last, and none before it is missing. Then they count
   * as shipped.
   */
  private async allStored(): Promise<boolean> {
    if (this.origin === null) return false;
    const { n, at, missing } = await this.streamEnd(subjectFor(this.origin, this.subjectHost));
    if (missing !== null) return false;
    if ((await readLines(this.path, at.offset, 1, Number.MAX_SAFE_INTEGER)).lines.length > 0) return false;
    this.shipped = n;
    this.offset = at.offset;
    return true;
  }

  private async shipOnce(): Promise<void> {
    if (this.origin === null) {
      const first = await readLines(this.path, 0, 1, Number.MAX_SAFE_INTEGER);
      if (first.lines.length === 0) return; // no complete first line yet
      this.origin = originOf(first.lines[0]!.subarray(0, -1));
    }
    const subject = subjectFor(this.origin, this.subjectHost);
    if (!this.synced) await this.sync(subject);
    const headers = { origin: this.origin, host: this.host, file: this.path };
    // One batch is read and published while the one before it awaits its
    // acks, so the server never waits for the file; at most two are held.
    let readAt = this.offset;
    let last = this.shipped;
    const from = last;
    let before: InFlightBatch | null = null;
    for (;;) {
      if (this.deps.stopped()) break;
      const batch = await readLines(this.path, readAt, BATCH_LINES, BATCH_BYTES);
      if (batch.lines.length === 0) break;
      const max = this.port.maxPayload();
      for (let i = 0; i < batch.lines.length; i++)
        if (batch.lines[i]!.length > max)
          throw new ShipError(
            `${this.path}: line ${last + i + 1} is ${batch.lines[i]!.length} bytes, over the server's max_payload of ${max}: raise max_payload on the NATS servers`,
          );
      const acked = this.port.publishLines(subject, batch.lines, last + 1, headers);
      acked.catch(() => {}); // awaited below, after the batch before it
      last += batch.lines.length;
      readAt = batch.next;
      if (before !== null) await this.settle(before);
      before = { acked, lines: batch.lines.length, next: batch.next };
    }
    if (before !== null) await this.settle(before);
    // What was shipped now is checked against what the stream holds there: a message this
    // shipper did not store, or a line of its taken as a duplicate of another, is compared.
    if (this.shipped <= from) return;
    const duplicates = this.duplicates > 0;
    if (duplicates || (await this.port.count(subject)) !== this.checkedCount + this.storedSince)
      await this.checkForeign(subject);
    // Message ids are the stream's, not the subject's: one published elsewhere with this
    // origin's next id makes the stream drop the line as a duplicate, and it is not there.
    const missing = duplicates ? await this.port.firstMissing(subject, this.shipped) : null;
    if (missing !== null)
      throw new ShipError(
        `${this.path}: the stream took line ${missing} for a duplicate and does not hold it on ${subject}: someone else published a message with its id (${this.origin}:${missing})`,
        "give each host publish rights to its own subjects alone (docs/fleet-permissions.md); the message with that id is elsewhere in the stream",
      );
  }

  /**
   * Compares every message on `subject` after the last one compared with
   * the file's line of its number; throws ShipError naming the first that
   * is not that line.
   */
  private async checkForeign(subject: string): Promise<void> {
    for await (const batch of this.port.since(subject, this.checkedSeq))
      for (const m of batch) {
        const why = await this.foreign(m);
        if (why !== null)
          throw new ShipError(
            `${this.path}: the stream's message ${m.seq} on ${subject} ${why}: a line this shipper did not write (someone else published to this origin, or the file was changed after it was shipped)`,
            `\`seam verify nats://HOST:PORT/STREAM --origin ${this.origin} --key VKEY\` shows what the stream holds; give each host publish rights to its own subjects alone (docs/fleet-permissions.md)`,
          );
        this.checkedSeq = m.seq;
        this.checkedCount++;
      }
    this.storedSince = 0;
    this.duplicates = 0;
  }

  /** Why message m is not the file's line of its number; null when it is. */
  private async foreign(m: StoredLine): Promise<string | null> {
    const n = m.line === null ? Number.NaN : Number(m.line);
    if (!Number.isSafeInteger(n) || n < 1 || String(n) !== m.line) return "has no valid Seam-Line header";
    const mine = await this.index.line(n);
    if (mine === null) return `is line ${n}, which this file does not have`;
    if (!equalBytes(mine, m.data)) return `is line ${n}, which differs from this file's line ${n}`;
    return null;
  }

  /**
   * Waits for a batch's acks. What was acknowledged is stored: after a
   * failure, shipping goes on from there (or from where the stream ends, if
   * that is earlier), never past a line that may be missing.
   */
  private async settle(b: InFlightBatch): Promise<void> {
    let duplicates: number;
    try {
      duplicates = await b.acked;
    } catch (err) {
      if (!(err instanceof BatchError)) throw err;
      this.shipped += err.stored;
      throw err.reason;
    }
    this.shipped += b.lines;
    this.storedSince += b.lines - duplicates;
    this.duplicates += duplicates;
    this.offset = b.next;
  }

  /**
   * Where the stream says this origin ends; its last line must be the file's
   * line of that number. Shipping goes on after it, or from an earlier line
   * that may be missing: after a failure in this process, the line after the
   * last one acknowledged; in any case, the first line the stream lacks when
   * it holds fewer messages than lines. The stream drops what it already has
   * by its Nats-Msg-Id.
   */
  private async sync(subject: string): Promise<void> {
    await this.checkForeign(subject);
    const { n, at, missing } = await this.streamEnd(subject);
    let from = this.counting ? Math.min(n, this.shipped) : n;
    // A line the stream refused, or lost in a broken connection, while later
    // ones of its batch were stored (in this process or an earlier one) is
    // sent again from there.
    if (missing !== null) from = Math.min(from, missing - 1);
    this.shipped = from;
    this.offset = from === n ? at.offset : (await offsetAfterLine(this.path, from))!.offset;
    this.synced = true;
    this.counting = true;
  }

  /**
   * The last line the stream holds for `subject` (n, 0 for none), where it
   * ends in the file, and the first line before it the stream lacks (or
   * null). Throws ShipError when the file has fewer lines, or another line n.
   */
  private async streamEnd(
    subject: string,
  ): Promise<{ n: number; at: { offset: number; line: Uint8Array | null }; missing: number | null }> {
    const last = await this.port.last(subject);
    const n = last?.line ?? 0;
    const at = await offsetAfterLine(this.path, n);
    if (at === null)
      throw new ShipError(
        `${this.path}: the stream holds ${n} lines of ${this.origin} but the file has fewer: the file was truncated or replaced after shipping, or someone else published to this origin`,
      );
    if (last !== null && !equalBytes(at.line!, last.data))
      throw new ShipError(
        `${this.path}: line ${n} differs from the line the stream holds for ${this.origin}: the file was rewritten after it was shipped, or someone else published to this origin`,
      );
    return { n, at, missing: await this.port.firstMissing(subject, n) };
  }
}
