/**
 * Central verification on a thread of its own: the stream is read off the
 * socket and put back in line order on one thread while the chain, sessions
 * and checkpoints of every origin are verified on another, so `seam verify
 * nats://` takes about as long as the slower of the two rather than their
 * sum. The verifier is the one a local file gets, fed the same bytes; only
 * plain data crosses (chunks are transferred, not copied), and keys cross as
 * their text and are made again on the thread.
 */
import type { MessagePort } from "node:worker_threads";
import { newVerifier } from "../checkpoint/note.ts";
import { type CheckpointSetup, verifyCheckpointedSource } from "../checkpoint/verify-file.ts";
import { threadOrNull } from "../runtime/thread.ts";
import type { Runtime } from "../runtime/types.ts";
import type { VerifyOptions } from "../verify/ledger-verifier.ts";
import { verifyLedger } from "../verify/verify-ledger.ts";
import { Feed, type OriginVerdict } from "./central.ts";

export const VERIFIER_ROLE = "stream-verifier";

/** Chunks posted to the thread and not yet taken by its verifier, per origin. */
const MAX_WAITING = 8;

export interface VerifierData {
  vopts: VerifyOptions;
  /** Verifier key texts; null: no checkpoint checks (no --key). */
  keys: string[] | null;
}

type ToThread =
  | { t: "start"; id: number; name: string }
  | { t: "chunk"; id: number; bytes: Uint8Array }
  | { t: "end"; id: number };

type FromThread =
  | { t: "taken"; id: number }
  | { t: "done"; id: number; verdict: OriginVerdict }
  | { t: "failed"; id: number; message: string };

/** Verifies a byte source exactly as a local `seam verify` would, with or without checkpoints. */
export async function verifySource(
  name: string,
  source: AsyncIterable<Uint8Array>,
  vopts: VerifyOptions,
  setup: CheckpointSetup | null,
): Promise<OriginVerdict> {
  return setup !== null
    ? await verifyCheckpointedSource(name, source, vopts, setup)
    : { report: await verifyLedger(source, vopts) };
}

interface Pending {
  waiting: number;
  wake: (() => void) | null;
  resolve(v: OriginVerdict): void;
  reject(err: Error): void;
}

/**
 * A verify function for `verifyStreamLedgers` whose work runs on a thread,
 * and `close` to end that thread; null when this build cannot start one
 * (the caller then verifies on its own thread).
 */
export function threadVerifier(
  rt: Runtime,
  data: VerifierData,
): {
  verify(name: string, source: AsyncIterable<Uint8Array>): Promise<OriginVerdict>;
  close(): Promise<void>;
} | null {
  const t = threadOrNull(rt.startThread, VERIFIER_ROLE, data);
  if (t === null) return null;
  const pending = new Map<number, Pending>();
  let ended: string | null = null;
  let nextId = 0;
  t.onMessage((m) => {
    const msg = m as FromThread;
    const p = pending.get(msg.id);
    if (p === undefined) return;
    if (msg.t === "taken") {
      p.waiting--;
      p.wake?.();
    } else {
      pending.delete(msg.id);
      p.wake?.();
      if (msg.t === "done") p.resolve(msg.verdict);
      else p.reject(new Error(msg.message));
    }
  });
  t.onExit((error) => {
    ended = `the verifier thread ended${error ? `: ${error}` : ""}`;
    for (const p of pending.values()) {
      p.reject(new Error(ended));
      p.wake?.();
    }
    pending.clear();
  });
  const post = (m: ToThread, transfer?: ArrayBuffer[]) => t.post(m, transfer);
  return {
    async verify(name, source) {
      if (ended !== null) throw new Error(ended);
      const id = nextId++;
      const p = { waiting: 0, wake: null } as Pending;
      const verdict = new Promise<OriginVerdict>((resolve, reject) => {
        p.resolve = resolve;
        p.reject = reject;
      });
      verdict.catch(() => {}); // awaited below; a failure may come while chunks are still being sent
      pending.set(id, p);
      post({ t: "start", id, name });
      for await (const chunk of source) {
        if (!pending.has(id)) break;
        // Transferred, so the chunk must own its whole buffer.
        const bytes = chunk.byteOffset === 0 && chunk.byteLength === chunk.buffer.byteLength ? chunk : chunk.slice();
        p.waiting++;
        post({ t: "chunk", id, bytes }, [bytes.buffer as ArrayBuffer]);
        while (p.waiting > MAX_WAITING && pending.has(id))
          await new Promise<void>((r) => {
            p.wake = r;
          });
        p.wake = null;
      }
      if (pending.has(id)) post({ t: "end", id });
      return await verdict;
    },
    close: () => t.terminate(),
  };
}

/** The thread's side: one verification per origin, each fed the chunks posted for it. */
export function serveVerifier(port: MessagePort, data: VerifierData): void {
  const setup: CheckpointSetup | null = data.keys === null ? null : { keys: data.keys.map(newVerifier) };
  const feeds = new Map<number, Feed>();
  const say = (m: FromThread) => port.postMessage(m);
  port.on("message", (m: ToThread) => {
    if (m.t === "start") {
      const feed = new Feed();
      feeds.set(m.id, feed);
      verifySource(m.name, feed, data.vopts, setup).then(
        (verdict) => say({ t: "done", id: m.id, verdict }),
        (err: unknown) => say({ t: "failed", id: m.id, message: err instanceof Error ? err.message : String(err) }),
      );
    } else if (m.t === "chunk") {
      void feeds
        .get(m.id)
        ?.push(m.bytes)
        .then(() => say({ t: "taken", id: m.id }));
    } else {
      feeds.get(m.id)?.end();
      feeds.delete(m.id);
    }
  });
}
