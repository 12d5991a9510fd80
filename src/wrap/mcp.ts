/**
 * Observing MCP messages and pairing requests with their answers.
 *
 * The observer sees copies of frames the relay has already forwarded (except
 * under --write-ahead, where a tools/call waits for its intent row). It turns
 * them into ledger rows through a RowSink. It never throws: a frame it cannot
 * understand is counted, never fatal.
 *
 * Pairing rules: client requests and server requests
 * live in separate id spaces, since an SDK client and an SDK server both count
 * from 0; an answer is matched by (direction, exact id) — 1 and "1" differ,
 * integers of any size compare exactly; a duplicate id still open pairs first
 * in, first out; batches are taken element by element.
 */
import { compareCodePoints, lineForm } from "../core/canonical.ts";
import { digestBytes, digestJson } from "../core/digest.ts";
import { type Json, JsonFloat, type JsonObject, getField, isObject } from "../core/json.ts";
import {
  type FrameRead,
  type Reading,
  frameHead,
  lenientArgsDigest,
  readFrame,
  answerDigest,
} from "./frame-reading.ts";
import type { LongFrame } from "./frames.ts";
import { OperationBook, type RoundInfo } from "./operations.ts";
import {
  ClientMetaTracker,
  ServerMetaTracker,
  requestMeta,
  resultServerInfo,
  resultTypeStatus,
  unknownResultType,
} from "./protocol-meta.ts";

export type Fields = Record<string, Json | undefined>;

export interface RowSink {
  /** Queues a row; never blocks and never throws. */
  row(evt: string, fields: Fields): void;
  /** Queues a row and resolves once it is durable on disk (true) or cannot be (false). */
  durable(evt: string, fields: Fields): Promise<boolean>;
}

/** Test-only defects, switched on by `seam selftest` to prove its checks can fail. */
export interface ObserverFaults {
  /** Also write a tool_call row when the request is seen (breaks one row per call). */
  doubleRow?: boolean;
  /** Skip the rows for calls still open at the end. */
  noUnansweredFlush?: boolean;
  /** One id table for both directions (lets a server request complete a client call). */
  sharedIdTable?: boolean;
  /** Never link a multi round-trip retry to its operation (src/wrap/operations.ts). */
  unlinkedRounds?: boolean;
  /** Read frames with the strict parser only (what a server's parser accepts then goes unread). */
  strictFrames?: boolean;
}

/**
 * What the observer asks of --map (src/wrap/actions.ts), once for each tools/call
 * with a valid id, synchronously when it is seen. undefined: the tool is not
 * mapped. `skipped`: mapped, but no action could be made (the call goes on).
 * Otherwise the action and its posting, a promise that never rejects.
 */
export interface ActionHook {
  make(tool: string | undefined, id: Json, params: Json | undefined): ActionMade | undefined;
}
export type ActionMade = { skipped: string } | { action: JsonObject; posting: Promise<ActionPosting> };
export interface ActionPosting {
  /** Whether the POST succeeded; undefined when none was tried (no endpoint, or no key). */
  posted?: boolean;
  /** Why it was not posted. */
  error?: string;
  /** The endpoint's answer when it said the action already exists (409, a retried call): recorded there all the same. */
  existing?: number;
  /** The call must not be forwarded (--no-fail-open). */
  refuse?: boolean;
}

/** The JSON-RPC error code of seam's own answer to a call it refuses. */
export const REFUSED_CODE = -32000;
/** The message when --fail-closed refuses a call whose intent row could not be made durable. */
export const NOT_DURABLE =
  "seam: recording failed: the call was not forwarded because its record could not be made durable";
/** JSON-RPC's code for a frame that is not JSON: seam's answer, under --write-ahead, to a client frame it cannot read. */
export const PARSE_ERROR_CODE = -32700;
/** JSON-RPC's Invalid Request: seam's answer to a client frame too long for it to read, under --write-ahead. */
export const INVALID_REQUEST_CODE = -32600;
/** The message when --fail-closed refuses a frame that JSON parsers read differently. */
export const AMBIGUOUS =
  "seam: ambiguous request: JSON parsers read this frame differently (see its ambiguous_frame row); it was not forwarded";
/** Server frames rowed as unparsed_frame at most, per session (the rest are counted). */
const MAX_S2C_UNPARSED_ROWS = 100;

export interface ObserverOptions {
  rows: RowSink;
  raw: boolean;
  writeAhead: boolean;
  /** A call whose intent row cannot be made durable is refused (else it is forwarded anyway). */
  failClosed?: boolean;
  /** --map: actions for tools/call requests. */
  actions?: ActionHook;
  /** Monotonic milliseconds. */
  now: () => number;
  faults?: ObserverFaults;
  /** The seq the next row will get: an operation is named by its first row's seq (else a count from 1). */
  nextSeq?: () => number;
}

