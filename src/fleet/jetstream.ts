/**
 * The JetStream side of shipping and central verification: create or check
 * the stream (append-only: deny_delete, deny_purge), publish a line, find an
 * origin's last line, and replay the stream in order.
 */
import type { Msg, MsgHdrs, NatsConnection } from "@nats-io/nats-core";
import { DOT } from "../core/ascii.ts";
import { equalBytes, startsWithBytes } from "../core/bytes.ts";
import { DEFAULT_STREAM, SUBJECT_PREFIX } from "./nats.ts";
import { BatchError, type LineHeaders, RefusedError, ShipError, type StreamPort } from "./ship.ts";
import { decimal, fastMessages } from "./wire.ts";

/** Ten minutes of de-duplication: longer than any retry of a batch waits. */
const DUPLICATE_WINDOW_NS = 10 * 60 * 1e9;

export interface StreamSetup {
  stream?: string;
  create?: boolean;
  replicas?: number;
  allowMutable?: boolean;
}

/** Makes sure the stream exists and is append-only; returns its name. */
export async function prepareStream(nc: NatsConnection, s: StreamSetup): Promise<string> {
  const { jetstreamManager, StorageType } = await import("@nats-io/jetstream");
  const jsm = await jetstreamManager(nc);
  const name = s.stream ?? DEFAULT_STREAM;
  let info = await jsm.streams.info(name).catch((err: unknown) => {
    if (isNotFound(err)) return null;
    throw err;
  });
  if (info === null) {
    if (!s.create)
      throw new ShipError(`stream ${name} does not exist: create it with --create-stream (append-only, file storage)`);
    info = await jsm.streams.add({
      name,
      subjects: [`${SUBJECT_PREFIX}>`],
      storage: StorageType.File,
      num_replicas: s.replicas ?? 1,
      deny_delete: true,
      deny_purge: true,
      duplicate_window: DUPLICATE_WINDOW_NS,
    });
  }
  const c = info.config;
  if (!(c.deny_delete && c.deny_purge) && !s.allowMutable)
    throw new ShipError(
      `stream ${name} allows ${c.deny_delete ? "purge" : "delete"}: a host could erase what it shipped; use an append-only stream (deny_delete, deny_purge) or --allow-mutable-stream`,
    );
  return name;
}

/** null for the stream's "no message found" answer to a get; any other error goes on. */
function noMessage(err: unknown): null {
  const e = err as { api_error?: { err_code?: number }; message?: string };
  if (e?.api_error?.err_code === 10037 || /no message found/i.test(e?.message ?? "")) return null;
  throw err;
}

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; message?: string; code?: unknown; api_error?: { err_code?: number } };
  return (
    e?.name === "StreamNotFoundError" || e?.api_error?.err_code === 10059 || /stream not found/i.test(e?.message ?? "")
  );
}

/** The StreamPort of a connection. */
export async function streamPort(nc: NatsConnection, stream: string, timeoutMs = 5000): Promise<StreamPort> {
  const { jetstreamManager } = await import("@nats-io/jetstream");
  const jsm = await jetstreamManager(nc, { timeout: timeoutMs });
  const publisher = await linePublisher(nc, stream, timeoutMs);
  return {
    publishLines: (subject, lines, first, h) => publisher.publish(subject, lines, first, h),
    async last(subject) {
      const m = await jsm.streams.getMessage(stream, { last_by_subj: subject }).catch(noMessage);
      if (m === null) return null;
      const line = Number(m.header.get("Seam-Line"));
      if (!Number.isSafeInteger(line) || line < 1)
        throw new ShipError(`the stream's last message on ${subject} has no valid Seam-Line header`);
      return { line, data: m.data };
    },
    async *since(subject, afterSeq) {
      yield* replay(nc, stream, [subject], false, REPLAY_PULL, afterSeq + 1);
    },
    async count(subject) {
      const info = await jsm.streams.info(stream, { subjects_filter: subject });
      return info.state.subjects?.[subject] ?? 0;
    },
    async firstMissing(subject, upTo) {
      const info = await jsm.streams.info(stream, { subjects_filter: subject });
      if ((info.state.subjects?.[subject] ?? 0) >= upTo) return null;
      // Fewer messages than lines: find the first line that is not there (headers only).
      const seen = new Uint8Array(upTo + 1);
      for await (const batch of replay(nc, stream, [subject], true))
        for (const m of batch) {
          const n = Number(m.line);
          if (Number.isSafeInteger(n) && n >= 1 && n <= upTo) seen[n] = 1;
        }
      const missing = seen.indexOf(0, 1);
      return missing < 0 ? null : missing;
    },
    maxPayload: () => nc.info?.max_payload ?? 1024 * 1024,
  };
}

