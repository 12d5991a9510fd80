import { open } from "node:fs/promises";

/** A file's bytes in 1 MiB chunks; open and read errors surface from the iteration. */
export async function* fileChunks(path: string, chunkSize = 1 << 20): AsyncGenerator<Uint8Array> {
  const fh = await open(path, "r");
  try {
    for (;;) {
      const buf = new Uint8Array(chunkSize);
      const { bytesRead } = await fh.read(buf, 0, chunkSize, null);
      if (bytesRead === 0) return;
      yield bytesRead === chunkSize ? buf : buf.subarray(0, bytesRead);
    }
  } finally {
    await fh.close().catch(() => {});
  }
}
