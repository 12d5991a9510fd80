/**
 * The ledger file under Bun: bytes go out with blocking write(2) calls
 * (node:fs writeSync) in a loop until the chunk is out; opening, fsync, fstat
 * and reads are the node:fs calls of file-node.ts.
 *
 * Not `Bun.file(fd).writer()`: when the disk fills part way through a chunk,
 * that sink neither throws from write() nor from flush(); it reports the
 * ENOSPC itself, as an uncaught error with a stack trace, on stderr (the MCP
 * client's log), and the writer would count lines as written that are not in
 * the file (test/runtime-file.test.ts, a full file system). A blocking write
 * of a regular file is what the sink did too; here a failure throws at once,
 * after the bytes that did land, so the writer measures them.
 */
import { writeSync } from "node:fs";
import type { AppendFile } from "./types.ts";
import { appendFileOver, type OpenOptions, openAppendHandle } from "./file-node.ts";

export async function openAppend(path: string, opts?: OpenOptions): Promise<AppendFile> {
  const fh = await openAppendHandle(path, opts);
  return appendFileOver(fh, async (bytes) => {
    let done = 0;
    while (done < bytes.length) {
      const n = writeSync(fh.fd, bytes, done, bytes.length - done);
      if (n <= 0) throw new Error(`short write (${done} of ${bytes.length} bytes)`);
      done += n;
    }
  });
}
