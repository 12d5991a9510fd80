/**
 * `seam replay`: a recording's requests sent again to a server, each
 * answer's digest compared with the one recorded. A session is replayed as
 * it was recorded: an `initialize` made of what its row kept (the
 * negotiated protocol version and the client's info; capabilities were not
 * recorded, so those are declared that the server's recorded requests show
 * the client had: sampling, elicitation, roots), `notifications/initialized`,
 * then each answered request a row can rebuild, in ledger order, one at a
 * time:
 *
 *   tools/call, prompts/get   the name, and the payload of args_digest as params.arguments
 *   resources/read            params.uri
 *   tools/list                params.cursor (none for the first page); the answer's
 *                             result.tools is compared, what tools_digest is of
 *   resources/list, prompts/list, resources/templates/list, completion/complete
 *                             the payload of params_digest (client_request rows)
 *
 * Requests the server sends meanwhile get the answer recorded for the same
 * method and params digest in that session (the recorded sequence, the last
 * one again once used up), else an error; `ping` gets `{}`. The transport is
 * a Channel: a server's stdio, or Streamable HTTP (src/mock/replay-http.ts).
 */
import { digestJson, digestJsonUtf8, digestParts } from "../core/digest.ts";
import { getField, isObject, type Json, type JsonObject } from "../core/json.ts";
import { isSeamsOwn } from "../format/row.ts";
import { FrameSplitter } from "../observe/frames.ts";
import { valueSpan } from "../observe/payloads.ts";
import { PARAMS_ROWED_METHODS } from "../observe/request-rows.ts";
import type { ByteSink, ByteSource } from "../runtime/types.ts";
import { frameJson } from "./mock-server.ts";

/** The methods a replay sends, by the evt of the rows that record them. */
const METHOD_OF_EVT: Record<string, ReplayedMethod> = {
  tool_call: "tools/call",
  prompt_get: "prompts/get",
  resource_read: "resources/read",
  tools_list: "tools/list",
};
export type ReplayedMethod = string;

/** One request to replay, as its row recorded it. */
export interface PlannedRequest {
  /** The row's line in the ledger (from 1). */
  line: number;
  method: ReplayedMethod;
  /** The tool or prompt name, the resource's uri, or the list's cursor ("" for the first page, and for a client_request). */
  name: string;
  /** tools/call, prompts/get: the digest of params.arguments; a client_request's: of params. */
  argsDigest?: string;
  /** The digest of the answer (for tools/list, of result.tools). */
  resultDigest: string;
}

/** A request the server sent while the session was recorded, and the answer it got. */
export interface RecordedServerRequest {
  method: string;
  paramsDigest: string;
  resultDigest: string;
  /** The answer was a JSON-RPC error. */
  error: boolean;
}

export interface PlannedSession {
  id: string;
  /** What the session's mcp_initialize row kept of the handshake, when it has one. */
  protocolVersion?: string;
  clientInfo?: Json;
  requests: PlannedRequest[];
  serverRequests: RecordedServerRequest[];
}

/** same / different: the answer's digest is / is not the recorded one; missing: no answer came; no_payload: not replayable. */
export type Verdict = "same" | "different" | "missing" | "no_payload";

export interface CallOutcome {
  session: string;
  line: number;
  method: ReplayedMethod;
  name: string;
  verdict: Verdict;
  recorded: string;
  /** The digest of the whole answer the server gave now, or null (with --ignore, the verdict compares less than it). */
  replayed: string | null;
  /** Why a request is missing or has no payload. */
  why?: string;
}

/** The protocol version an initialize declares when the recording kept none. */
const DEFAULT_PROTOCOL = "2025-06-18";

/** Rows whose status means the request was never answered. */
const UNANSWERED = new Set(["unanswered", "cancelled", "refused", "invalid_id"]);

/** The capability a client declares to be sent each of these server requests. */
const CAPABILITY_OF: Record<string, string> = {
  "sampling/createMessage": "sampling",
  "elicitation/create": "elicitation",
  "roots/list": "roots",
};

