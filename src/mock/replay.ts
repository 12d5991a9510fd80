/**
 * `seam replay`: a recording's calls sent again to a server, each answer's
 * digest compared with the one recorded. A session is replayed as it was
 * recorded: an `initialize` made of what its row kept (the negotiated
 * protocol version and the client's info; capabilities were not recorded,
 * so none are declared), `notifications/initialized`, then each answered
 * `tools/call` in ledger order with its recorded arguments (the payload of
 * its args_digest), one at a time. Requests the server sends meanwhile are
 * answered with an error (a replay has no user to sample or elicit from);
 * `ping` with `{}`.
 */
import { digestJson, digestJsonUtf8, digestParts } from "../core/digest.ts";
import { getField, isObject, type Json, type JsonObject } from "../core/json.ts";
import { isSeamsOwn } from "../format/row.ts";
import { FrameSplitter } from "../observe/frames.ts";
import { valueSpan } from "../observe/payloads.ts";
import type { ByteSink, ByteSource } from "../runtime/types.ts";
import { frameJson } from "./mock-server.ts";

/** One call to replay, as its tool_call row recorded it. */
export interface PlannedCall {
  /** The row's line in the ledger (from 1). */
  line: number;
  tool: string;
  argsDigest: string;
  resultDigest: string;
}

export interface PlannedSession {
  id: string;
  /** What the session's mcp_initialize row kept of the handshake, when it has one. */
  protocolVersion?: string;
  clientInfo?: Json;
  calls: PlannedCall[];
}

/** same / different: the answer's digest is / is not the recorded one; missing: no answer came; no_payload: not replayable. */
export type Verdict = "same" | "different" | "missing" | "no_payload";

export interface CallOutcome {
  session: string;
  line: number;
  tool: string;
  verdict: Verdict;
  recorded: string;
  /** The digest of the whole answer the server gave now, or null (with --ignore, the verdict compares less than it). */
  replayed: string | null;
  /** Why a call is missing or has no payload. */
  why?: string;
}

/** The protocol version an initialize declares when the recording kept none. */
const DEFAULT_PROTOCOL = "2025-06-18";

type Row = JsonObject | { readonly [k: string]: Json };
const str = (v: Json | undefined) => (typeof v === "string" ? v : undefined);

/** The sessions of a ledger and their answered calls, from its rows in order (VerifyOptions' onRow). */
export class ReplayPlan {
  readonly sessions: PlannedSession[] = [];
  private readonly byId = new Map<string, PlannedSession>();

  constructor(private readonly session?: string) {}

  row(row: Row, line: number): void {
    if (!isSeamsOwn(getField(row, "seam"))) return;
    const evt = getField(row, "evt");
    if (evt !== "mcp_initialize" && evt !== "tool_call") return;
    const id = str(getField(row, "session")) ?? "";
    if (this.session !== undefined && !id.startsWith(this.session)) return;
    let s = this.byId.get(id);
    if (s === undefined) {
      s = { id, calls: [] };
      this.byId.set(id, s);
      this.sessions.push(s);
    }
    if (evt === "mcp_initialize") {
      s.protocolVersion ??= str(getField(row, "protocol_version"));
      s.clientInfo ??= getField(row, "client_info");
      return;
    }
    const tool = str(getField(row, "tool"));
    const argsDigest = str(getField(row, "args_digest"));
    const resultDigest = str(getField(row, "result_digest"));
    if (tool === undefined || argsDigest === undefined || resultDigest === undefined) return;
    if (digestParts(resultDigest) === null) return;
    s.calls.push({ line, tool, argsDigest, resultDigest });
  }

