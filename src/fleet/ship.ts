/**
 * `seam ship`: every complete line of a ledger, verbatim, to a JetStream
 * stream, on subject `seam.ledger.<origin>` (the ledger's origin as
 * checkpoints define it, from line 1), one message a line with
 *   Nats-Msg-Id  <origin>:<line>   (JetStream drops a re-publish within its duplicate window)
 *   Seam-Line    <line>            (1-based)
 *   Seam-Host, Seam-File           (where it came from; informative only)
 * Where to start is asked of the stream (the last line it holds for the
 * origin) at start and after every failure, never taken from a local cursor;
 * that line must equal the local one, or the local file was rewritten after
 * it was shipped, which is refused. Lines go in batches whose acks are
 * awaited before the next batch is read: the batch is the in-memory buffer,
 * and while the server is away reading pauses. A line larger than the
 * server's max_payload cannot be shipped: that is an error, not a skip.
 */
import { hostname } from "node:os";
import { ledgerOrigin } from "../checkpoint/checkpoint.ts";
import { leafHash } from "../checkpoint/merkle.ts";
import { readLines, offsetAfterLine } from "./lines.ts";
import { SUBJECT_PREFIX } from "./nats.ts";

/** The in-memory bound: lines and bytes of one unacknowledged batch. */
export const BATCH_LINES = 4096;
export const BATCH_BYTES = 8 << 20;

export class ShipError extends Error {
  override readonly name = "ShipError";
}

/** What the shipper needs of JetStream (the client's publish and last-message lookup). */
export interface StreamPort {
  /** Resolves when stored (or recognised as a duplicate); rejects on timeout or error. */
  publish(subject: string, data: Uint8Array, msgId: string, headers: Record<string, string>): Promise<void>;
  /** The last message on `subject`: its Seam-Line header and bytes; null when none. */
  last(subject: string): Promise<{ line: number; data: Uint8Array } | null>;
  maxPayload(): number;
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

export class LedgerShipper {
  origin: string | null = null;
  /** Lines the stream is known to hold for this origin. */
  shipped = 0;
  private offset = 0;
  private readonly host = hostname();

  constructor(
    readonly path: string,
    private readonly port: StreamPort,
    private readonly deps: ShipDeps,
  ) {}

  /**
   * Ships what the file holds now. Returns lines shipped by this call; with
   * `retry`, a failure waits (backing off to 5 s) and resumes from what the
   * stream holds, until done or stopped.
   */
  async shipAvailable(retry: boolean): Promise<number> {
    let wait = 250;
    let sent = 0;
    for (;;) {
      try {
        sent += await this.shipOnce();
        return sent;
      } catch (err) {
        if (err instanceof ShipError || !retry || this.deps.stopped()) throw err;
        await this.deps.sleep(wait);
        wait = Math.min(wait * 2, 5000);
        this.synced = false; // the stream says where to go on from, not what this process thinks it sent
      }
    }
  }

  private synced = false;

  private async shipOnce(): Promise<number> {
    if (this.origin === null) {
      const first = await readLines(this.path, 0, 1, Number.MAX_SAFE_INTEGER);
      if (first.lines.length === 0) return 0; // no complete first line yet
      this.origin = originOf(first.lines[0]!.subarray(0, -1));
    }
    const subject = SUBJECT_PREFIX + this.origin;
    if (!this.synced) await this.sync(subject);
    let sent = 0;
    for (;;) {
      if (this.deps.stopped()) return sent;
      const batch = await readLines(this.path, this.offset, BATCH_LINES, BATCH_BYTES);
      if (batch.lines.length === 0) return sent;
      const max = this.port.maxPayload();
      const acks: Promise<void>[] = [];
      let n = this.shipped;
      for (const line of batch.lines) {
        n++;
        if (line.length > max)
          throw new ShipError(
            `${this.path}: line ${n} is ${line.length} bytes, over the server's max_payload of ${max}: raise max_payload on the NATS servers`,
          );
        acks.push(
          this.port.publish(subject, line, `${this.origin}:${n}`, {
            "Seam-Line": String(n),
            "Seam-Host": this.host,
            "Seam-File": this.path,
          }),
        );
      }
      await Promise.all(acks);
      this.shipped = n;
      this.offset = batch.next;
      sent += batch.lines.length;
    }
  }

  /** Where the stream says this origin ends; its last line must be the file's line of that number. */
  private async sync(subject: string): Promise<void> {
    const last = await this.port.last(subject);
    const n = last?.line ?? 0;
    const at = await offsetAfterLine(this.path, n);
    if (at === null)
      throw new ShipError(
        `${this.path}: the stream holds ${n} lines of ${this.origin} but the file has fewer: the file was truncated or replaced after shipping, or someone else published to this origin`,
      );
    if (last !== null && !equal(at.line!, last.data))
      throw new ShipError(
        `${this.path}: line ${n} differs from the line the stream holds for ${this.origin}: the file was rewritten after it was shipped, or someone else published to this origin`,
      );
    this.shipped = n;
    this.offset = at.offset;
    this.synced = true;
  }
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
