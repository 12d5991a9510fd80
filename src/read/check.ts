/**
 * `seam check`: a CI gate over ledgers. Every rule is judged over the
 * operations of all the files given (after the filters), and `verify` (each
 * file verifies as `seam verify` says) is a rule of its own, always there.
 * Each result names the rule, says what was observed, and lists the lines of
 * the operations that break it.
 *
 * Rules, as flags and in a rules file (JSON or YAML, the same names; `_`
 * for `-` allowed):
 *   expect-tool NAME | NAME=N   called at least once / exactly N times (repeatable)
 *   forbid-tool GLOB            never called (repeatable)
 *   max-errors N                at most N operations with status error
 *   max-unanswered N            at most N operations with status unanswered
 *   max-ms MS                   no single call longer than MS
 *   require-complete            every session has its session_end
 *   key VKEY                    every row is under a valid signed checkpoint
 *   no-drift                    no tool of a server changes definition (finding kind tool_drift)
 *   against LOCK                every complete tools/list matches a `seam pin` lock
 *                               (finding kinds tool_added, tool_removed, tool_changed)
 * A rule may list findings beside its lines: each with its stable `kind`.
 */
import type { Json } from "../core/json.ts";
import type { VerifyReport } from "../verify/ledger-verifier.ts";
import { inconclusiveReason } from "../verify/verify-report.ts";
import { cell } from "./cells.ts";
import { type Glob, globMatcher } from "./filters.ts";
import type { Operation } from "./read-model.ts";
import { againstLock, type LockDifference, type Redefinition, ToolDefs, type ToolLock } from "./tool-defs.ts";

export interface Rules {
  expectTool?: { name: string; times: number | null }[];
  forbidTool?: string[];
  maxErrors?: number;
  maxUnanswered?: number;
  maxMs?: number;
  requireComplete?: boolean;
  /** The verifier key (or key file) every row must be sealed by; judged from the files' seal reports. */
  key?: string;
  /** No tool of a server changes its definition (tool_digests of tools_list rows). */
  noDrift?: boolean;
  /** A `seam pin` lock file every complete tools/list must match. */
  against?: string;
}

/** One thing a rule found, with its stable kind (tool_drift, tool_added, tool_removed, tool_changed). */
export interface RuleFinding {
  kind: string;
  message: string;
  /** file:line of the rows it names. */
  where: string[];
  server: string;
  tool: string;
  /** The sessions of those rows, in the same order. */
  sessions: (string | null)[];
  /** The definition digests: before and after (tool_drift, tool_changed), or the one there is. */
  digests: string[];
}

export interface RuleResult {
  /** The rule's stable name: verify, filters, expect-tool, forbid-tool, max-errors, max-unanswered, max-ms, require-complete, key. */
  kind: string;
  /** The rule as written: `expect-tool echo=2`, `max-errors 0`, `verify a.jsonl`. */
  rule: string;
  ok: boolean;
  /** What was seen, e.g. `called 1 time`. */
  observed: string;
  /** Lines (file:line) of the operations that break it; at most LISTED, `more` counts the rest. */
  where: string[];
  more: number;
  /** What no-drift and against found, at most LISTED (`more_findings` counts the rest); only on those rules. */
  findings?: RuleFinding[];
  more_findings?: number;
}

export interface FileVerdict {
  file: string;
  report: VerifyReport;
  /** With a key: the seal report's sealed_through and unsealed_rows. */
  seal: Record<string, Json> | null;
}

const LISTED = 10;

class Hits {
  count = 0;
  where: string[] = [];
  add(op: Operation): void {
    this.count++;
    if (this.where.length < LISTED) this.where.push(`${op.file}:${op.line}`);
  }
}

