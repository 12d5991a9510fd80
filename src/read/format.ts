/**
 * How `seam log` shows operations: the human columns and the `--json`
 * (NDJSON) objects. Pure functions; the command decides where they go.
 *
 * Columns, separated by two spaces, fixed widths so a stream lines up:
 *   MARK  `+` vouched for by the chain, `S` also sealed by a signed checkpoint
 *         (--key), `!` not vouched for
 *   TIME  local `YYYY-MM-DD 16:15:51.412` (with --utc: `YYYY-MM-DDT16:15:51.412Z`),
 *         or without year and ms (`MM-DD 16:15:51`) when the width is short
 *   SESSION  first 8 characters (--wide: all)
 *   SERVER, OPERATION (cut unless --wide; `*` before a tool's name: its first
 *         call since a tools/list showed its definition changed), STATUS, MS, ID
 *   and with a --raw ledger, a preview of arguments → result.
 * The widths are chosen once for the output's width (`layoutFor`): the
 * columns that do not fit are left out or cut, in a stated order; --wide
 * (no width) has every column and whole values.
 */
import { memo } from "../base/memo.ts";
import { terminalJson } from "../base/terminal-text.ts";
import { lineForm } from "../core/canonical/index.ts";
import type { Json } from "../core/json.ts";
import type { VerifyReport } from "../verify/ledger-verifier.ts";
import { inconclusiveReason } from "../verify/verify-report.ts";
import { cell, fit } from "./cells.ts";
import type { Operation } from "./read-model.ts";

export interface LineStyle {
  utc?: boolean;
  /** Every column, values whole; `width` is not looked at. */
  wide?: boolean;
  color?: boolean;
  /** Characters of the arguments → result preview; 0: none; unset: the line's width (--wide: 400). */
  rawWidth?: number;
  /** Characters a line may take (not with --wide); unset: no limit. */
  width?: number;
}

/** The widths of one style's columns; 0 leaves a column out. */
export interface Layout {
  /** The whole time (with year and ms), or the short form. */
  fullTime: boolean;
  session: number;
  server: number;
  name: number;
  status: number;
  ms: number;
  /** The ID column's most characters. */
  id: number;
  /** Where a --raw ledger's preview goes: after the ID, or on a line of its own below the operation. */
  preview: "inline" | "below";
  /** The preview's most characters. */
  previewWidth: number;
}

/**
 * The columns for a width, most needed first: MARK, TIME (short), OPERATION
 * (12), STATUS (10) and MS always; then, while the line still fits, SESSION,
 * SERVER (8), OPERATION to 20, then 28, SERVER to 14, STATUS to 14, MS to 9,
 * the whole TIME, and the ID in what is left (when at least 6). A --raw
 * preview takes the rest of the line when that is at least 40, else a line
 * of its own below. The narrowest line takes 51 columns.
 */
export function layoutFor(style: LineStyle): Layout {
  if (style.wide || style.width === undefined) {
    return {
      fullTime: true,
      session: style.wide ? Number.POSITIVE_INFINITY : 8,
      server: style.wide ? Number.POSITIVE_INFINITY : 14,
      name: style.wide ? Number.POSITIVE_INFINITY : 28,
      status: 14,
      ms: 9,
      id: 40,
      preview: "inline",
      previewWidth: style.rawWidth ?? (style.wide ? 400 : 60),
    };
  }
  const width = style.width;
  const fullTime = style.utc ? 24 : 23;
  const L = { time: style.utc ? 15 : 14, session: 0, server: 0, name: 12, status: 10, ms: 7 };
  const used = () =>
    2 + L.time + (L.session && L.session + 2) + (L.server && L.server + 2) + L.name + 2 + L.status + 2 + L.ms + 2;
  const steps: (() => void)[] = [
    () => (L.session = 8),
    () => (L.server = 8),
    () => (L.name = 20),
    () => (L.name = 28),
    () => (L.server = 14),
    () => (L.status = 14),
    () => (L.ms = 9),
    () => (L.time = fullTime),
  ];
  for (const step of steps) {
    const before = { ...L };
    step();
    if (used() > width) {
      Object.assign(L, before);
      break;
    }
  }
  const left = width - used() - 2;
  const id = left >= 6 ? Math.min(40, left) : 0;
  // A preview stays on the line when there is room for one worth reading.
  const after = left - id - 2;
  const inline = style.rawWidth !== undefined || after >= 40;
  return {
    fullTime: L.time === fullTime,
    session: L.session,
    server: L.server,
    name: L.name,
    status: L.status,
    ms: L.ms,
    id,
    preview: inline ? "inline" : "below",
    previewWidth: style.rawWidth ?? (inline ? after : Math.max(20, width - PREVIEW_INDENT.length)),
  };
}

