/**
 * Observing bodies as they pass: a `text/event-stream` answer split into its
 * events' data (each one JSON-RPC message in MCP's Streamable HTTP), and any
 * other body kept whole for one look at its end. Both only observe copies of
 * chunks already forwarded, and both keep at most `maxFrame` bytes: a larger
 * event or body is counted, never held.
 *
 * Event parsing follows the HTML standard's rules for event streams
 * (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation):
 * a leading BOM is dropped (the UTF-8 decode step); lines end at CRLF, LF or
 * CR; a line starting with ":" is a comment; a field's value follows its
 * first ":" less one leading space (no colon: the whole line is the name, the
 * value empty); `data` fields of one event join with LF; `event` sets the
 * event's type; `id` and `retry` carry nothing for the observer; other names
 * are ignored. A blank line dispatches the event (one whose data is empty is
 * no event, and its type is forgotten); an event the stream ends inside is
 * never dispatched. Only an event of the type `message` (what an empty or
 * absent type means) is a JSON-RPC message to an EventSource reader, and so
 * to the official SDK clients; an event of any other type goes to
 * `BodySink.other`. Field values are kept as bytes, so invalid UTF-8 reaches
 * the observer as it came (which counts it unparsed).
 */
import { brotliDecompressSync, gunzipSync, inflateRawSync, inflateSync } from "node:zlib";
import { concatBytes } from "../core/bytes.ts";

export interface BodySink {
  /** One event's data, or a whole body; the view is valid only during the call. */
  frame(bytes: Uint8Array): void;
  /** An event or body longer than maxFrame was not kept; `length` is its length so far or in all. */
  oversize(length: number): void;
  /**
   * An event readers may not hand on as a message: one of another type than
   * `message` (`why` "event_type"), which no EventSource reader does, or one
   * dispatched by a blank line whose CR ended the stream ("final_cr"), which
   * the HTML standard dispatches and the SDK clients' parser (it waits for a
   * possible LF) drops. `type`: its first MAX_TYPE bytes; `data` undefined
   * when it was longer than maxFrame (`length`).
   */
  other?(why: "event_type" | "final_cr", type: Uint8Array, data: Uint8Array | undefined, length: number): void;
  /**
   * The stream began (after any BOM) with a BOM's UTF-8 mojibake, "ï»¿": the
   * SDK clients' parser drops it when it comes in their first piece of text,
   * the HTML standard keeps it (in the first field's name). It was dropped.
   */
  mojibake?(): void;
  /** A compressed body seam could not decode (`why`), `length` bytes as they came. */
  undecoded?(why: string, length: number): void;
}

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const SPACE = 0x20;
const DATA = [0x64, 0x61, 0x74, 0x61]; // "data"
const EVENT = [0x65, 0x76, 0x65, 0x6e, 0x74]; // "event"
const MESSAGE = [0x6d, 0x65, 0x73, 0x73, 0x61, 0x67, 0x65]; // "message"
const BOM = [0xef, 0xbb, 0xbf];
/** A BOM's UTF-8 bytes read as Latin-1 and encoded as UTF-8 again: "ï»¿". */
const MOJIBAKE = [0xc3, 0xaf, 0xc2, 0xbb, 0xc2, 0xbf];
const START = BOM.length + MOJIBAKE.length;
/** The most bytes of an event type kept (for its row); a longer type is kept cut, and is not `message`. */
export const MAX_TYPE = 64;

/** Whether the stream's first bytes `b` may yet turn out to start with a BOM's mojibake (after a BOM or not). */
function startsLike(b: Uint8Array): boolean {
  const like = (seq: number[]) => b.every((x, i) => i >= seq.length || seq[i] === x);
  return like([...BOM, ...MOJIBAKE]) || like(MOJIBAKE);
}

/** Whether `line` starts with the field name `name` (followed by ":" or the line's end). */
function isField(line: Uint8Array, name: number[]): boolean {
  return name.every((b, i) => line[i] === b) && (line.length === name.length || line[name.length] === COLON);
}

