/**
 * The human form of `seam stats`: a table of groups, sorted by calls, then
 * the sessions, e.g.
 *   TOOL                    CALLS     OK  ERROR  UNANS  CANC  ERR%    P50    P95    P99    MAX  VOUCHED
 *   example echo                2      2      0      0     0    0%  0.277  0.376  0.376  0.376  2
 * Ledger strings go through `cell` (escaped, cut); `--json` has them whole.
 */
import { cell, fit } from "./escape.ts";
import type { Stats } from "./stats.ts";

const KEY_WIDTH = 28;

export function statsText(s: Stats): string {
  const out: string[] = [];
  const title = { tool: "SERVER TOOL", server: "SERVER", session: "SESSION", day: "DAY (UTC)" }[s.by];
  out.push(
    `${fit(title, KEY_WIDTH)}  ${r("CALLS", 6)}  ${r("OK", 6)}  ${r("ERROR", 6)}  ${r("UNANS", 6)}  ${r("CANC", 5)}  ${r("ERR%", 5)}  ${r("P50", 8)}  ${r("P95", 8)}  ${r("P99", 8)}  ${r("MAX", 8)}  ${r("IN", 9)}  ${r("OUT", 9)}  FIRST / LAST (UTC)`,
  );
  for (const g of s.groups) {
    out.push(
      `${fit(g.key, KEY_WIDTH)}  ${r(g.calls, 6)}  ${r(g.ok, 6)}  ${r(g.error, 6)}  ${r(g.unanswered, 6)}  ${r(g.cancelled, 5)}  ${r(pct(g.error_rate), 5)}  ${r(ms(g.p50_ms), 8)}  ${r(ms(g.p95_ms), 8)}  ${r(ms(g.p99_ms), 8)}  ${r(ms(g.max_ms), 8)}  ${r(g.bytes_in ?? "-", 9)}  ${r(g.bytes_out ?? "-", 9)}  ${cell(g.first ?? "-", 30)} / ${cell(g.last ?? "-", 30)}`,
    );
  }
  if (s.groups.length === 0) out.push("(no calls)");
  out.push("");
  const sw = Math.min(64, Math.max(7, ...s.sessions.map((x) => x.session.length)));
  out.push(
    `${fit("SESSION", sw)}  ${fit("SERVER", 14)}  ${fit("BEGIN (UTC)", 24)}  ${r("DURATION", 10)}  ${r("CALLS", 6)}  ENDED`,
  );
  for (const x of s.sessions) {
    const ended =
      x.ended === null
        ? "(no session_end)"
        : `${cell(x.ended, 40)}${x.exit_code === null ? "" : `, exit ${cell(String(x.exit_code), 20)}`}`;
    out.push(
      `${fit(x.session, sw)}  ${fit(x.server ?? "-", 14)}  ${fit(x.begin ?? "-", 24)}  ${r(x.duration_ms === null ? "-" : duration(x.duration_ms), 10)}  ${r(x.calls, 6)}  ${ended}`,
    );
  }
  if (s.sessions.length === 0) out.push("(no sessions)");
  out.push("");
  return `${out.join("\n")}\n`;
}

function r(v: string | number, w: number): string {
  return String(v).padStart(w);
}

function pct(x: number): string {
  const p = x * 100;
  return `${p === 0 || p === 100 || p >= 10 ? p.toFixed(0) : p.toFixed(1)}%`;
}

function ms(v: number | null): string {
  if (v === null) return "-";
  if (v >= 100) return v.toFixed(0);
  if (v >= 10) return v.toFixed(1);
  return v.toFixed(v >= 1 ? 2 : 3);
}

function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(Math.round(s - m * 60)).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`;
}