type Dir = "c2s" | "s2c";

interface OpenRequest {
  /** Who sent the request. */
  from: Dir;
  method: string;
  id: Json;
  /**
   * What the row will need of the request's params, taken when it is seen
   * (see `keepOf`): never the whole params once the request is queued, so a
   * client that leaves many large requests unanswered cannot make seam hold them.
   */
  params: Json | undefined;
  /** Digest of params.arguments (tools/call, prompts/get) or of the params (server requests). */
  digest?: string;
  seen: number;
  /** --map: the call's action (or why none was made) and how posting it went. */
  action?: ActionMade;
  posting?: ActionPosting;
  /** Why the call is refused, once it is. */
  refusal?: string;
  /** 2026-07-28: the protocol version the request's _meta declares. */
  era?: string;
  /** 2026-07-28: what the request brings to an operation (a retry's state, a task id). */
  round?: RoundInfo;
  /** --raw: the arguments have no line form (read leniently: too deep, or an over-long integer), so the row omits them. */
  argsUnrecorded?: boolean;
}

/** What a --raw row says in place of a value it cannot hold. */
const NO_LINE_FORM = "no JSON line form (nested beyond 1000 levels or an integer over 4300 digits); see the digest";

/** Counters reported in session_end. */
export interface ObserverCounts {
  calls: number;
  unanswered: number;
  cancelled: number;
  late_responses: number;
  unmatched_responses: number;
  unparsed_frames: number;
  /** Client frames that JSON parsers read differently (each has an ambiguous_frame row). */
  ambiguous_frames: number;
  oversize_frames_unlogged: number;
}

const encoder = new TextEncoder();

/** The params fields a row reads (tool or prompt name, client info, list cursor, resource uri). */
const KEPT_PARAMS = ["name", "clientInfo", "cursor", "uri"] as const;

/** Methods a client sends whose answers make rows; every other request is paired silently. */
const ROWED_CLIENT_METHODS = new Set([
  "initialize",
  "server/discover",
  "tools/list",
  "tools/call",
  "resources/read",
  "prompts/get",
  "tasks/get",
  "tasks/update",
  "tasks/cancel",
]);

/**
 * The exact identity of a JSON-RPC id, or null when it is not a valid one
 * (JSON-RPC 2.0 §4: a string or a number; MCP narrows numbers to integers and forbids null).
 */
export function requestKey(id: Json | undefined): string | null {
  if (typeof id === "string") return `s${id}`;
  if (typeof id === "number") return Number.isInteger(id) ? `i${id}` : null;
  if (typeof id === "bigint") return `i${id}`;
  return null;
}

/** Milliseconds kept to the microsecond, always written as a float. */
function msSince(start: number, now: number): JsonFloat | number {
  const v = Math.round((now - start) * 1000) / 1000;
  return Number.isInteger(v) ? new JsonFloat(v) : v;
}

export class McpObserver {
  readonly counts: ObserverCounts = {
    calls: 0,
    unanswered: 0,
    cancelled: 0,
    late_responses: 0,
    unmatched_responses: 0,
    unparsed_frames: 0,
    ambiguous_frames: 0,
    oversize_frames_unlogged: 0,
  };
  /** Requests each side sent that the other has not answered yet, keyed by requestKey. */
  private readonly open: Record<Dir, Map<string, OpenRequest[]>>;
  /** Ids of cancelled requests whose answer may still arrive. */
  private readonly cancelledIds: Record<Dir, Map<string, number>> = { c2s: new Map(), s2c: new Map() };
  /** Holds for write-ahead intents and action postings of the frame being observed. */
  private holds: Promise<boolean>[] = [];
  /** The calls of the last client frame that was held (what `refuse` refuses). */
  private heldCalls: OpenRequest[] = [];
  /** 2026-07-28 operations (multi round-trip calls and tasks): src/wrap/operations.ts. */
  readonly operations: OperationBook;
  private readonly clientMeta = new ClientMetaTracker();
  private readonly serverMeta = new ServerMetaTracker();
  /** Set when the last client frame as a whole must be refused (unreadable, or ambiguous under --fail-closed). */
  private frameRefusal: { code: number; message: string } | undefined;
  /** The requests of the last client frame (a refused frame's requests are answered by seam). */
  private frameRequests: OpenRequest[] = [];
  /** The lenient reading of the frame being observed, when the strict parser refused it (for digests). */
  private lenient: Extract<FrameRead, { kind: "parsed" }>["lenient"];
  private s2cUnparsedRows = 0;

