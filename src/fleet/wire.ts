/**
 * A faster reading of NATS's MSG and HMSG frames for a connection that
 * receives many messages (a replay of a stream): the client's parser walks
 * every byte of each frame's control line through its state machine, which
 * cost more than verifying the row. Here a frame that lies whole in the
 * chunk read off the socket is cut with native byte searches and handed to
 * the client exactly as its parser would hand it (the same fields, views
 * of the same bytes); everything else (other operations, a frame split
 * across reads, anything malformed) still goes through the client's parser,
 * so its state, errors and wording stay its own.
 */
import type { NatsConnection } from "@nats-io/nats-core";
import { CR, LF, SPACE, TAB } from "../core/ascii.ts";

/** The parts of the client's parser this reads and drives (nats-core's Parser). */
interface ClientParser {
  state: number;
  dispatcher: { push(e: { kind: number; msg: MsgArg; data: Uint8Array }): void };
  parse(buf: Uint8Array): void;
}

interface MsgArg {
  subject: Uint8Array;
  sid: number;
  reply: Uint8Array | undefined;
  hdr: number;
  size: number;
}

/** The largest header or message size the client's parser takes. */
const MAX_SIZE = 64 * 1024 * 1024;
const H = 0x48;
const M = 0x4d;
const S = 0x53;
const G = 0x47;

/** The start and end of each token of a control line (at most five are valid). */
const tokens = new Int32Array(12);

/** A decimal of up to 15 digits, as the client reads it; -1 when it is not one. */
export function decimal(buf: Uint8Array, from: number, to: number): number {
  if (to === from || to - from > 15) return -1;
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = buf[i]!;
    if (c < 0x30 || c > 0x39) return -1;
    n = n * 10 + c - 0x30;
  }
  return n;
}

/**
 * Wraps `p.parse`: whole frames at the chunk's start are taken here, the
 * rest goes to the client's parse. `start` is the client's value of
 * State.OP_START, `msgKind` that of Kind.MSG.
 */
export function fastFrames(p: ClientParser, start: number, msgKind: number): void {
  const stock = p.parse.bind(p);
  /** The next tab in the chunk at or after a frame's control line (-1: none; -2: not looked for yet): the client splits at tabs too. */
  let tab = -2;
  p.parse = (buf: Uint8Array) => {
    const len = buf.length;
    let i = 0;
    tab = -2;
    while (i < len) {
      if (p.state === start) {
        const end = wholeFrame(buf, i);
        if (end > 0) {
          i = end;
          continue;
        }
      }
      // The client's parser reads on to the end of a line (it takes any split, so a frame's data may
      // reach it in pieces): then the next frame may be whole again.
      const nl = buf.indexOf(LF, i);
      if (nl < 0) return stock(i === 0 ? buf : buf.subarray(i));
      stock(buf.subarray(i, nl + 1));
      i = nl + 1;
    }
  };

  /** Hands on the MSG or HMSG frame at `i` when it lies whole in `buf`; where it ends (0: not taken). */
  const wholeFrame = (buf: Uint8Array, i: number): number => {
    let at: number;
    let headers: boolean;
    if (buf[i] === H && buf[i + 1] === M && buf[i + 2] === S && buf[i + 3] === G && buf[i + 4] === SPACE) {
      headers = true;
      at = i + 5;
    } else if (buf[i] === M && buf[i + 1] === S && buf[i + 2] === G && buf[i + 3] === SPACE) {
      headers = false;
      at = i + 4;
    } else return 0;
    const nl = buf.indexOf(LF, at);
    if (nl < 0 || buf[nl - 1] !== CR) return 0;
    const end = nl - 1;
    // A tab or a carriage return within the line: the client's parser reads it as it will.
    if (buf.indexOf(CR, at) !== end) return 0;
    if (tab !== -1 && tab < at) tab = buf.indexOf(TAB, at);
    if (tab !== -1 && tab < end) return 0;
    // Tokens split by single spaces (anything else is left to the client's parser).
    let n = 0;
    for (;;) {
      let sp = buf.indexOf(SPACE, at);
      if (sp < 0 || sp > end) sp = end;
      if (sp === at || n === 10) return 0;
      tokens[n++] = at;
      tokens[n++] = sp;
      at = sp + 1;
      if (sp === end) break;
    }
    n >>= 1;
    const min = headers ? 4 : 3;
    if (n !== min && n !== min + 1) return 0;
    const sid = decimal(buf, tokens[2]!, tokens[3]!);
    const hdr = headers ? decimal(buf, tokens[2 * n - 4]!, tokens[2 * n - 3]!) : -1;
    const size = decimal(buf, tokens[2 * n - 2]!, tokens[2 * n - 1]!);
    if (sid < 0 || size < 0 || size > MAX_SIZE || (headers && (hdr < 0 || hdr > size))) return 0;
    const dataEnd = nl + 1 + size;
    if (dataEnd + 2 > buf.length || buf[dataEnd] !== CR || buf[dataEnd + 1] !== LF) return 0;
    const msg: MsgArg = {
      subject: buf.subarray(tokens[0]!, tokens[1]!),
      sid,
      reply: n === min + 1 ? buf.subarray(tokens[4]!, tokens[5]!) : undefined,
      hdr,
      size,
    };
    p.dispatcher.push({ kind: msgKind, msg, data: buf.subarray(nl + 1, dataEnd) });
    return dataEnd + 2;
  };
}

const installed = new WeakSet<object>();

/**
 * Gives a connection's parser (and the one each reconnect makes) the fast
 * path for whole frames; a client of another shape keeps its own parser.
 */
export async function fastMessages(nc: NatsConnection): Promise<void> {
  const { Parser, State, Kind } = await import("@nats-io/nats-core/internal");
  const proto = (nc as unknown as { protocol?: { parser?: unknown } }).protocol;
  if (proto === undefined || installed.has(proto) || !(proto.parser instanceof Parser)) return;
  if (typeof State?.OP_START !== "number" || typeof Kind?.MSG !== "number") return;
  const wrap = (p: unknown) => {
    if (p instanceof Parser) fastFrames(p as unknown as ClientParser, State.OP_START, Kind.MSG);
    return p;
  };
  let current = wrap(proto.parser);
  Object.defineProperty(proto, "parser", {
    get: () => current,
    set: (p: unknown) => {
      current = wrap(p);
    },
    configurable: true,
  });
  installed.add(proto);
}
