/**
 * `seam mock`: an MCP stdio server that answers from a recording
 * (src/mock/recording.ts). Each answer is the recorded payload's bytes,
 * spliced into a JSON-RPC response that carries the request's own id as it
 * was written: `{"jsonrpc":"2.0","id":<id>,"result":<payload>}` (or
 * `"error"`). A request asked again is answered with the next answer
 * recorded for it, and the last one once they are used up; with
 * `strictOrder`, requests must come in the order they were recorded.
 * Notifications and the client's own answers are read and ignored;
 * `ping` is answered `{}`.
 */
import { getField, isObject, type Json, parseJson } from "../core/json.ts";
import { FrameSplitter } from "../observe/frames.ts";
import { errorLine, PARSE_ERROR_CODE } from "../observe/own-answers.ts";
import { valueSpan } from "../observe/payloads.ts";
import { PARAMS_ROWED_METHODS } from "../observe/request-rows.ts";
import type { ByteSink, ByteSource } from "../runtime/types.ts";
import { MOCKED_METHODS, type Recorded, type Recording, requestKeys } from "./recording.ts";

/** JSON-RPC's Method not found: a method the recording has no answer of at all. */
export const NOT_RECORDED_METHOD = -32601;
/** JSON-RPC's Invalid params: the method was recorded, but never with these params. */
export const NOT_RECORDED_PARAMS = -32602;
/** Under strictOrder, a request that is not the next one recorded (or comes after the last). */
export const OUT_OF_ORDER = -32000;
/** The recorded answer's payload is not in the store (erased, or never kept). */
export const PAYLOAD_MISSING = -32001;

