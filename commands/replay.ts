/**
 * seam replay LEDGER --payloads DIR [--session ID] [--ignore POINTER]…
 * [--json] [--junit FILE] [--timeout-ms MS] (-- CMD [ARGS…] | --upstream URL):
 * each recorded session's requests sent again to a server started afresh
 * for it (or to a Streamable HTTP server, a session of its own each), and
 * each answer compared with the recorded one by digest (src/mock/replay.ts).
 *
 * Output: one line per request (its ledger line, session, method, the tool,
 * prompt, uri or cursor it names, and same, different, missing or no
 * payload), then a count; with --json one object:
 *   {"ledger":"l.jsonl","calls":[{"session":…,"line":7,"method":"tools/call","name":"echo","verdict":"same",
 *    "recorded":"sha256:…","replayed":"sha256:…"}],"same":1,"different":0,"missing":0,"no_payload":0}
 * Exit 0 every answer the same, 1 a difference (or a request with no answer,
 * or a ledger or payload that does not verify), 3 a request that could not
 * be replayed (its payload is not in the store), 127 the server would not start.
 */
import { writeFileSync } from "node:fs";
import { defineCommand } from "citty";
import { EXIT, UsageError } from "../src/base/exit.ts";
import { describeIoError } from "../src/base/io-error.ts";
import { createLog } from "../src/base/log.ts";
import { terminalText } from "../src/base/terminal-text.ts";
import type { Json } from "../src/core/json.ts";
import {
  type CallOutcome,
  Conversation,
  neededPayloads,
  pointerTokens,
  ReplayPlan,
  replaySession,
  stdioChannel,
  type Verdict,
} from "../src/mock/replay.ts";
import { httpChannel } from "../src/mock/replay-http.ts";
import { junitXml, type RuleResult } from "../src/read/check.ts";
import { jsonText } from "../src/read/format.ts";
import { runtime } from "../src/runtime/index.ts";
import type { Child } from "../src/runtime/types.ts";
import { intFlag, rejectEmptyValues, rejectUnknownFlags, repeated } from "./_args.ts";
import { print } from "./_out.ts";
import { existingPayloadStore } from "./_payloads.ts";
import { requireReadable } from "./_read.ts";
import { recordingPayloads, verifiedRecording } from "./_recorded.ts";

const args = {
  path: { type: "positional", description: "the ledger whose requests to replay", required: true, valueHint: "PATH" },
  payloads: {
    type: "string",
    description: "the payload store it was recorded with (seam wrap --payloads DIR)",
    valueHint: "DIR",
    required: true,
  },
  session: { type: "string", description: "replay only this session (an id prefix will do)", valueHint: "ID" },
  ignore: {
    type: "string",
    description:
      "leave this field of each answer out of the comparison (a JSON pointer, e.g. /content/0/text; repeatable)",
    valueHint: "POINTER",
  },
  upstream: {
    type: "string",
    description: "replay to this Streamable HTTP server (http:// or https://) instead of starting one",
    valueHint: "URL",
  },
  json: { type: "boolean", description: "print the outcome as one JSON object" },
  junit: {
    type: "string",
    description: "also write a JUnit XML report to FILE: a test case per request, a failure for each not the same",
    valueHint: "FILE",
  },
  "timeout-ms": { type: "string", description: "wait this long for each answer (default 30000)", valueHint: "MS" },
} as const;

const WORDS: Record<Verdict, string> = {
  same: "same",
  different: "different",
  missing: "missing",
  no_payload: "no payload",
};

/** The table, laid out in 80 columns: line, session (its first 8 characters), method, name, verdict. */
function table(outcomes: CallOutcome[]): string {
  const METHOD = 14;
  const NAME = 34;
  const cut = (s: string, n: number) => ([...s].length > n ? `${[...s].slice(0, n - 1).join("")}…` : s.padEnd(n));
  const lines = [
    `${"line".padStart(6)}  ${"session".padEnd(8)}  ${"method".padEnd(METHOD)}  ${"name".padEnd(NAME)}  replayed`,
  ];
  const notes: string[] = [];
  for (const o of outcomes) {
    lines.push(
      `${String(o.line).padStart(6)}  ${terminalText(o.session).slice(0, 8).padEnd(8)}  ${o.method.padEnd(METHOD)}  ${cut(terminalText(o.name), NAME)}  ${WORDS[o.verdict]}`,
    );
    if (o.why !== undefined) notes.push(`line ${o.line}: ${o.why}`);
  }
  return `${[...lines, ...notes].map((l) => l.trimEnd()).join("\n")}\n`;
}

function counts(outcomes: CallOutcome[]): Record<Verdict, number> {
  const c: Record<Verdict, number> = { same: 0, different: 0, missing: 0, no_payload: 0 };
  for (const o of outcomes) c[o.verdict]++;
  return c;
}

