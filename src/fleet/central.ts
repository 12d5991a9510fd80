/**
 * `seam verify nats://HOST:PORT/STREAM`: the stream replayed in order, each
 * subject's lines (one origin's, under one host when the subject names one:
 * src/fleet/nats.ts) put back in line order and verified exactly as a local
 * file would be (the same verifier, fed the same bytes), plus what only the
 * stream can show:
 *   stream_gap             a line number that never arrived (later ones did)
 *   stream_conflict        a line number published twice with different bytes
 *   stream_unknown_origin  a subject whose line 1 does not hash to its origin, or one off seam's subjects
 *   stream_no_line         a message without a valid Seam-Line header
 * Each of these is a break: the central copy is not what the host wrote.
 * Memory: one chunk in flight per origin, lines that arrive ahead of a gap
 * (at most MAX_AHEAD per origin), and 8 bytes per line (its stream sequence).
 */
import { equalBytes } from "../core/bytes.ts";
import type { VerifyReport } from "../verify/ledger-verifier.ts";
import type { StreamMessage } from "./jetstream.ts";
import { subjectFor, subjectParts } from "./nats.ts";
import { originOf } from "./ship.ts";

export const MAX_AHEAD = 100_000;
/** Subjects whose origin is remembered (beyond that, they are worked out again). */
const MAX_SUBJECTS = 10_000;
const CHUNK = 256 * 1024;

export interface StreamFinding {
  kind: "stream_gap" | "stream_conflict" | "stream_unknown_origin" | "stream_no_line";
  message: string;
}

/**
 * A pull-based byte source that a router pushes into; each push resolves
 * once its chunk is taken (so a router that awaits it holds one chunk, and
 * one that does not can count what is waiting).
 */
export class Feed implements AsyncIterable<Uint8Array> {
  private queue: { chunk: Uint8Array; taken: () => void }[] = [];
  private done = false;
  private wake: (() => void) | null = null;

  push(chunk: Uint8Array): Promise<void> {
    return new Promise((taken) => {
      this.queue.push({ chunk, taken });
      this.wake?.();
    });
  }

