/**
 * The reading model: ledger rows in, operations out. An operation is what a
 * person asks about (a tools/call, a resources/read, a server request, a
 * session's begin and end), made of one or more rows:
 *   - rows that carry an `op` field (2026-07-28 multi round-trip calls and
 *     tasks: `input_required` rounds and their retries' intents, the call
 *     answered `status: "task"`, tasks/get, tasks/update and tasks/cancel
 *     rows) are one operation per (session, op), finished by its
 *     `operation_end` row (one the client abandoned has none: it ends with
 *     the file). The first round's write-ahead intent carries no `op` (the
 *     writer learns that a call goes on only from its answer): it joins the
 *     operation that the answer to its rpc id opens;
 *   - otherwise a `tool_call_intent` waits for the `tool_call` of the same
 *     (session, rpc_id), compared exactly (1 and "1" differ, big ints by
 *     their digits), first in, first out;
 *   - every other row is an operation by itself.
 * Rows are taken as the ledger holds them: any field may be missing or of
 * the wrong type (a hostile or foreign file), and then reads as null. Nothing
 * here throws on a row.
 */
import { getField, isObject, type Json, JsonFloat } from "../core/json.ts";
import { isSeamsOwn } from "../format/row.ts";
import { show } from "../verify/show.ts";
import { isoMillis, num, str } from "./fields.ts";

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
  | "client_request"
  | "checkpoint"
  | "cosignature"
  | "ledger_repair"
  /** A seam row with an evt this reader does not know. */
  | "other"
  /** A row that is not seam's (its `seam` is neither "mcp-stdio" nor "mcp-http": isSeamsOwn). */
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
  /** `ts` as epoch ms (NaN when there is none or it is no time). */
  time: number;
  session: string | null;
  server: string | null;
  /** Tool name, resource uri, prompt name, method, or what the row says it is. */
  name: string | null;
  /** The recorded status (ok, error, unanswered, cancelled, input_required, refused, …); session_end's reason; an http_exchange's HTTP status (digits); null when none. */
  status: string | null;
  /** Duration in milliseconds: its row's `ms`, or from the start of its first round to its last row for several rounds. */
  ms: number | null;
  /** The JSON-RPC id of the request that began it (its first row that has one), exactly as recorded (a bigint beyond 2^53), or undefined. */
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
  /** The rows before it that it joins, in file order (their `chain` taken out); empty for one row. */
  earlier: readonly Json[];
  /** A tool_call that is its server's first call of the tool since a tools/list showed its definition changed (stream.ts). */
  redefined?: true;
}

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
  client_request: "client_request",
  checkpoint: "checkpoint",
  cosignature: "cosignature",
  ledger_repair: "ledger_repair",
};

interface Open {
  rows: { row: Json; line: number }[];
  /** Its place among those opened, for `flush`. */
  born: number;
}

const NONE: Operation[] = [];

/**
 * Turns rows, in file order, into operations. `add` returns the operations a
 * row finishes (usually one, none for an intent or a round of an operation
 * that goes on); `flush` returns those still open, oldest first (an intent
 * without its call, an operation without its operation_end), each with the
 * status of its last row, or "no_result" for a lone intent.
 */
export class OperationJoiner {
  /** Intents waiting for their call, by session and rpc id (first in, first out). */
  private readonly intents = new Map<string, Open[]>();
  /** Operations of several rounds, by session and op. */
  private readonly ops = new Map<string, Open>();
  private order = 0;
  private open = 0;

  constructor(private readonly file: string) {}

  /** Operations still waiting for rows. */
  get pending(): number {
    return this.open;
  }

