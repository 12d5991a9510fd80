/**
 * The JetStream side of shipping and central verification: create or check
 * the stream (append-only: deny_delete, deny_purge), publish a line, find an
 * origin's last line, and replay the stream in order.
 */
import type { JsMsg } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import { DEFAULT_STREAM, SUBJECT_PREFIX } from "./nats.ts";
import { BatchError, type LineHeaders, RefusedError, ShipError, type StreamPort } from "./ship.ts";

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
  /** When the last acknowledgement came (or the batch went out). */
  heard: number;
  timer: ReturnType<typeof setTimeout> | undefined;
  resolve(): void;
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
      if (!startsWith(m.data, storedAck)) {
        if (m.headers?.code === 503)
          return fail(id, b, new ShipError(`no stream takes ${b.subject}: is JetStream enabled on the servers?`));
        const refusal = refused(m.data, line);
        if (refusal !== null) return fail(id, b, refusal);
      }
      b.acked[i] = 1;
      b.heard = Date.now();
      if (--b.left === 0) {
        batches.delete(id);
        clearTimeout(b.timer);
        b.resolve();
      }
    },
  });

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
    publish(subject: string, lines: Uint8Array[], first: number, h: LineHeaders): Promise<void> {
      const fixed = headers();
      fixed.set("Seam-Host", h.host);
      fixed.set("Seam-File", h.file);
      // "NATS/1.0\r\nSeam-Host: …\r\nSeam-File: …\r\n\r\n": the per-line headers go after its first line.
      const tail = dec.decode((fixed as InstanceType<typeof MsgHdrsImpl>).encode()).slice("NATS/1.0".length);
      const id = nextBatch++;
      return new Promise<void>((resolve, reject) => {
        const b: InFlight = {
          subject,
          first,
          acked: new Uint8Array(lines.length),
          left: lines.length,
          heard: Date.now(),
          timer: undefined,
          resolve,
          reject,
        };
        if (lines.length === 0) return resolve();
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

/** Messages asked of the server at a time in a replay (it asks again when a quarter is through). */
const REPLAY_PULL = 8192;

/**
 * Every message of the stream in order (up to the last of `subjects` when
 * given, and only theirs when that is one subject; with `headersOnly`,
 * without their data), then done, in batches: what arrived since the last batch was taken. The
 * consumer hands messages to a callback as they are read off the socket; the
 * batches are taken between reads, so no more than the socket's buffer and
 * one pull wait here.
 */
export async function* replay(
  nc: NatsConnection,
  stream: string,
  subjects?: string[],
  headersOnly = false,
): AsyncGenerator<StreamMessage[]> {
  const { jetstream, jetstreamManager } = await import("@nats-io/jetstream");
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
  const readLine = await seamLineReader();
  const js = jetstream(nc);
  // One subject is a filter_subject, which every JetStream server takes; several need a 2.10
  // server (filter_subjects), so then the whole stream up to the last of theirs is read and the
  // caller keeps what it asked for.
  const consumer = await js.consumers.get(stream, {
    ...(subjects?.length === 1 ? { filter_subjects: subjects[0] } : {}),
    ...(headersOnly ? { headers_only: true } : {}),
  });
  let batch: StreamMessage[] = [];
  // The stream's last sequence at the start (of these subjects when filtered) ends the replay: not
  // `pending`, which a cluster that just lost a node can report as 0 before the replay is through.
  let reached = false;
  let wake: (() => void) | null = null;
  const msgs = await consumer.consume({
    max_messages: REPLAY_PULL,
    callback: (m) => {
      if (reached) return;
      const seq = m.seq;
      batch.push({ seq, subject: m.subject, line: readLine(m), data: m.data });
      if (seq >= lastSeq) reached = true;
      wake?.();
    },
  });
  let stopped: { err: Error | undefined } | null = null;
  void msgs.closed().then((err) => {
    stopped = { err: err ?? undefined };
    wake?.();
  });
  try {
    for (;;) {
      if (batch.length > 0) {
        const b = batch;
        batch = [];
        yield b;
        continue;
      }
      if (reached) return;
      if (stopped !== null) {
        const err = (stopped as { err: Error | undefined }).err;
        throw err ?? new Error(`the replay of ${stream} stopped before its last message (${lastSeq})`);
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = null;
    }
  } finally {
    await msgs.close().catch(() => {});
  }
}

/**
 * A message's Seam-Line header (what `headers.get("Seam-Line")` gives: the
 * first value of that exact key, trimmed), read from the header block's
 * bytes when the client exposes them: decoding every header into the
 * client's header object cost more than verifying the row. Messages of
 * another shape go through `headers`.
 */
export async function seamLineReader(): Promise<(m: JsMsg) => string | null> {
  const { MsgImpl } = await import("@nats-io/transport-node");
  const dec = new TextDecoder();
  return (m) => {
    const raw = (m as { msg?: unknown }).msg;
    if (!(raw instanceof MsgImpl)) return m.headers?.get("Seam-Line") ?? null;
    if (raw._msg.hdr <= 0) return null;
    return headerValue(dec.decode(raw._rdata.subarray(0, raw._msg.hdr)), "Seam-Line");
  };
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

function startsWith(data: Uint8Array, prefix: Uint8Array): boolean {
  if (data.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (data[i] !== prefix[i]) return false;
  return true;
}
