/**
 * `seam report`: ledgers in, one HTML file out. The operations come from the
 * reading model (src/read/stream.ts), which verifies as it reads, so each
 * carries whether the chain vouches for it (and, with keys, whether a signed
 * checkpoint seals it); the banner is `seam verify`'s own report of each file,
 * word for word; the per-tool figures are `seam stats`'.
 */
import { statSync } from "node:fs";
import { checkpointLines } from "../checkpoint/checkpoint-report.ts";
import type { CheckpointReport } from "../checkpoint/checkpoint-verifier.ts";
import type { Verifier } from "../checkpoint/note.ts";
import { lineForm } from "../core/canonical/index.ts";
import type { Json } from "../core/json.ts";
import type { Filters } from "../read/filters.ts";
import type { Operation } from "../read/read-model.ts";
import { StatsAccumulator } from "../read/stats.ts";
import { type ReadOptions, readLedgerBatches } from "../read/stream.ts";
import type { Verdict, VerifyReport } from "../verify/ledger-verifier.ts";
import { humanReport } from "../verify/verify-report.ts";
import { ReportWriter } from "./html.ts";
import { LineTap } from "./line-tap.ts";
import type { PageFile, PageOp, PageTool } from "./page-data.ts";

export interface ReportOptions {
  paths: string[];
  out: string;
  title?: string;
  filters?: Filters;
  /** The filters as given on the command line, for the page to say which apply. */
  filterText?: string;
  keys?: readonly Verifier[];
  /** The --key argument as given: the banner's re-verify command repeats it. */
  keyArg?: string;
  strict?: boolean;
  isWriterAlive?: (pid: number, host: string) => boolean;
  /** Where the reader's verifier runs (ReadOptions.verifier). */
  verifier?: ReadOptions["verifier"];
  /** "seam 0.1.0". */
  seam: string;
  /** Only the last N operations that pass the filters. */
  last?: number;
  /** The time the page says it was made (tests pin it). */
  now?: Date;
}

export interface ReportResult {
  operations: number;
  bytes: number;
  files: { path: string; report: VerifyReport }[];
}

/** Writes the report; throws only for what stops it being written (the output cannot be created). */
export async function writeReport(o: ReportOptions): Promise<ReportResult> {
  const w = new ReportWriter(o.out, headRoom(o.paths));
  const files: PageFile[] = [];
  const reports: { path: string; report: VerifyReport }[] = [];
  const stats = new StatsAccumulator("tool");
  const tap = new LineTap();
  // Files are read one after the other: the index of the one being read.
  let fi = 0;
  try {
    const lineBytes = (line: number) => tap.bytes(line);
    for await (const batch of readLedgerBatches(o.paths, {
      filters: o.filters,
      keys: o.keys,
      strict: o.strict,
      isWriterAlive: o.isWriterAlive,
      verifier: o.verifier,
      last: o.last,
      chunks: (path) => tap.chunks(path),
    }))
      for (const ev of batch) {
        if (ev.type === "op") {
          const op = ev.op;
          w.add(pageOp(fi, op, lineBytes));
          if (op.args !== undefined || op.result !== undefined) w.markRaw();
          if (op.kind === "session_end" && op.session !== null) {
            w.endSession(fi, op.session, {
              reason: op.reason,
              exit: op.exit_code === undefined ? null : showJson(op.exit_code),
              end: Number.isNaN(op.time) ? null : op.time,
            });
          }
          stats.add(op);
        } else if (ev.type === "end") {
          for (const s of ev.report.sessions) w.sessionComplete(fi, s.id, s.complete);
          files.push(pageFile(ev.file, ev.report, ev.seal, o));
          reports.push({ path: ev.file, report: ev.report });
          fi++;
        }
      }
  } catch (e) {
    w.discard();
    throw e;
  }
  const tools: PageTool[] = stats.result().groups.map((g) => ({
    server: g.server,
    tool: g.tool,
    calls: g.calls,
    statuses: g.statuses,
    error_rate: g.error_rate,
    p50: g.p50_ms,
    p95: g.p95_ms,
    p99: g.p99_ms,
    max: g.max_ms,
    vouched: g.vouched,
  }));
  const operations = w.count;
  const bytes = w.finish(
    {
      title: o.title ?? defaultTitle(o.paths),
      seam: o.seam,
      filters: o.filterText ?? "",
      generated: (o.now ?? new Date()).toISOString(),
    },
    files,
    tools,
  );
  return { operations, bytes, files: reports };
}

/**
 * Room to keep for the page's head in front of the operations (ReportWriter):
 * none for ledgers under 16 MiB in all, whose report is cheap to copy once
 * more; else about 0.26% of their size and 128 KiB for the page script (the
 * head of a report of wrap-shaped sessions is about 0.1% of its ledger's
 * size). A head that does not fit is copied in front as for a small report.
 */