const PREVIEW_INDENT = "    ";

export function header(style: LineStyle): string {
  const L = layoutFor(style);
  const open = (s: string, w: number) => (w === Number.POSITIVE_INFINITY ? s : fit(s, w));
  const time = fit(style.utc ? "TIME (UTC)" : "TIME", L.fullTime ? (style.utc ? 24 : 23) : style.utc ? 15 : 14);
  let line = `  ${time}`;
  if (L.session > 0) line += `  ${open("SESSION", L.session)}`;
  if (L.server > 0) line += `  ${open("SERVER", L.server)}`;
  line += `  ${open("OPERATION", L.name)}  ${fit("STATUS", L.status)}  ${"MS".padStart(L.ms)}`;
  if (L.id > 0) line += "  ID";
  return line;
}

/** One operation on one line (no newline). */
export function opLine(op: Operation, style: LineStyle): string {
  let f = formatters.get(style);
  if (f === undefined) {
    f = new LineFormatter(style);
    formatters.set(style, f);
  }
  return f.line(op);
}

const formatters = new WeakMap<LineStyle, LineFormatter>();

/**
 * The columns of one style. A ledger repeats its sessions, servers, tools
 * and statuses on every line and its times to the second, so each column's
 * text is made once per value and kept (a few thousand values at most).
 */
class LineFormatter {
  private readonly utc: boolean;
  private readonly color: boolean;
  private readonly rawWidth: number;
  private readonly L: Layout;
  private readonly sessions = new Map<string, string>();
  private readonly servers = new Map<string, string>();
  private readonly names = new Map<string, string>();
  private readonly statuses = new Map<string, string>();
  /** The second `second` (epoch s) reads `secondText` + ms + `secondEnd`. */
  private second = Number.NaN;
  private secondText = "";
  private secondEnd = "";

  constructor(style: LineStyle) {
    this.utc = style.utc === true;
    this.color = style.color === true;
    this.L = layoutFor(style);
    this.rawWidth = this.L.previewWidth;
  }

  line(op: Operation): string {
    const L = this.L;
    const mark = op.sealed === true ? "S" : op.vouched ? "+" : "!";
    let line = `${this.color && mark === "!" ? "\x1b[1;31m!\x1b[0m" : mark} ${this.time(op)}`;
    if (L.session > 0)
      line += `  ${memo(this.sessions, op.session ?? "-", (s) => column(s.length > 8 && L.session === 8 ? short(s) : s, L.session), KEPT)}`;
    if (L.server > 0) line += `  ${memo(this.servers, op.server ?? "-", (s) => column(s, L.server), KEPT)}`;
    line += `  ${op.redefined ? column(`*${op.name}`, L.name) : memo(this.names, op.name ?? "-", (s) => column(s, L.name), KEPT)}`;
    const statusText = memo(this.statuses, op.status ?? "-", (s) => fit(s, L.status), KEPT);
    line += `  ${this.color ? paint(op.status, statusText) : statusText}`;
    line += `  ${(op.ms === null ? "-" : msText(op.ms)).padStart(L.ms)}`;
    if (L.id > 0) line += `  ${op.rpc_id === undefined ? "-" : idText(op.rpc_id, L.id)}`;
    if (this.rawWidth > 0 && (op.args !== undefined || op.result !== undefined)) {
      const preview = `${op.args === undefined ? "" : jsonText(op.args)} → ${op.result === undefined ? "" : jsonText(op.result)}`;
      line +=
        L.preview === "inline"
          ? `  ${cell(preview, this.rawWidth)}`
          : `\n${PREVIEW_INDENT}${cell(preview, this.rawWidth)}`;
    }
    return line;
  }

  /** timeText, made once per second of time: the ms are put into the text of the second. */
  private time(op: Operation): string {
    const t = op.time;
    if (!this.L.fullTime) return shortTime(Number.isNaN(t) ? null : t, op.ts, this.utc);
    if (Number.isNaN(t)) return timeText(op.ts, this.utc);
    const second = Math.floor(t / 1000);
    if (second !== this.second) {
      // The second's own text ends in ".000" (local) or ".000Z" (UTC): the ms go where those zeros are.
      const text = timeText(new Date(second * 1000).toISOString(), this.utc);
      const at = text.lastIndexOf(".000");
      this.second = second;
      this.secondText = text.slice(0, at + 1);
      this.secondEnd = text.slice(at + 4);
    }
    const ms = t - second * 1000;
    return `${this.secondText}${ms < 10 ? "00" : ms < 100 ? "0" : ""}${ms}${this.secondEnd}`;
  }
}