/** One batch of lines on their way: which of them the stream has acknowledged. */
interface InFlight {
  subject: string;
  first: number;
  acked: Uint8Array;
  left: number;
  /** Acks that said the stream already held a message of that id. */
  duplicates: number;
  /** When the last acknowledgement came (or the batch went out). */
  heard: number;
  timer: ReturnType<typeof setTimeout> | undefined;
  resolve(duplicates: number): void;
  reject(err: Error): void;
}

/**
 * Publishes batches of lines as plain NATS messages whose reply subject is
 * one shared inbox (the way JetStream's own publish asks for its ack, without
 * a request, a timer and an error object per line), and counts the acks that
 * come back there. Each message's header block is written here in NATS's
 * wire form (what the client's header object would encode, at a fraction of
 * its cost per line); Host and File are put through that object once, so
 * what it refuses or trims stays refused or trimmed.
 */
async function linePublisher(nc: NatsConnection, stream: string, timeoutMs: number) {
  const { createInbox, headers, MsgHdrsImpl } = await import("@nats-io/transport-node");
  /** A header block already in wire form (the client sends what `encode` returns). */
  class WireHeaders extends MsgHdrsImpl {
    constructor(private readonly wire: Uint8Array) {
      super();
    }
    override encode(): Uint8Array {
      return this.wire;
    }
  }
  const enc = new TextEncoder();
  const dec = new TextDecoder();
  const inbox = `${createInbox()}.`;
  // An ack is JSON whose first member is "stream" when the message was stored (or was a duplicate)
  // and "error" when it was refused: the usual one is known by its first bytes, without parsing.
  const storedAck = enc.encode(`{"stream":${JSON.stringify(stream)},`);
  // A duplicate's ack says so in a member of its own (the stream held a message of that id
  // already): an ack that names it is parsed, the usual one is not.
  const duplicateMark = Buffer.from(`"duplicate"`);
  const isDuplicate = (data: Uint8Array): boolean => {
    if (!Buffer.from(data.buffer, data.byteOffset, data.byteLength).includes(duplicateMark)) return false;
    try {
      return (JSON.parse(dec.decode(data)) as { duplicate?: unknown }).duplicate === true;
    } catch {
      return false;
    }
  };
  const batches = new Map<number, InFlight>();
  let nextBatch = 0;

  const fail = (id: number, b: InFlight, err: Error) => {
    batches.delete(id);
    clearTimeout(b.timer);
    let stored = 0;
    while (stored < b.acked.length && b.acked[stored] === 1) stored++;
    b.reject(new BatchError(stored, err));
  };

  nc.subscribe(`${inbox}>`, {
    callback: (err, m) => {
      if (err) {
        for (const [id, b] of batches) fail(id, b, err);
        return;
      }
      const [bid, idx] = m.subject.slice(inbox.length).split(".");
      const id = Number(bid);
      const b = batches.get(id);
      const i = Number(idx);
      if (b === undefined || !(i >= 0 && i < b.acked.length) || b.acked[i] === 1) return;
      const line = b.first + i;
      if (!startsWithBytes(m.data, storedAck)) {
        if (m.headers?.code === 503)
          return fail(id, b, new ShipError(`no stream takes ${b.subject}: is JetStream enabled on the servers?`));
        const refusal = refused(m.data, line);
        if (refusal !== null) return fail(id, b, refusal);
      }
      b.acked[i] = 1;
      b.heard = Date.now();
      if (isDuplicate(m.data)) b.duplicates++;
      if (--b.left === 0) {
        batches.delete(id);
        clearTimeout(b.timer);
        b.resolve(b.duplicates);
      }
    },
  });

  // A publish the server's permissions refuse gets no ack, only an error on the connection: the
  // batches on that subject fail with it at once rather than wait out their timeout.
  void (async () => {
    for await (const st of nc.status()) {
      if (st.type !== "error") continue;
      const e = st.error as { name?: string; operation?: string; subject?: string } | undefined;
      if (e?.name !== "PermissionViolationError" || e.operation !== "publish") continue;
      for (const [id, b] of batches)
        if (b.subject === e.subject)
          fail(
            id,
            b,
            new ShipError(
              `this user is not permitted to publish on ${b.subject}: the server gives it other subjects`,
              "ship with the --host NAME whose subjects (seam.ledger.NAME.>) the server lets this user publish on (docs/fleet-permissions.md)",
            ),
          );
    }
  })().catch(() => {});

  /** What an ack that is not the usual "stored in our stream" says, as an error; null when it is a good ack after all. */
  const refused = (data: Uint8Array, line: number): Error | null => {
    let ack: { stream?: string; error?: { description?: string } };
    try {
      ack = JSON.parse(dec.decode(data));
    } catch {
      return new Error(`line ${line}: the stream's acknowledgement is not JSON`);
    }
    if (ack.error !== undefined)
      return new RefusedError(`the stream refused line ${line}: ${ack.error.description ?? JSON.stringify(ack.error)}`);
    if (ack.stream !== stream)
      return new ShipError(
        `line ${line} was stored in stream ${ack.stream}, not ${stream}: two streams take these subjects`,
      );
    return null;
  };

  return {
    publish(subject: string, lines: Uint8Array[], first: number, h: LineHeaders): Promise<number> {
      const fixed = headers();
      fixed.set("Seam-Host", h.host);
      fixed.set("Seam-File", h.file);
      // "NATS/1.0\r\nSeam-Host: …\r\nSeam-File: …\r\n\r\n": the per-line headers go after its first line.
      const tail = dec.decode((fixed as InstanceType<typeof MsgHdrsImpl>).encode()).slice("NATS/1.0".length);
      const id = nextBatch++;
      return new Promise<number>((resolve, reject) => {
        const b: InFlight = {
          subject,
          first,
          acked: new Uint8Array(lines.length),
          left: lines.length,
          duplicates: 0,
          heard: Date.now(),
          timer: undefined,
          resolve,
          reject,
        };
        if (lines.length === 0) return resolve(0);
        batches.set(id, b);
        const check = () => {
          if (!batches.has(id)) return;
          const quiet = Date.now() - b.heard;
          if (quiet >= timeoutMs)
            fail(id, b, new Error(`timeout: the stream acknowledged nothing for ${timeoutMs / 1000} s`));
          else b.timer = setTimeout(check, timeoutMs - quiet);
        };
        b.timer = setTimeout(check, timeoutMs);
        try {
          for (let i = 0; i < lines.length; i++) {
            const n = first + i;
            const wire = enc.encode(`NATS/1.0\r\nNats-Msg-Id: ${h.origin}:${n}\r\nSeam-Line: ${n}${tail}`);
            nc.publish(subject, lines[i]!, { reply: `${inbox}${id}.${i}`, headers: new WireHeaders(wire) });
          }
        } catch (err) {
          fail(id, b, err as Error);
        }
      });
    },
  };
}