  add(row: Json, line: number): Operation[] {
    if (!isObject(row)) return NONE;
    if (!isSeamsOwn(getField(row, "seam"))) return [buildOne(this.file, row, line)];
    const evt = getField(row, "evt");
    const op = getField(row, "op");
    const session = getField(row, "session");
    const s = typeof session === "string" ? session : "";
    if (op !== undefined && op !== null) {
      const key = `${s.length}:${s}${idKey(op)}`;
      let o = this.ops.get(key);
      if (o === undefined) {
        // Its first round: the answer may have a write-ahead intent waiting under its rpc id.
        const rpc = evt === "tool_call_intent" ? undefined : getField(row, "rpc_id");
        const intent = rpc === undefined ? undefined : this.takeIntent(`${s.length}:${s}${idKey(rpc)}`);
        o = intent ?? { rows: [], born: this.order++ };
        if (intent === undefined) this.open++;
        this.ops.set(key, o);
      }
      o.rows.push({ row, line });
      if (evt !== "operation_end") return NONE;
      this.ops.delete(key);
      this.open--;
      return [build(this.file, o.rows)];
    }
    if (evt !== "tool_call_intent" && (evt !== "tool_call" || this.intents.size === 0))
      return [buildOne(this.file, row, line)];
    const rpc = getField(row, "rpc_id");
    if (rpc === undefined) return [buildOne(this.file, row, line)];
    const key = `${s.length}:${s}${idKey(rpc)}`;
    if (evt === "tool_call_intent") {
      const o: Open = { rows: [{ row, line }], born: this.order++ };
      this.open++;
      const list = this.intents.get(key);
      if (list === undefined) this.intents.set(key, [o]);
      else list.push(o);
      return NONE;
    }
    const o = this.takeIntent(key);
    if (o === undefined) return [buildOne(this.file, row, line)];
    this.open--;
    o.rows.push({ row, line });
    return [build(this.file, o.rows)];
  }

  flush(): Operation[] {
    const all = [...this.intents.values()]
      .flat()
      .concat([...this.ops.values()])
      .sort((a, b) => a.born - b.born);
    this.intents.clear();
    this.ops.clear();
    this.open = 0;
    return all.map((o) => {
      const op = build(this.file, o.rows);
      const last = o.rows[o.rows.length - 1]!.row;
      if (getField(last, "evt") === "tool_call_intent") op.status = "no_result";
      return op;
    });
  }

  /** The oldest intent waiting under `key`, taken out. */
  private takeIntent(key: string): Open | undefined {
    const list = this.intents.get(key);
    if (list === undefined) return undefined;
    const o = list.shift();
    if (list.length === 0) this.intents.delete(key);
    return o;
  }
}

const NO_ROWS: readonly Json[] = Object.freeze([]) as readonly Json[];

/** One operation from its rows (the last one finished it). */
function build(file: string, rows: { row: Json; line: number }[]): Operation {
  if (rows.length === 1) return buildOne(file, rows[0]!.row, rows[0]!.line);
  const last = rows[rows.length - 1]!;
  const row = last.row;
  const evt = getField(row, "evt");
  // What it is comes from its first row that says (an operation_end says only how it ended).
  let kind = kindOf(row, evt);
  for (const r of rows) {
    const k = kindOf(r.row, getField(r.row, "evt"));
    if (k !== "other") {
      kind = k;
      break;
    }
  }
  const pick = (k: string): Json | undefined => {
    for (let i = rows.length - 1; i >= 0; i--) {
      const v = getField(rows[i]!.row, k);
      if (v !== undefined) return v;
    }
    return undefined;
  };
  const first = (k: string): Json | undefined => {
    for (const r of rows) {
      const v = getField(r.row, k);
      if (v !== undefined) return v;
    }
    return undefined;
  };
  const bytes = kind === "session_end" ? getField(row, "bytes") : undefined;
  const ts = str(getField(rows[0]!.row, "ts"));
  const earlier: Json[] = [];
  const lines: number[] = [];
  for (const r of rows) {
    lines.push(r.line);
    if (r !== last) earlier.push(r.row);
  }
  return {
    kind,
    evt: str(evt),
    file,
    line: last.line,
    lines,
    ts,
    time: isoMillis(ts),
    session: str(pick("session")),
    server: str(pick("server")),
    name: nameOf(kind, row, pick),
    status: statusOf(kind, evt, row),
    ms: durationOf(rows),
    rpc_id: first("rpc_id"),
    op: pick("op"),
    rounds: rows.length,
    error_code: pick("error_code"),
    reason: str(getField(row, "reason")),
    exit_code: kind === "session_end" ? getField(row, "exit_code") : undefined,
    args: pick("args") ?? pick("params"),
    result: pick("result"),
    bytes_in: bytes === undefined ? null : num(getField(bytes, "c2s")),
    bytes_out: bytes === undefined ? null : num(getField(bytes, "s2c")),
    vouched: false,
    sealed: null,
    row,
    earlier,
  };
}

