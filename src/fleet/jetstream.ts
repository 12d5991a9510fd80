/**
 * The JetStream side of shipping and central verification: create or check
 * the stream (append-only: deny_delete, deny_purge), publish a line, find an
 * origin's last line, and replay the stream in order.
 */
import type { NatsConnection } from "@nats-io/nats-core";
import { DEFAULT_STREAM, SUBJECT_PREFIX } from "./nats.ts";
import { ShipError, type StreamPort } from "./ship.ts";

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

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; message?: string; code?: unknown; api_error?: { err_code?: number } };
  return (
    e?.name === "StreamNotFoundError" || e?.api_error?.err_code === 10059 || /stream not found/i.test(e?.message ?? "")
  );
}

/** The StreamPort of a connection. */
export async function streamPort(nc: NatsConnection, stream: string, timeoutMs = 5000): Promise<StreamPort> {
  const { jetstream, jetstreamManager } = await import("@nats-io/jetstream");
  const { headers } = await import("@nats-io/transport-node");
  const js = jetstream(nc, { timeout: timeoutMs });
  const jsm = await jetstreamManager(nc, { timeout: timeoutMs });
  return {
    async publish(subject, data, msgId, hdrs) {
      const h = headers();
      for (const [k, v] of Object.entries(hdrs)) h.set(k, v);
      await js.publish(subject, data, { msgID: msgId, headers: h, timeout: timeoutMs });
    },
    async last(subject) {
      const m = await jsm.streams.getMessage(stream, { last_by_subj: subject }).catch((err: unknown) => {
        const e = err as { api_error?: { err_code?: number }; message?: string };
        if (e?.api_error?.err_code === 10037 || /no message found/i.test(e?.message ?? "")) return null;
        throw err;
      });
      if (m === null) return null;
      const line = Number(m.header.get("Seam-Line"));
      if (!Number.isSafeInteger(line) || line < 1)
        throw new ShipError(`the stream's last message on ${subject} has no valid Seam-Line header`);
      return { line, data: m.data };
    },
    maxPayload: () => nc.info?.max_payload ?? 1024 * 1024,
  };
}

export interface StreamMessage {
  seq: number;
  subject: string;
  line: string | null;
  data: Uint8Array;
}

/** Every message of the stream in order (filtered to `subjects` when given), then done. */
export async function* replay(nc: NatsConnection, stream: string, subjects?: string[]): AsyncGenerator<StreamMessage> {
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
  const js = jetstream(nc);
  const consumer = await js.consumers.get(stream, subjects ? { filter_subjects: subjects } : {});
  const msgs = await consumer.consume({ max_messages: 1024 });
  try {
    for await (const m of msgs) {
      yield { seq: m.seq, subject: m.subject, line: m.headers?.get("Seam-Line") ?? null, data: m.data };
      // The stream's last sequence at the start (of these subjects when filtered) ends the replay: not
      // `pending`, which a cluster that just lost a node can report as 0 before the replay is through.
      if (m.seq >= lastSeq) break;
    }
  } finally {
    await msgs.close().catch(() => {});
  }
}