  /** The sessions with a call to replay. */
  replayable(): PlannedSession[] {
    return this.sessions.filter((s) => s.calls.length > 0);
  }
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

/** Replays one session's calls to a server just started; the caller ends the server. */
export async function replaySession(s: PlannedSession, server: ServerPipes, o: ReplayOptions): Promise<CallOutcome[]> {
  const answers = new Map<string, Uint8Array>();
  let wake = null as (() => void) | null;
  let closed = false;
  const pending: string[] = [];
  const frames = new FrameSplitter(Number.MAX_SAFE_INTEGER, {
    frame(bytes) {
      const m = frameJson(bytes);
      if (m === undefined) return;
      const batch = Array.isArray(m);
      const messages = Array.isArray(m) ? m : [m];
      for (let k = 0; k < messages.length; k++) {
        const one = messages[k]!;
        const i = batch ? k : -1;
        if (!isObject(one)) continue;
        const id = valueSpan(bytes, i, ["id"]);
        if (id === null) continue;
        const method = getField(one, "method");
        const idText = decoder.decode(id);
        if (typeof method === "string") {
          pending.push(
            method === "ping"
              ? `{"jsonrpc":"2.0","id":${idText},"result":{}}\n`
              : `{"jsonrpc":"2.0","id":${idText},"error":{"code":-32601,"message":${JSON.stringify(`seam replay answers no ${method}`)}}}\n`,
          );
        } else answers.set(idText, answerSpan(bytes, i) ?? encoder.encode("null"));
      }
      wake?.();
    },
    oversize() {},
  });
  const reading = (async () => {
    for await (const chunk of server.stdout) frames.push(chunk);
    frames.end();
    closed = true;
    wake?.();
  })();
  void reading;
  const send = async (text: string) => {
    const w = server.stdin.write(encoder.encode(text));
    if (w) await w;
  };
  /** The answer to request `id`, or why there is none. */
  const answerTo = async (id: string): Promise<Uint8Array | string> => {
    const until = Date.now() + o.timeoutMs;
    for (;;) {
      for (const line of pending.splice(0)) await send(line);
      const got = answers.get(id);
      if (got !== undefined) return got;
      if (closed) return "the server closed its stdout";
      if (Date.now() > until) return `no answer within ${o.timeoutMs} ms`;
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, 50);
      });
      wake = null;
    }
  };

  const init = new Map<string, Json>([
    ["protocolVersion", s.protocolVersion ?? DEFAULT_PROTOCOL],
    ["capabilities", new Map()],
    [
      "clientInfo",
      s.clientInfo ??
        new Map([
          ["name", "seam-replay"],
          ["version", "0"],
        ]),
    ],
  ]);
  await send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":${jsonOf(init)}}\n`);
  const started = await answerTo("0");
  if (typeof started !== "string") await send(`{"jsonrpc":"2.0","method":"notifications/initialized"}\n`);

  const out: CallOutcome[] = [];
  let id = 0;
  for (const c of s.calls) {
    const base = { session: s.id, line: c.line, tool: c.tool, recorded: c.resultDigest };
    const args = o.payload(c.argsDigest);
    const recorded = o.ignore.length > 0 ? o.payload(c.resultDigest) : undefined;
    if (args === null || recorded === null) {
      const which = args === null ? "arguments" : "recorded answer";
      out.push({ ...base, verdict: "no_payload", replayed: null, why: `its ${which} are not in the payload store` });
      continue;
    }
    if (typeof started === "string") {
      out.push({ ...base, verdict: "missing", replayed: null, why: `initialize: ${started}` });
      continue;
    }
    id++;
    const name = JSON.stringify(c.tool);
    await send(
      `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":${name},"arguments":${oneLine(args)}}}\n`,
    );
    const got = await answerTo(String(id));
    if (typeof got === "string") {
      out.push({ ...base, verdict: "missing", replayed: null, why: got });
      continue;
    }
    const recipe = digestParts(c.resultDigest)!.recipe;
    const now = digestOf(got, recipe);
    const same =
      recorded === undefined
        ? now === c.resultDigest
        : digestJson(withoutPointers(frameJson(got) ?? null, o.ignore), recipe) ===
          digestJson(withoutPointers(frameJson(recorded) ?? null, o.ignore), recipe);
    out.push({ ...base, verdict: same ? "same" : "different", replayed: now });
  }
  return out;
}

/** An answer's error, else its result: the value a row's result_digest is of. */
function answerSpan(frame: Uint8Array, index: number): Uint8Array | null {
  return valueSpan(frame, index, ["error"]) ?? valueSpan(frame, index, ["result"]);
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