/** Feed operations with `add`, then `results` with each file's verdict. */
export class Checker {
  private readonly expect: { name: string; times: number | null; hits: Hits }[];
  private readonly forbid: { glob: string; re: Glob; hits: Hits }[];
  private readonly errors = new Hits();
  private readonly unanswered = new Hits();
  private readonly slow = new Hits();
  private maxSeen: number | null = null;
  private readonly sessions = new Map<string, { first: Operation; ended: boolean }>();
  /** Operations the filters let through (every one when there are none). */
  private selected = 0;
  private readonly defs = new ToolDefs();
  private readonly drifts: Redefinition[] = [];
  private driftCount = 0;
  private readonly lockDiffs: LockDifference[] = [];
  private readonly lockSeen = new Set<string>();
  private lockCount = 0;
  private listings = 0;

  /** `lock`: the parsed file of `rules.against`. */
  constructor(
    readonly rules: Rules,
    private readonly lock?: ToolLock,
  ) {
    this.expect = (rules.expectTool ?? []).map((e) => ({ ...e, hits: new Hits() }));
    this.forbid = (rules.forbidTool ?? []).map((g) => ({ glob: g, re: globMatcher(g), hits: new Hits() }));
  }

  add(op: Operation): void {
    this.selected++;
    if (op.kind === "tools_list" && (this.rules.noDrift || this.lock !== undefined)) this.tools(op);
    if (op.kind === "tool_call" && op.name !== null) {
      for (const e of this.expect) if (e.name === op.name) e.hits.add(op);
      for (const f of this.forbid) if (f.re.test(op.name)) f.hits.add(op);
    }
    if (op.status === "error") this.errors.add(op);
    if (op.status === "unanswered") this.unanswered.add(op);
    if (op.kind === "tool_call" && op.ms !== null) {
      if (this.maxSeen === null || op.ms > this.maxSeen) this.maxSeen = op.ms;
      if (this.rules.maxMs !== undefined && op.ms > this.rules.maxMs) this.slow.add(op);
    }
    if (op.session !== null && op.kind !== "foreign") {
      const key = `${op.file}\u0000${op.session}`;
      let s = this.sessions.get(key);
      if (s === undefined) this.sessions.set(key, (s = { first: op, ended: false }));
      if (op.kind === "session_end") s.ended = true;
    }
  }

  private tools(op: Operation): void {
    const page = this.defs.add(op);
    for (const r of page.redefined) {
      this.driftCount++;
      if (this.drifts.length < LISTED) this.drifts.push(r);
    }
    const l = page.listing;
    if (l === null || l.tools === null || this.lock === undefined) return;
    this.listings++;
    for (const d of againstLock(this.lock, l)) {
      // Each difference once: the same tool added (removed, changed to the same digest) in every session is one.
      const key = [d.kind, d.server, d.tool, d.listed ?? ""].join("\u0000");
      if (this.lockSeen.has(key)) continue;
      this.lockSeen.add(key);
      this.lockCount++;
      if (this.lockDiffs.length < LISTED) this.lockDiffs.push(d);
    }
  }

