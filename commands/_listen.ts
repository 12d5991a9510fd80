/** `--listen HOST:PORT` of the commands that listen (proxy, witness). */
import { UsageError } from "../src/base/exit.ts";
import { splitHostPort } from "../src/proxy/guard.ts";

/** `HOST:PORT`, `[v6]:PORT`, or a bare `PORT` on 127.0.0.1; port 0 is any free port. */
export function parseListen(s: string): { host: string; port: number } {
  const bare = /^\d{1,5}$/.test(s) ? { host: "127.0.0.1", port: s } : null;
  const hp = bare ?? splitHostPort(s);
  const port = Number(hp?.port);
  if (!hp || hp.port === undefined || !Number.isInteger(port) || port > 65535)
    throw new UsageError(`--listen takes HOST:PORT, not ${JSON.stringify(s)}`, "for example --listen 127.0.0.1:8788");
  return { host: hp.host.replace(/^\[|\]$/g, ""), port };
}
