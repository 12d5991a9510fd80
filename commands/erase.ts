import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { defineCommand } from "citty";
import { EXIT, UsageError } from "../src/base/exit.ts";
import { describeIoError } from "../src/base/io-error.ts";
import { createLog } from "../src/base/log.ts";
import { terminalText } from "../src/base/terminal-text.ts";
import { compareCodePoints } from "../src/core/canonical/index.ts";
import { digestJson } from "../src/core/digest.ts";
import { getField, type Json, type JsonObject } from "../src/core/json.ts";
import { LedgerWriter, REFUSED_LEDGER_HINT, refusedLedgerMessage } from "../src/ledger/ledger-writer.ts";
import { parseWhen } from "../src/read/filters.ts";
import { jsonText } from "../src/read/format.ts";
import { redactArgv } from "../src/redact/argv.ts";
import { processStartTime } from "../src/runtime/alive.ts";
import { runtime } from "../src/runtime/index.ts";
import { fileChunks } from "../src/verify/ledger-verifier.ts";
import { payloadDigests } from "../src/verify/payload-check.ts";
import { verifyLedger } from "../src/verify/verify-ledger.ts";
import { rejectEmptyValues, rejectUnknownFlags } from "./_args.ts";
import { print } from "./_out.ts";
import { existingPayloadStore } from "./_payloads.ts";
import { requireReadable } from "./_read.ts";

const args = {
  path: { type: "positional", description: "the ledger whose payloads to erase", required: true, valueHint: "PATH" },
  payloads: {
    type: "string",
    description: "the payload store (seam wrap --payloads DIR)",
    valueHint: "DIR",
    required: true,
  },
  session: { type: "string", description: "erase the payloads of this session's rows", valueHint: "ID" },
  before: {
    type: "string",
    description: "erase the payloads of rows before this ISO time (a date alone is midnight UTC)",
    valueHint: "WHEN",
  },
  tool: { type: "string", description: "erase the arguments and results of this tool's calls", valueHint: "NAME" },
  reason: {
    type: "string",
    description: "why, recorded in the erasure row (required)",
    valueHint: "TEXT",
    required: true,
  },
  json: { type: "boolean", description: "print what was erased as one JSON object" },
} as const;

/** The most digests one erasure row names (a row of them is under a megabyte). */
const DIGESTS_PER_ROW = 10_000;

/**
 * What a row must be for its payloads to be erased: its session, its ts
 * before a time, or its tool. The erasure row names it as `match`.
 */
type Match = { session: string } | { before: string; ms: number } | { tool: string };

function matches(m: Match, row: JsonObject | { readonly [k: string]: Json }): boolean {
  if ("session" in m) return getField(row, "session") === m.session;
  if ("tool" in m) return getField(row, "tool") === m.tool;
  const ts = getField(row, "ts");
  const t = typeof ts === "string" ? Date.parse(ts) : Number.NaN;
  return !Number.isNaN(t) && t < m.ms;
}

/**
 * Output: `erased N payloads (reason)` on stdout, or with --json
 *   {"ledger":"l.jsonl","session":"<erasure session>","count":2,"digests":["sha256:json-c14n:v1:…",…]}
 * The erasure row is made durable before any payload is removed: a crash
 * between the two leaves a record naming payloads still there, never
 * payloads gone without a record.
 */