  /**
   * One result per rule, after one per file's verdict. With `filters` (the filters as given): a rule that they
   * select at least one operation, so that a gate on a filter that matches nothing (a typo of a tool or a
   * session) fails rather than holds vacuously; `allowEmpty` lets it hold.
   */
  results(files: readonly FileVerdict[], filters?: { given: string; allowEmpty: boolean }): RuleResult[] {
    const out: RuleResult[] = [];
    for (const f of files) {
      const r = f.report;
      const where = r.first_break?.line != null ? [`${f.file}:${r.first_break.line}`] : [];
      const why =
        r.first_break !== null
          ? `${r.first_break.message} (${r.breaks} break${r.breaks === 1 ? "" : "s"})`
          : (inconclusiveReason(r) ?? "");
      out.push({
        kind: "verify",
        rule: `verify ${f.file}`,
        ok: r.verdict === "ok",
        observed: r.verdict === "ok" ? `ok, ${r.rows} rows` : `${r.verdict}: ${why}`,
        where,
        more: 0,
      });
    }
    if (filters !== undefined) {
      const n = this.selected;
      out.push({
        kind: "filters",
        rule: `filters ${filters.given}`,
        ok: n > 0 || filters.allowEmpty,
        observed:
          n > 0
            ? `select ${n} operation${n === 1 ? "" : "s"}`
            : `select no operation${filters.allowEmpty ? " (allowed by --allow-empty)" : " (--allow-empty to pass)"}`,
        where: [],
        more: 0,
      });
    }
    for (const e of this.expect) {
      const n = e.hits.count;
      const ok = e.times === null ? n > 0 : n === e.times;
      out.push({
        kind: "expect-tool",
        rule: `expect-tool ${e.name}${e.times === null ? "" : `=${e.times}`}`,
        ok,
        observed: `called ${times(n)}`,
        where: ok || e.times === null ? [] : e.hits.where,
        more: ok || e.times === null ? 0 : n - e.hits.where.length,
      });
    }
    for (const f of this.forbid) out.push(limit(`forbid-tool ${f.glob}`, f.hits, 0, (n) => `called ${times(n)}`));
    if (this.rules.maxErrors !== undefined)
      out.push(
        limit(`max-errors ${this.rules.maxErrors}`, this.errors, this.rules.maxErrors, (n) => `${n} with status error`),
      );
    if (this.rules.maxUnanswered !== undefined)
      out.push(
        limit(
          `max-unanswered ${this.rules.maxUnanswered}`,
          this.unanswered,
          this.rules.maxUnanswered,
          (n) => `${n} unanswered`,
        ),
      );
    if (this.rules.maxMs !== undefined) {
      const r = limit(`max-ms ${this.rules.maxMs}`, this.slow, 0, (n) => `${n} longer`);
      r.observed = `${this.slow.count} call${this.slow.count === 1 ? "" : "s"} longer, the longest ${this.maxSeen ?? 0} ms`;
      out.push(r);
    }
    if (this.rules.requireComplete) {
      const open = new Hits();
      for (const s of this.sessions.values()) if (!s.ended) open.add(s.first);
      const total = this.sessions.size;
      out.push({
        kind: "require-complete",
        rule: "require-complete",
        ok: open.count === 0,
        observed: `${total - open.count} of ${total} session${total === 1 ? "" : "s"} ended`,
        where: open.where,
        more: open.count - open.where.length,
      });
    }
    if (this.rules.key !== undefined) {
      for (const f of files) {
        const sealedThrough = f.seal?.sealed_through;
        const unsealed = f.seal?.unsealed_rows;
        const st = typeof sealedThrough === "number" ? sealedThrough : 0;
        const un = typeof unsealed === "number" ? unsealed : f.report.rows;
        const ok = f.report.verdict !== "broken" && st > 0 && un === 0;
        out.push({
          kind: "key",
          rule: `key ${f.file}`,
          ok,
          observed:
            st === 0
              ? "nothing sealed"
              : `sealed through line ${st}; ${un} row${un === 1 ? "" : "s"} after it unsealed`,
          where: ok || st === 0 ? [] : [`${f.file}:${st + 1}`],
          more: 0,
        });
      }
    }
    if (this.rules.noDrift) {
      const n = this.driftCount;
      const servers = this.defs.servers.size;
      const unjudged =
        this.defs.pagesWithout > 0
          ? `; ${this.defs.pagesWithout} tools/list page${this.defs.pagesWithout === 1 ? "" : "s"} without tool_digests not judged`
          : "";
      out.push({
        kind: "no-drift",
        rule: "no-drift",
        ok: n === 0,
        observed:
          (servers === 0
            ? "no tool definitions recorded (no tools_list row with tool_digests)"
            : n === 0
              ? `no tool changed definition (${servers} server${servers === 1 ? "" : "s"})`
              : `${n} tool definition${n === 1 ? "" : "s"} changed`) + unjudged,
        where: this.drifts.map((d) => `${d.to.file}:${d.to.line}`),
        more: n - this.drifts.length,
        findings: this.drifts.map(driftFinding),
        more_findings: n - this.drifts.length,
      });
    }
    if (this.lock !== undefined) {
      const n = this.lockCount;
      const l = this.listings;
      out.push({
        kind: "against",
        rule: `against ${this.rules.against ?? "lock"}`,
        ok: n === 0,
        observed:
          l === 0
            ? "no complete tools/list with tool_digests to compare"
            : n === 0
              ? `${l} tools/list listing${l === 1 ? "" : "s"} match the lock`
              : `${n} difference${n === 1 ? "" : "s"} from the lock in ${l} listing${l === 1 ? "" : "s"}`,
        where: this.lockDiffs.map((d) => d.at),
        more: n - this.lockDiffs.length,
        findings: this.lockDiffs.map(lockFinding),
        more_findings: n - this.lockDiffs.length,
      });
    }
    return out;
  }
}

