/**
 * seam mock LEDGER --payloads DIR [--session ID] [--strict-order]
 * [--listen HOST:PORT [--allow-remote]]: an MCP server that answers with
 * what a recording holds, on stdio (src/mock/mock-server.ts) or, with
 * --listen, over Streamable HTTP (src/mock/mock-http.ts). The ledger is verified and read once, and
 * every payload an answer needs read and checked against its digest, before
 * the first request is read: a ledger or payload that does not hold is refused.
 */
import { defineCommand } from "citty";
import { EXIT, UsageError } from "../src/base/exit.ts";
import { createLog } from "../src/base/log.ts";
import { terminalText } from "../src/base/terminal-text.ts";
import { MockHttpServer } from "../src/mock/mock-http.ts";
import { MockAnswers, runMock } from "../src/mock/mock-server.ts";
import { Recording } from "../src/mock/recording.ts";
import { isLoopbackHost } from "../src/proxy/guard.ts";
import { nodeHttp as http } from "../src/runtime/http-node.ts";
import { runtime } from "../src/runtime/index.ts";
import { rejectEmptyValues, rejectUnknownFlags } from "./_args.ts";
import { parseListen } from "./_listen.ts";
import { print } from "./_out.ts";
import { existingPayloadStore } from "./_payloads.ts";
import { requireReadable } from "./_read.ts";
import { recordingPayloads, verifiedRecording } from "./_recorded.ts";

const args = {
  path: { type: "positional", description: "the ledger whose answers to serve", required: true, valueHint: "PATH" },
  payloads: {
    type: "string",
    description: "the payload store it was recorded with (seam wrap --payloads DIR)",
    valueHint: "DIR",
    required: true,
  },
  session: { type: "string", description: "serve only this session's answers (an id prefix will do)", valueHint: "ID" },
  "strict-order": {
    type: "boolean",
    description: "answer only requests that come in the order they were recorded",
  },
  listen: {
    type: "string",
    description:
      "serve over Streamable HTTP on this address instead of stdio (127.0.0.1:0: any free port; the URL is printed)",
    valueHint: "HOST:PORT",
  },
  "allow-remote": {
    type: "boolean",
    description: "allow --listen on an address that is not loopback",
  },
} as const;

export default defineCommand({
  meta: {
    name: "mock",
    description:
      "an MCP server that answers with a recording's answers (exit 0 when stdin ends or, with --listen, on SIGINT/SIGTERM; 1 a ledger or payload that does not verify)",
    usage: ["PATH --payloads DIR [--session ID] [--strict-order] [--listen HOST:PORT [--allow-remote]]"],
  },
  args,
  async run({ args: a, rawArgs }) {
    rejectUnknownFlags(rawArgs, args, "mock");
    rejectEmptyValues(a, args);
    const path = String(a._[0] ?? a.path);
    const listen = a.listen === undefined ? undefined : parseListen(a.listen);
    if (listen !== undefined && !isLoopbackHost(listen.host) && !a["allow-remote"])
      throw new UsageError(
        `--listen ${listen.host} is not a loopback address`,
        "add --allow-remote to listen where other machines can reach the mock",
      );
    if (listen === undefined && a["allow-remote"]) throw new UsageError("--allow-remote goes with --listen");
    requireReadable([path]);
    const store = (await existingPayloadStore(a.payloads, true))!;
    const log = createLog();

    const recording = new Recording(a.session);
    if (!(await verifiedRecording(path, (row) => recording.row(row), "serving", log))) return EXIT.FAIL;
    if (recording.answers.length === 0) {
      log.error(
        `${terminalText(path)} holds no answered request${a.session === undefined ? "" : ` in session ${a.session}`} to serve`,
        "record one with 'seam wrap --payloads DIR --ledger PATH -- SERVER'",
      );
      return EXIT.FAIL;
    }

    // Every payload an answer needs, read once and checked: a changed one is never served.
    const loaded = recordingPayloads(store, recording.digests(), path, a.payloads, "serving", log);
    if (loaded === null) return EXIT.FAIL;
    const { payloads, missing } = loaded;
    if (missing > 0)
      log.warn(`${missing} recorded answers have no payload in the store (erased?): those requests get an error`);

    const opts = { strictOrder: a["strict-order"] === true };
    if (listen === undefined) {
      await runMock(runtime.stdin(), runtime.stdout(), new MockAnswers(recording, payloads, opts));
      return EXIT.OK;
    }
    let server: MockHttpServer;
    try {
      server = await MockHttpServer.start(
        http,
        {
          ...listen,
          guardLoopback: isLoopbackHost(listen.host),
          answers: () => new MockAnswers(recording, payloads, opts),
        },
        log,
      );
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      log.error(
        `cannot listen on ${listen.host}:${listen.port}: ${code === "EADDRINUSE" ? "address in use" : code === "EACCES" ? "permission denied" : String((e as Error).message ?? e).toLowerCase()}`,
        code === "EADDRINUSE" ? "pick another port with --listen 127.0.0.1:PORT (0: any free port)" : undefined,
      );
      return EXIT.FAIL;
    }
    let wake: () => void = () => {};
    const stopped = new Promise<void>((r) => {
      wake = r;
    });
    const off = runtime.onSignals(["SIGINT", "SIGTERM"], () => wake());
    if (!isLoopbackHost(listen.host)) log.warn(`listening on ${listen.host}, reachable from other machines`);
    log.info(`serving ${terminalText(path)} over Streamable HTTP; point the client at ${server.url}`);
    await print(`${server.url}\n`);
    await stopped;
    off();
    await server.close();
    return EXIT.OK;
  },
});
