import { defineCommand } from "citty";
import { UsageError } from "../src/base/exit.ts";
import { createLog } from "../src/base/log.ts";
import { isLoopbackHost } from "../src/proxy/guard.ts";
import { MAX_HELD_BYTES } from "../src/proxy/options.ts";
import { runProxy } from "../src/proxy/run.ts";
import { redactTarget, redactValue } from "../src/redact/http.ts";
import { nodeHttp as http } from "../src/runtime/http-node.ts";
import { runtime } from "../src/runtime/index.ts";
import { intFlag, rejectUnknownFlags, valueFlags } from "./_args.ts";
import { parseListen } from "./_listen.ts";
import { print } from "./_out.ts";
import { payloadsFlag } from "./_payloads.ts";
import { actionFlags, checkpointFlags, fsyncFlag, ledgerDirectory, RECORD_ARGS } from "./_record-flags.ts";

const args = {
  upstream: {
    type: "string",
    description: "the MCP server's Streamable HTTP endpoint (http:// or https://)",
    valueHint: "URL",
    required: true,
  },
  listen: {
    type: "string",
    description: "address to listen on (default 127.0.0.1:0, any free port; the URL to use is printed)",
    valueHint: "HOST:PORT",
  },
  "allow-remote": {
    type: "boolean",
    description: "allow --listen on an address that is not loopback (other machines can then use the upstream)",
  },
  ledger: {
    type: "string",
    description: "ledger file to append rows to (created if missing)",
    valueHint: "PATH",
    required: true,
  },
  server: {
    type: "string",
    description: "label for the server in every row (default: the upstream's host)",
    valueHint: "NAME",
  },
  "redact-header": {
    type: "string",
    description:
      "also record this header only as present (repeatable; Authorization, Proxy-Authorization, Cookie, Set-Cookie and secret-named ones always are)",
    valueHint: "NAME",
  },
  "session-idle": {
    type: "string",
    description:
      "end the ledger session of an MCP session that has had no request for this long, as idle_expired (default 1800; 0: never)",
    valueHint: "SECONDS",
  },
  "max-held": {
    type: "string",
    description:
      "under --write-ahead, --fail-closed or --map: most bytes of request bodies held at once before they are forwarded; past it a POST gets 503 with Retry-After (default 268435456)",
    valueHint: "BYTES",
  },
  ...RECORD_ARGS,
} as const;

/** setTimeout's longest delay (2^31 - 1 ms), in whole seconds. */
const MAX_IDLE_S = Math.floor(0x7fffffff / 1000);

export default defineCommand({
  meta: {
    name: "proxy",
    description: "record an MCP server reached over Streamable HTTP, as a local proxy in front of it",
  },
  args,
  async run({ rawArgs, args: a }) {
    rejectUnknownFlags(rawArgs, args, "proxy");
    const valued = valueFlags(args);
    const stray = rawArgs.find((w, i) => !w.startsWith("-") && !valued.has(rawArgs[i - 1] ?? ""));
    if (stray !== undefined) throw new UsageError(`unexpected argument ${JSON.stringify(stray)}`);
    const ledger = a.ledger as string | undefined;
    if (!ledger)
      throw new UsageError("--ledger is required", "seam proxy --upstream https://example.com/mcp --ledger seam.jsonl");
    const upstreamText = a.upstream as string | undefined;
    if (!upstreamText)
      throw new UsageError(
        "--upstream is required",
        "seam proxy --upstream https://example.com/mcp --ledger seam.jsonl",
      );
    let upstream: URL;
    try {
      upstream = new URL(upstreamText);
    } catch {
      throw new UsageError(`--upstream is not a URL: ${JSON.stringify(redactValue(upstreamText))}`);
    }
    if (upstream.protocol !== "http:" && upstream.protocol !== "https:")
      throw new UsageError(`--upstream must be an http:// or https:// URL, not ${upstream.protocol}`);
    if (upstream.username || upstream.password)
      throw new UsageError(
        "--upstream must not hold a user or password",
        "let the client send its credentials (Authorization); seam passes them on",
      );
    const listen = parseListen((a.listen as string | undefined) ?? "127.0.0.1:0");
    if (!isLoopbackHost(listen.host) && !a.allowRemote)
      throw new UsageError(
        `--listen ${listen.host} is not a loopback address`,
        "add --allow-remote to listen where other machines can reach the proxy",
      );
    const fsync = fsyncFlag(a.fsync as string | undefined);
    const redactHeaders = new Set<string>();
    for (let i = 0; i < rawArgs.length; i++) {
      const w = rawArgs[i]!;
      const v = w === "--redact-header" ? rawArgs[++i] : w.startsWith("--redact-header=") ? w.slice(16) : undefined;
      if (v === undefined) continue;
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(v))
        throw new UsageError(`--redact-header takes a header name, not ${JSON.stringify(v)}`);
      redactHeaders.add(v.toLowerCase());
    }
    const sessionIdle = intFlag(a.sessionIdle as string | undefined, "--session-idle", 1800);
    if (sessionIdle > MAX_IDLE_S)
      throw new UsageError(`--session-idle takes at most ${MAX_IDLE_S} seconds (24 days), or 0 for never`);
    const log = createLog();
    const actions = await actionFlags(rawArgs, a as Record<string, unknown>, log);
    const checkpoints = await checkpointFlags(rawArgs, a as Record<string, unknown>, log);
    ledgerDirectory(ledger, log);
    const redactedUpstream = `${upstream.origin}${redactTarget(upstream.pathname + upstream.search).target}`;
    return runProxy(
      runtime,
      http,
      {
        upstream,
        listenHost: listen.host,
        listenPort: listen.port,
        guardLoopback: isLoopbackHost(listen.host),
        redactHeaders,
        sessionIdleMs: sessionIdle * 1000,
        ledger,
        server: (a.server as string | undefined) || upstream.host,
        raw: Boolean(a.raw),
        payloads: await payloadsFlag(a.payloads as string | undefined),
        maxFrame: intFlag(a.maxFrame as string | undefined, "--max-frame", 64 * 1024 * 1024, 1),
        maxHeld: intFlag(a.maxHeld as string | undefined, "--max-held", MAX_HELD_BYTES, 1),
        fsync,
        writeAhead: Boolean(a.writeAhead),
        failClosed: Boolean(a.failClosed),
        actions,
        checkpoints,
        openAppend: runtime.openAppend,
        runtime: runtime.name,
        begin: {
          upstream: redactedUpstream,
          redact_headers: redactHeaders.size > 0 ? [...redactHeaders].sort() : undefined,
          session_idle_s: sessionIdle,
        },
      },
      log,
      (url) => print(`${url}\n`),
    );
  },
});
