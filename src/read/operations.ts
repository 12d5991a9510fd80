/**
 * The reading model: ledger rows in, operations out. An operation is what a
 * person asks about (a tools/call, a resources/read, a server request, a
 * session's begin and end), made of one or more rows:
 *   - rows that carry an `op` field (2026-07-28 multi round-trip calls and
 *     tasks: `input_required` rounds, `status: "task"`, tasks/get rows) are
 *     one operation per (session, op), finished by the first row whose
 *     status is not an in-between one (IN_BETWEEN);
 *   - otherwise a `tool_call_intent` waits for the `tool_call` of the same
 *     (session, rpc_id), compared exactly (1 and "1" differ, big ints by
 *     their digits), first in, first out;
 *   - every other row is an operation by itself.
 * Rows are taken as the ledger holds them: any field may be missing or of
 * the wrong type (a hostile or foreign file), and then reads as null. Nothing
 * here throws on a row.
 */
import { lineForm } from "../core/canonical.ts";
import { type Json, JsonFloat, getField, isObject } from "../core/json.ts";

/** What an operation is, from the evt of its rows. */
export type OpKind =
  | "session_begin"
  | "session_end"
  | "initialize"
  | "discover"
  | "tools_list"
  | "tool_call"
  | "resource_read"
  | "prompt_get"
  | "server_request"
  | "checkpoint"
  | "ledger_repair"
  /** A seam row with an evt this reader does not know. */
  | "other"
  /** A row that is not seam's (no `"seam": "mcp-stdio"`). */
  | "foreign";

export interface Operation {
  kind: OpKind;
  /** The evt of the row that finished it, as recorded (null when not a string). */
  evt: string | null;
  /** The file it was read from, as given. */
  file: string;
  /** The line of the row that finished it: where it stands in the file. */
  line: number;
  /** The lines of all its rows, in file order. */
  lines: number[];
  /** The `ts` of its first row (ISO 8601, as recorded), or null. */
  ts: string | null;
  session: string | null;
  server: string | null;
  /** Tool name, resource uri, prompt name, method, or what the row says it is. */
  name: string | null;
  /** The recorded status (ok, error, unanswered, cancelled, input_required, refused, …); session_end's reason; null when none. */
  status: string | null;
  /** Duration in milliseconds: its row's `ms`, or from the start of its first round to its last row for several rounds. */
  ms: number | null;
  /** The JSON-RPC id exactly as recorded (a bigint beyond 2^53), or undefined. */
  rpc_id: Json | undefined;
  /** The `op` field that joined its rows, or undefined. */
  op: Json | undefined;
  /** Rows joined into it. */
  rounds: number;
  error_code: Json | undefined;
  reason: string | null;
  /** session_end's exit_code. */
  exit_code: Json | undefined;
  /** Arguments and result, when the ledger was written with --raw. */
  args: Json | undefined;
  result: Json | undefined;
  /** Bytes client→server and server→client (session_end only). */
  bytes_in: number | null;
  bytes_out: number | null;
  /** Every row lies before the chain's first break, and the chain vouches for each (see stream.ts). */
  vouched: boolean;
  /** Under a valid signed checkpoint (--key); null when no key was given. */
  sealed: boolean | null;
  /** The row that finished it (its `chain` taken out). */
  row: Json;
}

/** Statuses of a round after which the operation goes on (more rounds, or a task to poll). */
export const IN_BETWEEN = new Set(["input_required", "task", "working", "submitted"]);

const KIND_OF: Record<string, OpKind> = {
  session_begin: "session_begin",
  session_end: "session_end",
  mcp_initialize: "initialize",
  mcp_discover: "discover",
  tools_list: "tools_list",
  tool_call_intent: "tool_call",
  tool_call: "tool_call",
  resource_read: "resource_read",
  prompt_get: "prompt_get",
  server_request: "server_request",
  checkpoint: "checkpoint",
  ledger_repair: "ledger_repair",
};

interface Open {
  key: string;
  rows: { row: Json; line: number }[];
}

