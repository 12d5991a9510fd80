/**
 * The human form of `seam stats`: a caption saying what is counted and in
 * which order, a table of groups, then the sessions, e.g.
 *   CALLS BY TOOL (tools/call only; most calls first)
 *     SERVER  TOOL          CALLS   ERROR   ERR%      P50      P95      MAX
 *   + files   read_file         2       0     0%     7.00     12.0     12.0
 * MARK is `+` when the chain vouches for every call of the row, `!` when not.
 * The tables fit `width`: columns are left out, and the names cut, in a
 * stated order (`fitColumns`); without a width (--wide) every column is there
 * and names are whole. Ledger strings go through `cell` (escaped, cut).
 */
import { wrapText } from "../base/wrap-text.ts";
import { cell, fit } from "./cells.ts";
import type { SessionStats, Stats, StatsGroup } from "./stats.ts";

interface Column<T> {
  title: string;
  /** Its width; a name column's is what it takes at most (whole with --wide). */
  width: number;
  /** A name column: cut down to `min` before the table loses a figure. */
  min?: number;
  right?: boolean;
  value: (row: T) => string;
}

/**
 * The columns that fit `width` (after a mark of two characters), in their order. `drops` names the columns
 * to leave out, first to last, and "names" where the name columns are cut to their least; a table that still
 * does not fit has its name columns and first column only.
 */
function fitColumns<T>(columns: Column<T>[], width: number, drops: readonly string[]): Column<T>[] {
  let cols = columns.map((c) => ({ ...c }));
  const total = () => 2 + cols.reduce((n, c) => n + c.width, 0) + 2 * (cols.length - 1);
  for (const d of drops) {
    if (total() <= width) break;
    if (d === "names") {
      for (const c of cols) if (c.min !== undefined) c.width = c.min;
    } else {
      cols = cols.filter((c) => c.title !== d);
    }
  }
  // Still too wide: the last column (text, not a figure) is cut to the room left.
  const last = cols[cols.length - 1]!;
  if (total() > width && !last.right) last.width = Math.max(4, last.width - (total() - width));
  // Room left over goes back to the name columns, last to first (a tool before its server, how a session
  // ended before its id), up to what they take.
  for (const c of [...cols].reverse()) {
    const full = columns.find((x) => x.title === c.title)!.width;
    if (c.min !== undefined && c.width < full) c.width = Math.min(full, c.width + Math.max(0, width - total()));
  }
  return cols;
}

function render<T>(cols: Column<T>[], rows: readonly T[], mark: (row: T) => string): string[] {
  const line = (cells: string[], m: string) => `${m} ${cells.join("  ")}`.trimEnd();
  const out = [
    line(
      cols.map((c) => (c.right ? c.title.padStart(c.width) : fit(c.title, c.width))),
      " ",
    ),
  ];
  for (const row of rows)
    out.push(
      line(
        cols.map((c) => (c.right ? c.value(row).padStart(c.width) : fit(c.value(row), c.width))),
        mark(row),
      ),
    );
  return out;
}

