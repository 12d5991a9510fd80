/**
 * How a `seam verify` report is shown: the human text, the `--json` object and
 * the exit status. Pure functions of the report; the command decides where
 * they go.
 */
import { EXIT } from "../base/exit.ts";
import { terminalText } from "../base/terminal-text.ts";
import type { BreakKind } from "../format/kinds.ts";
import type { SessionReport, Verdict, VerifyReport } from "./ledger-verifier.ts";

/** Exit status of one report: ok 0, broken 1, inconclusive 3. */
export function exitCodeFor(r: VerifyReport): number {
  return r.verdict === "ok" ? EXIT.OK : r.verdict === "broken" ? EXIT.FAIL : EXIT.INCONCLUSIVE;
}

/** The worst of several exit statuses: broken (1) over inconclusive (3) over ok (0). */
export function worstExit(codes: readonly number[]): number {
  const rank = (c: number) => (c === EXIT.FAIL ? 2 : c === EXIT.INCONCLUSIVE ? 1 : 0);
  let worst: number = EXIT.OK;
  for (const c of codes) if (rank(c) > rank(worst)) worst = c;
  return worst;
}

/**
 * The `--json` object: the file, then the report's fields a machine reads (not its progress counters), with
 * `first_break` as the format's reference verifier prints it.
 */
export type JsonReport = { file: string } & Pick<
  VerifyReport,
  | "ok"
  | "rows"
  | "chained"
  | "prechain"
  | "breaks"
  | "break_kinds"
  | "verified_scope"
  | "head"
  | "sessions"
  | "findings"
  | "finding_kinds"
  | "notes"
  | "payloads"
> & {
    /** The first break's message, exactly as the format's reference verifier prints it ("line 3: chain mismatch"). */
    first_break: string | null;
    /** Its line (null when there is none, or for `unreadable: <reason>`). */
    first_break_line: number | null;
    /** Its kind (src/format/kinds.ts); null when there is none. */
    first_break_kind: BreakKind | null;
  };

/**
 * The `--json` object, one per file, written on one line by the command:
 *   {"file":"a.jsonl","ok":true,"rows":4,"chained":4,"prechain":0,"first_break":null,"first_break_line":null,
 *    "first_break_kind":null,"breaks":0,"break_kinds":{},"verified_scope":"full","head":"<32 hex>",
 *    "sessions":[{"id":"s1","server":"echo","rows":4,"calls":1,"statuses":{"ok":1},"complete":true}],
 *    "findings":[],"finding_kinds":[],"notes":[]}
 * `ok` is null when inconclusive; `first_break` is the reference's string "line N: …" (or
 * "unreadable: <reason>", whose first_break_line is null), `first_break_kind` its kind ("chain_mismatch");
 * `break_kinds` counts every break by kind; `finding_kinds[i]` is the kind of `findings[i]` (the kinds:
 * src/format/kinds.ts, docs/ledger-format.md).
 */
export function jsonReport(file: string, r: VerifyReport): JsonReport {
  return {
    file,
    ok: r.ok,
    rows: r.rows,
    chained: r.chained,
    prechain: r.prechain,
    first_break: r.first_break?.message ?? null,
    first_break_line: r.first_break?.line ?? null,
    first_break_kind: r.first_break?.kind ?? null,
    breaks: r.breaks,
    break_kinds: r.break_kinds,
    verified_scope: r.verified_scope,
    head: r.head,
    sessions: r.sessions,
    findings: r.findings,
    finding_kinds: r.finding_kinds,
    notes: r.notes,
    payloads: r.payloads,
  };
}

/**
 * Why a report is inconclusive, in the one wording every command uses
 * (verify, log, stats, check, report): its first finding (and how many more),
 * else that there are no rows, else its prechain rows; null when it is not
 * inconclusive.
 */
export function inconclusiveReason(r: VerifyReport): string | null {
  if (r.verdict !== "inconclusive") return null;
  if (r.findings.length > 0)
    return `${r.findings[0]!}${r.findings.length > 1 ? ` and ${r.findings.length - 1} more` : ""}`;
  if (r.rows === 0) return "no rows, so nothing is proven";
  if (r.prechain > 0) return `${r.prechain} prechain row${r.prechain === 1 ? "" : "s"} not checked`;
  return "not everything could be proven";
}

