/**
 * Observing MCP messages and pairing requests with their answers.
 *
 * The observer sees copies of frames the relay has already forwarded (except
 * under --write-ahead, where a tools/call waits for its intent row). It turns
 * them into ledger rows through a RowSink. It never throws: a frame it cannot
 * understand is counted, never fatal. Batches are taken element by element.
 *
 * Which answer belongs to which request is src/observe/pairing.ts; the row a
 * finished request gets, src/observe/request-rows.ts; seam's own answers to
 * what it refuses, src/observe/own-answers.ts.
 */
import { digestBytes } from "../core/digest.ts";
import { getField, isObject, type Json } from "../core/json.ts";
import { answerShape } from "./answer-shape.ts";
import { FrameHold } from "./frame-hold.ts";
import { frameHead, type ReadOptions, readFrame } from "./frame-reading.ts";
import type { LongFrame } from "./frames.ts";
import type { Reading } from "./json-stacks.ts";
import { answerDigest } from "./large-answer.ts";
import type { Fields, ObserverCounts, ObserverOptions } from "./observer-options.ts";
import { OperationBook } from "./operation-book.ts";
import { AMBIGUOUS, INVALID_REQUEST_CODE, NOT_DURABLE, PARSE_ERROR_CODE, REFUSED_CODE } from "./own-answers.ts";
import { type Answered, type Dir, type OpenRequest, RequestTable, requestKey } from "./pairing.ts";
import { ClientMetaTracker, requestMeta } from "./protocol-era.ts";
import {
  type Answer,
  actionFields,
  answerStatus,
  answerValue,
  PARAMS_ROWED_METHODS,
  RequestRows,
} from "./request-rows.ts";

/** Where a tools/list answer's tools lie in its message: kept under the row's tools_digest (--payloads). */
const TOOLS = ["result", "tools"] as const;
/** Where a request's payload lies in its message (--payloads): a call's arguments, a server request's params. */
const ARGUMENTS = ["params", "arguments"] as const;
const PARAMS = ["params"] as const;
/** A call without arguments is digested as `{}` (src/observe/request-rows.ts): its payload is that. */
const NO_ARGUMENTS = new TextEncoder().encode("{}");
/** The payload of a request without params, digested as null (request-rows.ts). */
const NO_PARAMS = new TextEncoder().encode("null");

/** Where an answer's payload lies: its message, and its member that a row's result_digest is of. */
interface AnswerAt {
  frame: Uint8Array;
  index: number;
  member: "result" | "error";
}

/** Server frames rowed as unparsed_frame at most, per session (the rest are counted). */
const MAX_S2C_UNPARSED_ROWS = 100;