  constructor(private readonly o: ObserverOptions) {
    const c2s = new Map<string, OpenRequest[]>();
    this.open = { c2s, s2c: o.faults?.sharedIdTable ? c2s : new Map() };
    let ids = 0;
    this.operations = new OperationBook({
      row: (evt, fields) => o.rows.row(evt, fields),
      nextId: o.nextSeq ?? (() => ++ids),
      raw: o.raw,
      unlinked: o.faults?.unlinkedRounds,
    });
  }

  /**
   * A frame the client sent. Under --write-ahead or --map, returns a promise
   * that resolves once every tools/call in it is recorded as it must be before
   * it is forwarded: true to forward the frame, false to refuse it (then
   * `refuse` answers its calls instead). The relay observes one client frame
   * at a time and forwards or refuses it before the next.
   */
  fromClient(frame: Uint8Array): Promise<boolean> | undefined {
    this.holds = [];
    this.heldCalls = [];
    this.frameRequests = [];
    this.frameRefusal = undefined;
    this.observe("c2s", frame);
    if (this.holds.length === 0) return undefined;
    const holds = this.holds;
    this.holds = [];
    return Promise.all(holds).then((oks) => oks.every(Boolean));
  }

  /**
   * The last held client frame is refused: each of its calls gets a
   * `tool_call` row with status `refused`, and seam's answer line for the
   * client, a JSON-RPC error with code -32000:
   *
   *   {"jsonrpc":"2.0","id":7,"error":{"code":-32000,"message":"recording failed: endpoint answered 500; the call was not forwarded"}}
   */
  refuse(): Uint8Array[] {
    const calls = this.heldCalls;
    this.heldCalls = [];
    const now = this.o.now();
    const fr = this.frameRefusal;
    this.frameRefusal = undefined;
    const first = fr?.message ?? calls.find((p) => p.refusal !== undefined)?.refusal ?? NOT_DURABLE;
    const code = fr?.code ?? REFUSED_CODE;
    const lines: Uint8Array[] = [];
    if (fr !== undefined) lines.push(...this.refuseFrame(fr));
    for (const p of calls) {
      const message = fr?.message ?? p.refusal ?? first;
      lines.push(errorLine(p.id, code, message));
      const key = requestKey(p.id)!;
      const q = this.open.c2s.get(key);
      const at = q?.indexOf(p) ?? -1;
      if (at < 0) continue; // its row is written already (the session ended while it was held)
      q!.splice(at, 1);
      if (q!.length === 0) this.open.c2s.delete(key);
      const error = new Map<string, Json>([
        ["code", code],
        ["message", message],
      ]);
      this.rowFor(p, { error, result: undefined }, now, "refused", message);
    }
    return lines;
  }

  /**
   * The answers to a refused frame's requests other than tools/call (those
   * are `refuse`'s own), or one answer with id null when it had none: then
   * its requests are no longer open.
   */
  private refuseFrame(fr: { code: number; message: string }): Uint8Array[] {
    const pending = this.frameRequests;
    this.frameRequests = [];
    const lines: Uint8Array[] = [];
    for (const p of pending) {
      if (p.method === "tools/call") continue;
      const key = requestKey(p.id)!;
      const q = this.open.c2s.get(key);
      const at = q?.indexOf(p) ?? -1;
      if (at >= 0) {
        q!.splice(at, 1);
        if (q!.length === 0) this.open.c2s.delete(key);
      }
      lines.push(errorLine(p.id, fr.code, fr.message));
    }
    if (pending.length === 0) lines.push(errorLine(null, fr.code, fr.message));
    return lines;
  }

  fromServer(frame: Uint8Array): void {
    this.observe("s2c", frame);
  }

  oversize(_dir: Dir, _length: number): void {
    this.counts.oversize_frames_unlogged++;
  }

  /** What session_end counts of the traffic (zero counts left out); `seam wrap` and `seam proxy` both write them. */
  endCounts(): Fields {
    const c = this.counts;
    const ops = this.operations.counts;
    return {
      calls: c.calls,
      unanswered: c.unanswered || undefined,
      cancelled: c.cancelled || undefined,
      late_responses: c.late_responses || undefined,
      unmatched_responses: c.unmatched_responses || undefined,
      oversize_frames_unlogged: c.oversize_frames_unlogged || undefined,
      unparsed_frames: c.unparsed_frames || undefined,
      operations: ops.operations || undefined,
      abandoned_operations: ops.abandoned || undefined,
      tasks_open: ops.tasks_open || undefined,
      ambiguous_frames: c.ambiguous_frames || undefined,
    };
  }

