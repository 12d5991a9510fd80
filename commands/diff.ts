import { defineCommand } from "citty";
import { EXIT, UsageError } from "../src/base/exit.ts";
import type { Json } from "../src/core/json.ts";
import { cell } from "../src/read/cells.ts";
import { type DiffResult, diffSides, hasDifferences, SideCollector } from "../src/read/diff.ts";
import { jsonText, verdictLine } from "../src/read/format.ts";
import { readLedger } from "../src/read/stream.ts";
import { isWriterAlive } from "../src/runtime/alive.ts";
import { runtime } from "../src/runtime/index.ts";
import { exitCodeFor, worstExit } from "../src/verify/verify-report.ts";
import { rejectUnknownFlags } from "./_args.ts";
import { requireReadable } from "./_read.ts";

const args = {
  a: {
    type: "positional",
    description: "a ledger, or LEDGER#SESSION for one session (an id prefix will do)",
    required: true,
    valueHint: "A",
  },
  b: { type: "positional", description: "the other, the same way", required: true, valueHint: "B" },
  factor: { type: "string", description: "report p50 slowdowns of at least this factor (default 2)", valueHint: "X" },
  "min-ms": { type: "string", description: "and at least this many ms slower (default 1)", valueHint: "MS" },
  "exit-code": { type: "boolean", description: "exit 1 when anything differs (as git diff --exit-code)" },
  json: { type: "boolean", description: "print one JSON object" },
} as const;

export default defineCommand({
  meta: {
    name: "diff",
    description:
      "tools added, removed or changed (definitions), status flips and slowdowns between two ledgers or sessions, both verified",
  },
  args,
  async run({ args: a, rawArgs }) {
    rejectUnknownFlags(rawArgs, args, "diff");
    const specs = a._.map(String);
    if (specs.length !== 2) throw new UsageError("seam diff takes two ledgers (or LEDGER#SESSION), A and B");
    const factor = a.factor === undefined ? 2 : Number(a.factor);
    if (!Number.isFinite(factor) || factor <= 1)
      throw new UsageError(`--factor takes a number above 1, not ${JSON.stringify(a.factor)}`);
    const minMs = a["min-ms"] === undefined ? 1 : Number(a["min-ms"]);
    if (!Number.isFinite(minMs) || minMs < 0)
      throw new UsageError(`--min-ms takes a number of at least 0, not ${JSON.stringify(a["min-ms"])}`);
    requireReadable(specs.map((spec) => (spec.lastIndexOf("#") > 0 ? spec.slice(0, spec.lastIndexOf("#")) : spec)));
    const codes: number[] = [];
    const verdicts: string[] = [];
    const sides = [];
    for (const spec of specs) {
      const hash = spec.lastIndexOf("#");
      const path = hash > 0 ? spec.slice(0, hash) : spec;
      const session = hash > 0 ? spec.slice(hash + 1) : undefined;
      const col = new SideCollector(spec);
      let ops = 0;
      let unvouched = 0;
      for await (const e of readLedger(path, {
        filters: session ? { session: [session] } : {},
        isWriterAlive,
        verifier: "auto",
      })) {
        if (e.type === "op") {
          col.add(e.op);
          ops++;
          if (!e.op.vouched) unvouched++;
        } else if (e.type === "end") {
          codes.push(exitCodeFor(e.report));
          verdicts.push(verdictLine(e.file, e.report, { operations: ops, unvouched, sealedThrough: null }));
        }
      }
      sides.push(col.side());
    }
    const d = diffSides(sides[0]!, sides[1]!, factor, minMs);
    const text = a.json
      ? `${jsonText(d as unknown as { [k: string]: Json })}\n`
      : human(specs[0]!, specs[1]!, d, factor, verdicts);
    await runtime.stdout().write(new TextEncoder().encode(text));
    const verified = worstExit(codes);
    if (verified !== EXIT.OK) return verified;
    return a["exit-code"] && hasDifferences(d) ? EXIT.FAIL : EXIT.OK;
  },
});

/** A definition digest as people compare them: its first 12 hex digits (the JSON output has it whole). */
function shortDigest(d: string): string {
  const hex = d.slice(d.lastIndexOf(":") + 1);
  return cell(/^[0-9a-f]{64}$/.test(hex) ? hex.slice(0, 12) : d, 100);
}

function human(a: string, b: string, d: DiffResult, factor: number, verdicts: string[]): string {
  const out: string[] = [`--- ${cell(a)}`, `+++ ${cell(b)}`];
  for (const t of d.removed) out.push(`tool removed  ${cell(t, 200)}`);
  for (const t of d.added) out.push(`tool added    ${cell(t, 200)}`);
  for (const c of d.changed)
    out.push(`tool changed  ${cell(c.tool, 200)}: definition ${shortDigest(c.a)} → ${shortDigest(c.b)}`);
  // Without tool_digests (an older seam) only the whole list's digest says that something changed.
  if (d.digestChanged && d.changed.length === 0)
    out.push("tools changed the same names, another tools_digest (descriptions or schemas differ)");
  for (const f of d.flips) out.push(`status flip   ${cell(f.tool, 200)}: ${cell(f.a, 200)} → ${cell(f.b, 200)}`);
  for (const s of d.slowdowns)
    out.push(
      `slower        ${cell(s.tool, 200)}: p50 ${s.a_p50_ms} ms → ${s.b_p50_ms} ms (${s.factor.toFixed(1)}x, at least ${factor}x)`,
    );
  // Which tools were called is told, but is not a difference (--exit-code): a tool listed in both may be
  // called in one only. The closing line says so rather than "no differences" under a list of them.
  if (d.calledOnlyA.length > 0) out.push(`called in A only: ${d.calledOnlyA.map((t) => cell(t, 200)).join(", ")}`);
  if (d.calledOnlyB.length > 0) out.push(`called in B only: ${d.calledOnlyB.map((t) => cell(t, 200)).join(", ")}`);
  if (!hasDifferences(d))
    out.push(
      d.calledOnlyA.length + d.calledOnlyB.length > 0
        ? "no tools added or removed, no status flips or slowdowns (what was called differs: not a difference for --exit-code)"
        : "no differences in tools, statuses or p50",
    );
  return `${[...out, ...verdicts].join("\n")}\n`;
}
