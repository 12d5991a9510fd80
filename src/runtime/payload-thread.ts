/**
 * The payload store's files written on a thread of their own (--payloads
 * under seam wrap, recorded behind the forwarding): making a file is kernel
 * work that costs more than recording the row that names it, so the
 * recorder hands payloads over in batches and goes on recording while this
 * thread writes them (PayloadStore.putNow), each batch's outcome posted back
 * in order.
 */
import { describeIoError } from "../base/io-error.ts";
import { isPayloadDigest, PayloadStore } from "./payload-store.ts";
import { type ThreadRole, threadOrNull } from "./thread.ts";
import type { Thread } from "./types.ts";

export const PAYLOAD_WRITER_ROLE = "payload-writer";

/** What the thread is started with. */
export interface PayloadWriterData {
  dir: string;
}

/**
 * A batch: the payloads' digests, and their bytes one after another in
 * `bytes` (each ends at `ends[i]`); `vouched[i]`: 1 when they need no second
 * digest (PayloadStore.putNow).
 */
interface ToWriter {
  digests: string[];
  ends: number[];
  vouched: number[];
  bytes: ArrayBuffer;
}

/** A batch's outcome: why each payload that could not be written was not, by its place in the batch. */
interface FromWriter {
  failed: [number, string][];
}

/** Payloads handed over in one batch (at most), or as many bytes. */
const BATCH_PAYLOADS = 256;
const BATCH_BYTES = 1 << 20;
/** How many digests are remembered as handed over before they are all forgotten. */
const CLAIMED_LIMIT = 1 << 16;

/** The thread's side: writes each batch's payloads in order, and says which could not be. */
export function servePayloadWriter(role: ThreadRole): void {
  const data = role.data as PayloadWriterData;
  let store: PayloadStore | Error;
  try {
    store = PayloadStore.open(data.dir);
  } catch (e) {
    store = e as Error;
  }
  role.port.on("message", (m: ToWriter) => {
    const bytes = new Uint8Array(m.bytes);
    const failed: [number, string][] = [];
    let start = 0;
    for (let i = 0; i < m.digests.length; i++) {
      const end = m.ends[i]!;
      try {
        if (store instanceof Error) throw store;
        store.putNow(m.digests[i]!, bytes.subarray(start, end), m.vouched[i] === 1);
      } catch (e) {
        failed.push([i, e instanceof Error && !("code" in e) ? e.message : describeIoError(e)]);
      }
      start = end;
    }
    role.port.postMessage({ failed } satisfies FromWriter);
  });
}

type Done = (error: Error | null) => void;

/**
 * A payload sink (src/observe/payloads.ts) whose files a thread writes:
 * payloads gather into a batch, posted when it is full or `send` is called;
 * each payload's `done` is called when its batch's outcome comes back. When
 * the thread ends before that, its payloads are done with an error and
 * later ones are written by `store` on this thread's runtime I/O threads.
 */
export class ThreadedPayloadStore {
  private readonly claimed = new Set<string>();
  private digests: string[] = [];
  private vouched: number[] = [];
  private parts: Uint8Array[] = [];
  private dones: Done[] = [];
  private size = 0;
  /** The batches posted, oldest first: their digests and dones. */
  private readonly posted: { digests: string[]; dones: Done[] }[] = [];
  private gone: string | undefined;

  private constructor(
    private readonly thread: Thread,
    private readonly store: PayloadStore,
  ) {
    thread.onMessage((m) => {
      const batch = this.posted.shift();
      if (batch === undefined) return;
      const failed = new Map((m as FromWriter).failed);
      for (let i = 0; i < batch.dones.length; i++) {
        const why = failed.get(i);
        if (why === undefined) batch.dones[i]!(null);
        else this.failAt(batch, i, new Error(why));
      }
    });
    thread.onExit((error) => {
      this.gone = error ?? "it ended";
      for (const batch of this.posted.splice(0)) this.failAll(batch, this.goneError());
    });
  }

  /** A thread writing to `store`'s directory, or null when none can be started (`start`: the runtime's). */
  static start(
    start: ((role: string, data: unknown) => Thread | null) | undefined,
    store: PayloadStore,
  ): ThreadedPayloadStore | null {
    const thread = threadOrNull(start, PAYLOAD_WRITER_ROLE, { dir: store.dir } satisfies PayloadWriterData);
    return thread === null ? null : new ThreadedPayloadStore(thread, store);
  }

  wrote(digest: string): boolean {
    // The store on this side writes only once the thread is gone.
    return this.claimed.has(digest) || (this.gone !== undefined && this.store.wrote(digest));
  }

  putLater(digest: string, bytes: Uint8Array, done: Done, vouched = false): "writing" | "exists" | "skipped" {
    if (this.gone !== undefined) return this.store.putLater(digest, bytes, done, vouched);
    if (!isPayloadDigest(digest)) return "skipped";
    if (this.claimed.has(digest)) return "exists";
    // Bounded as the store's own: forgetting costs a rewrite.
    if (this.claimed.size >= CLAIMED_LIMIT) this.claimed.clear();
    this.claimed.add(digest);
    this.digests.push(digest);
    this.vouched.push(vouched ? 1 : 0);
    this.parts.push(bytes);
    this.dones.push(done);
    this.size += bytes.length;
    if (this.digests.length >= BATCH_PAYLOADS || this.size >= BATCH_BYTES) this.send();
    return "writing";
  }

  /** Posts the payloads gathered so far. */
  send(): void {
    if (this.digests.length === 0) return;
    const all = new Uint8Array(this.size);
    const ends: number[] = [];
    let at = 0;
    for (const p of this.parts) {
      all.set(p, at);
      at += p.length;
      ends.push(at);
    }
    const batch = { digests: this.digests, dones: this.dones };
    if (this.gone !== undefined) {
      // The thread ended while these gathered: none will come back from it.
      this.failAll(batch, this.goneError());
    } else {
      this.posted.push(batch);
      try {
        this.thread.post({ digests: this.digests, ends, vouched: this.vouched, bytes: all.buffer } satisfies ToWriter, [
          all.buffer,
        ]);
      } catch (e) {
        this.posted.pop();
        this.failAll(batch, e as Error);
      }
    }
    this.digests = [];
    this.vouched = [];
    this.parts = [];
    this.dones = [];
    this.size = 0;
  }

  /** Payload `i` of `batch` was not written: it may be handed over again. */
  private failAt(batch: { digests: string[]; dones: Done[] }, i: number, e: Error): void {
    this.claimed.delete(batch.digests[i]!);
    batch.dones[i]!(e);
  }

  private failAll(batch: { digests: string[]; dones: Done[] }, e: Error): void {
    for (let i = 0; i < batch.dones.length; i++) this.failAt(batch, i, e);
  }

  private goneError(): Error {
    return new Error(`the payload writer thread ended (${this.gone})`);
  }

  /** Ends the thread (once every payload posted is done). */
  async close(): Promise<void> {
    await this.thread.terminate();
  }
}