export interface StreamMessage {
  seq: number;
  subject: string;
  line: string | null;
  data: Uint8Array;
}

/** Messages asked of the server at a time in a replay (it asks again once half of them are through). */
const REPLAY_PULL = 8192;
/** How long a pull request waits on the server for messages it cannot deliver yet (then it says so: 408). */
const PULL_EXPIRES_S = 2;
/** A replay that has heard nothing for this long (not even a pull's end) has lost its consumer or server. */
const REPLAY_SILENCE_S = 3 * PULL_EXPIRES_S;
/** A replay that has received no message for this long before its last has stopped short. */
const REPLAY_STALL_S = 30;

/**
 * Every message of the stream in order (from sequence `fromSeq` on; up to
 * the last of `subjects` when given, and only theirs when that is one
 * subject; with `headersOnly`, without their data), then done, in batches:
 * what arrived since the last batch was taken; `pull` messages are asked
 * for at a time.
 *
 * The pull protocol is spoken here over a plain subscription rather than
 * through the JetStream client's consumer, whose per-message objects cost
 * more than verifying the row: an ephemeral consumer without acks, pull
 * requests sent to its next-message subject with our inbox as reply, and
 * each delivery's stream sequence read off its reply subject. It asks again
 * when half a pull is through and the batches taken, so no more than about
 * one pull and the socket's buffer wait here.
 */