/** Ends a server whose session is over: its stdin closed, then SIGTERM, then SIGKILL. */
async function stop(child: Child): Promise<void> {
  await child.stdin.end();
  const wait = (ms: number) =>
    Promise.race([child.exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);
  if (await wait(2000)) return;
  child.kill("SIGTERM");
  if (await wait(2000)) return;
  child.kill("SIGKILL");
  await child.exited;
}

export default defineCommand({
  meta: {
    name: "replay",
    description:
      "send a recording's requests to a server again and compare each answer with the recorded one (exit 0 all the same, 1 a difference, 3 a request not replayable)",
    usage: [
      "PATH --payloads DIR [--session ID] [--ignore POINTER]… [--json] [--junit FILE] -- CMD [ARGS…]",
      "PATH --payloads DIR --upstream URL [--session ID] [--ignore POINTER]… [--json] [--junit FILE]",
    ],
  },
  args,
  async run({ args: a, rawArgs }) {
    rejectUnknownFlags(rawArgs, args, "replay");
    rejectEmptyValues(a, args);
    const dd = rawArgs.indexOf("--");
    const argv = dd < 0 ? [] : rawArgs.slice(dd + 1);
    let upstream: URL | undefined;
    if (a.upstream !== undefined) {
      if (argv.length > 0) throw new UsageError("give --upstream URL or -- CMD, not both");
      try {
        upstream = new URL(a.upstream);
      } catch {
        throw new UsageError(`--upstream is not a URL: ${JSON.stringify(a.upstream)}`);
      }
      if (upstream.protocol !== "http:" && upstream.protocol !== "https:")
        throw new UsageError(`--upstream must be an http:// or https:// URL, not ${upstream.protocol}`);
    } else if (argv.length === 0)
      throw new UsageError(
        "say which server to replay to",
        "seam replay PATH --payloads DIR -- CMD [ARGS…], or --upstream URL for a Streamable HTTP server",
      );
    const path = String(a._[0] ?? a.path);
    const ignore = repeated(rawArgs, "ignore");
    const bad = ignore.find((p) => pointerTokens(p) === null);
    if (bad !== undefined)
      throw new UsageError(
        `--ignore takes a JSON pointer, not ${JSON.stringify(bad)}`,
        "e.g. --ignore /content/0/text",
      );
    const timeoutMs = intFlag(a["timeout-ms"], "--timeout-ms", 30_000, 1);
    requireReadable([path]);
    const store = (await existingPayloadStore(a.payloads, true))!;
    const log = createLog();

    const plan = new ReplayPlan(a.session);
    if (!(await verifiedRecording(path, (row, line) => plan.row(row, line), "replaying", log))) return EXIT.FAIL;
    const sessions = plan.replayable();
    if (sessions.length === 0) {
      log.error(
        `${terminalText(path)} holds no answered request to replay${a.session === undefined ? "" : ` in session ${a.session}`}`,
      );
      return EXIT.FAIL;
    }
    const needed = sessions.flatMap((s) => neededPayloads(s, ignore.length > 0));
    const loaded = recordingPayloads(store, needed, path, a.payloads, "replaying", log);
    if (loaded === null) return EXIT.FAIL;

    const t0 = performance.now();
    const outcomes: CallOutcome[] = [];
    const opts = { payload: (d: string) => loaded.payloads.get(d) ?? null, ignore, timeoutMs };
    for (const s of sessions) {
      const conv = new Conversation(s, opts.payload);
      if (upstream !== undefined) {
        const channel = httpChannel(upstream, conv);
        try {
          outcomes.push(...(await replaySession(s, channel, conv, opts)));
        } finally {
          await channel.end();
        }
        continue;
      }
      const spawned = await runtime.spawn(argv);
      if (!spawned.ok) {
        log.error(`cannot start ${terminalText(argv[0]!)}: ${spawned.reason}`, spawned.hint);
        return EXIT.SPAWN_FAILED;
      }
      try {
        outcomes.push(...(await replaySession(s, stdioChannel(spawned.child, conv), conv, opts)));
      } finally {
        await stop(spawned.child);
      }
    }

    const c = counts(outcomes);
    if (a.junit !== undefined) {
      const cases: RuleResult[] = outcomes.map((o) => ({
        kind: "replay",
        rule: `line ${o.line}: ${o.method}${o.name === "" ? "" : ` ${o.name}`}`,
        ok: o.verdict === "same",
        observed: o.why === undefined ? WORDS[o.verdict] : `${WORDS[o.verdict]}: ${o.why}`,
        where: [],
        more: 0,
      }));
      try {
        writeFileSync(a.junit, junitXml(cases, (performance.now() - t0) / 1000, "replay"));
      } catch (e) {
        log.error(`cannot write ${a.junit}: ${describeIoError(e)}`);
        return EXIT.FAIL;
      }
    }
    if (a.json) {
      const calls = outcomes.map(
        (o) =>
          new Map<string, Json>([
            ["session", o.session],
            ["line", o.line],
            ["method", o.method],
            ["name", o.name],
            ["verdict", o.verdict],
            ["recorded", o.recorded],
            ["replayed", o.replayed],
            ...(o.why === undefined ? [] : [["why", o.why] as [string, Json]]),
          ]),
      );
      await print(`${jsonText(new Map<string, Json>([["ledger", path], ["calls", calls], ...Object.entries(c)]))}\n`);
    } else {
      await print(table(outcomes));
      await print(
        `${outcomes.length} request${outcomes.length === 1 ? "" : "s"} replayed: ${c.same} same, ${c.different} different, ${c.missing} missing, ${c.no_payload} with no payload\n`,
      );
    }
    if (c.different > 0 || c.missing > 0) return EXIT.FAIL;
    return c.no_payload > 0 ? EXIT.INCONCLUSIVE : EXIT.OK;
  },
});