type Row = JsonObject | { readonly [k: string]: Json };
const str = (v: Json | undefined) => (typeof v === "string" ? v : undefined);

/** The sessions of a ledger and their answered requests, from its rows in order (VerifyOptions' onRow). */
export class ReplayPlan {
  readonly sessions: PlannedSession[] = [];
  private readonly byId = new Map<string, PlannedSession>();

  constructor(private readonly session?: string) {}

  row(row: Row, line: number): void {
    if (!isSeamsOwn(getField(row, "seam"))) return;
    const evt = str(getField(row, "evt")) ?? "";
    const method = evt === "client_request" ? str(getField(row, "method")) : METHOD_OF_EVT[evt];
    if (evt === "client_request" && (method === undefined || !PARAMS_ROWED_METHODS.has(method))) return;
    if (evt !== "mcp_initialize" && evt !== "server_request" && method === undefined) return;
    const id = str(getField(row, "session")) ?? "";
    if (this.session !== undefined && !id.startsWith(this.session)) return;
    let s = this.byId.get(id);
    if (s === undefined) {
      s = { id, requests: [], serverRequests: [] };
      this.byId.set(id, s);
      this.sessions.push(s);
    }
    if (evt === "mcp_initialize") {
      s.protocolVersion ??= str(getField(row, "protocol_version"));
      s.clientInfo ??= getField(row, "client_info");
      return;
    }
    const status = str(getField(row, "status"));
    if (status === undefined || UNANSWERED.has(status)) return;
    if (evt === "server_request") {
      const m = str(getField(row, "method"));
      const paramsDigest = str(getField(row, "params_digest"));
      const resultDigest = str(getField(row, "result_digest"));
      if (m === undefined || paramsDigest === undefined || resultDigest === undefined) return;
      if (digestParts(resultDigest) === null || digestParts(paramsDigest) === null) return;
      s.serverRequests.push({
        method: m,
        paramsDigest,
        resultDigest,
        error: getField(row, "error_code") !== undefined,
      });
      return;
    }
    const resultDigest = str(getField(row, method === "tools/list" ? "tools_digest" : "result_digest"));
    if (resultDigest === undefined || digestParts(resultDigest) === null) return;
    let name: string | undefined;
    let argsDigest: string | undefined;
    switch (evt === "client_request" ? evt : method) {
      case "client_request":
        name = "";
        argsDigest = str(getField(row, "params_digest"));
        if (argsDigest === undefined) return;
        break;
      case "tools/list":
        name = str(getField(row, "cursor")) ?? "";
        break;
      case "resources/read":
        name = str(getField(row, "uri"));
        break;
      default:
        name = str(getField(row, method === "tools/call" ? "tool" : "prompt"));
        argsDigest = str(getField(row, "args_digest"));
        if (argsDigest === undefined) return;
    }
    if (name === undefined) return;
    s.requests.push({ line, method: method!, name, argsDigest, resultDigest });
  }

  /** The sessions with a request to replay. */
  replayable(): PlannedSession[] {
    return this.sessions.filter((s) => s.requests.length > 0);
  }
}

/** The digests of the payloads a replay of `s` sends or answers with (with `ignore`, the recorded answers too). */
export function neededPayloads(s: PlannedSession, ignore: boolean): string[] {
  return [
    ...s.requests.flatMap((r) => [
      ...(r.argsDigest === undefined ? [] : [r.argsDigest]),
      ...(ignore ? [r.resultDigest] : []),
    ]),
    ...s.serverRequests.map((r) => r.resultDigest),
  ];
}

/**
 * How a replay reaches a server. Messages the server sends go to the
 * Conversation the channel was made with, as frames (one message or a batch).
 */
export interface Channel {
  /** Sends one message (its JSON text, on one line); `id`: the id of the request it is, when it is one. */
  send(text: string, id?: string): Promise<void>;
  /** The server accepted the initialize: the protocol version it answered with. */
  started?(protocolVersion: string | undefined): void;
}