export default defineCommand({
  meta: {
    name: "erase",
    description:
      "remove the payloads of some rows from a payload store and record the erasure in the ledger (exit 0 done, 1 failed)",
    usage: ["PATH --payloads DIR (--session ID | --before WHEN | --tool NAME) --reason TEXT"],
  },
  args,
  async run({ args: a, rawArgs }) {
    rejectUnknownFlags(rawArgs, args, "erase");
    rejectEmptyValues(a, args);
    const path = String(a._[0] ?? a.path);
    const given = (["session", "before", "tool"] as const).filter((k) => a[k] !== undefined);
    if (given.length !== 1)
      throw new UsageError(
        given.length === 0 ? "say which payloads to erase" : `--${given[0]} and --${given[1]} do not go together`,
        "give one of --session ID, --before WHEN or --tool NAME",
      );
    let match: Match;
    if (a.before !== undefined) {
      const ms = parseWhen(a.before, Date.now());
      if (ms === null || !/^\d{4}-/.test(a.before.trim()))
        throw new UsageError(`--before takes an ISO time, not ${JSON.stringify(a.before)}`, "e.g. --before 2026-11-30");
      match = { before: new Date(ms).toISOString(), ms };
    } else match = a.session !== undefined ? { session: a.session } : { tool: a.tool! };
    const reason = a.reason;
    if (!reason?.trim()) throw new UsageError("--reason must say why", 'e.g. --reason "data subject request 42"');
    requireReadable([path]);
    const store = (await existingPayloadStore(a.payloads, false))!;
    const log = createLog();

    // The rows are read as verify reads them; a broken chain does not stop an erasure, but is said.
    const named = new Set<string>();
    const report = await verifyLedger(fileChunks(path), {
      onRow: (row) => {
        if (matches(match, row)) for (const d of payloadDigests(row)) named.add(d);
      },
    });
    if (report.verdict === "broken")
      log.warn(
        `${terminalText(path)} is broken (${report.first_break?.message}): rows naming the payloads may be forged`,
      );
    const digests = [...named].filter((d) => store.has(d)).sort(compareCodePoints);
    if (digests.length === 0) {
      if (a.json) await print(`${jsonText({ ledger: path, session: null, count: 0, digests: [] })}\n`);
      else await print("nothing to erase: no payload of a matching row is in the store\n");
      return EXIT.OK;
    }

    const session = randomUUID();
    let writer: LedgerWriter;
    try {
      writer = await LedgerWriter.open({
        path,
        session,
        server: "seam-erase",
        fsync: "always",
        openAppend: runtime.openAppend,
        warn: (m) => log.warn(m),
      });
    } catch (e) {
      log.error(refusedLedgerMessage((e as Error).message), REFUSED_LEDGER_HINT);
      return EXIT.FAIL;
    }
    const argv = redactArgv(["seam", "erase", ...rawArgs]);
    void writer.append("session_begin", {
      command: argv.argv,
      command_redactions: argv.redactions || undefined,
      command_digest: digestJson(argv.argv),
      cwd: process.cwd(),
      pid: process.pid,
      pid_start: processStartTime(process.pid) ?? undefined,
      host: hostname(),
      runtime: runtime.name,
    });
    const what: [string, Json] =
      "session" in match
        ? ["session", match.session]
        : "tool" in match
          ? ["tool", match.tool]
          : ["before", match.before];
    // Rows of at most DIGESTS_PER_ROW digests, each far below the line limit a reader parses.
    const written: Promise<boolean>[] = [];
    for (let i = 0; i < digests.length; i += DIGESTS_PER_ROW) {
      const some = digests.slice(i, i + DIGESTS_PER_ROW);
      written.push(
        writer.appendDurable("erasure", { match: new Map([what]), reason, count: some.length, digests: some }),
      );
    }
    const recorded = (await Promise.all(written)).every(Boolean);
    const ended = await writer.end({ reason: "erased", calls: 0 });
    if (!recorded || !ended) {
      log.error(`the erasure could not be recorded in ${terminalText(path)}: nothing was erased`);
      return EXIT.FAIL;
    }
    const failed: string[] = [];
    for (const d of digests) {
      try {
        store.remove(d);
      } catch (e) {
        failed.push(`${d}: ${describeIoError(e)}`);
      }
    }
    if (failed.length > 0) {
      log.error(`${failed.length} payloads recorded as erased could not be removed: ${failed[0]}`);
      return EXIT.FAIL;
    }
    if (a.json) await print(`${jsonText({ ledger: path, session, count: digests.length, digests })}\n`);
    else await print(`erased ${digests.length} payload${digests.length === 1 ? "" : "s"} (session ${session})\n`);
    return EXIT.OK;
  },
});
