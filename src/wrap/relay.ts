/**
 * Moving bytes from one side of the seam to the other.
 *
 * The rule (fidelity: bytes out equal bytes in): bytes are forwarded first and observed
 * second, from the same chunk; nothing is parsed and re-emitted. A chunk is
 * handed to the sink before the observer sees it, and the observer runs
 * before the next await, so an answer can never be observed before the
 * request it answers (the peer cannot reply to bytes we have not written).
 * Backpressure: when the sink asks us to wait, we stop reading.
 */

import { LF as NL } from "../core/ascii.ts";
import { LineSplitter } from "../core/lines.ts";
import { type LongFrame, LongFrameDigest } from "../observe/frames.ts";
import type { ByteSink, ByteSource } from "../runtime/types.ts";

/** A test-only corruption of forwarded bytes; see src/selftest/faults.ts. */
export type Corruptor = (chunk: Uint8Array) => Uint8Array;

/**
 * Forwards every chunk of `src` to `dst`, then shows it to `observe`, which
 * may ask (by returning a promise) that no more be read for now.
 * Resolves at the end of `src` (or when reading fails, which ends the flow the
 * same way an EOF does). Never rejects.
 */
export async function pump(
  src: ByteSource,
  dst: ByteSink,
  observe: (chunk: Uint8Array) => void | Promise<void>,
  corrupt?: Corruptor,
): Promise<void> {
  const each = (chunk: Uint8Array): void | Promise<void> => {
    const out = corrupt ? corrupt(chunk) : chunk;
    const wait = dst.write(out);
    // A promise from the observer is a recorder that fell behind: read no more until it caught up.
    const behind = observe(out);
    if (wait && behind) return Promise.all([wait, behind]).then(() => {});
    return wait ?? behind;
  };
  if (src.each) return src.each(each);
  try {
    for await (const chunk of src) {
      const w = each(chunk);
      if (w) await w;
    }
  } catch {
    // A read error on a pipe is its end; the session records how it ended.
  }
}

/**
 * The client→server flow under --write-ahead: forwarding is frame by frame so
 * that a tools/call reaches the server only after its intent row is durable.
 * `hold` sees each complete frame (without "\n") before it is forwarded and may
 * return a promise to wait on; when that resolves false and the frame must be
 * refused (--fail-closed), `refuse` gets it instead of the server.
 * A frame longer than `maxFrame` cannot be observed: it streams through as it
 * arrives, and `oversize` counts it.
 */
export async function pumpFramed(
  src: ByteSource,
  dst: ByteSink,
  o: {
    maxFrame: number;
    hold: (frame: Uint8Array) => Promise<boolean> | undefined;
    refuse?: (frame: Uint8Array) => void;
    oversize: (length: number) => void;
    /**
     * A frame longer than maxFrame, described once it ended; with it, such a
     * frame is rowed instead of only counted. With `holdLong` (--write-ahead)
     * none of its bytes is forwarded: it is held back whole, its pieces
     * dropped as they come, and refused (the server never acts on a frame the
     * ledger cannot say what it was).
     */
    longFrame?: (f: LongFrame) => Promise<boolean> | undefined;
    holdLong?: boolean;
    tap: (chunk: Uint8Array) => void;
  },
): Promise<void> {
  const lines = new LineSplitter(o.maxFrame);
  const long = new LongFrameDigest();
  const held = o.holdLong === true && o.longFrame !== undefined;
  /** A long frame ended: rowed (and, held, refused: its bytes were never sent). */
  const ended = async (f: LongFrame) => {
    const h = o.longFrame?.(f);
    const ok = h ? await h : true;
    if (held && !ok && o.refuse) o.refuse(f.head);
  };
  const send = async (bytes: Uint8Array) => {
    if (bytes.length === 0) return;
    const wait = dst.write(bytes);
    o.tap(bytes);
    if (wait) await wait;
  };
  /** A whole frame: observed, then forwarded as it came (`raw`, its "\n" included), or refused. */
  const complete = async (frame: Uint8Array, raw: Uint8Array) => {
    const h = o.hold(frame);
    const ok = h ? await h : true;
    if (!ok && o.refuse) o.refuse(frame);
    else await send(raw);
  };
  // A frame longer than what the splitter keeps streams through in pieces as they come.
  const forward = async () => {
    for (let p = lines.next(); p !== null; p = lines.next()) {
      if (p.kind === "line") {
        if (p.length > o.maxFrame && o.longFrame) {
          const f = LongFrameDigest.of(p.bytes);
          if (!held) await send(p.raw);
          await ended(f);
        } else await complete(p.bytes, p.raw);
      } else {
        const length = p.kind === "long" ? p.length : -1;
        if (o.longFrame) long.add(p.bytes);
        if (!held) await send(p.raw);
        if (length < 0) continue;
        if (o.longFrame) await ended(long.finish(length));
        else o.oversize(length);
      }
    }
  };
  try {
    for await (const chunk of src) {
      lines.feed(chunk);
      await forward();
    }
  } catch {
    // As in pump: a read error is the end of the flow (and the rest of the chunk in hand is not sent).
    lines.feed(new Uint8Array(0));
  }
  // An unterminated final frame: still observed, then forwarded as it came.
  lines.end();
  await forward();
}

/**
 * The server→client sink, able to slip a whole line of seam's own (a
 * --fail-closed error answer) between two server frames, never inside one.
 */
export class ClientOut implements ByteSink {
  private midFrame = false;
  private queue: Uint8Array[] = [];

  constructor(private readonly out: ByteSink) {}

  write(chunk: Uint8Array): void | Promise<void> {
    if (this.queue.length === 0 || chunk.length === 0) {
      if (chunk.length > 0) this.midFrame = chunk[chunk.length - 1] !== NL;
      return this.out.write(chunk);
    }
    let cut = 0;
    if (this.midFrame) {
      const nl = chunk.indexOf(NL);
      if (nl < 0) return this.out.write(chunk);
      cut = nl + 1;
    }
    const waits: (void | Promise<void>)[] = [];
    if (cut > 0) waits.push(this.out.write(chunk.subarray(0, cut)));
    this.midFrame = false;
    for (const line of this.queue.splice(0)) waits.push(this.out.write(line));
    if (cut < chunk.length) {
      waits.push(this.out.write(chunk.subarray(cut)));
      this.midFrame = chunk[chunk.length - 1] !== NL;
    }
    const pending = waits.filter((w): w is Promise<void> => w instanceof Promise);
    if (pending.length > 0) return Promise.all(pending).then(() => {});
  }

  /** Queues a line (ending in "\n") of seam's own; written now when between frames. */
  inject(line: Uint8Array): void {
    if (!this.midFrame) {
      void this.out.write(line);
      return;
    }
    this.queue.push(line);
  }

  async end(): Promise<void> {
    if (this.queue.length > 0) {
      // The server ended mid-frame; seam's answers still belong to the client.
      await this.out.write(new Uint8Array([NL]));
      for (const line of this.queue.splice(0)) await this.out.write(line);
    }
    await this.out.end();
  }
}