/** A running server: its stdin, its stdout. */
export interface ServerPipes {
  stdin: ByteSink;
  stdout: ByteSource;
}

export interface ReplayOptions {
  /** A payload's bytes by digest, or null when the store has none. */
  payload: (digest: string) => Uint8Array | null;
  /** RFC 6901 pointers into each answer (the result, or the error) left out of the comparison. */
  ignore: readonly string[];
  /** How long to wait for each answer. */
  timeoutMs: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** An answer as it came: the frame (a copy) and the message's place in it (-1: the frame is the message). */
interface Answered {
  frame: Uint8Array;
  index: number;
}

/**
 * The messages of one replayed session as they come back: answers kept by
 * id, the server's own requests answered from the recording.
 */
export class Conversation {
  private readonly answers = new Map<string, Answered | string>();
  /** Lines to send: answers to the server's requests. */
  readonly pending: string[] = [];
  private wake: (() => void) | null = null;
  private closedWhy: string | null = null;
  private readonly serverAsked = new Map<string, number>();
  private readonly serverAnswers = new Map<string, RecordedServerRequest[]>();

  constructor(
    session: PlannedSession,
    private readonly payload: (digest: string) => Uint8Array | null,
  ) {
    for (const r of session.serverRequests) {
      const k = `${r.method}\u0000${r.paramsDigest}`;
      const list = this.serverAnswers.get(k);
      if (list === undefined) this.serverAnswers.set(k, [r]);
      else list.push(r);
    }
  }

  /** A frame the server sent: one message, or a batch. The view need only be valid during the call. */
  frame(bytes: Uint8Array): void {
    const m = frameJson(bytes);
    if (m === undefined) return;
    const batch = Array.isArray(m);
    const messages = Array.isArray(m) ? m : [m];
    let copy: Uint8Array | null = null;
    for (let k = 0; k < messages.length; k++) {
      const one = messages[k]!;
      const i = batch ? k : -1;
      if (!isObject(one)) continue;
      const id = valueSpan(bytes, i, ["id"]);
      if (id === null) continue;
      const method = getField(one, "method");
      const idText = decoder.decode(id);
      if (typeof method === "string") this.pending.push(this.answerServer(bytes, i, method, idText));
      else if (!this.answers.has(idText)) {
        copy ??= bytes.slice();
        this.answers.set(idText, { frame: copy, index: i });
      }
    }
    this.wake?.();
  }

  /** Request `id` will get no answer: `why`. */
  fail(id: string, why: string): void {
    if (!this.answers.has(id)) this.answers.set(id, why);
    this.wake?.();
  }

  /** No more messages will come: `why`. */
  close(why: string): void {
    this.closedWhy ??= why;
    this.wake?.();
  }

  /** The answer line to a request the server sent. */
  private answerServer(frame: Uint8Array, index: number, method: string, id: string): string {
    if (method === "ping") return `{"jsonrpc":"2.0","id":${id},"result":{}}`;
    const fail = (message: string) =>
      `{"jsonrpc":"2.0","id":${id},"error":{"code":-32601,"message":${JSON.stringify(`seam replay: ${message}`)}}}`;
    const params = valueSpan(frame, index, ["params"]) ?? encoder.encode("null");
    let digest: string;
    try {
      digest = digestJsonUtf8(params);
    } catch {
      return fail(`${method} was never recorded with these params`);
    }
    const k = `${method}\u0000${digest}`;
    const list = this.serverAnswers.get(k);
    if (list === undefined) return fail(`${method} was never recorded with these params`);
    const n = this.serverAsked.get(k) ?? 0;
    this.serverAsked.set(k, n + 1);
    const found = list[Math.min(n, list.length - 1)]!;
    const bytes = this.payload(found.resultDigest);
    if (bytes === null) return fail(`the recorded answer to ${method} is not in the payload store`);
    return `{"jsonrpc":"2.0","id":${id},"${found.error ? "error" : "result"}":${oneLine(bytes)}}`;
  }