/**
 * Turns rows, in file order, into operations. `add` returns the operations a
 * row finishes (usually one, none for an intent or an in-between round);
 * `flush` returns those still open, oldest first (an intent without its
 * call, a task never finished), each with the status of its last row, or
 * "no_result" for a lone intent.
 */
export class OperationJoiner {
  private readonly open = new Map<string, Open[]>();
  private order = 0;
  private readonly born = new Map<Open, number>();

  constructor(private readonly file: string) {}

  /** Operations still waiting for rows. */
  get pending(): number {
    return this.born.size;
  }

  add(row: Json, line: number): Operation[] {
    if (!isObject(row)) return [];
    const key = joinKey(row);
    if (key === null) return [build(this.file, [{ row, line }])];
    const evt = getField(row, "evt");
    const status = str(getField(row, "status"));
    const grouped = getField(row, "op") !== undefined && getField(row, "op") !== null;
    const list = this.open.get(key);
    // An intent always opens; with `op`, any row joins what is open under its key.
    if (evt === "tool_call_intent" && !grouped) {
      this.push(key, { row, line });
      return [];
    }
    let o: Open | undefined;
    if (list !== undefined && list.length > 0) o = list[0];
    if (o === undefined) {
      if (evt === "tool_call_intent" || (grouped && status !== null && IN_BETWEEN.has(status))) {
        this.push(key, { row, line });
        return [];
      }
      return [build(this.file, [{ row, line }])];
    }
    o.rows.push({ row, line });
    if (evt === "tool_call_intent" || (grouped && status !== null && IN_BETWEEN.has(status))) return [];
    list!.shift();
    if (list!.length === 0) this.open.delete(key);
    this.born.delete(o);
    return [build(this.file, o.rows)];
  }

  flush(): Operation[] {
    const all = [...this.born.entries()].sort((a, b) => a[1] - b[1]).map(([o]) => o);
    this.open.clear();
    this.born.clear();
    return all.map((o) => {
      const op = build(this.file, o.rows);
      const last = o.rows[o.rows.length - 1]!.row;
      if (getField(last, "evt") === "tool_call_intent") op.status = "no_result";
      return op;
    });
  }

  private push(key: string, r: { row: Json; line: number }): void {
    const o: Open = { key, rows: [r] };
    const list = this.open.get(key);
    if (list === undefined) this.open.set(key, [o]);
    else list.push(o);
    this.born.set(o, this.order++);
  }
}

/** The key under which a row waits for or joins others; null for a row that stands alone. */
function joinKey(row: Json): string | null {
  if (getField(row, "seam") !== "mcp-stdio") return null;
  const session = getField(row, "session");
  const s = typeof session === "string" ? session : "";
  const op = getField(row, "op");
  if (op !== undefined && op !== null) return `o${s.length}:${s}${idKey(op)}`;
  const evt = getField(row, "evt");
  if (evt !== "tool_call_intent" && evt !== "tool_call") return null;
  const rpc = getField(row, "rpc_id");
  if (rpc === undefined) return null;
  return `r${s.length}:${s}${idKey(rpc)}`;
}

