/**
 * `follow`: a growing ledger's bytes as writers append them, whole lines
 * only, for readLedger (src/read/stream.ts) to verify as it reads.
 */
import { type FSWatcher, watch } from "node:fs";
import { open } from "node:fs/promises";

/**
 * How `follow` learns of appends: file-change notifications (fs.watch), and
 * a poll besides, since notifications are not delivered on every file system
 * and Bun's sometimes drops one that follows another closely: slow while the
 * file is quiet, quick for a second after it last grew (HOT_MS).
 */
export interface FollowWatch {
  /** While the file is quiet, look again this often even without a notification, in ms (default 500; 100 when notifications cannot be had). */
  pollMs?: number;
  /** Ask for notifications (default true); false polls only, every pollMs. */
  watch?: boolean;
}

/** After the file grew, notifications are backed by a poll every HOT_POLL_MS for HOT_MS. */
const HOT_MS = 1000;
const HOT_POLL_MS = 25;

/**
 * A growing file's bytes, whole lines only, until `signal` aborts. At the end
 * of what is there it waits for the file to change (fs.watch, so appends show
 * at once) or for the poll (FollowWatch), whichever comes first, and looks
 * again. The bytes of a line not yet ended are held back (their count in
 * `tail`), so a line a writer is still appending is never seen half. A file
 * that shrinks is an error.
 */
export async function* followChunks(
  path: string,
  signal: AbortSignal | undefined,
  tail: { bytes: number },
  how: FollowWatch = {},
): AsyncGenerator<Uint8Array> {
  const fh = await open(path, "r");
  // Set by every notification; cleared before each look at the file, so one that comes while looking is not lost.
  let changed = false;
  let wake: (() => void) | null = null;
  const poke = () => {
    changed = true;
    const w = wake;
    wake = null;
    w?.();
  };
  let watcher: FSWatcher | null = null;
  if (how.watch !== false) {
    try {
      watcher = watch(path, { persistent: false }, poke);
      // A watch that fails later (the file removed, the watch limit hit) leaves the poll to do the work.
      watcher.on("error", () => {
        watcher?.close();
        watcher = null;
      });
    } catch {
      watcher = null;
    }
  }
  const onAbort = () => poke();
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    let pos = 0;
    let carry: Uint8Array = new Uint8Array(0);
    const size = 1 << 20;
    let grew = Number.NEGATIVE_INFINITY;
    for (;;) {
      if (signal?.aborted) return;
      changed = false;
      const buf = new Uint8Array(size);
      const { bytesRead } = await fh.read(buf, 0, size, pos);
      if (bytesRead > 0) {
        pos += bytesRead;
        grew = performance.now();
        let chunk = buf.subarray(0, bytesRead);
        if (carry.length > 0) {
          const all = new Uint8Array(carry.length + chunk.length);
          all.set(carry);
          all.set(chunk, carry.length);
          chunk = all;
        }
        const nl = chunk.lastIndexOf(0x0a);
        carry = chunk.slice(nl + 1);
        tail.bytes = carry.length;
        if (nl >= 0) yield chunk.subarray(0, nl + 1);
        continue;
      }
      const st = await fh.stat();
      if (st.size < pos) throw new Error("the file shrank while being followed");
      // Caught up: an empty chunk says so (readLedger shows what it held back).
      yield new Uint8Array(0);
      if (changed || signal?.aborted) continue;
      await new Promise<void>((resolve) => {
        const quiet = how.pollMs ?? (watcher === null ? 100 : 500);
        const hot = watcher !== null && performance.now() - grew < HOT_MS;
        const t = setTimeout(done, hot ? Math.min(HOT_POLL_MS, quiet) : quiet);
        function done() {
          clearTimeout(t);
          wake = null;
          resolve();
        }
        wake = done;
      });
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
    watcher?.close();
    await fh.close().catch(() => {});
  }
}
