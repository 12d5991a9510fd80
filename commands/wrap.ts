import { defineCommand } from "citty";
import { UsageError } from "../src/base/exit.ts";
import { createLog } from "../src/base/log.ts";
import { runtime } from "../src/runtime/index.ts";
import { FAULT_ENV, parseFault, wrapFault } from "../src/selftest/faults.ts";
import { serverEnv } from "../src/wrap/env.ts";
import { serverLabel } from "../src/wrap/label.ts";
import { runWrap } from "../src/wrap/session.ts";
import { intFlag, rejectUnknownFlags, repeated, valueFlags } from "./_args.ts";
import { payloadsFlag } from "./_payloads.ts";
import { actionFlags, checkpointFlags, fsyncFlag, ledgerDirectory } from "./_record-flags.ts";
import type { RecorderPlain } from "./_threads.ts";
import { WRAP_ARGS as args } from "./_wrap-args.ts";

export default defineCommand({
  meta: {
    name: "wrap",
    description: "run an MCP stdio server and record what crosses its stdin and stdout",
    usage: ["--ledger PATH [OPTIONS] -- CMD [ARGS…]"],
  },
  args,
  async run({ rawArgs, args: a }) {
    rejectUnknownFlags(rawArgs, args, "wrap");
    const dd = rawArgs.indexOf("--");
    const argv = dd < 0 ? [] : rawArgs.slice(dd + 1);
    if (argv.length === 0) {
      throw new UsageError(
        "no server command given",
        "put the server's command after '--': seam wrap --ledger seam.jsonl -- npx -y @modelcontextprotocol/server-everything",
      );
    }
    const before = dd < 0 ? rawArgs : rawArgs.slice(0, dd);
    const stray = positionals(before);
    if (stray.length > 0)
      throw new UsageError(
        `unexpected argument ${JSON.stringify(stray[0])} before '--'`,
        "the server's command goes after '--'",
      );
    const ledger = a.ledger as string | undefined;
    if (!ledger) throw new UsageError("--ledger is required", "seam wrap --ledger seam.jsonl -- <server command>");
    const fault = parseFault(process.env[FAULT_ENV]);
    if (fault === null) throw new UsageError(`${FAULT_ENV} names no known fault`);
    const fsync = fsyncFlag(a.fsync as string | undefined);
    const session = a.session as string | undefined;
    if (session !== undefined && session === "") throw new UsageError("--session must not be empty");
    const log = createLog();
    const actions = await actionFlags(rawArgs, a as Record<string, unknown>, log, true);
    const checkpoints = await checkpointFlags(rawArgs, a as Record<string, unknown>, log);
    const strip = repeated(before, "strip-env");
    const pass = repeated(before, "pass-env");
    const badName = [...strip, ...pass].find((n) => !/^[^=\0]+$/.test(n));
    if (badName !== undefined)
      throw new UsageError(`--strip-env and --pass-env take a variable name, not ${JSON.stringify(badName)}`);
    const maxFrame = intFlag(a.maxFrame as string | undefined, "--max-frame", 64 * 1024 * 1024, 1);
    ledgerDirectory(ledger, log);
    const payloads = await payloadsFlag(a.payloads as string | undefined);
    // Started by hand in a terminal, wrap seems to hang: it waits for an MCP client on its stdin.
    if (process.stdin.isTTY === true)
      log.info(
        "stdin is a terminal: seam wrap relays what an MCP client writes to it (JSON-RPC, one message a line) and waits for that; an MCP client's config starts it (seam install), and seam demo shows it at work",
      );
    return runWrap(
      runtime,
      {
        ledger,
        argv,
        server: (a.server as string | undefined) || serverLabel(argv),
        session,
        raw: Boolean(a.raw),
        payloads,
        maxFrame,
        fsync,
        writeAhead: Boolean(a.writeAhead),
        failClosed: Boolean(a.failClosed),
        cwd: process.cwd(),
        env: serverEnv(process.env, { strip, pass }),
        allowForeignLedger: Boolean(a.allowForeignLedger),
        fault: fault === undefined ? undefined : wrapFault(fault),
        actions,
        checkpoints,
        recorderThread: {
          plain: {
            fault,
            checkpoints: checkpoints && {
              keyText: checkpoints.keyText,
              every: checkpoints.every,
              intervalMs: checkpoints.intervalMs,
              witness: checkpoints.witness,
              witnessUrls: checkpoints.witnessUrls,
            },
          } satisfies RecorderPlain,
        },
      },
      log,
    );
  },
});

/** Words before '--' that are not flags or flag values. */
function positionals(words: string[]): string[] {
  const valued = valueFlags(args);
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (valued.has(w)) i++;
    else if (!w.startsWith("-")) out.push(w);
  }
  return out;
}