/**
 * The common case, an operation of one row, without the joins: the same
 * fields as `build` gives, read from the row once each.
 */
function buildOne(file: string, row: Json, line: number): Operation {
  const evt = getField(row, "evt");
  const kind = kindOf(row, evt);
  const pick = (k: string): Json | undefined => getField(row, k);
  const bytes = kind === "session_end" ? getField(row, "bytes") : undefined;
  const ts = str(getField(row, "ts"));
  const reason = str(getField(row, "reason"));
  return {
    kind,
    evt: str(evt),
    file,
    line,
    lines: [line],
    ts,
    time: isoMillis(ts),
    session: str(getField(row, "session")),
    server: str(getField(row, "server")),
    name: nameOf(kind, row, pick),
    status: statusOf(kind, evt, row),
    ms: num(getField(row, "ms")),
    rpc_id: getField(row, "rpc_id"),
    op: getField(row, "op"),
    rounds: 1,
    error_code: getField(row, "error_code"),
    reason,
    exit_code: kind === "session_end" ? getField(row, "exit_code") : undefined,
    args: getField(row, "args") ?? getField(row, "params"),
    result: getField(row, "result"),
    bytes_in: bytes === undefined ? null : num(getField(bytes, "c2s")),
    bytes_out: bytes === undefined ? null : num(getField(bytes, "s2c")),
    vouched: false,
    sealed: null,
    row,
    earlier: NO_ROWS,
  };
}

/**
 * An operation's status: session_end's reason; an HTTP exchange's (seam
 * proxy) HTTP status, as digits; else the row's status.
 */
function statusOf(kind: OpKind, evt: Json | undefined, row: Json): string | null {
  if (kind === "session_end") return str(getField(row, "reason"));
  if (evt === "http_exchange") {
    const http = getField(row, "http_status");
    return typeof http === "number" && Number.isInteger(http) ? String(http) : null;
  }
  return str(getField(row, "status"));
}

function kindOf(row: Json, evt: Json | undefined): OpKind {
  if (!isSeamsOwn(getField(row, "seam"))) return "foreign";
  return typeof evt === "string" && Object.hasOwn(KIND_OF, evt) ? KIND_OF[evt]! : "other";
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
    case "client_request":
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
    case "cosignature":
      return str(pick("witness")) === null ? "cosignature" : `cosignature ${str(pick("witness"))}`;
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

/**
 * One row: its ms. Ended by an operation_end: the whole operation's ms, as
 * it says. Several otherwise: from the first row's start (its ts less its
 * ms) to the last row's ts, when all are known.
 */
function durationOf(rows: { row: Json }[]): number | null {
  const lastRow = rows[rows.length - 1]!.row;
  const lastMs = num(getField(lastRow, "ms"));
  if (rows.length === 1) return lastMs;
  if (getField(lastRow, "evt") === "operation_end" && lastMs !== null) return lastMs;
  const firstTs = isoMillis(str(getField(rows[0]!.row, "ts")));
  const lastTs = isoMillis(str(getField(rows[rows.length - 1]!.row, "ts")));
  const firstMs = num(getField(rows[0]!.row, "ms")) ?? 0;
  // An intent and its call: the call's ms is measured from the request, which is the whole operation.
  if (getField(rows[0]!.row, "evt") === "tool_call_intent" && rows.length === 2) return lastMs;
  if (Number.isNaN(firstTs) || Number.isNaN(lastTs)) return lastMs;
  return Math.max(0, lastTs - firstTs + firstMs);
}

/** A key under which ids compare exactly: 1, 1.0 and "1" differ; big ints by their digits. */
function idKey(v: Json): string {
  if (typeof v === "string") return `s${v}`;
  if (typeof v === "number") return Number.isInteger(v) ? `i${v}` : `f${v}`;
  if (typeof v === "bigint") return `i${v}`;
  if (v instanceof JsonFloat) return `f${v.value}`;
  return `j${show(v)}`;
}
