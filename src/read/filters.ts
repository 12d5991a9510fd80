/**
 * Which operations a reader shows: `--session` (id prefix), `--server`,
 * `--tool` (globs), `--status` (any of), `--since`/`--until` (ISO time or a
 * duration back from now), `--slow` (at least this many ms). All given
 * filters must hold. Filters never hide a break marker or the verdict.
 */
import type { Operation } from "./read-model.ts";

export interface Filters {
  /** Session id prefixes (any of). */
  session?: readonly string[];
  /** Server name globs (any of). */
  server?: readonly string[];
  /** Tool name globs (any of): only tools/call operations whose tool matches. */
  tool?: readonly string[];
  /** Statuses (any of), exactly as recorded. */
  status?: readonly string[];
  /** Epoch ms: operations whose time is at or after this. */
  since?: number;
  /** Epoch ms: operations whose time is before this. */
  until?: number;
  /** Only operations that took at least this many ms. */
  slow?: number;
}

/**
 * The values `--status` knows: each status seam records for an operation
 * (docs/ledger-format.md), then each reason a session ends for (a reader's
 * status of a session_end); `signal:NAME` too (see `knownStatus`).
 */
export const KNOWN_STATUSES: readonly string[] = [
  "ok",
  "error",
  "unanswered",
  "cancelled",
  "input_required",
  "task",
  "refused",
  "invalid_id",
  "ambiguous",
  "unknown_result_type",
  "no_result",
  "client_eof",
  "child_exit",
  "spawn_failed",
  "client_delete",
  "upstream_404",
  "idle_expired",
  "proxy_stopped",
  "upstream_unreachable",
  "unknown_session",
  "initialize_rejected",
  "sessionless_initialize",
];

/**
 * Is `s` a status `--status` can match: a known one, the end reason
 * `signal:SIGNAME` of a session seam ended on a signal, or an HTTP status
 * (seam proxy's exchanges)?
 */
export function knownStatus(s: string): boolean {
  return KNOWN_STATUSES.includes(s) || /^signal:SIG[A-Z0-9]+$/.test(s) || /^[1-5][0-9][0-9]$/.test(s);
}

/** A filter set compiled once; `test` is called per operation. */
export class OpFilter {
  private readonly server: Glob[] | null;
  private readonly tool: Glob[] | null;
  private readonly status: Set<string> | null;
  readonly empty: boolean;

  constructor(private readonly f: Filters = {}) {
    this.server = f.server && f.server.length > 0 ? f.server.map(globMatcher) : null;
    this.tool = f.tool && f.tool.length > 0 ? f.tool.map(globMatcher) : null;
    this.status = f.status && f.status.length > 0 ? new Set(f.status) : null;
    this.empty =
      (f.session === undefined || f.session.length === 0) &&
      this.server === null &&
      this.tool === null &&
      this.status === null &&
      f.since === undefined &&
      f.until === undefined &&
      f.slow === undefined;
  }

  test(op: Operation): boolean {
    if (this.empty) return true;
    const f = this.f;
    if (f.session && f.session.length > 0) {
      const s = op.session;
      if (s === null || !f.session.some((p) => s.startsWith(p))) return false;
    }
    if (this.server !== null && (op.server === null || !this.server.some((r) => r.test(op.server!)))) return false;
    if (this.tool !== null) {
      if (op.kind !== "tool_call" || op.name === null || !this.tool.some((r) => r.test(op.name!))) return false;
    }
    if (this.status !== null && (op.status === null || !this.status.has(op.status))) return false;
    if (f.since !== undefined || f.until !== undefined) {
      const t = op.time;
      if (Number.isNaN(t)) return false;
      if (f.since !== undefined && t < f.since) return false;
      if (f.until !== undefined && t >= f.until) return false;
    }
    if (f.slow !== undefined && (op.ms === null || op.ms < f.slow)) return false;
    return true;
  }
}

/** A compiled glob: `test` tells whether it matches a whole string. */
export interface Glob {
  test(s: string): boolean;
}

/** One position of a glob between stars: a code point, `?` (null: any one), or a `[…]` class. */
type Atom = number | null | RegExp;

/**
 * A shell-style glob (`*`, `?`, `[abc]`, `[!abc]`) matched against the whole
 * string, code point by code point. It is matched without backtracking: the
 * pieces between stars are found in order, each at its leftmost place (the
 * first piece at the start, the last at the end), which is a match exactly
 * when one exists. So the time is linear in the string's length for a given
 * glob, where a regular expression of `*a*b*` backtracks quadratically on a
 * long name from a ledger.
 */
export function globMatcher(glob: string): Glob {
  const pieces: Atom[][] = [[]];
  const g = Array.from(glob);
  for (let i = 0; i < g.length; i++) {
    const c = g[i]!;
    if (c === "*") pieces.push([]);
    else if (c === "?") pieces.at(-1)!.push(null);
    else if (c === "[") {
      const close = g.indexOf("]", i + 2);
      if (close < 0) pieces.at(-1)!.push(c.codePointAt(0)!);
      else {
        let body = g.slice(i + 1, close).join("");
        const neg = body.startsWith("!") || body.startsWith("^");
        if (neg) body = body.slice(1);
        pieces.at(-1)!.push(new RegExp(`^[${neg ? "^" : ""}${body.replace(/[\\\]^]/g, "\\$&")}]$`, "u"));
        i = close;
      }
    } else pieces.at(-1)!.push(c.codePointAt(0)!);
  }
  return { test: (s) => matchPieces(pieces, Array.from(s)) };
}

function matchAt(cps: readonly string[], at: number, piece: readonly Atom[]): boolean {
  for (let k = 0; k < piece.length; k++) {
    const a = piece[k]!;
    const c = cps[at + k]!;
    if (a === null) continue;
    if (typeof a === "number" ? c.codePointAt(0) !== a : !a.test(c)) return false;
  }
  return true;
}

function matchPieces(pieces: readonly Atom[][], cps: readonly string[]): boolean {
  const first = pieces[0]!;
  if (pieces.length === 1) return cps.length === first.length && matchAt(cps, 0, first);
  const last = pieces.at(-1)!;
  const end = cps.length - last.length;
  if (end < first.length || !matchAt(cps, 0, first) || !matchAt(cps, end, last)) return false;
  let pos = first.length;
  for (let p = 1; p < pieces.length - 1; p++) {
    const piece = pieces[p]!;
    let found = -1;
    for (let i = pos; i + piece.length <= end; i++) {
      if (matchAt(cps, i, piece)) {
        found = i;
        break;
      }
    }
    if (found < 0) return false;
    pos = found + piece.length;
  }
  return true;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * `--since`/`--until`: an ISO 8601 time (a date alone is midnight UTC), or a
 * duration back from `now` (`90s`, `15m`, `2h`, `1d`, `1h30m`). null when
 * it is neither.
 */
export function parseWhen(text: string, now: number): number | null {
  const t = text.trim();
  if (/^(\d+(ms|s|m|h|d|w))+$/.test(t)) {
    let total = 0;
    for (const m of t.matchAll(/(\d+)(ms|s|m|h|d|w)/g)) total += Number(m[1]) * UNIT_MS[m[2]!]!;
    return now - total;
  }
  if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(t)) return null;
  const ms = Date.parse(t.replace(" ", "T"));
  return Number.isNaN(ms) ? null : ms;
}
