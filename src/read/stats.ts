/**
 * `seam stats`: tools/call operations aggregated per tool, server, session
 * or day. A call is a tools/call in every grouping and in the sessions
 * (initialize, tools/list, reads and prompts are not calls), so the views
 * add up to the same number. Per group: calls, counts per status (ok, error, unanswered, cancelled and
 * any other as recorded), error rate, p50/p95/p99/max ms (nearest rank),
 * bytes in and out where session_end recorded them, first and last seen, and
 * how many of the calls the chain vouches for. Per session: when it began
 * and ended, duration, calls, how it ended (reason, exit code).
 */
import type { Json } from "../core/json.ts";
import type { Operation } from "./read-model.ts";

export type StatsBy = "tool" | "server" | "session" | "day";
export const STATS_BY: readonly StatsBy[] = ["tool", "server", "session", "day"];

export interface StatsGroup {
  /** The group's key: `server tool` (by tool), server, session id, or YYYY-MM-DD (UTC). */
  key: string;
  server: string | null;
  /** The tool (by tool only), else null. */
  tool: string | null;
  calls: number;
  ok: number;
  error: number;
  unanswered: number;
  cancelled: number;
  /** Every status as recorded, with its count ("(none)" for a row without one). */
  statuses: Record<string, number>;
  /** error / calls, 0 when there are no calls. */
  error_rate: number;
  p50_ms: number | null;
  p95_ms: number | null;
  p99_ms: number | null;
  max_ms: number | null;
  /** Client→server and server→client bytes, from session_end rows (not per tool: null there). */
  bytes_in: number | null;
  bytes_out: number | null;
  first: string | null;
  last: string | null;
  /** Calls the chain vouches for. */
  vouched: number;
}

export interface SessionStats {
  session: string;
  server: string | null;
  begin: string | null;
  end: string | null;
  duration_ms: number | null;
  calls: number;
  /** session_end's reason; null when the session has no end in the file. */
  ended: string | null;
  exit_code: Json | null;
  bytes_in: number | null;
  bytes_out: number | null;
}

export interface Stats {
  by: StatsBy;
  groups: StatsGroup[];
  sessions: SessionStats[];
  /** Operations seen, and those the chain vouches for. */
  operations: number;
  vouched: number;
}

/** The first and last time seen: `ts` as written, and as epoch ms to compare by (NaN before any). */
interface Seen {
  first: string | null;
  firstT: number;
  last: string | null;
  lastT: number;
}

/** Widens what was seen to take in `ts` (`t`: its epoch ms, not NaN). */
function see(seen: Seen, ts: string | null, t: number): void {
  if (!(t >= seen.firstT)) {
    seen.first = ts;
    seen.firstT = t;
  }
  if (!(t <= seen.lastT)) {
    seen.last = ts;
    seen.lastT = t;
  }
}

interface Acc extends Seen {
  key: string;
  server: string | null;
  tool: string | null;
  calls: number;
  statuses: Map<string, number>;
  /** Durations seen: the first `msCount` of `ms` (a typed array grown as needed: 8 bytes a call, where a JS array of numbers costs more). */
  ms: Float64Array;
  msCount: number;
  bytesIn: number | null;
  bytesOut: number | null;
  vouched: number;
}

/** A session's first and last time seen are when it began and ended. */
interface SessionAcc extends Seen {
  session: string;
  server: string | null;
  calls: number;
  ended: string | null;
  exit: Json | null;
  bytesIn: number | null;
  bytesOut: number | null;
}

/** Feed operations with `add`, in any order; `result` sorts groups by calls (most first), then key. */
export class StatsAccumulator {
  private readonly groups = new Map<string, Acc>();
  private readonly sessions = new Map<string, SessionAcc>();
  private operations = 0;
  private vouched = 0;
  private lastGroup: Acc | null = null;
  private lastSession: SessionAcc | null = null;

  constructor(readonly by: StatsBy = "tool") {}

  add(op: Operation): void {
    this.operations++;
    if (op.vouched) this.vouched++;
    const t = op.time;
    const s = op.session === null ? null : this.session(op);
    if (s !== null) {
      if (!Number.isNaN(t)) see(s, op.ts, t);
      if (op.kind === "tool_call") s.calls++;
      if (op.kind === "session_end") {
        s.ended = op.status ?? "(none)";
        s.exit = op.exit_code ?? null;
        s.bytesIn = add(s.bytesIn, op.bytes_in);
        s.bytesOut = add(s.bytesOut, op.bytes_out);
      }
    }
    if (op.kind === "session_end" && this.by !== "tool") {
      const g = this.groups.get(this.keyOf(op, t));
      // Bytes belong to a group that has calls; a session without any adds its bytes to its server's or day's group all the same.
      const acc = g ?? this.group(op, t);
      acc.bytesIn = add(acc.bytesIn, op.bytes_in);
      acc.bytesOut = add(acc.bytesOut, op.bytes_out);
      return;
    }
    if (op.kind !== "tool_call") return;
    const g = this.group(op, t);
    g.calls++;
    const st = op.status ?? "(none)";
    g.statuses.set(st, (g.statuses.get(st) ?? 0) + 1);
    if (op.ms !== null) {
      if (g.msCount === g.ms.length) {
        const grown = new Float64Array(g.ms.length * 2);
        grown.set(g.ms);
        g.ms = grown;
      }
      g.ms[g.msCount++] = op.ms;
    }
    if (op.vouched) g.vouched++;
    if (!Number.isNaN(t)) see(g, op.ts, t);
  }

