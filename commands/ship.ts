import { defineCommand } from "citty";
import { EXIT, UsageError } from "../src/base/exit.ts";
import { describeIoError } from "../src/base/io-error.ts";

import { createLog } from "../src/base/log.ts";
import { prepareStream, streamPort } from "../src/fleet/jetstream.ts";
import { connectNats, HOST_TOKEN, parseNatsUrl, scrubNats, showNats } from "../src/fleet/nats.ts";
import { LedgerShipper, ShipError } from "../src/fleet/ship.ts";
import { readSmallFile } from "../src/runtime/small-file.ts";
import { intFlag, rejectUnknownFlags } from "./_args.ts";

const args = {
  ledger: { type: "positional", description: "ledger file(s) to ship", required: true, valueHint: "LEDGER…" },
  to: {
    type: "string",
    description: "the NATS servers: nats://HOST:PORT[,HOST:PORT…] (user:pass@ allowed; never shown)",
    valueHint: "URL",
    required: true,
  },
  stream: { type: "string", description: "the JetStream stream (default SEAM_LEDGERS)", valueHint: "NAME" },
  "create-stream": {
    type: "boolean",
    description:
      "create the stream if missing: append-only (deny delete and purge), file storage, subjects seam.ledger.>",
  },
  replicas: { type: "string", description: "with --create-stream: replicas, 1 or 3 (default 1)", valueHint: "N" },
  creds: { type: "string", description: "a NATS credentials file (never shown)", valueHint: "FILE" },
  host: {
    type: "string",
    description:
      "name this host in the subject: seam.ledger.NAME.<origin>, so the server can let its user alone publish there (docs/fleet-permissions.md)",
    valueHint: "NAME",
  },
  follow: { type: "boolean", description: "keep shipping lines as writers append them (stop with SIGINT/SIGTERM)" },
  "allow-mutable-stream": { type: "boolean", description: "ship into a stream that allows delete or purge" },
} as const;

/**
 * Ships ledgers to JetStream; see src/fleet/ship.ts for what goes on the
 * wire. Exit 0 when every complete line is in the stream (or, with
 * --follow, on SIGINT/SIGTERM after the batch in flight), 1 on a failure
 * it cannot retry, 2 on usage.
 */
export default defineCommand({
  meta: {
    name: "ship",
    description: "publish every line of ledgers, verbatim, to an append-only NATS JetStream stream",
  },
  args,
  async run({ rawArgs, args: a }) {
    rejectUnknownFlags(rawArgs, args, "ship");
    const log = createLog();
    const paths = a._.map(String);
    if (a.to === undefined || a.to === "") throw new UsageError("--to nats://HOST:PORT is required");
    const target = parseNatsUrl(a.to);
    if ("error" in target) throw new UsageError(`--to: ${target.error}`);
    if (target.stream !== undefined) throw new UsageError("--to takes servers only; name the stream with --stream");
    const replicas = intFlag(a.replicas, "--replicas", 1, 1);
    if (replicas !== 1 && replicas !== 3) throw new UsageError("--replicas takes 1 or 3");
    if (a.replicas !== undefined && !a["create-stream"]) throw new UsageError("--replicas goes with --create-stream");
    let credsText: string | undefined;
    if (a.creds !== undefined) {
      try {
        credsText = readSmallFile(a.creds).toString("utf8");
      } catch (err) {
        throw new UsageError(`cannot read credentials file ${a.creds}: ${describeIoError(err)}`);
      }
    }
    if (a.host !== undefined && !HOST_TOKEN.test(a.host))
      throw new UsageError(
        "--host takes a name of letters, digits, '-' and '_' (one NATS subject token)",
        "--host web-1",
      );
    const shown = showNats(target);
    let stopping = false;
    const stop = () => {
      stopping = true;
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
    let nc: Awaited<ReturnType<typeof connectNats>> | undefined;
    try {
      let warned = false;
      nc = await connectNats(target, {
        credsText,
        name: "seam ship",
        onStatus: (s) => {
          if (s === "disconnect" && !warned) {
            warned = true;
            log.warn(`disconnected from ${shown}: reading is paused, retrying`);
          } else if (s === "reconnect" && warned) {
            warned = false;
            log.info(`reconnected to ${shown}`);
          }
        },
      });
      const stream = await prepareStream(nc, {
        stream: a.stream,
        create: a["create-stream"] === true,
        replicas,
        allowMutable: a["allow-mutable-stream"] === true,
      });
      const port = await streamPort(nc, stream);
      const deps = {
        warn: (m: string) => log.warn(m),
        sleep: (ms: number) => new Promise<void>((r) => setTimeout(r, ms)),
        stopped: () => stopping,
      };
      const shippers = paths.map((p) => new LedgerShipper(p, port, deps, a.host));
      const follow = a.follow === true;
      for (;;) {
        await Promise.all(shippers.map((s) => s.shipAvailable(follow)));
        if (!follow || stopping) break;
        await deps.sleep(200);
      }
      await nc.drain();
      return EXIT.OK;
    } catch (err) {
      const why = err instanceof ShipError ? err.message : describeNatsError(err);
      const hint = err instanceof ShipError ? err.hint : undefined;
      log.error(scrubNats(why, target, credsText), hint === undefined ? undefined : scrubNats(hint, target, credsText));
      await nc?.close().catch(() => {});
      return EXIT.FAIL;
    } finally {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
    }
  },
});

function describeNatsError(err: unknown): string {
  const e = err as { message?: string; code?: string };
  return `nats: ${(e?.message ?? String(err)).split("\n")[0]}`;
}