export function headRoom(paths: readonly string[]): number {
  let bytes = 0;
  for (const p of paths) {
    if (p === "-") continue;
    try {
      bytes += statSync(p).size;
    } catch {
      // Unreadable: its report says so; it adds nothing to the page.
    }
  }
  return bytes < 16 << 20 ? 0 : Math.ceil(bytes / 384) + (128 << 10);
}

function defaultTitle(paths: string[]): string {
  return `seam report: ${paths.length === 1 ? paths[0] : `${paths.length} ledgers`}`;
}

/**
 * One operation as the page holds it. `lineBytes(n)` gives line n as the
 * file holds it while the reader still has it; a row it no longer has is
 * written out again from its parsed form, in the ledger's own form but
 * without its chain value.
 */
export function pageOp(
  file: number,
  op: Operation,
  lineBytes: (line: number) => Uint8Array | null = () => null,
): PageOp {
  const rows: (Uint8Array | string)[] = [];
  for (let k = 0; k < op.lines.length; k++)
    rows.push(lineBytes(op.lines[k]!) ?? showJson(k < op.earlier.length ? op.earlier[k]! : op.row));
  return {
    file,
    line: op.line,
    ts: Number.isNaN(op.time) ? null : op.time,
    session: op.session,
    server: op.server,
    kind: op.kind,
    name: op.name,
    status: op.status,
    ms: op.ms,
    rpcId: op.rpc_id === undefined ? null : idJson(op.rpc_id),
    vouched: op.vouched,
    sealed: op.sealed === true,
    lines: op.lines,
    rows,
  };
}

/** An id as the ledger line writes it (a plain integer without the general writer). */
function idJson(v: Json): string {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? String(v) : showJson(v);
}

/** The banner of one file: the lines of `seam verify`'s human report, and the command that repeats it. */
export function pageFile(
  path: string,
  report: VerifyReport,
  seal: Record<string, Json> | null,
  o: Pick<ReportOptions, "keyArg" | "strict">,
): PageFile {
  const extra = seal === null ? [] : checkpointLines(sealFromJson(seal));
  const verify = humanReport(path, report, { strict: o.strict === true, extra });
  const said = (label: string): string | null => {
    const m = new RegExp(`^  ${label} +(.*)$`, "m").exec(verify);
    return m === null ? null : m[1]!;
  };
  return {
    path,
    verdict: report.verdict as Verdict,
    rows_line: said("rows") ?? String(report.rows),
    sessions_line: said("sessions") ?? "0",
    first_break: report.first_break,
    breaks: report.breaks,
    head: report.head,
    sealed: seal === null ? null : said("sealed"),
    reverify: reverifyCommand(path, o.keyArg, o.strict === true),
    verify,
  };
}

/** `seam verify FILE [--key VKEY] [--strict]`, quoted for a POSIX shell. */
export function reverifyCommand(path: string, keyArg: string | undefined, strict: boolean): string {
  const parts = ["seam", "verify", shellQuote(path)];
  if (keyArg !== undefined) parts.push("--key", shellQuote(keyArg));
  if (strict) parts.push("--strict");
  return parts.join(" ");
}

export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** A value as the ledger line writes it (never throws). */
function showJson(v: Json): string {
  try {
    return lineForm(v);
  } catch {
    return String(v);
  }
}

/** The checkpoint report back from its --json form, so the banner gets `seam verify --key`'s own words (checkpointLines). */
function sealFromJson(j: Record<string, Json>): CheckpointReport {
  const n = (v: Json | undefined): number => (typeof v === "number" ? v : 0);
  const get = (k: string): Json | undefined => (j instanceof Map ? (j as Map<string, Json>).get(k) : j[k]);
  const keys = get("keys");
  const witness = get("witness") as { file: string; checkpoints: number } | null | undefined;
  const evidence = get("evidence");
  return {
    origin: (get("origin") as string | null) ?? null,
    lines: 0,
    checkpoints: n(get("checkpoints")),
    valid: n(get("valid")),
    sealed_through: n(get("sealed_through")),
    unsealed_rows: n(get("unsealed_rows")),
    latest: null,
    keys: Array.isArray(keys) ? keys.filter((k): k is string => typeof k === "string") : [],
    witness: witness ?? null,
    remembered: null,
    witnessed: null,
    breaks: [],
    findings: [],
    finding_kinds: [],
    evidence: Array.isArray(evidence)
      ? (evidence as unknown as { message: string; checkpoints: { label: string; note: string }[] }[]).map((e) => ({
          message: e.message,
          evidence: e.checkpoints,
        }))
      : [],
    notes: [],
  };
}