/** The ID column: the id as JSON, cut to `max`. */
function idText(id: Json, max: number): string {
  return typeof id === "number" && Number.isSafeInteger(id) && id >= 0 && String(id).length <= max
    ? String(id)
    : cell(jsonText(id), max);
}

/** A value padded to its column, or whole (escaped) in a column without a width. */
function column(s: string, width: number): string {
  return width === Number.POSITIVE_INFINITY ? cell(s) : fit(s, width);
}

/** `11-30 16:15:51` (local) or `11-30T03:24:07Z` (UTC): the time without year and ms, for a short line. */
function shortTime(t: number | null, ts: string | null, utc: boolean): string {
  if (t === null) return fit(ts ?? "-", utc ? 15 : 14);
  const full = timeText(new Date(t).toISOString(), utc);
  return utc ? `${full.slice(5, 19)}Z` : full.slice(5, 19);
}

/** The marker printed where the chain first breaks. */
export function breakLine(message: string, color = false): string {
  const text = `── ${cell(message, 400)}: rows below are not vouched for by the chain ──`;
  return color ? `\x1b[1;31m${text}\x1b[0m` : text;
}

/**
 * The verdict line, in `seam verify`'s words, e.g.
 *   `seam-demo.jsonl: ok (9 rows; 9 operations, all vouched for by the chain)`
 *   `x.jsonl: broken (line 5: chain mismatch, 1 break; 5 of 9 operations not vouched for)`
 *   `y.jsonl: inconclusive (session s1: no session_end (truncated or still running); …)`
 */
export function verdictLine(
  file: string,
  r: VerifyReport,
  counts: { operations: number; unvouched: number; sealedThrough: number | null; unreadTail?: number },
  color = false,
): string {
  const v = color ? paintVerdict(r.verdict) : r.verdict;
  const parts: string[] = [`${r.rows} row${r.rows === 1 ? "" : "s"}`];
  const why = inconclusiveReason(r);
  if (r.first_break !== null)
    parts.push(`${cell(r.first_break.message, 400)}, ${r.breaks} break${r.breaks === 1 ? "" : "s"}`);
  else if (why !== null) parts.push(cell(why, 400));
  const ops = `${counts.operations} operation${counts.operations === 1 ? "" : "s"}`;
  parts.push(
    counts.unvouched === 0
      ? `${ops}, all vouched for by the chain`
      : `${counts.unvouched} of ${ops} not vouched for by the chain`,
  );
  if (counts.sealedThrough !== null) parts.push(`sealed through line ${counts.sealedThrough}`);
  if (counts.unreadTail !== undefined && counts.unreadTail > 0)
    parts.push(`${counts.unreadTail} bytes of a line still being written not read`);
  return `${cell(file)}: ${v} (${parts.join("; ")})`;
}

/**
 * The `--json` object of an operation, fields in this order
 * (docs/reading.md, "seam log"): type "operation", file, line, lines, ts, session,
 * server, kind, evt, name, status, ms, rpc_id, op, rounds, error_code,
 * reason, exit_code, bytes_in, bytes_out, vouched, sealed, and args and
 * result only when the ledger holds them, and `redefined: true` only on a
 * call marked so. Values are the ledger's own (an id
 * of 2^64 is written as its digits); absent ones are null.
 */
export function opJson(op: Operation): string {
  // Written field by field (the same text as jsonText of the whole object): the strings a ledger repeats
  // (file, session, server, kind, evt, name, status) are made once each.
  let s = `{"type": "operation", "file": ${repeated(op.file)}, "line": ${op.line}, "lines": ${intsText(op.lines)}, "ts": ${op.ts === null ? "null" : jsonText(op.ts)}`;
  s += `, "session": ${repeated(op.session)}, "server": ${repeated(op.server)}, "kind": ${repeated(op.kind)}, "evt": ${repeated(op.evt)}`;
  s += `, "name": ${repeated(op.name)}, "status": ${repeated(op.status)}, "ms": ${valueText(op.ms)}, "rpc_id": ${valueText(op.rpc_id ?? null)}`;
  s += `, "op": ${valueText(op.op ?? null)}, "rounds": ${op.rounds}, "error_code": ${valueText(op.error_code ?? null)}, "reason": ${repeated(op.reason)}`;
  s += `, "exit_code": ${valueText(op.exit_code ?? null)}, "bytes_in": ${valueText(op.bytes_in)}, "bytes_out": ${valueText(op.bytes_out)}`;
  s += `, "vouched": ${op.vouched}, "sealed": ${op.sealed}`;
  if (op.args !== undefined) s += `, "args": ${jsonText(op.args)}`;
  if (op.result !== undefined) s += `, "result": ${jsonText(op.result)}`;
  if (op.redefined) s += `, "redefined": true`;
  return `${s}}`;
}