export interface MockOptions {
  /** Requests must come in the order the recording holds them. */
  strictOrder?: boolean;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Methods answered `{}` by any server (MCP's EmptyResult): the mock answers them so, recorded or not. */
const EMPTY_ANSWERED: ReadonlySet<string> = new Set(["ping", "logging/setLevel"]);

export class MockAnswers {
  private readonly byKey = new Map<string, Recorded[]>();
  private readonly asked = new Map<string, number>();
  private readonly methods = new Set<string>();
  private next = 0;

  /** `payloads`: each answer's payload bytes by digest, null for one not in the store. */
  constructor(
    private readonly recording: Recording,
    private readonly payloads: ReadonlyMap<string, Uint8Array | null>,
    private readonly opts: MockOptions = {},
  ) {
    for (const a of recording.answers) {
      const k = `${a.method}\u0000${a.key}`;
      const list = this.byKey.get(k);
      if (list === undefined) this.byKey.set(k, [a]);
      else list.push(a);
      this.methods.add(a.method);
    }
  }

  /**
   * The answer line (without "\n") to one message of a frame (`index` -1: the
   * frame is that message), or null for a message that gets none.
   */
  answer(frame: Uint8Array, index: number, m: Json): string | null {
    if (!isObject(m)) return null;
    const method = getField(m, "method");
    const idBytes = valueSpan(frame, index, ["id"]);
    if (typeof method !== "string" || idBytes === null) return null;
    const id = decoder.decode(idBytes);
    const params = getField(m, "params");
    // Requests whose answer is empty whatever the server: a client sends them while it connects (the MCP
    // inspector sets the log level of a server that declares logging), and no recording keeps them.
    if (EMPTY_ANSWERED.has(method)) return `{"jsonrpc":"2.0","id":${id},"result":{}}`;
    const fail = (code: number, message: string) =>
      `{"jsonrpc":"2.0","id":${id},"error":{"code":${code},"message":${JSON.stringify(`seam mock: ${message}`)}}}`;
    const args =
      method === "tools/call" || method === "prompts/get"
        ? valueSpan(frame, index, ["params", "arguments"])
        : PARAMS_ROWED_METHODS.has(method)
          ? valueSpan(frame, index, ["params"])
          : null;
    const keys = MOCKED_METHODS.includes(method)
      ? requestKeys(method, params, args ?? undefined, this.recording.recipes)
      : null;
    const label = labelOf(method, params);
    if (keys === null || !this.methods.has(method)) return fail(NOT_RECORDED_METHOD, `${label} was never recorded`);
    let found: Recorded | undefined;
    if (this.opts.strictOrder) {
      const want = this.recording.answers[this.next];
      if (want === undefined) return fail(OUT_OF_ORDER, `${label} comes after the last recorded request`);
      if (want.method !== method || !keys.includes(want.key))
        return fail(OUT_OF_ORDER, `${label} is out of the recorded order: ${want.label} comes next`);
      this.next++;
      found = want;
    } else {
      for (const key of keys) {
        const k = `${method}\u0000${key}`;
        const list = this.byKey.get(k);
        if (list === undefined) continue;
        const n = this.asked.get(k) ?? 0;
        this.asked.set(k, n + 1);
        found = list[Math.min(n, list.length - 1)];
        break;
      }
    }
    if (found === undefined) return fail(NOT_RECORDED_PARAMS, `${label} was never recorded with these params`);
    const bytes = this.payloads.get(found.digest) ?? null;
    if (bytes === null)
      return fail(PAYLOAD_MISSING, `the recorded answer to ${label} is not in the payload store (${found.digest})`);
    // A payload recorded from an HTTP body may span lines; outside its strings (where JSON allows no raw
    // line break) they are whitespace, and a stdio frame is one line.
    const payload = decoder.decode(bytes).replace(/[\r\n]/g, " ");
    if (found.error) return `{"jsonrpc":"2.0","id":${id},"error":${payload}}`;
    if (method !== "tools/list") return `{"jsonrpc":"2.0","id":${id},"result":${payload}}`;
    const next = found.nextCursor === undefined ? "" : `,"nextCursor":${JSON.stringify(found.nextCursor)}`;
    return `{"jsonrpc":"2.0","id":${id},"result":{"tools":${payload}${next}}}`;
  }
}

/** How an error message names a request: its method, and the tool, prompt or resource it names. */
function labelOf(method: string, params: Json | undefined): string {
  const target = getField(params ?? null, method === "resources/read" ? "uri" : "name");
  return typeof target === "string" &&
    (method === "tools/call" || method === "prompts/get" || method === "resources/read")
    ? `${method} ${JSON.stringify(target)}`
    : method;
}

/** A frame's JSON, or undefined when it is not JSON (a peer's frames are read as they come). */
export function frameJson(bytes: Uint8Array): Json | undefined {
  try {
    return parseJson(decoder.decode(bytes));
  } catch {
    return undefined;
  }
}

/**
 * The answer to one frame a client sent (without "\n"), or null when it
 * gets none: a message's answer, a batch's answers as a batch, a frame that
 * is not JSON a parse error.
 */
export function answerFrame(answers: MockAnswers, bytes: Uint8Array): string | null {
  const m = frameJson(bytes);
  if (m === undefined)
    return decoder.decode(errorLine(null, PARSE_ERROR_CODE, "seam mock: the frame is not JSON")).trimEnd();
  if (!Array.isArray(m)) return answers.answer(bytes, -1, m);
  const all = m.map((one, i) => answers.answer(bytes, i, one)).filter((a): a is string => a !== null);
  return all.length > 0 ? `[${all.join(",")}]` : null;
}

/**
 * Serves `answers` on stdin/stdout until stdin ends: one answer line for
 * each request, a batch answered with a batch, in the order they came.
 */
export async function runMock(stdin: ByteSource, stdout: ByteSink, answers: MockAnswers): Promise<void> {
  const out: string[] = [];
  const frames = new FrameSplitter(Number.MAX_SAFE_INTEGER, {
    frame(bytes) {
      const a = answerFrame(answers, bytes);
      if (a !== null) out.push(`${a}\n`);
    },
    oversize() {},
  });
  const send = async () => {
    for (const line of out.splice(0)) {
      const w = stdout.write(encoder.encode(line));
      if (w) await w;
    }
  };
  for await (const chunk of stdin) {
    frames.push(chunk);
    await send();
  }
  frames.end();
  await send();
  await stdout.end();
}