export async function* replay(
  nc: NatsConnection,
  stream: string,
  subjects?: string[],
  headersOnly = false,
  pull = REPLAY_PULL,
  fromSeq = 1,
): AsyncGenerator<StreamMessage[]> {
  const { jetstreamManager, AckPolicy, DeliverPolicy } = await import("@nats-io/jetstream");
  const { createInbox, nanos } = await import("@nats-io/transport-node");
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(stream);
  let lastSeq = info.state.last_seq;
  if (info.state.messages === 0) return;
  if (subjects) {
    // A filtered replay ends at the last message of those subjects; none: nothing to wait for.
    lastSeq = 0;
    for (const subject of subjects) {
      const m = await jsm.streams.getMessage(stream, { last_by_subj: subject }).catch(() => null);
      if (m !== null) lastSeq = Math.max(lastSeq, m.seq);
    }
    if (lastSeq === 0) return;
  }
  if (lastSeq < fromSeq) return;
  const read = await deliveryReader();
  // One subject is a filter_subject, which every JetStream server takes; several need a 2.10
  // server (filter_subjects), so then the whole stream up to the last of theirs is read and the
  // caller keeps what it asked for.
  const consumer = await jsm.consumers.add(stream, {
    ack_policy: AckPolicy.None,
    ...(fromSeq > 1
      ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: fromSeq }
      : { deliver_policy: DeliverPolicy.All }),
    ...(subjects?.length === 1 ? { filter_subject: subjects[0] } : {}),
    ...(headersOnly ? { headers_only: true } : {}),
    inactive_threshold: nanos(5 * 60 * 1000),
    mem_storage: true,
    num_replicas: 1,
  });
  const next = `$JS.API.CONSUMER.MSG.NEXT.${stream}.${consumer.name}`;
  const request = new TextEncoder().encode(JSON.stringify({ batch: pull, expires: nanos(PULL_EXPIRES_S * 1000) }));
  await fastMessages(nc);
  const inbox = createInbox();
  let batch: StreamMessage[] = [];
  // The stream's last sequence at the start (of these subjects when filtered) ends the replay: not
  // the consumer's pending count, which a cluster that just lost a node can report as 0 too soon.
  let reached = false;
  let failed: Error | null = null;
  /** Messages asked for and not yet delivered (nor given up by the server). */
  let asked = 0;
  /** The consumer sequence the next delivery must have: the consumer delivers each message once, in order. */
  let want = 1;
  /** Messages received, and what was heard of the server (messages and statuses). */
  let received = 0;
  let heard = 0;
  let wake: (() => void) | null = null;
  const stop = (err: Error) => {
    failed ??= err;
    wake?.();
  };
  const ask = () => {
    if (reached || failed !== null || asked + batch.length > pull / 2) return;
    asked += pull;
    nc.publish(next, request, { reply: inbox });
  };
  const sub = nc.subscribe(inbox, {
    callback: (err, m) => {
      if (err) return stop(err);
      if (reached || failed !== null) return;
      heard++;
      const d = read(m);
      if (d === null) {
        const status = replayStatus(m.headers);
        if (status === "heartbeat") return;
        if (status === "ended" || typeof status === "number") {
          // A pull that ran out (expired, or no messages now): what it did not deliver is asked again.
          asked = typeof status === "number" ? Math.max(0, asked - status) : 0;
          ask();
          return;
        }
        return stop(new Error(`the replay of ${stream} stopped: ${status}`));
      }
      if (d.consumer !== want)
        return stop(new Error(`the replay of ${stream} skipped messages (delivery ${d.consumer}, expected ${want})`));
      want++;
      asked--;
      received++;
      batch.push(d);
      if (d.seq >= lastSeq) reached = true;
      else ask();
      wake?.();
    },
  });
  // Seconds count only while the replay waits for the server (not while its batches wait to be
  // taken), and as ticks: a busy thread that delays the timer does not make the server look silent.
  let [lastReceived, lastHeard, stalled, silent] = [-1, -1, 0, 0];
  const watch = setInterval(() => {
    if (wake === null) return;
    [stalled, lastReceived] = received === lastReceived ? [stalled + 1, received] : [0, received];
    [silent, lastHeard] = heard === lastHeard ? [silent + 1, heard] : [0, heard];
    const why =
      silent >= REPLAY_SILENCE_S
        ? `the server answered nothing for ${REPLAY_SILENCE_S} s`
        : stalled >= REPLAY_STALL_S
          ? `no message came for ${REPLAY_STALL_S} s`
          : null;
    if (why !== null) stop(new Error(`the replay of ${stream} stopped before its last message (${lastSeq}): ${why}`));
  }, 1000);
  try {
    ask();
    for (;;) {
      if (batch.length > 0) {
        const b = batch;
        batch = [];
        ask();
        yield b;
        continue;
      }
      if (reached) return;
      if (failed !== null) throw failed;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = null;
    }
  } finally {
    clearInterval(watch);
    sub.unsubscribe();
    await jsm.consumers.delete(stream, consumer.name).catch(() => {});
  }
}