function sessionText(s: string | null): string {
  return s === null ? "no session" : `session ${s}`;
}

function driftFinding(d: Redefinition): RuleFinding {
  return {
    kind: "tool_drift",
    message:
      `tool ${JSON.stringify(d.tool)} of server ${JSON.stringify(d.server)} changed definition between ` +
      `${d.from.file}:${d.from.line} (${sessionText(d.from.session)}) and ` +
      `${d.to.file}:${d.to.line} (${sessionText(d.to.session)})`,
    where: [`${d.from.file}:${d.from.line}`, `${d.to.file}:${d.to.line}`],
    server: d.server,
    tool: d.tool,
    sessions: [d.from.session, d.to.session],
    digests: [d.from.digest, d.to.digest],
  };
}

function lockFinding(d: LockDifference): RuleFinding {
  const what =
    d.kind === "tool_added"
      ? "listed, not in the lock,"
      : d.kind === "tool_removed"
        ? "in the lock, not listed"
        : "changed definition from the lock's";
  return {
    kind: d.kind,
    message: `tool ${JSON.stringify(d.tool)} of server ${JSON.stringify(d.server)} ${what} at ${d.at} (${sessionText(d.session)})`,
    where: [d.at],
    server: d.server,
    tool: d.tool,
    sessions: [d.session],
    digests: [d.locked, d.listed].filter((x): x is string => x !== null),
  };
}

function limit(rule: string, hits: Hits, max: number, say: (n: number) => string): RuleResult {
  const ok = hits.count <= max;
  return {
    kind: rule.split(" ")[0]!,
    rule,
    ok,
    observed: say(hits.count),
    where: ok ? [] : hits.where,
    more: ok ? 0 : hits.count - hits.where.length,
  };
}

function times(n: number): string {
  return `${n} time${n === 1 ? "" : "s"}`;
}

/** One line per rule: `pass  max-errors 0: 0 with status error` or `FAIL  forbid-tool rm*: called 2 times (a.jsonl:4, a.jsonl:9)`. */
export function ruleLine(r: RuleResult): string {
  const at =
    r.where.length === 0
      ? ""
      : ` (${r.where.map((w) => cell(w, 200)).join(", ")}${r.more > 0 ? `, and ${r.more} more` : ""})`;
  const head = `${r.ok ? "pass" : "FAIL"}  ${cell(r.rule, 200)}: ${cell(r.observed, 400)}${at}`;
  if (r.findings === undefined || r.findings.length === 0) return head;
  const more = r.more_findings ?? 0;
  const lines = r.findings.map((f) => `      ${f.kind}: ${cell(f.message, 800)}`);
  return [head, ...lines, ...(more > 0 ? [`      and ${more} more`] : [])].join("\n");
}

/**
 * A JUnit XML report: one test suite, one test case per rule, a <failure>
 * for each rule that does not hold. `command`: the seam command whose
 * report it is (`check`; `replay`, a test case per call).
 */
export function junitXml(results: readonly RuleResult[], seconds = 0, command = "check"): string {
  const failures = results.filter((r) => !r.ok).length;
  const suite = `seam ${command}`;
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${suite}" tests="${results.length}" failures="${failures}" errors="0" time="${seconds.toFixed(3)}">`,
    `  <testsuite name="${suite}" tests="${results.length}" failures="${failures}" errors="0" skipped="0" time="${seconds.toFixed(3)}">`,
  ];
  for (const r of results) {
    const name = xml(r.rule);
    if (r.ok) {
      lines.push(`    <testcase classname="seam.${command}" name="${name}"/>`);
    } else {
      lines.push(`    <testcase classname="seam.${command}" name="${name}">`);
      lines.push(`      <failure message="${xml(r.observed)}" type="rule">${xml(ruleLine(r))}</failure>`);
      lines.push("    </testcase>");
    }
  }
  lines.push("  </testsuite>", "</testsuites>", "");
  return lines.join("\n");
}

