/**
 * The row of a request once it is over: answered, cancelled, left unanswered
 * at the end, or refused by seam. Each method a row is made for has its own
 * row (tool_call, resource_read, prompt_get, tools_list, mcp_initialize,
 * mcp_discover, task_*, server_request); what a row needs of the request's
 * params is kept when the request is seen (keepOf), not the params.
 */
import { compareCodePoints, lineForm } from "../core/canonical/index.ts";
import { digestJson } from "../core/digest.ts";
import { getField, isObject, type Json } from "../core/json.ts";
import { msFloat } from "../format/row.ts";
import { toolDigestFields } from "../format/tool-defs.ts";
import type { FrameRead } from "./frame-reading.ts";
import { lenientArgsDigest } from "./json-stacks.ts";
import { answerDigest } from "./large-answer.ts";
import type { Fields, ObserverCounts, ObserverOptions } from "./observer-options.ts";
import { type OperationBook, outsideOperations } from "./operation-book.ts";
import type { OpenRequest } from "./pairing.ts";
import { resultServerInfo, resultTypeStatus, ServerMetaTracker, unknownResultType } from "./protocol-era.ts";

/** What a --raw row says in place of a value it cannot hold. */
const NO_LINE_FORM = "no JSON line form (nested beyond 1000 levels or an integer over 4300 digits); see the digest";

/** The params fields a row reads (tool or prompt name, client info, list cursor, resource uri). */
const KEPT_PARAMS = ["name", "clientInfo", "cursor", "uri"] as const;

/**
 * Client requests rowed by their method and the digest of their params
 * alone (client_request): listings and completions, whose params a row
 * cannot name in fields of its own, kept so that a replay can send them again.
 */
export const PARAMS_ROWED_METHODS: ReadonlySet<string> = new Set([
  "resources/list",
  "resources/templates/list",
  "prompts/list",
  "completion/complete",
]);