  /** The session is over: every request still open gets its row, with `reason`. */
  finish(reason: string): void {
    if (this.o.faults?.noUnansweredFlush) return;
    const now = this.o.now();
    for (const dir of ["c2s", "s2c"] as const) {
      if (dir === "s2c" && this.open.s2c === this.open.c2s) break;
      for (const queue of this.open[dir].values()) {
        for (const p of queue) {
          if (this.rowFor(p, undefined, now, "unanswered", reason)) this.counts.unanswered++;
        }
      }
      this.open[dir].clear();
    }
    this.operations.finish(now, reason);
  }

  private observe(dir: Dir, frame: Uint8Array): void {
    // A long answer is read without its payload, unless --raw records results whole.
    const read = readFrame(frame, {
      readings: dir === "c2s",
      skim: dir === "s2c" && !this.o.raw,
      strictOnly: this.o.faults?.strictFrames,
    });
    if (read.kind === "blank") return;
    if (read.kind === "unparsed") {
      this.unparsed(dir, frame, read.reason, true);
      return;
    }
    if (read.readings !== undefined) this.ambiguous(frame, read.readings);
    this.lenient = read.lenient;
    const msg = read.msg;
    if (Array.isArray(msg)) {
      if (msg.length === 0) this.unparsed(dir, frame, "an empty batch", false);
      for (const m of msg) this.message(dir, m, frame);
    } else {
      this.message(dir, msg, frame);
    }
    this.lenient = undefined;
  }

  /**
   * A frame that is no JSON-RPC message gets an `unparsed_frame` row (server
   * frames: the first MAX_S2C_UNPARSED_ROWS of them). A client frame that no
   * stack reads as JSON (`refuse`) is not forwarded under --write-ahead: its
   * row is made durable and the client gets a -32700 parse error from seam.
   */
  private unparsed(dir: Dir, frame: Uint8Array, reason: string, refuse: boolean): void {
    const f = { length: frame.length, digest: digestBytes(frame), head: frame };
    this.unparsedRow(dir, f, reason, refuse, PARSE_ERROR_CODE, "parse error");
  }

  /**
   * A client frame longer than --max-frame, which seam does not read: rowed
   * like a frame no stack reads (an `unparsed_frame` with its length, digest
   * and first bytes), so the server never acts on a frame the ledger has no
   * row for. Under --write-ahead the relay has held it back: it is not
   * forwarded and the client gets -32600 from seam. The hold, as fromClient's.
   */
  longFrame(f: LongFrame): Promise<boolean> | undefined {
    this.holds = [];
    this.heldCalls = [];
    this.frameRequests = [];
    this.frameRefusal = undefined;
    this.unparsedRow(
      "c2s",
      f,
      `${f.length} bytes, longer than --max-frame: not read`,
      true,
      INVALID_REQUEST_CODE,
      "frame too long",
    );
    if (this.holds.length === 0) return undefined;
    const holds = this.holds;
    this.holds = [];
    return Promise.all(holds).then((oks) => oks.every(Boolean));
  }

  private unparsedRow(dir: Dir, f: LongFrame, reason: string, refuse: boolean, code: number, what: string): void {
    this.counts.unparsed_frames++;
    if (dir === "s2c" && this.s2cUnparsedRows++ >= MAX_S2C_UNPARSED_ROWS) return;
    const refused = dir === "c2s" && refuse && this.o.writeAhead;
    const fields: Fields = {
      dir,
      bytes: f.length,
      frame_digest: f.digest,
      head: frameHead(f.head),
      reason,
      refused: refused || undefined,
    };
    if (!refused) {
      this.o.rows.row("unparsed_frame", fields);
      return;
    }
    this.frameRefusal = {
      code,
      message: `seam: ${what}: ${reason}; the frame was not forwarded`,
    };
    this.holds.push(this.o.rows.durable("unparsed_frame", fields).then(() => false));
  }