/** Text for an XML attribute or element: markup escaped, and nothing XML 1.0 forbids (cell escapes control characters). */
function xml(s: string): string {
  return cell(s, 2000)
    .replace(/[\ud800-\udfff]/g, "\ufffd")
    .replace(/[\ufffe\uffff]/g, "\ufffd")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}

/** The rule names of a rules file and the flags, each with its spelling in the other places. */
export const RULE_KEYS = [
  "expect-tool",
  "forbid-tool",
  "max-errors",
  "max-unanswered",
  "max-ms",
  "require-complete",
  "key",
  "no-drift",
  "against",
] as const;

/**
 * Rules from a rules file's parsed content (an object of RULE_KEYS, `_` or
 * `-`), or an error message naming what is wrong.
 */
export function rulesFromObject(v: unknown): Rules | string {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return "a rules file holds one object of rules";
  const r: Rules = {};
  for (const [k0, val] of Object.entries(v as Record<string, unknown>)) {
    const k = k0.replace(/_/g, "-");
    switch (k) {
      case "expect-tool": {
        const list = Array.isArray(val) ? val : [val];
        const parsed: { name: string; times: number | null }[] = [];
        for (const x of list) {
          const e = typeof x === "string" ? parseExpect(x) : null;
          if (e === null) return `expect-tool takes NAME or NAME=N, not ${JSON.stringify(x)}`;
          parsed.push(e);
        }
        r.expectTool = parsed;
        break;
      }
      case "forbid-tool": {
        const list = Array.isArray(val) ? val : [val];
        if (!list.every((x) => typeof x === "string" && x !== "")) return "forbid-tool takes a glob or a list of them";
        r.forbidTool = list as string[];
        break;
      }
      case "max-errors":
      case "max-unanswered":
      case "max-ms": {
        if (typeof val !== "number" || !Number.isFinite(val) || val < 0 || (k !== "max-ms" && !Number.isInteger(val)))
          return `${k} takes a number of at least 0, not ${JSON.stringify(val)}`;
        if (k === "max-errors") r.maxErrors = val;
        else if (k === "max-unanswered") r.maxUnanswered = val;
        else r.maxMs = val;
        break;
      }
      case "require-complete":
        if (typeof val !== "boolean") return `require-complete takes true or false, not ${JSON.stringify(val)}`;
        r.requireComplete = val;
        break;
      case "key":
        if (typeof val !== "string" || val === "") return "key takes a verifier key or a key file";
        r.key = val;
        break;
      case "no-drift":
        if (typeof val !== "boolean") return `no-drift takes true or false, not ${JSON.stringify(val)}`;
        r.noDrift = val;
        break;
      case "against":
        if (typeof val !== "string" || val === "") return "against takes a lock file (written by seam pin)";
        r.against = val;
        break;
      default:
        return `unknown rule ${JSON.stringify(k0)} (rules: ${RULE_KEYS.join(", ")})`;
    }
  }
  return r;
}

/** `NAME` (at least once) or `NAME=N` (exactly N times); null when malformed. */
export function parseExpect(s: string): { name: string; times: number | null } | null {
  const eq = s.lastIndexOf("=");
  if (eq < 0) return s === "" ? null : { name: s, times: null };
  const name = s.slice(0, eq);
  const n = s.slice(eq + 1);
  if (name === "" || !/^\d+$/.test(n) || !Number.isSafeInteger(Number(n))) return null;
  return { name, times: Number(n) };
}

/** Flags override the file, lists add up. */
export function mergeRules(file: Rules, flags: Rules): Rules {
  return {
    ...file,
    ...Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== undefined)),
    expectTool: [...(file.expectTool ?? []), ...(flags.expectTool ?? [])],
    forbidTool: [...(file.forbidTool ?? []), ...(flags.forbidTool ?? [])],
  };
}
