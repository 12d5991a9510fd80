/**
 * `seam proxy` from start to stop: listen, say where, record until a stop
 * signal (stopSignals), then close every open session with `proxy_stopped`.
 */

import { EXIT } from "../base/exit.ts";
import type { Log } from "../base/log.ts";
import { REFUSED_LEDGER_HINT, refusedLedgerMessage } from "../ledger/ledger-writer.ts";
import type { HttpRuntime } from "../runtime/http-types.ts";
import type { Runtime } from "../runtime/types.ts";
import { isLoopbackHost } from "./guard.ts";
import type { ProxyOptions } from "./options.ts";
import { McpProxy } from "./server.ts";

/**
 * The signals that stop the proxy (every open session then ends with
 * `proxy_stopped`): SIGINT and SIGTERM on Linux and macOS; on Windows,
 * where SIGTERM is never raised, the console's Ctrl+C (SIGINT), Ctrl+Break
 * (SIGBREAK) and closing (SIGHUP, with seconds left to finish).
 */
export function stopSignals(platform: NodeJS.Platform): readonly string[] {
  return platform === "win32" ? ["SIGINT", "SIGBREAK", "SIGHUP"] : ["SIGINT", "SIGTERM"];
}

/** Why the ledger is refused (a message naming it), or null when it is not. */
async function refusedLedger(o: ProxyOptions): Promise<string | null> {
  try {
    await (await o.openAppend(o.ledger)).close();
    return null;
  } catch (e) {
    return (e as { code?: unknown }).code === "EUNSAFE" ? (e as Error).message : null;
  }
}

/** Runs the proxy until a stop signal; `ready` gets the URL clients use. Resolves to the exit code. */
export async function runProxy(
  rt: Runtime,
  http: HttpRuntime,
  o: ProxyOptions,
  log: Log,
  ready: (url: string) => Promise<void> | void,
  platform: NodeJS.Platform = process.platform,
): Promise<number> {
  let stopSignal: string | undefined;
  let wake: () => void = () => {};
  const stopped = new Promise<void>((r) => {
    wake = r;
  });
  const off = rt.onSignals(stopSignals(platform), (sig) => {
    stopSignal ??= sig;
    wake();
  });
  // Checked as seam wrap checks it, before anything is forwarded: a ledger planted as a link, or
  // another user's file, stops the proxy here (one planted later leaves the sessions opened then
  // unrecorded: src/proxy/session.ts). Any other failure is each session's to warn about.
  const refused = await refusedLedger(o);
  if (refused !== null) {
    off();
    log.error(refusedLedgerMessage(refused), REFUSED_LEDGER_HINT);
    return EXIT.USAGE;
  }
  let proxy: McpProxy;
  try {
    proxy = await McpProxy.start(http, o, log);
  } catch (e) {
    off();
    const code = (e as NodeJS.ErrnoException).code;
    log.error(
      `cannot listen on ${o.listenHost}:${o.listenPort}: ${code === "EADDRINUSE" ? "address in use" : code === "EACCES" ? "permission denied" : String((e as Error).message ?? e).toLowerCase()}`,
      code === "EADDRINUSE" ? "pick another port with --listen 127.0.0.1:PORT (0: any free port)" : undefined,
    );
    return EXIT.FAIL;
  }
  if (!isLoopbackHost(o.listenHost))
    log.warn(
      `listening on ${o.listenHost}, reachable from other machines: anyone who can reach it can use the upstream through seam with the credentials they send`,
    );
  const url = `${proxy.origin}${o.upstream.pathname}${o.upstream.search}`;
  log.info(`recording ${o.upstream.origin} into ${o.ledger}; point the client at ${url}`);
  await ready(url);
  if (stopSignal === undefined) await stopped;
  off();
  await proxy.stop("proxy_stopped");
  return EXIT.OK;
}
