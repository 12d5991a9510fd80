/**
 * Observing bodies as they pass: a `text/event-stream` answer split into its
 * events' data (each one JSON-RPC message in MCP's Streamable HTTP), and any
 * other body kept whole for one look at its end. Both only observe copies of
 * chunks already forwarded, and both keep at most `maxFrame` bytes: a larger
 * event or body is counted, never held.
 *
 * Event parsing follows the HTML standard's rules for event streams
 * (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation):
 * lines end at CRLF, LF or CR; a line starting with ":" is a comment; `data`
 * fields of one event join with LF; a blank line dispatches the event (one
 * without any `data` field is no event); an event the stream ends inside is
 * never dispatched. A leading BOM is dropped. Field values are kept as bytes,
 * so invalid UTF-8 reaches the observer as it came (which counts it unparsed).
 */
import { concatBytes } from "../core/bytes.ts";

export interface BodySink {
  /** One event's data, or a whole body; the view is valid only during the call. */
  frame(bytes: Uint8Array): void;
  /** An event or body longer than maxFrame was not kept; `length` is its length so far or in all. */
  oversize(length: number): void;
}

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const SPACE = 0x20;
const DATA = [0x64, 0x61, 0x74, 0x61]; // "data"
const BOM = new Uint8Array([0xef, 0xbb, 0xbf]);

export class SseSplitter {
  private line: Uint8Array[] = [];
  private lineLen = 0;
  private lineSkipping = false;
  /** The line being skipped is a `data` line. */
  private skippedIsData = false;
  private afterCR = false;
  private data: Uint8Array[] = [];
  private dataLen = 0;
  private hasData = false;
  private dataSkipping = false;
  /** Bytes of a leading BOM seen so far; 3 once the start is past. */
  private bom = 0;
  /** Events dispatched (with a data field), kept or not. */
  events = 0;

  constructor(
    private readonly maxFrame: number,
    private readonly sink: BodySink,
  ) {}

  push(chunk: Uint8Array): void {
    let start = 0;
    // A BOM may only start the stream, and may come split over chunks.
    while (this.bom < 3 && start < chunk.length) {
      if (chunk[start] === BOM[this.bom]) {
        this.bom++;
        start++;
        continue;
      }
      const partial = BOM.subarray(0, this.bom);
      this.bom = 3;
      if (partial.length > 0) this.push(partial);
    }
    if (this.afterCR && start < chunk.length) {
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
      this.lineDone();
      start = nl + endLen;
    }
  }

  /** The stream ended: an unfinished event is dropped, as a browser drops it. */
  end(): void {
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
      const head = concatBytes(this.line, this.lineLen - part.length).subarray(0, 5);
      const h =
        head.length >= 5
          ? head
          : concatBytes([head, part.subarray(0, 5 - head.length)], Math.min(5, head.length + part.length));
      this.skippedIsData = DATA.every((b, i) => h[i] === b) && (h.length === 4 || h[4] === COLON);
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
      this.dispatch();
      return;
    }
    if (skipped) {
      // Too long to keep: if it was a data line, the event cannot be observed.
      if (this.skippedIsData) this.skipData(this.dataLen + len);
      return;
    }
    if (line![0] === COLON) return;
    const colon = line!.indexOf(COLON);
    const nameEnd = colon < 0 ? line!.length : colon;
    if (nameEnd !== 4 || !DATA.every((b, i) => line![i] === b)) return;
    let v = colon < 0 ? line!.length : colon + 1;
    if (line![v] === SPACE) v++;
    const value = line!.subarray(v);
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
    if (this.dataSkipping) this.sink.oversize(this.dataLen);
    else this.sink.frame(concatBytes(this.data, this.dataLen));
    this.resetEvent();
  }

  private resetEvent(): void {
    this.data = [];
    this.dataLen = 0;
    this.hasData = false;
    this.dataSkipping = false;
  }
}

/** A whole body, kept for one look at its end (a JSON body is one message or a batch). */
export class BodyCollector {
  private parts: Uint8Array[] = [];
  private len = 0;
  private skipping = false;

  constructor(
    private readonly maxFrame: number,
    private readonly sink: BodySink,
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
    else if (this.len > 0) this.sink.frame(this.bytes());
    this.parts = [];
  }
}
