import { defineCommand } from "citty";
import { wrapText } from "../src/base/wrap-text.ts";
import type { Json } from "../src/core/json.ts";
import { jsonText, verdictLine } from "../src/read/format.ts";
import { STATS_BY, StatsAccumulator, type StatsBy } from "../src/read/stats.ts";
import { statsText } from "../src/read/stats-text.ts";
import { readLedgerBatches } from "../src/read/stream.ts";
import { isWriterAlive } from "../src/runtime/alive.ts";
import { runtime } from "../src/runtime/index.ts";
import { exitCodeFor, worstExit } from "../src/verify/verify-report.ts";
import { rejectUnknownFlags, unknownValue } from "./_args.ts";
import { outputWidth } from "./_out.ts";
import { colorOut, filterArgs, filtersFrom, keysFrom, requireReadable } from "./_read.ts";

const args = {
  path: { type: "positional", description: "ledger file(s); '-' reads stdin", required: true, valueHint: "PATH…" },
  by: {
    type: "string",
    description: "group calls by tool (default), server, session or day",
    valueHint: "tool|server|session|day",
  },
  json: { type: "boolean", description: "print one JSON object" },
  wide: {
    type: "boolean",
    description:
      "every column, names whole (the default fits the terminal's width, else $COLUMNS, else 80, leaving out LAST, FIRST, OUT, IN, P99, CANC, then cutting names, then leaving out UNANS, OK, MAX, ERROR, P95)",
  },
  key: {
    type: "string",
    description: "check signed checkpoints with this verifier key, as seam verify --key",
    valueHint: "VKEY",
  },
  ...filterArgs,
} as const;

export default defineCommand({
  meta: {
    name: "stats",
    description:
      "tools/call counts, statuses and latency per tool, server, session or day, verified as read (exit as seam verify)",
  },
  args,
  async run({ args: a, rawArgs }) {
    rejectUnknownFlags(rawArgs, args, "stats");
    const by = (a.by ?? "tool") as StatsBy;
    if (!STATS_BY.includes(by)) throw unknownValue("--by", String(a.by), STATS_BY);
    const paths = a._.map(String);
    const filters = filtersFrom(rawArgs, a);
    const keys = keysFrom(a.key, paths);
    requireReadable(paths);
    const width = a.wide === true ? undefined : outputWidth();
    // The verdicts are sentences: wrapped to the width the tables fit.
    const sentence = (s: string) => (width === undefined ? s : wrapText(s, width).join("\n"));
    const acc = new StatsAccumulator(by);
    const codes: number[] = [];
    const verdicts: string[] = [];
    const files: Json[] = [];
    let operations = 0;
    let unvouched = 0;
    for await (const batch of readLedgerBatches(paths, { filters, keys, isWriterAlive }))
      for (const e of batch) {
        if (e.type === "op") {
          acc.add(e.op);
          operations++;
          if (!e.op.vouched) unvouched++;
        } else if (e.type === "end") {
          codes.push(exitCodeFor(e.report));
          const counts = { operations, unvouched, sealedThrough: e.sealed_through };
          verdicts.push(sentence(verdictLine(e.file, e.report, counts, colorOut())));
          files.push({
            file: e.file,
            verdict: e.report.verdict,
            ok: e.report.ok,
            rows: e.report.rows,
            operations,
            unvouched,
            first_break:
              e.report.first_break === null
                ? null
                : { line: e.report.first_break.line, message: e.report.first_break.message },
            sealed_through: e.sealed_through,
          });
          operations = 0;
          unvouched = 0;
        }
      }
    const stats = acc.result();
    const text = a.json
      ? `${jsonText({ ...(stats as unknown as { [k: string]: Json }), files })}\n`
      : `${statsText(stats, width)}${verdicts.join("\n")}\n`;
    await runtime.stdout().write(new TextEncoder().encode(text));
    return worstExit(codes);
  },
});