const SESSIONS_SHOWN = 20;

/**
 * The human report, e.g.
 *   ledger.jsonl: ok
 *     rows      4 (4 chained)
 *     head      0123456789abcdef0123456789abcdef
 *     sessions  1 (1 complete)
 *       s1 (echo): 4 rows, 1 call (ok 1), complete
 * and when something is wrong, after `rows`:
 *     break     line 3: chain mismatch (2 breaks)
 * and at the end `findings` and `notes`, one per line, indented under their
 * heading. `rows` adds ", P prechain skipped" (or "rejected" with --strict).
 * `extra` lines (the checkpoint layer's: src/checkpoint/checkpoint-verifier.ts) go before the findings.
 * Control characters from the ledger (session ids, servers) are shown escaped,
 * so a hostile file cannot drive the terminal. Colour (the verdict only) when
 * `color`.
 */
export function humanReport(
  file: string,
  r: VerifyReport,
  opts: { color?: boolean; strict?: boolean; extra?: readonly string[] } = {},
): string {
  const out: string[] = [];
  out.push(`${terminalText(file)}: ${paint(r.verdict, opts.color === true)}`);
  const why = inconclusiveReason(r);
  if (why !== null) out.push(`  why       ${terminalText(why)}`);
  const pre = r.prechain > 0 ? `, ${r.prechain} prechain ${opts.strict ? "rejected" : "skipped"}` : "";
  out.push(`  rows      ${r.rows} (${r.chained} chained${pre})`);
  if (r.first_break !== null) {
    out.push(`  break     ${terminalText(r.first_break.message)} (${r.breaks} break${r.breaks === 1 ? "" : "s"})`);
  }
  out.push(`  head      ${r.head === null ? "none" : terminalText(r.head)}`);
  if (r.sessions.length > 0) {
    const complete = r.sessions.filter((s) => s.complete).length;
    out.push(`  sessions  ${r.sessions.length} (${complete} complete)`);
    for (const s of r.sessions.slice(0, SESSIONS_SHOWN)) out.push(`    ${sessionLine(s)}`);
    if (r.sessions.length > SESSIONS_SHOWN) out.push(`    … ${r.sessions.length - SESSIONS_SHOWN} more`);
  }
  const p = r.payloads;
  if (p !== undefined)
    out.push(
      `  payloads  ${p.checked} checked${p.mismatched > 0 ? ` (${p.mismatched} mismatched)` : ""}, ${p.erased} erased, ${p.absent} absent`,
    );
  for (const l of opts.extra ?? []) out.push(terminalText(l));
  if (r.findings.length > 0) {
    out.push("  findings");
    for (const f of r.findings) out.push(`    ${terminalText(f)}`);
  }
  if (r.notes.length > 0) {
    out.push("  notes");
    for (const n of r.notes) out.push(`    ${terminalText(n)}`);
  }
  return `${out.join("\n")}\n`;
}

function sessionLine(s: SessionReport): string {
  const server = s.server === null ? "" : ` (${terminalText(s.server)})`;
  const statuses = Object.entries(s.statuses)
    .map(([k, v]) => `${terminalText(k)} ${v}`)
    .join(", ");
  const calls = `${s.calls} call${s.calls === 1 ? "" : "s"}${statuses ? ` (${statuses})` : ""}`;
  const o = s.operations;
  const ops =
    o === undefined
      ? ""
      : `, ${o.ended + o.abandoned} operation${o.ended + o.abandoned === 1 ? "" : "s"}${o.abandoned > 0 ? ` (${o.abandoned} abandoned)` : ""}`;
  return `${terminalText(s.id)}${server}: ${s.rows} row${s.rows === 1 ? "" : "s"}, ${calls}${ops}, ${s.complete ? "complete" : "incomplete"}`;
}

function paint(v: Verdict, color: boolean): string {
  if (!color) return v;
  const code = v === "ok" ? "32" : v === "broken" ? "1;31" : "33";
  return `\x1b[${code}m${v}\x1b[0m`;
}