/** The tables; `width` undefined: every column, names whole. */
export function statsText(s: Stats, width?: number): string {
  const wide = width === undefined;
  const longest = (xs: (string | null)[], floor: number) => Math.max(floor, ...xs.map((x) => cell(x ?? "-").length));
  const name = (title: string, full: number, min: number, value: (g: StatsGroup) => string): Column<StatsGroup> =>
    wide ? { title, width: full, value: (g) => cell(value(g)) } : { title, width: full, min, value };
  const keys: Column<StatsGroup>[] =
    s.by === "tool"
      ? [
          name(
            "SERVER",
            wide
              ? longest(
                  s.groups.map((g) => g.server),
                  6,
                )
              : 14,
            8,
            (g) => g.server ?? "-",
          ),
          name(
            "TOOL",
            wide
              ? longest(
                  s.groups.map((g) => g.tool),
                  4,
                )
              : 24,
            10,
            (g) => g.tool ?? "-",
          ),
        ]
      : [
          name(
            { server: "SERVER", session: "SESSION", day: "DAY (UTC)" }[s.by],
            wide
              ? longest(
                  s.groups.map((g) => g.key),
                  9,
                )
              : s.by === "session"
                ? 36
                : 16,
            s.by === "session" ? 8 : 10,
            (g) => g.key,
          ),
        ];
  const num = (title: string, w: number, value: (g: StatsGroup) => string | number): Column<StatsGroup> => ({
    title,
    width: w,
    right: true,
    value: (g) => String(value(g)),
  });
  const columns: Column<StatsGroup>[] = [
    ...keys,
    num("CALLS", 6, (g) => g.calls),
    num("OK", 6, (g) => g.ok),
    num("ERROR", 6, (g) => g.error),
    num("UNANS", 6, (g) => g.unanswered),
    num("CANC", 5, (g) => g.cancelled),
    num("ERR%", 5, (g) => pct(g.error_rate)),
    num("P50", 7, (g) => ms(g.p50_ms)),
    num("P95", 7, (g) => ms(g.p95_ms)),
    num("P99", 7, (g) => ms(g.p99_ms)),
    num("MAX", 7, (g) => ms(g.max_ms)),
    num("IN", 9, (g) => g.bytes_in ?? "-"),
    num("OUT", 9, (g) => g.bytes_out ?? "-"),
    { title: "FIRST (UTC)", width: 24, value: (g) => cell(g.first ?? "-", 30) },
    { title: "LAST (UTC)", width: 24, value: (g) => cell(g.last ?? "-", 30) },
  ];
  const groupDrops = [
    "LAST (UTC)",
    "FIRST (UTC)",
    "OUT",
    "IN",
    "P99",
    "CANC",
    "names",
    "UNANS",
    "OK",
    "MAX",
    "ERROR",
    "P95",
    "ERR%",
  ];
  const cols = wide ? columns : fitColumns(columns, width, groupDrops);
  const sentence = (t: string) => (wide ? [t] : wrapText(t, width));
  const out: string[] = sentence(`CALLS BY ${s.by.toUpperCase()} (tools/call only; most calls first)`);
  if (s.groups.length === 0) out.push("(no calls)");
  else out.push(...render(cols, s.groups, (g) => (g.vouched < g.calls ? "!" : "+")));
  if (s.groups.some((g) => g.vouched < g.calls))
    out.push(...sentence("! some of the row's calls are not vouched for by the chain"));
  out.push("", ...sentence("SESSIONS (most calls first)"));
  const sessionColumns: Column<SessionStats>[] = [
    {
      title: "SESSION",
      width: wide
        ? longest(
            s.sessions.map((x) => x.session),
            7,
          )
        : Math.min(
            36,
            longest(
              s.sessions.map((x) => x.session),
              7,
            ),
          ),
      min: 8,
      value: (x) => (wide ? cell(x.session) : x.session),
    },
    {
      title: "SERVER",
      width: wide
        ? longest(
            s.sessions.map((x) => x.server),
            6,
          )
        : 14,
      min: 8,
      value: (x) => (wide ? cell(x.server ?? "-") : (x.server ?? "-")),
    },
    { title: "BEGIN (UTC)", width: 24, value: (x) => x.begin ?? "-" },
    {
      title: "DURATION",
      width: 8,
      right: true,
      value: (x) => (x.duration_ms === null ? "-" : duration(x.duration_ms)),
    },
    { title: "CALLS", width: 6, right: true, value: (x) => String(x.calls) },
    { title: "ENDED", width: wide ? 60 : 24, min: 18, value: ended },
  ];
  const scols = wide ? sessionColumns : fitColumns(sessionColumns, width, ["names", "DURATION", "BEGIN (UTC)"]);
  if (s.sessions.length === 0) out.push("(no sessions)");
  else out.push(...render(scols, s.sessions, () => " ").map((l) => l.slice(2)));
  out.push("");
  return `${out.join("\n")}\n`;
}

function ended(x: SessionStats): string {
  return x.ended === null
    ? "(no session_end)"
    : `${cell(x.ended, 40)}${x.exit_code === null ? "" : `, exit ${cell(String(x.exit_code), 20)}`}`;
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
