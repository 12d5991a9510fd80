/**
 * How `seam log` shows operations: the human columns and the `--json`
 * (NDJSON) objects. Pure functions; the command decides where they go.
 *
 * Columns, separated by two spaces, fixed widths so a stream lines up:
 *   MARK  `+` vouched for by the chain, `S` also sealed by a signed checkpoint
 *         (--key), `!` not vouched for
 *   TIME  local `YYYY-MM-DD 16:15:51.412` (with --utc: `YYYY-MM-DDT16:15:51.412Z`)
 *   SESSION  first 8 characters (--wide: all)
 *   SERVER, OPERATION (cut to 14 and 28 unless --wide), STATUS, MS, ID
 *   and with a --raw ledger, a preview of arguments → result.
 */
import { memo } from "../base/memo.ts";
import { terminalJson } from "../base/terminal-text.ts";
import { lineForm } from "../core/canonical/index.ts";
import type { Json } from "../core/json.ts";
import type { VerifyReport } from "../verify/verifier.ts";
import { cell, fit } from "./escape.ts";
import type { Operation } from "./operations.ts";

export interface LineStyle {
  utc?: boolean;
  wide?: boolean;
  color?: boolean;
  /** Characters of the arguments → result preview; 0: none. */
  rawWidth?: number;
}

const W = { session: 8, server: 14, name: 28, status: 14, ms: 9 };

export function header(style: LineStyle): string {
  const time = style.utc ? fit("TIME (UTC)", 24) : fit("TIME", 23);
  const session = style.wide ? "SESSION" : fit("SESSION", W.session);
  const server = style.wide ? "SERVER" : fit("SERVER", W.server);
  const name = style.wide ? "OPERATION" : fit("OPERATION", W.name);
  return `  ${time}  ${session}  ${server}  ${name}  ${fit("STATUS", W.status)}  ${"MS".padStart(W.ms)}  ID`;
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
  private readonly wide: boolean;
  private readonly color: boolean;
  private readonly rawWidth: number;
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
    this.wide = style.wide === true;
    this.color = style.color === true;
    this.rawWidth = style.rawWidth ?? 0;
  }

  line(op: Operation): string {
    const mark = op.sealed === true ? "S" : op.vouched ? "+" : "!";
    const time = this.time(op);
    const session = memo(
      this.sessions,
      op.session ?? "-",
      (s) => (this.wide ? cell(s) : fit(short(s), W.session)),
      KEPT,
    );
    const server = memo(this.servers, op.server ?? "-", (s) => (this.wide ? cell(s) : fit(s, W.server)), KEPT);
    const name = memo(this.names, op.name ?? "-", (s) => (this.wide ? cell(s) : fit(s, W.name)), KEPT);
    const statusText = memo(this.statuses, op.status ?? "-", (s) => fit(s, W.status), KEPT);
    const status = this.color ? paint(op.status, statusText) : statusText;
    const ms = (op.ms === null ? "-" : msText(op.ms)).padStart(W.ms);
    const id = op.rpc_id === undefined ? "-" : idText(op.rpc_id);
    let line = `${this.color && mark === "!" ? "\x1b[1;31m!\x1b[0m" : mark} ${time}  ${session}  ${server}  ${name}  ${status}  ${ms}  ${id}`;
    if (this.rawWidth > 0 && (op.args !== undefined || op.result !== undefined)) {
      const preview = `${op.args === undefined ? "" : jsonText(op.args)} → ${op.result === undefined ? "" : jsonText(op.result)}`;
      line += `  ${cell(preview, this.rawWidth)}`;
    }
    return line;
  }

  /** timeText, made once per second of time: the ms are put into the text of the second. */
  private time(op: Operation): string {
    const t = op.time;
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

/** The ID column: the id as JSON, cut to 40. */
function idText(id: Json): string {
  return typeof id === "number" && Number.isSafeInteger(id) && id >= 0 ? String(id) : cell(jsonText(id), 40);
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
  if (r.first_break !== null)
    parts.push(`${cell(r.first_break.message, 400)}, ${r.breaks} break${r.breaks === 1 ? "" : "s"}`);
  else if (r.findings.length > 0)
    parts.push(`${cell(r.findings[0]!, 400)}${r.findings.length > 1 ? ` and ${r.findings.length - 1} more` : ""}`);
  else if (r.prechain > 0) parts.push(`${r.prechain} prechain rows not checked`);
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
 * result only when the ledger holds them. Values are the ledger's own (an id
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
  return id.length > W.session ? id.slice(0, W.session) : id;
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