  /** The answer to request `id`, or why there is none; sends the pending answers meanwhile. */
  async answerTo(id: string, channel: Channel, timeoutMs: number): Promise<Answered | string> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      for (const line of this.pending.splice(0)) await channel.send(line);
      const got = this.answers.get(id);
      if (got !== undefined) return got;
      if (this.closedWhy !== null) return this.closedWhy;
      if (Date.now() > until) return `no answer within ${timeoutMs} ms`;
      await new Promise<void>((r) => {
        this.wake = r;
        setTimeout(r, 50);
      });
      this.wake = null;
    }
  }
}

/** A channel to a server just started on stdio: a message a line each way. */
export function stdioChannel(server: ServerPipes, conv: Conversation): Channel {
  const frames = new FrameSplitter(Number.MAX_SAFE_INTEGER, {
    frame: (bytes) => conv.frame(bytes),
    oversize() {},
  });
  void (async () => {
    for await (const chunk of server.stdout) frames.push(chunk);
    frames.end();
    conv.close("the server closed its stdout");
  })();
  return {
    async send(text) {
      const w = server.stdin.write(encoder.encode(`${text}\n`));
      if (w) await w;
    },
  };
}

/** The initialize a replay of `s` sends. */
function initializeLine(s: PlannedSession): string {
  const capabilities = new Map<string, Json>();
  for (const r of s.serverRequests) {
    const c = CAPABILITY_OF[r.method];
    if (c !== undefined) capabilities.set(c, new Map());
  }
  const init = new Map<string, Json>([
    ["protocolVersion", s.protocolVersion ?? DEFAULT_PROTOCOL],
    ["capabilities", capabilities],
    [
      "clientInfo",
      s.clientInfo ??
        new Map([
          ["name", "seam-replay"],
          ["version", "0"],
        ]),
    ],
  ]);
  return `{"jsonrpc":"2.0","id":0,"method":"initialize","params":${jsonOf(init)}}`;
}

/** The params of a replayed request ("" for none), or null when a payload it needs is not in the store. */
function paramsOf(r: PlannedRequest, payload: (digest: string) => Uint8Array | null): string | null {
  switch (r.method) {
    case "tools/list":
      return r.name === "" ? "{}" : `{"cursor":${JSON.stringify(r.name)}}`;
    case "resources/read":
      return `{"uri":${JSON.stringify(r.name)}}`;
    case "tools/call":
    case "prompts/get": {
      const args = payload(r.argsDigest!);
      return args === null ? null : `{"name":${JSON.stringify(r.name)},"arguments":${oneLine(args)}}`;
    }
    default: {
      // A client_request: its params as they were; a request that had none (digested as null) is sent without.
      const params = payload(r.argsDigest!);
      if (params === null) return null;
      const text = oneLine(params);
      return text.trim() === "null" ? "" : text;
    }
  }
}