export class SseSplitter {
  private line: Uint8Array[] = [];
  private lineLen = 0;
  private lineSkipping = false;
  /** The field of the line being skipped (too long to keep): `data`, `event` or another. */
  private skippedField: "data" | "event" | "other" = "other";
  private afterCR = false;
  private data: Uint8Array[] = [];
  private dataLen = 0;
  private hasData = false;
  private dataSkipping = false;
  /** The event's type as its last `event` field set it (empty: `message`), at most MAX_TYPE bytes. */
  private type: Uint8Array = new Uint8Array(0);
  /** The type was longer than MAX_TYPE. */
  private typeLong = false;
  /** The stream's first bytes, until START of them show whether it starts with a BOM or its mojibake; null after. */
  private start: Uint8Array | null = new Uint8Array(0);
  /** A blank line ended by a CR that was the last byte so far: its event waits for the next byte (see `other`). */
  private held = false;
  /** The line being ended ends in a CR that is the last byte so far. */
  private crLast = false;
  /** Events dispatched (with a data field), kept or not. */
  events = 0;

  /** `everyType`: a selftest defect, every event taken as a message whatever its type. */
  constructor(
    private readonly maxFrame: number,
    private readonly sink: BodySink,
    private readonly everyType = false,
  ) {}

  push(chunk: Uint8Array): void {
    if (this.start !== null) {
      // What the stream starts with is known once enough of it came (or at its end).
      this.start = concatBytes([this.start, chunk], this.start.length + chunk.length);
      if (this.start.length >= START || !startsLike(this.start)) this.begin();
      return;
    }
    this.feed(chunk);
  }

  /** The stream's first bytes: a BOM dropped (the decoder's), then a BOM's mojibake (the SDK clients' parser's). */
  private begin(): void {
    const b = this.start!;
    this.start = null;
    let at = BOM.every((x, i) => b[i] === x) ? BOM.length : 0;
    if (MOJIBAKE.every((x, i) => b[at + i] === x)) {
      at += MOJIBAKE.length;
      this.sink.mojibake?.();
    }
    this.feed(b.subarray(at));
  }

  private feed(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    let start = 0;
    if (this.held) {
      this.held = false;
      this.dispatch();
    }
    if (this.afterCR) {
      this.afterCR = false;
      if (chunk[start] === LF) start++;
    }
    let nextCR = chunk.indexOf(CR, start);
    while (start < chunk.length) {
      let nl = chunk.indexOf(LF, start);
      if (nextCR >= 0 && nextCR < start) nextCR = chunk.indexOf(CR, start);
      let endLen = 1;
      if (nextCR >= 0 && (nl < 0 || nextCR < nl)) {
        nl = nextCR;
        if (chunk[nl + 1] === LF) endLen = 2;
        else if (nl + 1 === chunk.length) this.afterCR = true;
      }
      if (nl < 0) {
        this.keep(chunk.subarray(start));
        return;
      }
      this.keep(chunk.subarray(start, nl));
      this.crLast = this.afterCR;
      this.lineDone();
      start = nl + endLen;
    }
  }

  /**
   * The stream ended: an unfinished event is dropped, as a browser drops it;
   * an event dispatched by a CR the stream ended with goes to `other`.
   */
  end(): void {
    if (this.start !== null) this.begin();
    if (this.held) {
      this.held = false;
      this.events++;
      this.sink.other?.(
        "final_cr",
        this.type,
        this.dataSkipping ? undefined : concatBytes(this.data, this.dataLen),
        this.dataLen,
      );
    }
    this.line = [];
    this.lineLen = 0;
    this.resetEvent();
  }

  private keep(part: Uint8Array): void {
    if (part.length === 0) return;
    this.lineLen += part.length;
    if (this.lineSkipping) return;
    // A data line can be no longer than the event's data plus "data: ".
    if (this.lineLen > this.maxFrame + 6) {
      this.lineSkipping = true;
      const head = concatBytes(this.line, this.lineLen - part.length).subarray(0, 6);
      const h =
        head.length >= 6
          ? head
          : concatBytes([head, part.subarray(0, 6 - head.length)], Math.min(6, head.length + part.length));
      this.skippedField = isField(h.subarray(0, 5), DATA) ? "data" : isField(h, EVENT) ? "event" : "other";
      this.line = [];
      return;
    }
    // Copy: the chunk may be reused once it has been forwarded.
    this.line.push(part.slice());
  }