/** `$JS.ACK.`, how every JetStream delivery's reply subject begins. */
const ACK_PREFIX = new TextEncoder().encode("$JS.ACK.");
/** Where the dots of a reply subject are (a delivery's has 8, 10 or 11). */
const dots = new Int32Array(12);

/**
 * The stream and consumer sequences of a JetStream delivery, from its reply
 * subject's bytes: `$JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.
 * <consumer seq>.<time>.<pending>`, or with `<domain>.<account hash>` after
 * `$JS.ACK` (and a random token at the end) in the newer form; null for any
 * other subject (a status message has none).
 */
export function deliveryOf(reply: Uint8Array): { stream: number; consumer: number } | null {
  if (!startsWithBytes(reply, ACK_PREFIX)) return null;
  let n = 0;
  for (let at = reply.indexOf(DOT); at >= 0; at = reply.indexOf(DOT, at + 1)) {
    if (n === dots.length) return null;
    dots[n++] = at;
  }
  // Token k runs from after dot k-1 to dot k: 9 tokens in the old form, 11 or 12 in the new.
  const k = n === 8 ? 5 : n === 10 || n === 11 ? 7 : -1;
  if (k < 0) return null;
  const stream = decimal(reply, dots[k - 1]! + 1, dots[k]!);
  const consumer = decimal(reply, dots[k]! + 1, dots[k + 1]!);
  if (stream < 1 || consumer < 1) return null;
  return { stream, consumer };
}