/** Keys that make a JSON object a JSON-RPC message to look at. */
const RPC_KEYS = ["jsonrpc", "id", "method", "result", "error"] as const;

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
    ambiguous_answers: 0,
    duplicate_answers: 0,
    sse_ambiguous: 0,
    undecoded_bodies: 0,
    ambiguous_bodies: 0,
  };
  private readonly table: RequestTable;
  private readonly rows: RequestRows;
  private readonly hold = new FrameHold();
  /** 2026-07-28 operations (multi round-trip calls and tasks): src/observe/operation-book.ts. */
  readonly operations: OperationBook;
  private readonly clientMeta = new ClientMetaTracker();
  private s2cUnparsedRows = 0;
  /** How each direction's frames are read (made once: every frame is read with them). */
  private readonly reading: Record<Dir, ReadOptions>;

  constructor(private readonly o: ObserverOptions) {
    // A long answer is read without its payload, unless --raw records results whole.
    this.reading = {
      c2s: { readings: true, skim: false, strictOnly: o.faults?.strictFrames },
      s2c: { readings: false, skim: !o.raw, strictOnly: o.faults?.strictFrames },
    };
    this.table = new RequestTable(o.faults?.sharedIdTable === true);
    let ids = 0;
    this.operations = new OperationBook({
      row: (evt, fields) => o.rows.row(evt, fields),
      nextId: o.nextSeq ?? (() => ++ids),
      raw: o.raw,
      unlinked: o.faults?.unlinkedRounds,
    });
    this.rows = new RequestRows(o, this.counts, this.operations);
  }

  /**
   * A frame the client sent. Under --write-ahead or --map, returns a promise
   * that resolves once every tools/call in it is recorded as it must be before
   * it is forwarded: true to forward the frame, false to refuse it (then
   * `refuse` answers its calls instead). The relay observes one client frame
   * at a time and forwards or refuses it before the next.
   */
  fromClient(frame: Uint8Array): Promise<boolean> | undefined {
    this.hold.begin();
    this.observe("c2s", frame);
    return this.hold.verdict();
  }

  /**
   * The last held client frame is refused: each of its calls gets a
   * `tool_call` row with status `refused`, and seam's answer line for the
   * client, a JSON-RPC error with code -32000:
   *
   *   {"jsonrpc":"2.0","id":7,"error":{"code":-32000,"message":"recording failed: endpoint answered 500; the call was not forwarded"}}
   */
  refuse(): Uint8Array[] {
    return this.hold.refuse(this.o.now(), this.table, this.rows);
  }

  fromServer(frame: Uint8Array): void {
    this.observe("s2c", frame);
  }

  /**
   * An SSE event the SDK clients do not read as a message, or read where the
   * HTML standard's reader does not (src/proxy/sse.ts, BodySink.other): an
   * `sse_ambiguous` row when its data is a JSON-RPC message (`reason`
   * "event_type": its event type is not `message`; "final_cr": the stream
   * ended on the CR of its blank line). It pairs with nothing.
   */
  sseEvent(why: "event_type" | "final_cr", type: Uint8Array, data: Uint8Array | undefined, length: number): void {
    const read = data === undefined ? undefined : readFrame(data, this.reading.s2c);
    const msg = read?.kind === "parsed" ? read.msg : undefined;
    const first = Array.isArray(msg) ? msg[0] : msg;
    // A payload that is no JSON-RPC message (a ping's text, a progress note) is no reader's answer.
    if (
      data !== undefined &&
      (first === undefined || !isObject(first) || !RPC_KEYS.some((k) => getField(first, k) !== undefined))
    )
      return;
    const method = first === undefined ? undefined : getField(first, "method");
    this.counts.sse_ambiguous++;
    this.o.rows.row("sse_ambiguous", {
      reason: why,
      event: frameHead(type),
      bytes: length,
      frame_digest: data === undefined ? undefined : digestBytes(data),
      rpc_id: first === undefined ? undefined : getField(first, "id"),
      method: typeof method === "string" ? method : undefined,
    });
  }

  /** An SSE stream began with a BOM's mojibake, which the SDK clients' parser drops and the HTML standard's keeps (src/proxy/sse.ts). */
  sseMojibake(): void {
    this.counts.sse_ambiguous++;
    this.o.rows.row("sse_ambiguous", { reason: "bom_mojibake" });
  }

  /**
   * A compressed server body seam could not decode to observe (src/proxy/sse.ts,
   * DecodedBody): a `body_undecoded` row, since what it answered is unknown.
   */
  undecodedBody(why: string, length: number): void {
    this.counts.undecoded_bodies++;
    this.o.rows.row("body_undecoded", { dir: "s2c", reason: why, bytes: length || undefined });
  }

  /**
   * A server body whose Content-Type the SDK clients read differently
   * (src/proxy/sse.ts, bodyKind): a `body_ambiguous` row. It was observed as
   * the TypeScript SDK reads it.
   */
  ambiguousBody(contentType: string): void {
    this.counts.ambiguous_bodies++;
    this.o.rows.row("body_ambiguous", { dir: "s2c", content_type: contentType });
  }

  oversize(_dir: Dir, _length: number): void {
    this.counts.oversize_frames_unlogged++;
  }

  /** Resolves once every payload observed so far is kept or counted as not (--payloads): before endCounts. */
  async payloadsSettled(): Promise<void> {
    await this.o.payloads?.settled();
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
      ambiguous_answers: c.ambiguous_answers || undefined,
      duplicate_answers: c.duplicate_answers || undefined,
      sse_ambiguous: c.sse_ambiguous || undefined,
      undecoded_bodies: c.undecoded_bodies || undefined,
      ambiguous_bodies: c.ambiguous_bodies || undefined,
      payloads_unwritten: this.o.payloads?.unwritten || undefined,
    };
  }

  /** An answer's payload, kept under `digest` (--payloads). */
  private keepAnswer(digest: string | undefined, at: AnswerAt): void {
    this.o.payloads?.keep(digest, at.frame, at.index, [at.member]);
  }

  /** The session is over: every request still open gets its row, with `reason`. */
  finish(reason: string): void {
    if (this.o.faults?.noUnansweredFlush) return;
    const now = this.o.now();
    this.table.drain((p) => {
      if (this.rows.rowFor(p, undefined, now, "unanswered", reason)) this.counts.unanswered++;
    });
    this.operations.finish(now, reason);
  }

  private observe(dir: Dir, frame: Uint8Array): void {
    const read = readFrame(frame, this.reading[dir]);
    if (read.kind === "blank") return;
    if (read.kind === "unparsed") {
      this.unparsed(dir, frame, read.reason, true);
      return;
    }
    if (read.readings !== undefined) this.ambiguous(frame, read.readings);
    this.rows.lenient = read.lenient;
    if (this.o.payloads !== undefined) this.o.payloads.plain = read.plain === true;
    const msg = read.msg;
    if (Array.isArray(msg)) {
      if (msg.length === 0) this.unparsed(dir, frame, "an empty batch", false);
      for (let i = 0; i < msg.length; i++) this.message(dir, msg[i]!, frame, i);
    } else {
      this.message(dir, msg, frame, -1);
    }
    this.rows.lenient = undefined;
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
    this.hold.begin();
    this.unparsedRow(
      "c2s",
      f,
      `${f.length} bytes, longer than --max-frame: not read`,
      true,
      INVALID_REQUEST_CODE,
      "frame too long",
    );
    return this.hold.verdict();
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
    this.hold.frameRefusal = {
      code,
      message: `seam: ${what}: ${reason}; the frame was not forwarded`,
    };
    this.hold.holds.push(this.o.rows.durable("unparsed_frame", fields).then(() => false));
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
      this.hold.frameRefusal = { code: REFUSED_CODE, message: AMBIGUOUS };
      this.hold.holds.push(this.o.rows.durable("ambiguous_frame", fields).then(() => false));
    } else if (this.o.writeAhead) {
      this.hold.holds.push(this.o.rows.durable("ambiguous_frame", fields).then(() => true));
    } else {
      this.o.rows.row("ambiguous_frame", fields);
    }
  }

  /** Message `index` of `frame` (-1: the frame is that one message). */
  private message(dir: Dir, m: Json, frame: Uint8Array, index: number): void {
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
        else if (method === "tools/call" && dir === "c2s") this.invalidCall(id, params, frame, index);
        else if (method === "notifications/tasks" && dir === "s2c") this.operations.taskNotice(params, this.o.now());
        return;
      }
      const key = requestKey(id);
      if (key === null) {
        if (method === "tools/call" && dir === "c2s") this.invalidCall(id, params, frame, index);
        return;
      }
      const p: OpenRequest = { from: dir, method, id: id!, params, seen: this.o.now() };
      if (dir === "c2s") this.hold.frameRequests.push(p);
      this.table.add(key, p);
      if (dir === "c2s") this.protocolOf(p);
      if (dir === "c2s" && method === "tools/call") this.requested(p);
      this.rows.keepOf(p);
      const keeper = this.o.payloads;
      if (keeper !== undefined) {
        if (dir === "s2c" || PARAMS_ROWED_METHODS.has(method)) keeper.keep(p.digest, frame, index, PARAMS, NO_PARAMS);
        else if (method === "tools/call" || method === "prompts/get")
          keeper.keep(p.digest, frame, index, ARGUMENTS, NO_ARGUMENTS);
      }
      return;
    }
    if (!hasId) {
      this.unparsed(dir, frame, "not a JSON-RPC message", false);
      return;
    }
    // An answer travels the other way from its request.
    const reqDir: Dir = dir === "s2c" ? "c2s" : "s2c";
    const key = requestKey(id);
    const answer = { error: getField(m, "error"), result: getField(m, "result") };
    // An answer no SDK reads (src/observe/answer-shape.ts) answers nothing for them: it stays unpaired.
    const shape = answerShape(m);
    // Where a row holds this answer's digest, the answer's payload is kept (--payloads).
    const at: AnswerAt = { frame, index, member: answer.error !== undefined ? "error" : "result" };
    if (shape === "dropped") {
      this.answerUnread(dir, reqDir, id, answer, at);
      return;
    }
    let p = key === null ? undefined : this.table.take(reqDir, key);
    if (p !== undefined && shape === "disputed") {
      this.answerAmbiguous(dir, p, id, answer, "disputed", at);
      return;
    }
    if (p !== undefined) {
      const rowed = this.rows.rowFor(p, answer, this.o.now());
      this.table.answer(p, this.rows.digest);
      if (rowed && p.method !== "tools/list") this.keepAnswer(this.rows.digest, at);
      // A tools_list row names no result, but the digest of its tools: those are kept (what seam mock lists).
      else if (rowed && at.member === "result") this.o.payloads?.keep(this.rows.toolsDigest, frame, index, TOOLS);
      return;
    }
    // An answer seam's exact rule leaves unmatched may be one a client takes.
    p = this.o.faults?.exactIdsOnly ? undefined : this.table.takeCoerced(reqDir, id);
    if (p !== undefined) {
      this.answerAmbiguous(dir, p, id, answer, "id", at);
      return;
    }
    if (this.table.late(reqDir, key)) {
      this.counts.late_responses++;
      return;
    }
    const before = this.table.answeredBefore(reqDir, id);
    if (before !== undefined) {
      this.answerDuplicate(dir, before, id, answer, at);
      return;
    }
    this.counts.unmatched_responses++;
  }

  /**
   * An answer SDK clients differ on (`reason` "id": its id names the open
   * request `p` under an SDK client's rule but not exactly, src/observe/pairing.ts;
   * "disputed": the TypeScript SDK drops it, the Python SDK reads it,
   * src/observe/answer-shape.ts): `p`'s row says `ambiguous` (with this
   * answer's digest), and the answer has its own `answer_ambiguous` row. `p`
   * is closed: a later answer to it is an `answer_duplicate`.
   */
  private answerAmbiguous(
    dir: Dir,
    p: OpenRequest,
    id: Json | undefined,
    answer: Answer,
    reason: string,
    at: AnswerAt,
  ): void {
    this.counts.ambiguous_answers++;
    this.rows.rowFor(p, answer, this.o.now(), undefined, undefined, id);
    const digest = this.rows.digest;
    this.keepAnswer(digest, at);
    this.table.answer(p, digest);
    this.o.rows.row("answer_ambiguous", {
      dir,
      method: p.method,
      rpc_id: p.id,
      answer_id: id,
      reason,
      result_digest: digest,
      status: answerStatus(answer),
    });
  }

  /**
   * An answer no SDK client reads (src/observe/answer-shape.ts): it closes
   * nothing, as it closes nothing for them; an `answer_ambiguous` row
   * (`reason` "dropped") says a less strict reader might have taken it.
   */
  private answerUnread(dir: Dir, reqDir: Dir, id: Json | undefined, answer: Answer, at: AnswerAt): void {
    const p = this.table.peek(reqDir, id);
    if (p === undefined) {
      // It names no open request: no reader would have taken it for one.
      this.counts.unmatched_responses++;
      return;
    }
    this.counts.ambiguous_answers++;
    const digest = answerDigest(answerValue(answer));
    this.o.rows.row("answer_ambiguous", {
      dir,
      method: p.method,
      rpc_id: p.id,
      answer_id: id,
      reason: "dropped",
      result_digest: digest,
    });
    this.keepAnswer(digest, at);
  }

  /**
   * A second answer to a request already answered (exactly, or under an SDK
   * client's rule): an `answer_duplicate` row with both digests. The SDK
   * clients keep the first; a client that waited for an exact id may not have.
   */
  private answerDuplicate(dir: Dir, first: Answered, id: Json | undefined, answer: Answer, at: AnswerAt): void {
    this.counts.duplicate_answers++;
    const digest = answerDigest(answerValue(answer));
    this.keepAnswer(digest, at);
    this.o.rows.row("answer_duplicate", {
      dir,
      method: first.method,
      rpc_id: first.id,
      answer_id: id,
      result_digest: digest,
      first_result_digest: first.digest,
      status: answerStatus(answer),
    });
  }

  /**
   * A tools/call request was seen. With --map, a mapped call's action is made
   * now (so requested_at precedes every effect) and posted; its intent row
   * follows the posting, with `action_posted` (+ `action_post_error`). Under
   * --write-ahead every call has an intent row, durable before forwarding.
   */
  private requested(p: OpenRequest): void {
    const tool = getField(p.params ?? null, "name");
    const digest = (p.digest ??= this.rows.argsDigest(p.params));
    // Most calls need nothing more here: no action map, no intent row.
    if (this.o.actions === undefined && !this.o.writeAhead && !this.o.faults?.doubleRow) return;
    const fields: Fields = {
      tool: typeof tool === "string" ? tool : undefined,
      rpc_id: p.id,
      args_digest: digest,
    };
    const made = this.o.actions?.make(typeof tool === "string" ? tool : undefined, p.id, p.params);
    p.action = made;
    if (made !== undefined && "action" in made) {
      this.hold.heldCalls.push(p);
      this.hold.holds.push(
        made.posting.then((posting) => {
          p.posting = posting;
          if (posting.refuse)
            p.refusal = `recording failed: ${posting.error ?? "the action could not be posted"}; the call was not forwarded`;
          return this.intent(p, { ...fields, ...actionFields(p) });
        }),
      );
    } else if (this.o.writeAhead) {
      this.hold.heldCalls.push(p);
      this.hold.holds.push(this.intent(p, { ...fields, ...actionFields(p), ...this.operations.intentFields(p.round) }));
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
    const argsD = named ? (p.digest ??= this.rows.argsDigest(p.params)) : undefined;
    p.round = this.operations.request(p.method, p.params, typeof target === "string" ? target : undefined, argsD);
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

  private invalidCall(id: Json | undefined, params: Json | undefined, frame: Uint8Array, index: number): void {
    const tool = getField(params ?? null, "name");
    this.counts.calls++;
    const digest = this.rows.argsDigest(params);
    this.o.payloads?.keep(digest, frame, index, ARGUMENTS, NO_ARGUMENTS);
    this.o.rows.row("tool_call", {
      tool: typeof tool === "string" ? tool : undefined,
      rpc_id: id,
      args_digest: digest,
      status: "invalid_id",
      args: this.o.raw ? this.rows.rawValue(getField(params ?? null, "arguments") ?? new Map()) : undefined,
    });
  }

  /**
   * The client gave up on requests it sent without a notifications/cancelled (it cut the HTTP
   * stream that was to carry their answers, where nothing else can): each still open is cancelled
   * now, with `reason`, as a notifications/cancelled from it would have.
   */
  abandoned(ids: readonly Json[], reason: string): void {
    for (const id of ids) this.cancel("c2s", { requestId: id, reason });
  }

  private cancel(requestsDir: Dir, params: Json | undefined): void {
    // notifications/cancelled names a request the *sender* made earlier.
    const key = requestKey(getField(params ?? null, "requestId"));
    if (key === null) return;
    const p = this.table.take(requestsDir, key);
    if (!p) return;
    this.table.cancelled(requestsDir, key);
    const reason = getField(params ?? null, "reason");
    if (this.rows.rowFor(p, undefined, this.o.now(), "cancelled", typeof reason === "string" ? reason : undefined)) {
      this.counts.cancelled++;
    }
  }
}