  private lineDone(): void {
    const len = this.lineLen;
    const skipped = this.lineSkipping;
    const line = skipped ? null : concatBytes(this.line, len);
    this.line = [];
    this.lineLen = 0;
    this.lineSkipping = false;
    if (len === 0) {
      // A CR at the end of what came so far may be the CR of a CRLF: wait for the next byte.
      if (this.crLast && this.hasData) this.held = true;
      else this.dispatch();
      return;
    }
    if (skipped) {
      // Too long to keep: a data line leaves the event unobservable; a type that long is not `message`.
      if (this.skippedField === "data") this.skipData(this.dataLen + len);
      else if (this.skippedField === "event") this.setType(new Uint8Array(0), true);
      return;
    }
    if (line![0] === COLON) return;
    const colon = line!.indexOf(COLON);
    const nameEnd = colon < 0 ? line!.length : colon;
    let v = colon < 0 ? line!.length : colon + 1;
    if (line![v] === SPACE) v++;
    const value = line!.subarray(v);
    if (nameEnd === 5 && isField(line!, EVENT)) {
      this.setType(value, false);
      return;
    }
    if (nameEnd !== 4 || !isField(line!, DATA)) return;
    if (this.dataSkipping) {
      this.dataLen += value.length + (this.hasData ? 1 : 0);
      this.hasData = true;
      return;
    }
    const add = value.length + (this.hasData ? 1 : 0);
    if (this.dataLen + add > this.maxFrame) {
      this.skipData(this.dataLen + add);
      return;
    }
    if (this.hasData) this.data.push(new Uint8Array([LF]));
    this.data.push(value);
    this.dataLen += add;
    this.hasData = true;
  }

  /** An `event` field: the type is its value (`long`: a value too long to keep, never `message`). */
  private setType(value: Uint8Array, long: boolean): void {
    this.typeLong = long || value.length > MAX_TYPE;
    this.type = value.slice(0, MAX_TYPE);
  }

  /** The event's type is `message`: none set, set empty, or set to "message". */
  private isMessage(): boolean {
    if (this.typeLong) return false;
    const t = this.type;
    return t.length === 0 || (t.length === MESSAGE.length && MESSAGE.every((b, i) => t[i] === b));
  }

  private skipData(length: number): void {
    this.dataSkipping = true;
    this.hasData = true;
    this.data = [];
    this.dataLen = length;
  }

  private dispatch(): void {
    if (!this.hasData) {
      this.resetEvent();
      return;
    }
    this.events++;
    if (!this.everyType && !this.isMessage()) {
      this.sink.other?.(
        "event_type",
        this.type,
        this.dataSkipping ? undefined : concatBytes(this.data, this.dataLen),
        this.dataLen,
      );
    } else if (this.dataSkipping) this.sink.oversize(this.dataLen);
    else this.sink.frame(concatBytes(this.data, this.dataLen));
    this.resetEvent();
  }

  private resetEvent(): void {
    this.data = [];
    this.dataLen = 0;
    this.hasData = false;
    this.dataSkipping = false;
    this.type = new Uint8Array(0);
    this.typeLong = false;
  }
}

/** A whole body, kept for one look at its end (a JSON body is one message or a batch). */
export class BodyCollector {
  private parts: Uint8Array[] = [];
  private len = 0;
  private skipping = false;

  /**
   * `dropBom`: a leading BOM is not the body's (a JSON body, read as
   * Response.json() reads it: decoded as UTF-8, which drops one BOM).
   */
  constructor(
    private readonly maxFrame: number,
    private readonly sink: BodySink,
    private readonly dropBom = false,
  ) {}

  get length(): number {
    return this.len;
  }

  push(chunk: Uint8Array): void {
    this.len += chunk.length;
    if (this.skipping) return;
    if (this.len > this.maxFrame) {
      this.skipping = true;
      this.parts = [];
      return;
    }
    this.parts.push(chunk.slice());
  }

  /** The bytes kept so far (all of the body when not skipping). */
  bytes(): Uint8Array {
    return concatBytes(this.parts, this.len);
  }

