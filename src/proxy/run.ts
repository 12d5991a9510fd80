/**
 * `seam proxy` from start to stop: listen, say where, record until SIGINT or
 * SIGTERM, then close every open session with `proxy_stopped`.
 */
import type { Log } from "../base/log.ts";
import { EXIT } from "../base/exit.ts";
import type { HttpRuntime } from "../runtime/http-types.ts";
import type { Runtime } from "../runtime/types.ts";
import { isLoopbackHost } from "./guard.ts";
import { McpProxy } from "./server.ts";
import type { ProxyOptions } from "./options.ts";

export const STOP_SIGNALS = ["SIGINT", "SIGTERM"] as const;

/** Runs the proxy until a stop signal; `ready` gets the URL clients use. Resolves to the exit code. */
export async function runProxy(
  rt: Runtime,
  http: HttpRuntime,
  o: ProxyOptions,
  log: Log,
  ready: (url: string) => Promise<void> | void,
): Promise<number> {
  let stopSignal: string | undefined;
  let wake: () => void = () => {};
  const stopped = new Promise<void>((r) => {
    wake = r;
  });
  const off = rt.onSignals(STOP_SIGNALS, (sig) => {
    stopSignal ??= sig;
    wake();
  });
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