  /**
   * A client frame whose stacks' readings differ: an `ambiguous_frame` row
   * with status "ambiguous" and every reading. Under --fail-closed the frame is
   * refused (its row durable first); under --write-ahead it is forwarded once
   * the row is durable. Its requests are paired by the first reading.
   */
  private ambiguous(frame: Uint8Array, readings: Reading[]): void {
    this.counts.ambiguous_frames++;
    const fields: Fields = {
      dir: "c2s",
      status: "ambiguous",
      bytes: frame.length,
      frame_digest: digestBytes(frame),
      readings: readings.map(
        (r) =>
          new Map<string, Json>(
            Object.entries({
              stacks: r.stacks,
              refused: r.refused,
              method: r.method,
              rpc_id: r.id,
              tool: r.tool,
              args_digest: r.args_digest,
            }).filter((e): e is [string, Json] => e[1] !== undefined),
          ),
      ),
      refused: this.o.failClosed || undefined,
    };
    if (this.o.failClosed) {
      this.frameRefusal = { code: REFUSED_CODE, message: AMBIGUOUS };
      this.holds.push(this.o.rows.durable("ambiguous_frame", fields).then(() => false));
    } else if (this.o.writeAhead) {
      this.holds.push(this.o.rows.durable("ambiguous_frame", fields).then(() => true));
    } else {
      this.o.rows.row("ambiguous_frame", fields);
    }
  }

  private message(dir: Dir, m: Json, frame: Uint8Array): void {
    if (!isObject(m)) {
      this.unparsed(dir, frame, "not a JSON-RPC message", false);
      return;
    }
    const method = getField(m, "method");
    const hasId = getField(m, "id") !== undefined;
    const id = getField(m, "id");
    if (typeof method === "string") {
      const params = getField(m, "params");
      if (!hasId) {
        if (method === "notifications/cancelled") this.cancel(dir === "c2s" ? "c2s" : "s2c", params);
        else if (method === "tools/call" && dir === "c2s") this.invalidCall(id, params);
        else if (method === "notifications/tasks" && dir === "s2c") this.operations.taskNotice(params, this.o.now());
        return;
      }
      const key = requestKey(id);
      if (key === null) {
        if (method === "tools/call" && dir === "c2s") this.invalidCall(id, params);
        return;
      }
      const p: OpenRequest = { from: dir, method, id: id!, params, seen: this.o.now() };
      if (dir === "c2s") this.frameRequests.push(p);
      const table = this.open[dir];
      const q = table.get(key);
      if (q) q.push(p);
      else table.set(key, [p]);
      if (dir === "c2s") this.protocolOf(p);
      if (dir === "c2s" && method === "tools/call") this.requested(p);
      this.keepOf(p);
      return;
    }
    if (!hasId) {
      this.unparsed(dir, frame, "not a JSON-RPC message", false);
      return;
    }
    // An answer travels the other way from its request.
    const reqDir: Dir = dir === "s2c" ? "c2s" : "s2c";
    const key = requestKey(id);
    const q = key === null ? undefined : this.open[reqDir].get(key);
    const p = q?.shift();
    if (q && q.length === 0) this.open[reqDir].delete(key!);
    if (!p) {
      const late = key === null ? 0 : (this.cancelledIds[reqDir].get(key) ?? 0);
      if (late > 0) {
        this.counts.late_responses++;
        if (late === 1) this.cancelledIds[reqDir].delete(key!);
        else this.cancelledIds[reqDir].set(key!, late - 1);
      } else {
        this.counts.unmatched_responses++;
      }
      return;
    }
    this.rowFor(p, { error: getField(m, "error"), result: getField(m, "result") }, this.o.now());
  }

  /**
   * A tools/call request was seen. With --map, a mapped call's action is made
   * now (so requested_at precedes every effect) and posted; its intent row
   * follows the posting, with `action_posted` (+ `action_post_error`). Under
   * --write-ahead every call has an intent row, durable before forwarding.
   */
  private requested(p: OpenRequest): void {
    const tool = getField(p.params ?? null, "name");
    const fields: Fields = {
      tool: typeof tool === "string" ? tool : undefined,
      rpc_id: p.id,
      args_digest: (p.digest ??= this.argsDigest(p.params)),
    };
    const made = this.o.actions?.make(typeof tool === "string" ? tool : undefined, p.id, p.params);
    p.action = made;
    if (made !== undefined && "action" in made) {
      this.heldCalls.push(p);
      this.holds.push(
        made.posting.then((posting) => {
          p.posting = posting;
          if (posting.refuse)
            p.refusal = `recording failed: ${posting.error ?? "the action could not be posted"}; the call was not forwarded`;
          return this.intent(p, { ...fields, ...actionFields(p) });
        }),
      );
    } else if (this.o.writeAhead) {
      this.heldCalls.push(p);
      this.holds.push(this.intent(p, { ...fields, ...actionFields(p), ...this.operations.intentFields(p.round) }));
    }
    if (this.o.faults?.doubleRow) this.o.rows.row("tool_call", { ...fields, status: "requested" });
  }