/** One operation from its rows (the last one finished it). */
function build(file: string, rows: { row: Json; line: number }[]): Operation {
  const last = rows[rows.length - 1]!;
  const first = rows[0]!;
  const row = last.row;
  const evt = getField(row, "evt");
  const seam = getField(row, "seam") === "mcp-stdio";
  const kind: OpKind = !seam
    ? "foreign"
    : typeof evt === "string" && Object.hasOwn(KIND_OF, evt)
      ? KIND_OF[evt]!
      : "other";
  const pick = (k: string): Json | undefined => {
    for (let i = rows.length - 1; i >= 0; i--) {
      const v = getField(rows[i]!.row, k);
      if (v !== undefined) return v;
    }
    return undefined;
  };
  const bytes = kind === "session_end" ? getField(row, "bytes") : undefined;
  return {
    kind,
    evt: str(evt),
    file,
    line: last.line,
    lines: rows.map((r) => r.line),
    ts: str(getField(first.row, "ts")),
    session: str(pick("session")),
    server: str(pick("server")),
    name: nameOf(kind, row, pick),
    status: kind === "session_end" ? str(getField(row, "reason")) : str(getField(row, "status")),
    ms: durationOf(rows),
    rpc_id: pick("rpc_id"),
    op: pick("op"),
    rounds: rows.length,
    error_code: getField(row, "error_code"),
    reason: str(getField(row, "reason")),
    exit_code: kind === "session_end" ? getField(row, "exit_code") : undefined,
    args: pick("args") ?? pick("params"),
    result: getField(row, "result"),
    bytes_in: bytes === undefined ? null : num(getField(bytes, "c2s")),
    bytes_out: bytes === undefined ? null : num(getField(bytes, "s2c")),
    vouched: false,
    sealed: null,
    row,
  };
}

function nameOf(kind: OpKind, row: Json, pick: (k: string) => Json | undefined): string | null {
  switch (kind) {
    case "tool_call":
      return str(pick("tool"));
    case "resource_read":
      return str(pick("uri"));
    case "prompt_get":
      return str(pick("prompt"));
    case "server_request":
      return str(getField(row, "method"));
    case "initialize":
      return "initialize";
    case "discover":
      return "server/discover";
    case "tools_list":
      return "tools/list";
    case "session_begin":
      return "session begin";
    case "session_end":
      return "session end";
    case "checkpoint":
      return "checkpoint";
    case "ledger_repair":
      return "ledger repair";
    default: {
      // Someone else's row, or an evt from a newer seam: what it calls itself.
      const tool = str(pick("tool")) ?? str(pick("method"));
      const evt = getField(row, "evt") ?? getField(row, "kind") ?? getField(row, "type");
      const label = typeof evt === "string" ? evt : evt === undefined ? "?" : show(evt);
      return tool === null ? label : `${label} ${tool}`;
    }
  }
}

/** One row: its ms. Several: from the first row's start (its ts less its ms) to the last row's ts, when all are known. */
function durationOf(rows: { row: Json }[]): number | null {
  const lastMs = num(getField(rows[rows.length - 1]!.row, "ms"));
  if (rows.length === 1) return lastMs;
  const firstTs = Date.parse(str(getField(rows[0]!.row, "ts")) ?? "");
  const lastTs = Date.parse(str(getField(rows[rows.length - 1]!.row, "ts")) ?? "");
  const firstMs = num(getField(rows[0]!.row, "ms")) ?? 0;
  // An intent and its call: the call's ms is measured from the request, which is the whole operation.
  if (getField(rows[0]!.row, "evt") === "tool_call_intent" && rows.length === 2) return lastMs;
  if (Number.isNaN(firstTs) || Number.isNaN(lastTs)) return lastMs;
  return Math.max(0, lastTs - firstTs + firstMs);
}

function str(v: Json | undefined): string | null {
  return typeof v === "string" ? v : null;
}

/** A finite number as a JS number (floats and safe ints); anything else null. */
export function num(v: Json | undefined): number | null {
  if (typeof v === "number") return Number.isFinite(v) ? v : null;
  if (v instanceof JsonFloat) return Number.isFinite(v.value) ? v.value : null;
  if (typeof v === "bigint") return Number(v);
  return null;
}

/** A key under which ids compare exactly: 1, 1.0 and "1" differ; big ints by their digits. */
function idKey(v: Json): string {
  if (typeof v === "string") return `s${v}`;
  if (typeof v === "number") return Number.isInteger(v) ? `i${v}` : `f${v}`;
  if (typeof v === "bigint") return `i${v}`;
  if (v instanceof JsonFloat) return `f${v.value}`;
  return `j${show(v)}`;
}

/** A value as the ledger line writes it; never throws. */
export function show(v: Json | undefined): string {
  if (v === undefined) return "";
  try {
    return lineForm(v);
  } catch {
    return String(v);
  }
}
