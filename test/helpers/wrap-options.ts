/** The options of a `runWrap` called in process by a test, for a server named "s" run as `server`. */
import type { WrapOptions } from "../../src/wrap/options.ts";

/** runWrap's options for `ledger`: the defaults of `seam wrap`, recording on the calling thread. */
export function wrapOptions(ledger: string): WrapOptions {
  return {
    ledger,
    argv: ["server"],
    server: "s",
    raw: false,
    maxFrame: 1024,
    fsync: "batch",
    writeAhead: false,
    failClosed: false,
    cwd: "/",
  };
}