/**
 * What a status message to a pull says: "heartbeat" (the server is there),
 * "ended" (the pull is over: no messages now, or it expired), a number (the
 * pull is over with that many messages undelivered), or else its code and
 * description, which stop the replay.
 */
export function replayStatus(h: MsgHdrs | undefined): "heartbeat" | "ended" | number | string {
  const code = h?.code ?? 0;
  if (code === 100) return "heartbeat";
  if (code === 404 || code === 408) {
    const pending = h?.get("Nats-Pending-Messages") ?? "";
    const left = Number(pending);
    return pending !== "" && Number.isSafeInteger(left) && left >= 0 ? left : "ended";
  }
  if (code === 503) return "no consumer answers its pull requests (503)";
  return `${code} ${h?.description ?? "a message without a JetStream reply subject"}`.trim();
}

/**
 * Reads a JetStream delivery off a plain subscription's message: its
 * sequences (null: not a delivery, e.g. a status), subject, data and
 * Seam-Line header (what `headers.get("Seam-Line")` gives: the first value
 * of that exact key, trimmed). From the client's message the bytes are read
 * as they came: decoding every header into the client's header object, and
 * every subject afresh, cost more than verifying the row. Messages of
 * another shape go through their accessors.
 */
export async function deliveryReader(): Promise<(m: Msg) => Delivery | null> {
  const { MsgImpl } = await import("@nats-io/transport-node");
  const enc = new TextEncoder();
  const dec = new TextDecoder();
  // A stream's messages come in runs on few subjects: the last subject's text is kept.
  let lastSubject = new Uint8Array(0);
  let lastText = "";
  const subjectOf = (b: Uint8Array): string => {
    if (!equalBytes(b, lastSubject)) {
      lastSubject = b.slice();
      lastText = dec.decode(b);
    }
    return lastText;
  };
  return (m) => {
    if (!(m instanceof MsgImpl)) {
      const d = deliveryOf(enc.encode(m.reply ?? ""));
      if (d === null) return null;
      return {
        seq: d.stream,
        consumer: d.consumer,
        subject: m.subject,
        line: m.headers?.get("Seam-Line") ?? null,
        data: m.data,
      };
    }
    const raw = m._msg;
    const d = raw.reply === undefined ? null : deliveryOf(raw.reply);
    if (d === null) return null;
    return {
      seq: d.stream,
      consumer: d.consumer,
      subject: subjectOf(raw.subject),
      line: raw.hdr <= 0 ? null : headerValue(dec.decode(m._rdata.subarray(0, raw.hdr)), "Seam-Line"),
      data: m.data,
    };
  };
}

export interface Delivery extends StreamMessage {
  /** The consumer's sequence: each delivery's is one more than the last's. */
  consumer: number;
}

/** The first value of `key` in a NATS header block (its status line, then `Key: value` lines), trimmed. */
export function headerValue(block: string, key: string): string | null {
  // A key runs from a line's start to its first ":", so this finds the key's first line exactly.
  const want = `\r\n${key}:`;
  const at = block.indexOf(want);
  if (at < 0) return null;
  const start = at + want.length;
  const end = block.indexOf("\r\n", start);
  return block.slice(start, end < 0 ? block.length : end).trim();
}

/** Fetches one message's data by its stream sequence; null when the stream no longer holds it. */
export async function messageFetcher(
  nc: NatsConnection,
  stream: string,
): Promise<(seq: number) => Promise<Uint8Array | null>> {
  const { jetstreamManager } = await import("@nats-io/jetstream");
  const jsm = await jetstreamManager(nc);
  return async (seq) => {
    const m = await jsm.streams.getMessage(stream, { seq }).catch(noMessage);
    return m?.data ?? null;
  };
}