/** Replays one session's requests over `channel` (made with `conv`); the caller ends the server. */
export async function replaySession(
  s: PlannedSession,
  channel: Channel,
  conv: Conversation,
  o: ReplayOptions,
): Promise<CallOutcome[]> {
  await channel.send(initializeLine(s), "0");
  const init = await conv.answerTo("0", channel, o.timeoutMs);
  let started: string | null = null;
  if (typeof init === "string") started = init;
  else if (valueSpan(init.frame, init.index, ["result"]) === null) started = "the server refused it";
  if (started === null && typeof init !== "string") {
    const version = frameJson(valueSpan(init.frame, init.index, ["result", "protocolVersion"]) ?? new Uint8Array());
    channel.started?.(typeof version === "string" ? version : undefined);
    await channel.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`);
  }

  const out: CallOutcome[] = [];
  let id = 0;
  for (const r of s.requests) {
    const base = { session: s.id, line: r.line, method: r.method, name: r.name, recorded: r.resultDigest };
    const params = paramsOf(r, o.payload);
    const recorded = o.ignore.length > 0 ? o.payload(r.resultDigest) : undefined;
    if (params === null || recorded === null) {
      const sent = r.method === "tools/call" || r.method === "prompts/get" ? "arguments are" : "params are";
      const which = params === null ? sent : "recorded answer is";
      out.push({ ...base, verdict: "no_payload", replayed: null, why: `its ${which} not in the payload store` });
      continue;
    }
    if (started !== null) {
      out.push({ ...base, verdict: "missing", replayed: null, why: `initialize: ${started}` });
      continue;
    }
    id++;
    const more = params === "" ? "" : `,"params":${params}`;
    await channel.send(`{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(r.method)}${more}}`, String(id));
    const got = await conv.answerTo(String(id), channel, o.timeoutMs);
    if (typeof got === "string") {
      out.push({ ...base, verdict: "missing", replayed: null, why: got });
      continue;
    }
    const value =
      valueSpan(got.frame, got.index, ["error"]) ??
      valueSpan(got.frame, got.index, r.method === "tools/list" ? ["result", "tools"] : ["result"]) ??
      encoder.encode("null");
    const recipe = digestParts(r.resultDigest)!.recipe;
    const now = digestOf(value, recipe);
    const same =
      recorded === undefined
        ? now === r.resultDigest
        : digestJson(withoutPointers(frameJson(value) ?? null, o.ignore), recipe) ===
          digestJson(withoutPointers(frameJson(recorded) ?? null, o.ignore), recipe);
    out.push({ ...base, verdict: same ? "same" : "different", replayed: now });
  }
  return out;
}

function digestOf(bytes: Uint8Array, recipe: "json-c14n" | "jcs"): string {
  try {
    return digestJsonUtf8(bytes, recipe);
  } catch {
    return "undigestible";
  }
}

/** A payload as one line: a line break outside a JSON string is whitespace, and a stdio frame is one line. */
function oneLine(bytes: Uint8Array): string {
  return decoder.decode(bytes).replace(/[\r\n]/g, " ");
}

/** JSON text of a value built here (Maps for objects). */
function jsonOf(v: Json): string {
  if (v instanceof Map) return `{${[...v].map(([k, x]) => `${JSON.stringify(k)}:${jsonOf(x)}`).join(",")}}`;
  if (Array.isArray(v)) return `[${v.map(jsonOf).join(",")}]`;
  if (isObject(v)) return jsonOf(new Map(Object.entries(v)));
  if (typeof v === "bigint") return v.toString();
  return JSON.stringify(v) ?? "null";
}

/** An RFC 6901 pointer's reference tokens, or null for a string that is no pointer ("" is the whole value). */
export function pointerTokens(pointer: string): string[] | null {
  if (pointer === "") return [];
  if (!pointer.startsWith("/")) return null;
  return pointer
    .slice(1)
    .split("/")
    .map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
}

/**
 * `v` with the value at each pointer taken out: an object's member is
 * removed, an array's element becomes null (so that the others keep their
 * places); a pointer to nothing changes nothing; "" takes out the whole value.
 */
export function withoutPointers(v: Json, pointers: readonly string[]): Json {
  let out = v;
  for (const p of pointers) {
    const tokens = pointerTokens(p);
    if (tokens === null) continue;
    out = without(out, tokens);
  }
  return out;
}

function without(v: Json, tokens: readonly string[]): Json {
  if (tokens.length === 0) return null;
  const [head, ...rest] = tokens as [string, ...string[]];
  if (Array.isArray(v)) {
    if (!/^(0|[1-9][0-9]*)$/.test(head)) return v;
    const i = Number(head);
    if (i >= v.length) return v;
    const copy = v.slice();
    copy[i] = rest.length === 0 ? null : without(v[i]!, rest);
    return copy;
  }
  if (!isObject(v)) return v;
  const copy = new Map<string, Json>(v instanceof Map ? v : Object.entries(v));
  if (!copy.has(head)) return v;
  if (rest.length === 0) copy.delete(head);
  else copy.set(head, without(copy.get(head)!, rest));
  return copy;
}