  /**
   * 2026-07-28: a client request's era and operation, read from its full
   * params before they are trimmed: the protocol version its _meta declares,
   * an `mcp_client` row when the client identity it declares is new or
   * changed, and (tools/call, tasks/*) which operation it belongs to.
   */
  private protocolOf(p: OpenRequest): void {
    const meta = requestMeta(p.params);
    p.era = meta?.protocolVersion;
    const declared = this.clientMeta.declared(meta);
    if (declared !== undefined) this.o.rows.row("mcp_client", { rpc_id: p.id, method: p.method, ...declared });
    const target = getField(p.params ?? null, p.method === "resources/read" ? "uri" : "name");
    const named = p.method === "tools/call" || p.method === "prompts/get";
    const argsD = named ? (p.digest ??= this.argsDigest(p.params)) : undefined;
    p.round = this.operations.request(p.method, p.params, typeof target === "string" ? target : undefined, argsD);
  }

  /**
   * 2026-07-28: the server identity a result carries in its _meta, written as
   * an `mcp_server` row (before the answer's own row) when it is new or
   * changed; the answers to initialize and server/discover name it in their
   * own rows.
   */
  private serverOf(p: OpenRequest, result: Json | undefined): void {
    if (result === undefined || !isObject(result)) return;
    const info = resultServerInfo(result);
    if (info === undefined || !this.serverMeta.changed(info)) return;
    if (p.method === "initialize" || p.method === "server/discover") return;
    this.o.rows.row("mcp_server", { rpc_id: p.id, method: p.method, server_info: info });
  }

  /**
   * A multi round-trip request's answer (or end), for its row: its operation
   * fields, and the operation_end to write after the row (src/wrap/operations.ts).
   */
  private roundOf(
    p: OpenRequest,
    a: { outcome: string; result: Json | undefined; now: number; reason?: string; resultDigest?: string },
  ) {
    const target = getField(p.params ?? null, p.method === "resources/read" ? "uri" : "name");
    return this.operations.call(p.round, {
      method: p.method,
      tool: typeof target === "string" ? target : undefined,
      argsDigest: p.digest,
      seen: p.seen,
      ...a,
    });
  }

  /** Writes a call's intent row; resolves whether the call may be forwarded. */
  private intent(p: OpenRequest, fields: Fields): Promise<boolean> {
    // An action that went to an endpoint is on record there: its intent row
    // must be on disk before the call goes on, or a crash would leave the
    // API holding an action the ledger does not.
    const durable = this.o.writeAhead || p.posting?.posted !== undefined;
    const written = durable
      ? this.o.rows.durable("tool_call_intent", fields)
      : (this.o.rows.row("tool_call_intent", fields), Promise.resolve(true));
    return written.then((durable) => {
      if (p.refusal !== undefined) return false;
      if (durable || !this.o.failClosed) return true;
      p.refusal = NOT_DURABLE;
      return false;
    });
  }

  private invalidCall(id: Json | undefined, params: Json | undefined): void {
    const tool = getField(params ?? null, "name");
    this.counts.calls++;
    this.o.rows.row("tool_call", {
      tool: typeof tool === "string" ? tool : undefined,
      rpc_id: id,
      args_digest: this.argsDigest(params),
      status: "invalid_id",
      args: this.o.raw ? this.rawValue(getField(params ?? null, "arguments") ?? new Map()) : undefined,
    });
  }

  private cancel(requestsDir: Dir, params: Json | undefined): void {
    // notifications/cancelled names a request the *sender* made earlier.
    const key = requestKey(getField(params ?? null, "requestId"));
    if (key === null) return;
    const q = this.open[requestsDir].get(key);
    const p = q?.shift();
    if (!p) return;
    if (q!.length === 0) this.open[requestsDir].delete(key);
    this.cancelledIds[requestsDir].set(key, (this.cancelledIds[requestsDir].get(key) ?? 0) + 1);
    const reason = getField(params ?? null, "reason");
    if (this.rowFor(p, undefined, this.o.now(), "cancelled", typeof reason === "string" ? reason : undefined)) {
      this.counts.cancelled++;
    }
  }