  end(): void {
    this.done = true;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Uint8Array> {
    for (;;) {
      const next = this.queue.shift();
      if (next !== undefined) {
        next.taken();
        yield next.chunk;
        continue;
      }
      if (this.done) return;
      await new Promise<void>((r) => {
        this.wake = r;
      });
      this.wake = null;
    }
  }
}

interface OriginState {
  origin: string;
  host: string | null;
  next: number;
  ahead: Map<number, StreamMessage>;
  /** The stream sequence of each line delivered (index: line - 1). */
  seqs: Float64Array;
  chunk: Uint8Array[];
  chunkBytes: number;
  feed: Feed;
  result: Promise<OriginVerdict>;
  findings: StreamFinding[];
}

/** What the verifier of one origin's bytes says: its report, and the checkpoint lines and JSON when keys were given. */
export interface OriginVerdict {
  report: VerifyReport;
  extra?: string[];
  json?: Record<string, unknown>;
}

export interface OriginReport {
  origin: string;
  /** The host its subject names; null on a subject without one. */
  host: string | null;
  lines: number;
  report: VerifyReport;
  extra?: string[];
  json?: Record<string, unknown>;
  findings: StreamFinding[];
}

/**
 * Routes a replay to one verification per subject (its origin, and host
 * when it names one: each is a ledger of its own, named to `verify` as its
 * origin or `<host>/<origin>`). `verify` is what the
 * local `seam verify` runs on a byte source (with or without checkpoints);
 * `message(seq)` fetches one message of the stream again, by its sequence:
 * a line published twice is compared with its first copy (which the
 * append-only stream still holds) rather than keeping a digest of every line.
 */
export async function verifyStreamLedgers(
  messages: AsyncIterable<StreamMessage[]>,
  verify: (name: string, source: AsyncIterable<Uint8Array>) => Promise<OriginVerdict>,
  message: (seq: number) => Promise<Uint8Array | null>,
  only?: ReadonlySet<string>,
): Promise<{ origins: OriginReport[]; findings: StreamFinding[] }> {
  const states = new Map<string, OriginState>();
  const loose: StreamFinding[] = [];

  const flush = async (s: OriginState) => {
    if (s.chunk.length === 0) return;
    const bytes = new Uint8Array(s.chunkBytes);
    let at = 0;
    for (const l of s.chunk) {
      bytes.set(l, at);
      at += l.length;
    }
    s.chunk = [];
    s.chunkBytes = 0;
    await s.feed.push(bytes);
  };

  const deliver = (s: OriginState, n: number, seq: number, data: Uint8Array) => {
    if (n === 1 && originOf(data.subarray(0, data[data.length - 1] === 0x0a ? -1 : undefined)) !== s.origin)
      s.findings.push({
        kind: "stream_unknown_origin",
        message: `line 1 on ${subjectFor(s.origin, s.host ?? undefined)} does not hash to that origin: not the ledger it names`,
      });
    if (n > s.seqs.length) {
      const grown = new Float64Array(s.seqs.length * 2);
      grown.set(s.seqs);
      s.seqs = grown;
    }
    s.seqs[n - 1] = seq;
    s.chunk.push(data);
    s.chunkBytes += data.length;
    s.next = n + 1;
  };

  const conflict = (s: OriginState, n: number, seq: number) =>
    s.findings.push({
      kind: "stream_conflict",
      message: `line ${n} was published twice with different bytes (message ${seq})`,
    });

  // A stream's messages come on few subjects: each subject's origin is worked out once.
  const subjectOrigin = new Map<string, { host: string | null; origin: string } | null>();
  for await (const batch of messages)
    for (const m of batch) {
      let parts = subjectOrigin.get(m.subject);
      if (parts === undefined) {
        parts = subjectParts(m.subject);
        if (subjectOrigin.size >= MAX_SUBJECTS) subjectOrigin.clear();
        subjectOrigin.set(m.subject, parts);
      }
      if (only && (parts === null || !only.has(parts.origin))) continue;
      if (parts === null) {
        loose.push({
          kind: "stream_unknown_origin",
          message: `message ${m.seq} on ${m.subject}: not a seam ledger subject`,
        });
        continue;
      }
      const { origin, host } = parts;
      let s = states.get(m.subject);
      if (s === undefined) {
        const feed = new Feed();
        s = {
          origin,
          host,
          next: 1,
          ahead: new Map(),
          seqs: new Float64Array(1024),
          chunk: [],
          chunkBytes: 0,
          feed,
          result: verify(host === null ? origin : `${host}/${origin}`, feed),
          findings: [],
        };
        states.set(m.subject, s);
      }
      const n = m.line === null ? Number.NaN : Number(m.line);
      if (!Number.isSafeInteger(n) || n < 1 || String(n) !== m.line) {
        s.findings.push({ kind: "stream_no_line", message: `message ${m.seq}: no valid Seam-Line header` });
        continue;
      }
      if (n < s.next) {
        // Published again: the same bytes are a harmless re-publish, others a conflict.
        const first = await message(s.seqs[n - 1]!);
        if (first === null || !equalBytes(first, m.data)) conflict(s, n, m.seq);
        continue;
      }
      if (n > s.next) {
        const had = s.ahead.get(n);
        if (had !== undefined && !equalBytes(had.data, m.data)) conflict(s, n, m.seq);
        else if (had === undefined && s.ahead.size < MAX_AHEAD) s.ahead.set(n, m);
        continue;
      }
      deliver(s, n, m.seq, m.data);
      for (let a = s.ahead.get(s.next); a !== undefined; a = s.ahead.get(s.next)) {
        s.ahead.delete(s.next);
        deliver(s, s.next, a.seq, a.data);
      }
      if (s.chunkBytes >= CHUNK) await flush(s);
    }

  const origins: OriginReport[] = [];
  for (const s of states.values()) {
    if (s.ahead.size > 0) {
      const present = [...s.ahead.keys()].sort((a, b) => a - b);
      s.findings.push({
        kind: "stream_gap",
        message: `line ${s.next} is missing from the stream (lines ${present[0]}…${present[present.length - 1]} are there); verified up to line ${s.next - 1}`,
      });
    }
    await flush(s);
    s.feed.end();
    const r = await s.result;
    origins.push({ origin: s.origin, host: s.host, lines: s.next - 1, ...r, findings: s.findings });
  }
  return { origins, findings: loose };
}