  get oversize(): boolean {
    return this.skipping;
  }

  end(): void {
    if (this.skipping) this.sink.oversize(this.len);
    else if (this.len > 0) {
      const b = this.bytes();
      this.sink.frame(this.dropBom && BOM.every((x, i) => b[i] === x) ? b.subarray(BOM.length) : b);
    }
    this.parts = [];
  }
}

/**
 * How the SDK clients read an answer body of this Content-Type: "sse",
 * "json", or null (they take no message from it). The TypeScript SDK reads
 * the media type's essence (before any ";", trimmed, lower case) and takes
 * exactly text/event-stream or application/json; the Python SDK takes a
 * lower-cased value that starts with either. `disputed`: the two differ.
 */
export function bodyKind(contentType: string | undefined): { kind: "sse" | "json" | null; disputed: boolean } {
  const v = (contentType ?? "").toLowerCase();
  const essence = v.split(";", 1)[0]!.trim();
  const ts = essence === "text/event-stream" ? "sse" : essence === "application/json" ? "json" : null;
  const py = v.startsWith("text/event-stream") ? "sse" : v.startsWith("application/json") ? "json" : null;
  return { kind: ts, disputed: ts !== py };
}

/** The content codings seam decodes to observe a body, by their HTTP names (RFC 9110 §8.4.1). */
const DECODERS: Record<string, (b: Uint8Array, max: number) => Uint8Array> = {
  gzip: (b, max) => gunzipSync(b, { maxOutputLength: max }),
  "x-gzip": (b, max) => gunzipSync(b, { maxOutputLength: max }),
  // "deflate" is zlib-wrapped by the standard, raw in some servers (fetch reads both).
  deflate: (b, max) => {
    try {
      return inflateSync(b, { maxOutputLength: max });
    } catch (e) {
      if (e instanceof RangeError) throw e;
      return inflateRawSync(b, { maxOutputLength: max });
    }
  },
  br: (b, max) => brotliDecompressSync(b, { maxOutputLength: max }),
};

/** The codings of a Content-Encoding value, in the order they were applied; null when seam decodes one of them not. */
export function contentCodings(header: string): string[] | null {
  const codings = header
    .toLowerCase()
    .split(",")
    .map((c) => c.trim())
    .filter((c) => c !== "" && c !== "identity");
  return codings.every((c) => c in DECODERS) ? codings : null;
}

/**
 * A compressed body (gzip, deflate, br; `codings` as contentCodings gives
 * them), observed as the client's fetch reads it: kept as it came up to
 * maxFrame bytes, then decoded at its end into `inner` (an SseSplitter or a
 * BodyCollector), never to more than maxFrame bytes. Only a copy is decoded:
 * the bytes forwarded are the ones that came. A body longer than maxFrame
 * either way is counted as oversize; one that does not decode goes to
 * `sink.undecoded`.
 */
export class DecodedBody {
  private readonly kept: BodyCollector;
  private compressed: Uint8Array | null = null;
  private over = -1;

  constructor(
    private readonly maxFrame: number,
    private readonly codings: string[],
    private readonly sink: BodySink,
    readonly inner: SseSplitter | BodyCollector,
  ) {
    this.kept = new BodyCollector(maxFrame, {
      frame: (b) => {
        this.compressed = b.slice();
      },
      oversize: (n) => {
        this.over = n;
      },
    });
  }

  push(chunk: Uint8Array): void {
    this.kept.push(chunk);
  }

  end(): void {
    this.kept.end();
    if (this.over >= 0) {
      this.sink.oversize(this.over);
      return;
    }
    const body = this.compressed;
    if (body === null) return;
    let b: Uint8Array = body;
    try {
      for (const c of [...this.codings].reverse()) b = DECODERS[c]!(b, this.maxFrame);
    } catch (e) {
      if (e instanceof RangeError) this.sink.oversize(this.maxFrame + 1);
      else
        this.sink.undecoded?.(
          `${this.codings.join(", ")}: ${(e as { code?: string }).code ?? "undecodable"}`,
          body.length,
        );
      return;
    }
    this.inner.push(b);
    this.inner.end();
  }
}