  /**
   * Writes the row for a finished request: answered (`answer` given) or closed
   * without one (`closed` = "cancelled" | "unanswered"), or refused by seam
   * (`closed` = "refused", `answer` = seam's own error). Returns whether a row was written.
   */
  private rowFor(
    p: OpenRequest,
    answer: { error: Json | undefined; result: Json | undefined } | undefined,
    now: number,
    closed?: string,
    reason?: string,
  ): boolean {
    const raw = this.o.raw;
    const ms = msSince(p.seen, now);
    const outcome = closed ?? statusOf(answer!.error, answer!.result);
    const answerValue = answer ? (answer.error !== undefined ? answer.error : (answer.result ?? null)) : undefined;
    const resultDigest = answerValue === undefined ? undefined : answerDigest(answerValue);
    const errorCode = answer?.error !== undefined ? getField(answer.error, "code") : undefined;
    const params = p.params ?? null;
    if (p.from === "s2c") {
      this.o.rows.row("server_request", {
        method: p.method,
        rpc_id: p.id,
        params_digest: p.digest,
        result_digest: resultDigest,
        status: outcome,
        ms,
        reason,
        error_code: errorCode,
        params: raw ? this.rawValue(params) : undefined,
        result: raw ? this.rawValue(answerValue) : undefined,
      });
      return true;
    }
    const result = answer?.result;
    this.serverOf(p, result);
    switch (p.method) {
      case "tools/call": {
        this.counts.calls++;
        const round = this.roundOf(p, { outcome, result, now, reason, resultDigest });
        this.namedRow(
          "tool_call",
          "tool",
          p,
          { resultDigest, outcome, ms, reason, errorCode, answerValue },
          { ...actionFields(p), ...round.fields, ...eraFields(p, result) },
        );
        round.end?.();
        return true;
      }
      case "tasks/get":
      case "tasks/update":
      case "tasks/cancel": {
        const task = this.operations.task(p.method, p.round, { outcome, result, now });
        this.o.rows.row(
          p.method === "tasks/get" ? "task_get" : p.method === "tasks/update" ? "task_update" : "task_cancel",
          {
            rpc_id: p.id,
            status: outcome,
            ...task.fields,
            result_digest: resultDigest,
            ms,
            reason,
            error_code: errorCode,
            protocol_version: p.era,
            result: raw ? this.rawValue(answerValue) : undefined,
          },
        );
        task.end?.();
        return true;
      }
      case "initialize":
      case "server/discover": {
        const clientInfo = getField(params, "clientInfo");
        this.o.rows.row(p.method === "initialize" ? "mcp_initialize" : "mcp_discover", {
          rpc_id: p.id,
          status: outcome,
          client_info: clientInfo,
          server_info: result === undefined ? undefined : (getField(result, "serverInfo") ?? resultServerInfo(result)),
          protocol_version: (result === undefined ? undefined : getField(result, "protocolVersion")) ?? p.era,
          result_digest: resultDigest,
          ms,
          reason,
          error_code: errorCode,
        });
        return true;
      }
      case "tools/list": {
        const tools = result === undefined ? undefined : getField(result, "tools");
        const names = Array.isArray(tools)
          ? tools
              .map((t) => getField(t, "name"))
              .filter((n): n is string => typeof n === "string")
              .sort(compareCodePoints)
          : undefined;
        const cursor = getField(params, "cursor");
        const next = result === undefined ? undefined : getField(result, "nextCursor");
        this.o.rows.row("tools_list", {
          rpc_id: p.id,
          status: outcome,
          tools: names,
          tool_count: Array.isArray(tools) ? tools.length : undefined,
          tools_digest: tools === undefined ? undefined : digestJson(tools),
          cursor: typeof cursor === "string" ? cursor : undefined,
          next_cursor: typeof next === "string" ? next : undefined,
          ms,
          reason,
          error_code: errorCode,
          protocol_version: p.era,
        });
        return true;
      }
      case "resources/read": {
        const uri = getField(params, "uri");
        const round = this.roundOf(p, { outcome, result, now, reason, resultDigest });
        this.o.rows.row("resource_read", {
          uri: typeof uri === "string" ? uri : undefined,
          rpc_id: p.id,
          result_digest: resultDigest,
          status: outcome,
          ms,
          reason,
          error_code: errorCode,
          ...round.fields,
          ...eraFields(p, result),
          result: raw ? this.rawValue(answerValue) : undefined,
        });
        round.end?.();
        return true;
      }
      case "prompts/get": {
        const round = this.roundOf(p, { outcome, result, now, reason, resultDigest });
        this.namedRow(
          "prompt_get",
          "prompt",
          p,
          { resultDigest, outcome, ms, reason, errorCode, answerValue },
          { ...round.fields, ...eraFields(p, result) },
        );
        round.end?.();
        return true;
      }
      default:
        return false;
    }
  }

