/**
 * The ledger file under Bun: bytes go through a `Bun.file(fd).writer()` sink;
 * opening, fsync, fstat and reads are the node:fs calls of file-node.ts.
 *
 * Why the sink is safe for an awaited, complete append (checked by
 * test/runtime-file.test.ts): for a regular file Bun's FileSink writes with
 * blocking write(2) calls, looping until the chunk is out, so once `flush()`
 * returns every byte has been handed to the kernel; a failed write (ENOSPC,
 * EFBIG) throws from `write()`/`flush()` and the sink drops what it had
 * buffered, so a later write never replays bytes of a failed one. `flush()`
 * may return a promise (non-file descriptors); it is awaited either way.
 */
import type { AppendFile } from "./types.ts";
import { appendFileOver, openAppendHandle } from "./file-node.ts";

export async function openAppend(path: string): Promise<AppendFile> {
  const fh = await openAppendHandle(path);
  const sink = Bun.file(fh.fd).writer();
  const file = appendFileOver(fh, async (bytes) => {
    sink.write(bytes);
    const flushed = sink.flush();
    if (typeof flushed !== "number") await flushed;
  });
  return {
    ...file,
    // The sink does not own the descriptor (ending it leaves the fd open); the handle closes it.
    async close() {
      try {
        await sink.end();
      } catch {}
      await file.close();
    },
  };
}
