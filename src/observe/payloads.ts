/**
 * --payloads: the values whose digests rows hold (a call's arguments, an
 * answer's result or error, a server request's params) kept in the payload
 * store (src/runtime/payload-store.ts) as the bytes that crossed: the
 * value's own span of its frame, found without parsing it
 * (src/core/json-spans.ts) and kept only when its digest is the row's.
 * Keeping one never throws: what cannot be kept is counted (session_end's
 * `payloads_unwritten`) and said once.
 */
import { eachMember, skipWs, valueEnd } from "../core/json-spans.ts";
import { isPayloadDigest, PayloadStore } from "../runtime/payload-store.ts";

/** Where payloads go: PayloadStore, or anything that keeps bytes by digest. */
export interface PayloadSink {
  /** Whether this sink has kept (or is keeping) the payload of `digest` already: it is not handed over again. */
  wrote(digest: string): boolean;
  /**
   * Keeps `bytes` as the payload of `digest`, calling `done` when it is kept
   * or could not be (bytes that do not give `digest` are not, unless
   * `vouched` for: then they are not digested again), unless it says at once
   * that it will not ("exists", "skipped"). Throws when it cannot start.
   */
  putLater(
    digest: string,
    bytes: Uint8Array,
    done: (error: Error | null) => void,
    vouched?: boolean,
  ): "writing" | "exists" | "skipped";
  /** Starts what it has gathered (a sink that writes in batches). */
  send?(): void;
}

/** Payloads handed to the sink and not yet done, as of one look (`settled`). */
interface Writes {
  left: number;
  /** Set once `settled` waits for these. */
  resolve?: () => void;
}

const decoder = new TextDecoder();

/**
 * The span of the value at `path` (member names, from the message down) in
 * message `index` of `frame` (-1: the frame is one message, not a batch),
 * or null when it is not there. A repeated member is taken at its last
 * place, as the strict parser keeps it.
 */
export function valueSpan(frame: Uint8Array, index: number, path: readonly string[]): Uint8Array | null {
  let start = skipWs(frame, 0);
  if (index >= 0) {
    if (frame[start] !== 0x5b) return null;
    start = skipWs(frame, start + 1);
    for (let i = 0; i < index; i++) {
      const end = valueEnd(frame, start);
      if (end <= start) return null;
      const comma = skipWs(frame, end);
      if (frame[comma] !== 0x2c) return null;
      start = skipWs(frame, comma + 1);
    }
  }
  let end = -1;
  for (const key of path) {
    if (frame[start] !== 0x7b) return null;
    let found = -1;
    let foundEnd = -1;
    const objectEnd = eachMember(frame, start, (keyStart, keyEnd, valueStart, valueEnd) => {
      if (keyIs(frame, keyStart, keyEnd, key)) {
        found = valueStart;
        foundEnd = valueEnd;
      }
    });
    if (objectEnd < 0 || found < 0) return null;
    start = found;
    end = foundEnd;
  }
  return end < 0 ? null : frame.subarray(start, end);
}

/**
 * Whether the member key between the quotes at `start` and `end` is `key` (a
 * plain ASCII name): compared as bytes, and decoded only when it has escapes.
 */
function keyIs(frame: Uint8Array, start: number, end: number, key: string): boolean {
  const length = end - start - 2;
  let escaped = false;
  if (length === key.length) {
    let i = 0;
    while (i < length && frame[start + 1 + i] === key.charCodeAt(i)) i++;
    if (i === length) return true;
  }
  for (let i = start + 1; i < end - 1; i++) if (frame[i] === 0x5c) escaped = true;
  if (!escaped) return false;
  try {
    return JSON.parse(decoder.decode(frame.subarray(start, end))) === key;
  } catch {
    return false;
  }
}

/**
 * A keeper for the store at `dir`, for a recording that has started already
 * (seam proxy's sessions): a store that cannot be opened now makes each
 * payload one not kept, and the traffic goes on.
 */
export function keeperFor(dir: string, warn: (message: string) => void): PayloadKeeper {
  let sink: PayloadSink;
  try {
    sink = PayloadStore.open(dir);
  } catch (e) {
    const why = `payload directory ${(e as Error).message}`;
    sink = {
      wrote: () => false,
      putLater: () => {
        throw new Error(why);
      },
    };
  }
  return new PayloadKeeper(sink, warn, true);
}

