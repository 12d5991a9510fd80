/**
 * Hidden: the built-in fixture server and scripted client, so that selftest,
 * demo and the tests run from any build of seam with no other file.
 *   seam fixture server [--record-in FILE] [--legacy]
 *   seam fixture client [--script awkward|demo|modern|fallback] [--sent FILE] [--received FILE]
 *                       [--timeout-ms MS] [--blind] -- CMD [ARGS…]
 */
import { writeFileSync } from "node:fs";
import { defineCommand } from "citty";
import { EXIT, UsageError } from "../src/base/exit.ts";
import { createLog } from "../src/base/log.ts";
import { runtime } from "../src/runtime/index.ts";
import { runFixtureClient, SCRIPTS } from "../src/selftest/fixture-client.ts";
import { runFixtureServer } from "../src/selftest/fixture-server.ts";

export default defineCommand({
  meta: {
    name: "fixture",
    description:
      "the built-in example MCP server, and a scripted client to drive a server (selftest and demo run them)",
    usage: [
      "server [--record-in FILE] [--legacy]",
      "client [--script NAME] [--sent FILE] [--received FILE] [--timeout-ms MS] [--blind] -- CMD [ARGS…]",
    ],
  },
  args: {
    role: { type: "positional", description: "server or client", valueHint: "server|client" },
    "record-in": { type: "string", description: "server: also write every byte it reads here", valueHint: "FILE" },
    legacy: {
      type: "boolean",
      description: "server: answer server/discover with -32601, so that a client falls back to initialize",
    },
    script: {
      type: "string",
      description: `client: what it sends: ${Object.keys(SCRIPTS).join(", ")} (default awkward)`,
      valueHint: "NAME",
    },
    sent: { type: "string", description: "client: write every byte it sent here", valueHint: "FILE" },
    received: { type: "string", description: "client: write every byte it received here", valueHint: "FILE" },
    "timeout-ms": {
      type: "string",
      description: "client: give up after this many ms (default 20000)",
      valueHint: "MS",
    },
    blind: {
      type: "boolean",
      description:
        "client: wait for no answer: send the whole script in order, then read to the end (for a stream corrupted on purpose)",
    },
  },
  async run({ rawArgs, args }) {
    if (args.role === "server") {
      const chunks: Uint8Array[] = [];
      const recordIn = args["record-in"];
      await runFixtureServer(runtime.stdin(), runtime.stdout(), recordIn ? (c) => chunks.push(c.slice()) : undefined, {
        legacy: args.legacy === true,
      });
      if (recordIn) writeFileSync(recordIn, Buffer.concat(chunks));
      return EXIT.OK;
    }
    if (args.role !== "client") throw new UsageError("fixture takes 'server' or 'client'");
    const dd = rawArgs.indexOf("--");
    const argv = dd < 0 ? [] : rawArgs.slice(dd + 1);
    const script = SCRIPTS[(args.script as string | undefined) ?? "awkward"];
    if (!script || argv.length === 0)
      throw new UsageError("fixture client needs a known --script and a command after '--'");
    const spawned = await runtime.spawn(argv);
    if (!spawned.ok) {
      createLog().error(`cannot start ${argv[0]}: ${spawned.reason}`);
      return EXIT.SPAWN_FAILED;
    }
    const run = { sent: [] as Uint8Array[], received: [] as Uint8Array[] };
    try {
      await runFixtureClient(spawned.child, script, run, Number(args.timeoutMs ?? 20000), args.blind === true);
    } catch (err) {
      createLog().error(`fixture client: ${(err as Error).message}`);
      spawned.child.kill("SIGKILL");
      return EXIT.FAIL;
    } finally {
      // Kept even when the script could not finish: selftest compares what did arrive.
      if (args.sent) writeFileSync(args.sent, Buffer.concat(run.sent));
      if (args.received) writeFileSync(args.received, Buffer.concat(run.received));
    }
    const status = await spawned.child.exited;
    return status.code ?? EXIT.FAIL;
  },
});