/** Methods a client sends whose answers make rows; every other request is paired silently. */
const ROWED_CLIENT_METHODS = new Set([
  ...PARAMS_ROWED_METHODS,
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

/** An answer's error or result, as its frame carries them. */
export type Answer = { error: Json | undefined; result: Json | undefined };

/** Writes the rows of finished requests, through the observer's RowSink. */
export class RequestRows {
  /** The lenient reading of the frame being observed, when the strict parser refused it (for digests). */
  lenient: Extract<FrameRead, { kind: "parsed" }>["lenient"];
  private readonly serverMeta = new ServerMetaTracker();
  /** The result_digest of the last request rowFor was given (undefined when it had no answer). */
  digest: string | undefined;
  /** The tools_digest of the last tools/list rowFor was given an answer with tools to (undefined otherwise). */
  toolsDigest: string | undefined;

  constructor(
    private readonly o: ObserverOptions,
    private readonly counts: ObserverCounts,
    private readonly operations: OperationBook,
  ) {}

  /**
   * Writes the row for a finished request: answered (`answer` given) or closed
   * without one (`closed` = "cancelled" | "unanswered"), or refused by seam
   * (`closed` = "refused", `answer` = seam's own error). `answerId`: the
   * answer named the request only under an SDK client's id rule; the row's
   * status is then `ambiguous` and it carries that id. Returns whether a row was written.
   */
  rowFor(
    p: OpenRequest,
    answer: Answer | undefined,
    now: number,
    closed?: string,
    reason?: string,
    answerId?: Json,
  ): boolean {
    const raw = this.o.raw;
    const ms = msFloat(now - p.seen);
    const outcome = closed ?? statusOf(answer!.error, answer!.result);
    const delivered = answer ? answerValue(answer) : undefined;
    const resultDigest = delivered === undefined ? undefined : answerDigest(delivered);
    this.digest = resultDigest;
    this.toolsDigest = undefined;
    const status = answerId === undefined ? outcome : "ambiguous";
    const errorCode = answer?.error !== undefined ? getField(answer.error, "code") : undefined;
    const params = p.params ?? null;
    // How it ended, in the order the rows of answered requests give it.
    const ended = { result_digest: resultDigest, status, answer_id: answerId, ms, reason, error_code: errorCode };
    if (p.from === "s2c" || PARAMS_ROWED_METHODS.has(p.method)) {
      if (p.from === "c2s") this.serverOf(p, answer?.result);
      this.o.rows.row(p.from === "s2c" ? "server_request" : "client_request", {
        method: p.method,
        rpc_id: p.id,
        params_digest: p.digest,
        ...ended,
        params: raw ? this.rawValue(params) : undefined,
        result: raw ? this.rawValue(delivered) : undefined,
      });
      return true;
    }
    const result = answer?.result;
    this.serverOf(p, result);
    switch (p.method) {
      case "tools/call": {
        this.counts.calls++;
        const a = { resultDigest, status, answerId, ms, reason, errorCode, answerValue: delivered };
        // Most calls belong to no operation and carry no action: their row has
        // only the era fields beyond the named row's own.
        if (p.action === undefined && outsideOperations(p.round, outcome)) {
          this.namedRow("tool_call", "tool", p, a, eraFields(p, result));
          return true;
        }
        const round = this.roundOf(p, { outcome, result, now, reason, resultDigest });
        this.namedRow("tool_call", "tool", p, a, { ...actionFields(p), ...round.fields, ...eraFields(p, result) });
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
            status,
            answer_id: answerId,
            ...task.fields,
            result_digest: resultDigest,
            ms,
            reason,
            error_code: errorCode,
            protocol_version: p.era,
            result: raw ? this.rawValue(delivered) : undefined,
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
          status,
          answer_id: answerId,
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
        this.toolsDigest = tools === undefined ? undefined : digestJson(tools);
        this.o.rows.row("tools_list", {
          rpc_id: p.id,
          status,
          answer_id: answerId,
          tools: names,
          tool_count: Array.isArray(tools) ? tools.length : undefined,
          tools_digest: this.toolsDigest,
          ...toolDigestFields(tools),
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
          ...ended,
          ...round.fields,
          ...eraFields(p, result),
          result: raw ? this.rawValue(delivered) : undefined,
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
          { resultDigest, status, answerId, ms, reason, errorCode, answerValue: delivered },
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
  keepOf(p: OpenRequest): void {
    const full = p.params ?? null;
    if (p.from === "s2c" || PARAMS_ROWED_METHODS.has(p.method)) {
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
  rawValue(v: Json | undefined): Json | undefined {
    if (v === undefined || this.lenient === undefined) return v;
    try {
      lineForm([[v]]); // as deep as it sits in its row, and one more
      return v;
    } catch {
      return NO_LINE_FORM;
    }
  }

  /** Digest of params.arguments; for a frame only the lenient parser reads, by its recipe (src/observe/json-stacks.ts). */
  argsDigest(params: Json | undefined): string {
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
    a: {
      resultDigest?: string;
      status: string;
      answerId?: Json;
      ms: Json;
      reason?: string;
      errorCode?: Json;
      answerValue?: Json;
    },
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
      status: a.status,
      answer_id: a.answerId,
      ms: a.ms,
      reason: a.reason,
      error_code: a.errorCode,
      ...extra,
      args: raw ? (p.argsUnrecorded ? NO_LINE_FORM : (getField(params, "arguments") ?? new Map())) : undefined,
      result: raw ? this.rawValue(a.answerValue) : undefined,
    });
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
   * fields, and the operation_end to write after the row (src/observe/operation-book.ts).
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
}

/** A call's action fields for its rows: `action`, `action_posted`, `action_post_error`, or `action_skipped`. */
export function actionFields(p: OpenRequest): Fields {
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
 * `ok`, `error` (a JSON-RPC error or a result with isError: true), or what a
 * 2026-07-28 resultType says: `input_required`, `task`, `unknown_result_type`
 * (src/observe/protocol-era.ts).
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

/** An answer's status as its request's row would say it (statusOf). */
export function answerStatus(a: Answer): string {
  return statusOf(a.error, a.result);
}

/** What an answer delivers, the value its `result_digest` is of: its error, else its result (null when it has neither). */
export function answerValue(a: Answer): Json {
  return a.error !== undefined ? a.error : (a.result ?? null);
}

/** Digest of params.arguments; a call without arguments digests as `{}`. */
function argsDigest(params: Json | undefined): string {
  const args = params === undefined ? undefined : getField(params, "arguments");
  return digestJson(args === undefined ? new Map() : args);
}