  /** Replaces a queued request's params with what its row needs (and its digest). */
  private keepOf(p: OpenRequest): void {
    const full = p.params ?? null;
    if (p.from === "s2c") {
      p.digest = digestJson(full);
      if (!this.o.raw) p.params = undefined;
      return;
    }
    if (!ROWED_CLIENT_METHODS.has(p.method)) {
      p.params = undefined;
      return;
    }
    if (p.method === "tools/call" || p.method === "prompts/get") p.digest ??= this.argsDigest(full);
    const kept = new Map<string, Json>();
    if (p.method.startsWith("tasks/")) {
      p.params = kept;
      return;
    }
    for (const k of KEPT_PARAMS) {
      const v = getField(full, k);
      if (v !== undefined) kept.set(k, v);
    }
    if (this.o.raw) {
      const args = getField(full, "arguments");
      if (args !== undefined && this.rawValue(args) !== args) p.argsUnrecorded = true;
      else if (args !== undefined) kept.set("arguments", args);
    }
    p.params = kept;
  }

  /**
   * A --raw value as the row can hold it: itself, or NO_LINE_FORM in its
   * place when it has no line form, which only a frame read leniently can
   * carry (the row would otherwise be lost whole).
   */
  private rawValue(v: Json | undefined): Json | undefined {
    if (v === undefined || this.lenient === undefined) return v;
    try {
      lineForm([[v]]); // as deep as it sits in its row, and one more
      return v;
    } catch {
      return NO_LINE_FORM;
    }
  }

  /** Digest of params.arguments; for a frame only the lenient parser reads, by its recipe (src/wrap/frame-reading.ts). */
  private argsDigest(params: Json | undefined): string {
    const l = this.lenient;
    return (l !== undefined ? lenientArgsDigest(params, l) : undefined) ?? argsDigest(params);
  }

  /**
   * The row of a request that names something and carries arguments:
   * tool_call (`tool`) and prompt_get (`prompt`), in the same field order.
   */
  private namedRow(
    evt: string,
    nameKey: "tool" | "prompt",
    p: OpenRequest,
    a: { resultDigest?: string; outcome: string; ms: Json; reason?: string; errorCode?: Json; answerValue?: Json },
    extra: Fields = {},
  ): void {
    const params = p.params ?? null;
    const name = getField(params, "name");
    const raw = this.o.raw;
    this.o.rows.row(evt, {
      [nameKey]: typeof name === "string" ? name : undefined,
      rpc_id: p.id,
      args_digest: p.digest,
      result_digest: a.resultDigest,
      status: a.outcome,
      ms: a.ms,
      reason: a.reason,
      error_code: a.errorCode,
      ...extra,
      args: raw ? (p.argsUnrecorded ? NO_LINE_FORM : (getField(params, "arguments") ?? new Map())) : undefined,
      result: raw ? this.rawValue(a.answerValue) : undefined,
    });
  }
}

/** A call's action fields for its rows: `action`, `action_posted`, `action_post_error`, or `action_skipped`. */
function actionFields(p: OpenRequest): Fields {
  const made = p.action;
  if (made === undefined) return {};
  if ("skipped" in made) return { action_skipped: made.skipped };
  return {
    action: made.action,
    action_posted: p.posting?.posted,
    action_post_status: p.posting?.existing,
    action_post_error: p.posting?.error,
  };
}

/** A request row's 2026-07-28 fields: the era its _meta declared, and a resultType seam cannot read. */
function eraFields(p: OpenRequest, result: Json | undefined): Fields {
  return { protocol_version: p.era, result_type: unknownResultType(result) };
}

/**
 * A JSON-RPC id as JSON text, for writing it back in an answer: integers of
 * any size exactly, strings quoted; anything else is no id (undefined).
 */
export function idJson(id: Json | undefined): string | undefined {
  if (typeof id === "bigint") return id.toString();
  if (typeof id === "number") return String(id);
  if (typeof id === "string") return JSON.stringify(id);
  return undefined;
}

/** seam's own JSON-RPC error answer, as one line. */
function errorLine(id: Json | null, code: number, message: string): Uint8Array {
  return encoder.encode(
    `{"jsonrpc":"2.0","id":${idJson(id ?? undefined) ?? "null"},"error":{"code":${code},"message":${JSON.stringify(message)}}}\n`,
  );
}

/**
 * `ok`, `error` (a JSON-RPC error or a result with isError: true), or what a
 * 2026-07-28 resultType says: `input_required`, `task`, `unknown_result_type`
 * (src/wrap/protocol-meta.ts).
 */
function statusOf(error: Json | undefined, result: Json | undefined): string {
  if (error !== undefined) return "error";
  if (result !== undefined && isObject(result)) {
    if (getField(result, "isError") === true) return "error";
    const typed = resultTypeStatus(result);
    if (typed !== undefined) return typed;
  }
  return "ok";
}

/** Digest of params.arguments; a call without arguments digests as `{}`. */
function argsDigest(params: Json | undefined): string {
  const args = params === undefined ? undefined : getField(params, "arguments");
  return digestJson(args === undefined ? new Map() : args);
}
