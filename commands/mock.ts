/**
 * seam mock LEDGER --payloads DIR [--session ID] [--strict-order]: an MCP
 * stdio server that answers with what a recording holds
 * (src/mock/mock-server.ts). The ledger is verified and read once, and
 * every payload an answer needs read and checked against its digest, before
 * the first request is read: a ledger or payload that does not hold is refused.
 */
import { defineCommand } from "citty";
import { EXIT } from "../src/base/exit.ts";
import { createLog } from "../src/base/log.ts";
import { terminalText } from "../src/base/terminal-text.ts";
import { MockAnswers, runMock } from "../src/mock/mock-server.ts";
import { Recording } from "../src/mock/recording.ts";
import { runtime } from "../src/runtime/index.ts";
import { rejectEmptyValues, rejectUnknownFlags } from "./_args.ts";
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
} as const;

export default defineCommand({
  meta: {
    name: "mock",
    description:
      "an MCP stdio server that answers with a recording's answers (exit 0 when stdin ends, 1 a ledger or payload that does not verify)",
    usage: ["PATH --payloads DIR [--session ID] [--strict-order]"],
  },
  args,
  async run({ args: a, rawArgs }) {
    rejectUnknownFlags(rawArgs, args, "mock");
    rejectEmptyValues(a, args);
    const path = String(a._[0] ?? a.path);
    requireReadable([path]);
    const store = existingPayloadStore(a.payloads, true)!;
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

    await runMock(
      runtime.stdin(),
      runtime.stdout(),
      new MockAnswers(recording, payloads, { strictOrder: a["strict-order"] === true }),
    );
    return EXIT.OK;
  },
});