/** How many texts each of these caches keeps before it starts over. */
const KEPT = 4096;
const repeatedText = new Map<string, string>();

/** jsonText of a string the ledger repeats on many rows (or null), made once per value. */
function repeated(v: string | null): string {
  return v === null ? "null" : memo(repeatedText, v, jsonText, KEPT);
}

/** jsonText of a value, without the general writer for the plain ints and nulls most fields hold. */
function valueText(v: Json): string {
  if (v === null) return "null";
  if (typeof v === "number" && Number.isSafeInteger(v) && !Object.is(v, -0)) return String(v);
  return jsonText(v);
}

function intsText(lines: readonly number[]): string {
  return lines.length === 1 ? `[${lines[0]}]` : `[${lines.join(", ")}]`;
}

/** `{"type": "break", "file": …, "line": N, "message": "line N: …"}` */
export function breakJson(file: string, line: number | null, message: string): string {
  return jsonText(
    new Map<string, Json>([
      ["type", "break"],
      ["file", file],
      ["line", line],
      ["message", message],
    ]),
  );
}

/** `{"type": "verdict", "file", "verdict", "ok", "rows", "operations", "unvouched", "first_break", "breaks", "findings", "sealed_through"}` */
export function verdictJson(
  file: string,
  r: VerifyReport,
  counts: { operations: number; unvouched: number; sealedThrough: number | null },
): string {
  return jsonText(
    new Map<string, Json>([
      ["type", "verdict"],
      ["file", file],
      ["verdict", r.verdict],
      ["ok", r.ok],
      ["rows", r.rows],
      ["operations", counts.operations],
      ["unvouched", counts.unvouched],
      [
        "first_break",
        r.first_break === null
          ? null
          : new Map<string, Json>([
              ["line", r.first_break.line],
              ["message", r.first_break.message],
            ]),
      ],
      ["breaks", r.breaks],
      ["findings", r.findings],
      ["sealed_through", counts.sealedThrough],
    ]),
  );
}

/** The first characters of a session id, as git shortens a hash (no ellipsis: a prefix is what --session takes). */
function short(id: string): string {
  return id.length > 8 ? id.slice(0, 8) : id;
}

/**
 * A value as JSON text. The ledger's line form leaves DEL, C1 controls (CSI
 * among them), bidi controls, U+2028/U+2029 and lone surrogates raw inside
 * strings; here they are \u escapes too (terminalJson: valid JSON, the same
 * string), so no terminal escape reaches a terminal even through --json.
 */
export function jsonText(v: Json): string {
  let text: string;
  try {
    text = lineForm(v);
  } catch {
    text = String(v);
  }
  return terminalJson(text);
}

function msText(ms: number): string {
  if (ms >= 100) return ms.toFixed(0);
  if (ms >= 10) return ms.toFixed(1);
  return ms.toFixed(ms >= 1 ? 2 : 3);
}

/** Local `YYYY-MM-DD HH:MM:SS.mmm`, or the ISO form in UTC; a ts that is no time is shown escaped as recorded. */
export function timeText(ts: string | null, utc: boolean): string {
  const width = utc ? 24 : 23;
  if (ts === null) return fit("-", width);
  const t = Date.parse(ts);
  if (Number.isNaN(t)) return fit(ts, width);
  const d = new Date(t);
  if (utc) return d.toISOString();
  const p = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}

function paint(status: string | null, text: string): string {
  const code =
    status === "ok"
      ? "32"
      : status === "error" || status === "refused" || status === "invalid_id"
        ? "31"
        : status === null
          ? "2"
          : "33";
  return `\x1b[${code}m${text}\x1b[0m`;
}

function paintVerdict(v: string): string {
  const code = v === "ok" ? "32" : v === "broken" ? "1;31" : "33";
  return `\x1b[${code}m${v}\x1b[0m`;
}
