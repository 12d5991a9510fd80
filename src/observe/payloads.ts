/**
 * --payloads: the values whose digests rows hold (a call's arguments, an
 * answer's result or error, a server request's params) kept in the payload
 * store (src/runtime/payload-store.ts) as the bytes that crossed: the
 * value's own span of its frame, found without parsing it
 * (src/core/json-spans.ts) and kept only when its digest is the row's.
 * Keeping one never throws: what cannot be kept is counted (session_end's
 * `payloads_unwritten`) and said once.
 */
import { digestJsonUtf8, digestParts } from "../core/digest.ts";
import { objectMembers, skipWs, valueEnd } from "../core/json-spans.ts";
import { PayloadStore, payloadPath } from "../runtime/payload-store.ts";

/** Where payloads go: PayloadStore, or anything that keeps bytes by digest. */
export interface PayloadSink {
  has(digest: string): boolean;
  /** Throws when the payload cannot be written. */
  put(digest: string, bytes: Uint8Array): unknown;
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
    const spans = objectMembers(frame, start);
    if (spans === null) return null;
    let found = false;
    for (const m of spans.members) {
      if (keyOf(frame, m.keyStart, m.keyEnd) !== key) continue;
      start = m.valueStart;
      end = m.valueEnd;
      found = true;
    }
    if (!found) return null;
  }
  return end < 0 ? null : frame.subarray(start, end);
}

/** A member's key: its bytes between the quotes, unescaped when it has escapes. */
function keyOf(frame: Uint8Array, start: number, end: number): string | undefined {
  const inner = frame.subarray(start + 1, end - 1);
  if (!inner.includes(0x5c)) return decoder.decode(inner);
  try {
    return JSON.parse(decoder.decode(frame.subarray(start, end))) as string;
  } catch {
    return undefined;
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
      has: () => false,
      put: () => {
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
  /** `defer`: the payloads of this turn, copied, to be written in the next (see the constructor). */
  private pending = new Map<string, Uint8Array>();

  /**
   * `defer`: the recording runs on the thread that forwards (seam proxy;
   * seam wrap under --write-ahead, --fail-closed, --map): payloads are
   * copied and written after the turn that observed them (setImmediate), so
   * that no call waits for them; `flush` writes what is left at the end.
   */
  constructor(
    private readonly sink: PayloadSink,
    private readonly warn: (message: string) => void,
    private readonly defer = false,
  ) {}

  /** Writes the payloads still waiting (before session_end counts what was not kept). */
  flush(): void {
    const pending = this.pending;
    if (pending.size === 0) return;
    this.pending = new Map();
    for (const [digest, bytes] of pending) this.store(digest, () => bytes);
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
    if (digest === undefined || payloadPath(digest) === null) return;
    const spanOf = () => valueSpan(frame, index, path) ?? absent ?? null;
    if (!this.defer) {
      this.store(digest, spanOf);
      return;
    }
    if (this.pending.has(digest)) return;
    const span = spanOf();
    if (span === null) return;
    if (this.pending.size === 0) setImmediate(() => this.flush());
    // The frame's buffer may be reused once this turn is over.
    this.pending.set(digest, span.slice());
  }

  /** Writes the payload of `digest` unless the store has it: the bytes `spanOf` finds, when they give that digest. */
  private store(digest: string, spanOf: () => Uint8Array | null): void {
    try {
      if (this.sink.has(digest)) return;
      const span = spanOf();
      if (span === null) return;
      // A frame read leniently (src/observe/json-stacks.ts) can hold bytes whose strict digest is not the row's.
      if (digestJsonUtf8(span, digestParts(digest)!.recipe) !== digest) {
        this.failed("its bytes do not digest to the row's digest");
        return;
      }
      this.sink.put(digest, span);
    } catch (e) {
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
