/**
 * The ledger file through node:fs/promises. Also the base of file-bun.ts:
 * opening, fsync, fstat and positional reads are the same calls on both
 * runtimes; only how bytes are written differs.
 */
import { fstatSync } from "node:fs";
import { mkdir, open, type FileHandle } from "node:fs/promises";
import { dirname } from "node:path";
import type { AppendFile } from "./types.ts";

/**
 * Opens `path` read/write with O_APPEND, creating missing parent directories
 * and the file itself (mode 0600: with `--raw` a ledger holds call payloads).
 * Readable too, because a writer reads the file's tail to continue its chain.
 */
export async function openAppendHandle(path: string): Promise<FileHandle> {
  await mkdir(dirname(path), { recursive: true });
  return open(path, "a+", 0o600);
}

/** Writes all of `bytes` through `fh`, looping over short writes (a full disk or a file-size limit gives one). */
async function writeAll(fh: FileHandle, bytes: Uint8Array): Promise<void> {
  let done = 0;
  while (done < bytes.length) {
    const { bytesWritten } = await fh.write(bytes, done, bytes.length - done, null);
    if (bytesWritten <= 0) throw new Error(`short write (${done} of ${bytes.length} bytes)`);
    done += bytesWritten;
  }
}

/** An AppendFile over an open handle; `write` defaults to node:fs writes. */
export function appendFileOver(fh: FileHandle, write?: (bytes: Uint8Array) => Promise<void>): AppendFile {
  return {
    write: write ?? ((bytes) => writeAll(fh, bytes)),
    sync: () => fh.sync(),
    // fstat(2) on an open local descriptor returns at once; a thread-pool round
    // trip for it cost more than the rest of a small flush (bench/relay.ts profile).
    size: async () => fstatSync(fh.fd).size,
    async readAt(position, length) {
      const buf = new Uint8Array(length);
      let got = 0;
      while (got < length) {
        const { bytesRead } = await fh.read(buf, got, length - got, position + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      return got === length ? buf : buf.subarray(0, got);
    },
    close: () => fh.close(),
  };
}

export async function openAppend(path: string): Promise<AppendFile> {
  return appendFileOver(await openAppendHandle(path));
}
