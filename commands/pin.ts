import { defineCommand } from "citty";
import { EXIT } from "../src/base/exit.ts";
import { createLog } from "../src/base/log.ts";
import { cell } from "../src/read/cells.ts";
import { readLedgers } from "../src/read/stream.ts";
import { lockText, ToolDefs, type ToolLock } from "../src/read/tool-defs.ts";
import { isWriterAlive } from "../src/runtime/alive.ts";
import { runtime } from "../src/runtime/index.ts";
import { exitCodeFor, worstExit } from "../src/verify/verify-report.ts";
import { rejectUnknownFlags } from "./_args.ts";
import { requireReadable } from "./_read.ts";

const args = {
  path: { type: "positional", description: "ledger file(s); '-' reads stdin", required: true, valueHint: "PATH…" },
} as const;

export default defineCommand({
  meta: {
    name: "pin",
    description:
      "print a lock of each server's tools and their definition digests (its last complete tools/list), for seam check --against; nothing when the ledger is broken (exit as seam verify)",
  },
  args,
  async run({ args: a, rawArgs }) {
    rejectUnknownFlags(rawArgs, args, "pin");
    const paths = a._.map(String);
    requireReadable(paths);
    const log = createLog();
    const defs = new ToolDefs();
    const lock: ToolLock = new Map();
    /** Servers that listed tools but whose listings gave no definitions to pin. */
    const unpinned = new Set<string>();
    const codes: number[] = [];
    for await (const e of readLedgers(paths, { isWriterAlive, verifier: "auto" })) {
      if (e.type === "op") {
        const l = defs.add(e.op).listing;
        if (l === null) continue;
        // Only what the chain vouches for is pinned; the latest complete listing of a server wins.
        if (l.tools === null || !e.op.vouched) {
          if (!lock.has(l.server)) unpinned.add(l.server);
          continue;
        }
        unpinned.delete(l.server);
        lock.set(l.server, new Map([...l.tools].map(([t, d]) => [t, d.digest])));
      } else if (e.type === "end") codes.push(exitCodeFor(e.report));
    }
    const verdict = worstExit(codes);
    if (verdict === EXIT.FAIL) {
      log.error("the ledger is broken: nothing pinned (seam verify says where)");
      return EXIT.FAIL;
    }
    for (const s of unpinned)
      log.warn(
        `server ${cell(JSON.stringify(s), 200)}: no complete tools/list with tool_digests (an older seam, more tools than a row holds, or not vouched for): not pinned`,
      );
    if (lock.size === 0) log.warn("no tool definitions found: the lock names no server");
    await runtime.stdout().write(new TextEncoder().encode(lockText(lock)));
    return verdict;
  },
});
