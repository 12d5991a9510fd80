/**
 * One wrapped session: spawn the server, relay both directions byte for byte,
 * observe, record, and end the session properly whatever ends it.
 *
 * The core takes its runtime, log and options as arguments; commands/wrap.ts
 * only parses the command line. This module starts the session; the code
 * that records it (src/wrap/recorded.ts) is loaded while the server starts.
 */

import type { Log } from "../base/log.ts";
import type { Runtime, SpawnResult } from "../runtime/types.ts";
import { type WrapOptions, wrapSignals } from "./options.ts";

/** Runs one session; resolves to seam's exit status (the child's own). */
export async function runWrap(
  rt: Runtime,
  o: WrapOptions,
  log: Log,
  platform: NodeJS.Platform = process.platform,
): Promise<number> {
  const signals = wrapSignals(platform);
  // A signal that comes before the server runs is kept and passed on once it
  // does, so that even then the session ends with its session_end row.
  let early: string | undefined;
  const stopEarly = rt.onSignals(signals.take, (sig) => {
    early ??= sig;
  });
  const writeAhead = o.writeAhead || o.failClosed;
  if (o.fault) log.warn(`selftest fault ${o.fault.name} is on: traffic or rows are deliberately wrong`);
  // A call that waits for its row (--write-ahead, --fail-closed, --map) is recorded as it crosses,
  // and so is every row under --fsync always, which asks for each to be durable as it crosses.
  // Any other is recorded behind the forwarding: on a thread of its own where the runtime's
  // threads pay for themselves (Runtime.recorderThread), else between forwards on this one.
  const behind = !writeAhead && !o.actions && o.fsync !== "always";
  // Opening the recording takes a while (loading the code that records; a
  // recorder thread starts a runtime of its own; then the ledger is locked
  // and its tail read), and so does starting the server: the server starts
  // first, once this thread has made sure the ledger is not one seam
  // refuses, and nothing crosses until the recorder is ready (the server's
  // output waits meanwhile: Runtime.spawn). With --payloads, whose directory
  // may be refused too, one after the other.
  let spawning: Promise<SpawnResult> | undefined;
  if (behind && o.payloads === undefined) {
    const refused = await ledgerRefused(rt, o.ledger, o.allowForeignLedger);
    if (refused !== undefined) {
      stopEarly();
      return (await import("./recorded.ts")).refuseLedger(refused, log);
    }
    spawning = rt.spawn(o.argv, { cwd: o.cwd, env: o.env });
  }
  const { recordSession } = await import("./recorded.ts");
  return recordSession(rt, o, log, {
    platform,
    signals,
    early: () => early,
    stopEarly,
    spawning,
    behind,
    writeAhead,
  });
}

/**
 * Why seam would refuse to append to the ledger at `path` (the refusal's
 * message, as Recording.open gives it), or undefined: it opens the file as
 * the recorder will, and closes it again. Any other failure is the
 * recorder's to meet (its rows are then counted as unlogged).
 */
async function ledgerRefused(
  rt: Runtime,
  path: string,
  allowForeign: boolean | undefined,
): Promise<string | undefined> {
  try {
    const file = await rt.openAppend(path, allowForeign ? { allowForeign: true } : undefined);
    await file.close();
    return undefined;
  } catch (e) {
    return (e as { code?: unknown }).code === "EUNSAFE" ? (e as Error).message : undefined;
  }
}