export class PayloadKeeper {
  /** Payloads that could not be kept (session_end's `payloads_unwritten`). */
  unwritten = 0;
  private warned = false;
  /**
   * Whether the frame being observed was read plainly (FrameRead.plain): its
   * payloads need no second digest. Set by the observer for each frame.
   */
  plain = false;
  /** `defer`: the payloads of this turn, copied, to be written in the next (see the constructor). */
  private pending = new Map<string, { bytes: Uint8Array; vouched: boolean }>();
  /** The writes handed to the sink since the last look, and what all looks before wait for. */
  private writes: Writes = { left: 0 };
  private earlier: Promise<void> = Promise.resolve();

  /**
   * A payload is copied when it is observed and its file written off the
   * thread (PayloadSink.putLater); the ledger's writer waits for `settled`
   * before it writes a batch, so a payload's file is under its name before
   * any row naming it is in the ledger. Without `defer` (seam wrap
   * recording behind the forwarding) the write starts at once. `defer`: the
   * recording runs as calls cross, on the thread that forwards (seam proxy;
   * seam wrap under --write-ahead, --fail-closed, --map): payloads are
   * copied and handed over after the turn that observed them (setImmediate),
   * so that no call waits for them, or earlier by `flush`.
   */
  constructor(
    private readonly sink: PayloadSink,
    private readonly warn: (message: string) => void,
    private readonly defer = false,
  ) {}

  /** Hands over the payloads still waiting (defer). */
  flush(): void {
    const pending = this.pending;
    if (pending.size === 0) return;
    this.pending = new Map();
    for (const [digest, p] of pending) if (!this.sink.wrote(digest)) this.store(digest, p.bytes, p.vouched);
  }

  /**
   * Resolves once every payload observed so far is in its file or counted
   * in `unwritten` (before a batch of rows is written, and before session_end
   * counts what was not kept). Never rejects.
   */
  settled(): Promise<void> {
    this.flush();
    this.sink.send?.();
    const w = this.writes;
    if (w.left === 0) return this.earlier;
    this.writes = { left: 0 };
    const these = new Promise<void>((resolve) => {
      w.resolve = resolve;
    });
    this.earlier = Promise.all([this.earlier, these]).then(() => {});
    return this.earlier;
  }

  /**
   * Keeps the value at `path` of message `index` of `frame` as the payload of
   * `digest` (the row's), unless it is kept already. A value that is not in
   * the frame has no payload, but for `absent`: what the row's digest is of then.
   */
  keep(
    digest: string | undefined,
    frame: Uint8Array,
    index: number,
    path: readonly string[],
    absent?: Uint8Array,
  ): void {
    try {
      if (digest === undefined || !isPayloadDigest(digest)) return;
      if (this.pending.has(digest) || this.sink.wrote(digest)) return;
      const inFrame = valueSpan(frame, index, path);
      const span = inFrame ?? absent;
      if (span === undefined) return;
      // The frame's buffer may be reused once this turn is over, before the write is done.
      const bytes = span.slice();
      // A value of a frame read plainly digests, from its bytes, to the row's digest of its parse.
      const vouched = this.plain && inFrame !== null;
      if (!this.defer) this.store(digest, bytes, vouched);
      else {
        if (this.pending.size === 0) setImmediate(() => this.flush());
        this.pending.set(digest, { bytes, vouched });
      }
    } catch (e) {
      this.failed((e as Error).message);
    }
  }

  /**
   * Hands `bytes` to the sink as the payload of `digest`. The sink refuses
   * bytes that do not give that digest (a frame read leniently can hold
   * such), unless they are `vouched` for (FrameRead.plain).
   */
  private store(digest: string, bytes: Uint8Array, vouched: boolean): void {
    const w = this.writes;
    w.left++;
    try {
      const started = this.sink.putLater(
        digest,
        bytes,
        (e) => {
          if (e !== null) this.failed(e.message);
          if (--w.left === 0) w.resolve?.();
        },
        vouched,
      );
      if (started !== "writing") w.left--;
    } catch (e) {
      w.left--;
      this.failed((e as Error).message);
    }
  }

  private failed(why: string): void {
    this.unwritten++;
    if (this.warned) return;
    this.warned = true;
    this.warn(
      `a payload could not be kept (${why}); the traffic and its rows go on, session_end counts what is missing`,
    );
  }
}
