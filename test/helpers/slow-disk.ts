/** A runtime whose ledger disk is slow: every write first stalls `stallMs`. */
import { runtime } from "../../src/runtime/index.ts";
import type { AppendFile, Runtime } from "../../src/runtime/types.ts";

export function slowDisk(stallMs: number): Runtime {
  return {
    ...runtime,
    async openAppend(path, opts) {
      const file = await runtime.openAppend(path, opts);
      return {
        ...file,
        size: () => file.size(),
        sync: () => file.sync(),
        readAt: (p, n) => file.readAt(p, n),
        truncate: (n) => file.truncate(n),
        close: () => file.close(),
        async write(bytes) {
          if (stallMs > 0) await new Promise((r) => setTimeout(r, stallMs));
          await file.write(bytes);
        },
      } satisfies AppendFile;
    },
  };
}