  result(): Stats {
    const groups = [...this.groups.values()]
      .filter((g) => g.calls > 0 || g.bytesIn !== null || g.bytesOut !== null)
      .map(finish)
      .sort((a, b) => b.calls - a.calls || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const sessions = [...this.sessions.values()].map((s) => ({
      session: s.session,
      server: s.server,
      begin: s.first,
      end: s.last,
      duration_ms: s.first !== null && s.last !== null ? s.lastT - s.firstT : null,
      calls: s.calls,
      ended: s.ended,
      exit_code: s.exit,
      bytes_in: s.bytesIn,
      bytes_out: s.bytesOut,
    }));
    sessions.sort((a, b) => b.calls - a.calls || (a.session < b.session ? -1 : a.session > b.session ? 1 : 0));
    return { by: this.by, groups, sessions, operations: this.operations, vouched: this.vouched };
  }

  private keyOf(op: Operation, t: number): string {
    switch (this.by) {
      case "tool":
        return `${op.server ?? "?"}\u0000${op.name ?? "?"}`;
      case "server":
        return op.server ?? "?";
      case "session":
        return op.session ?? "?";
      case "day":
        return Number.isNaN(t) ? "?" : new Date(t).toISOString().slice(0, 10);
    }
  }

  private group(op: Operation, t: number): Acc {
    // Calls of one tool come in runs: the group of the last call is looked up by key only when another comes.
    const last = this.lastGroup;
    if (last !== null && this.by === "tool" && last.server === op.server && last.tool === op.name) return last;
    const k = this.keyOf(op, t);
    let g = this.groups.get(k);
    if (g === undefined) {
      g = {
        key: this.by === "tool" ? `${op.server ?? "?"} ${op.name ?? "?"}` : k,
        server: this.by === "tool" || this.by === "server" ? op.server : this.by === "session" ? op.server : null,
        tool: this.by === "tool" ? op.name : null,
        calls: 0,
        statuses: new Map(),
        ms: new Float64Array(16),
        msCount: 0,
        bytesIn: null,
        bytesOut: null,
        first: null,
        firstT: Number.NaN,
        last: null,
        lastT: Number.NaN,
        vouched: 0,
      };
      this.groups.set(k, g);
    }
    this.lastGroup = g;
    return g;
  }

  private session(op: Operation): SessionAcc {
    const id = op.session!;
    if (this.lastSession?.session === id) return this.lastSession;
    let s = this.sessions.get(id);
    if (s === undefined) {
      s = {
        session: id,
        server: op.server,
        first: null,
        firstT: Number.NaN,
        last: null,
        lastT: Number.NaN,
        calls: 0,
        ended: null,
        exit: null,
        bytesIn: null,
        bytesOut: null,
      };
      this.sessions.set(id, s);
    }
    this.lastSession = s;
    return s;
  }
}

/** Aggregates operations in one go. */
export function aggregate(ops: Iterable<Operation>, by: StatsBy = "tool"): Stats {
  const acc = new StatsAccumulator(by);
  for (const op of ops) acc.add(op);
  return acc.result();
}

function finish(g: Acc): StatsGroup {
  const ms = g.ms.subarray(0, g.msCount).sort();
  const count = (s: string) => g.statuses.get(s) ?? 0;
  return {
    key: g.key,
    server: g.server,
    tool: g.tool,
    calls: g.calls,
    ok: count("ok"),
    error: count("error"),
    unanswered: count("unanswered"),
    cancelled: count("cancelled"),
    statuses: Object.fromEntries(g.statuses),
    error_rate: g.calls === 0 ? 0 : count("error") / g.calls,
    p50_ms: percentile(ms, 50),
    p95_ms: percentile(ms, 95),
    p99_ms: percentile(ms, 99),
    max_ms: ms.length === 0 ? null : ms[ms.length - 1]!,
    bytes_in: g.bytesIn,
    bytes_out: g.bytesOut,
    first: g.first,
    last: g.last,
    vouched: g.vouched,
  };
}

/** Nearest-rank percentile of sorted values; null when there are none. */
export function percentile(sorted: ArrayLike<number>, p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1]!;
}

function add(a: number | null, b: number | null): number | null {
  if (b === null) return a;
  return (a ?? 0) + b;
}
