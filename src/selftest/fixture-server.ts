/**
 * A deliberately awkward MCP stdio server, built into seam so that selftest,
 * demo and the tests need no other file and no network. Its output depends
 * only on the order of what it reads, never on timing, so a run through
 * `seam wrap` can be compared byte for byte with a direct run.
 *
 * Tools (name → behaviour):
 *   echo      answers with the arguments it got
 *   big       answers with a 4 MiB text result (many pipe reads on the way out)
 *   fail      answers with a JSON-RPC error (-32602)
 *   iserror   answers with a result that has isError: true
 *   never     is never answered
 *   slow      is answered only after the next tools/call, which is answered first
 *   ask       sends the client a sampling/createMessage request with the same id as the
 *             call, and answers the call once the client has answered it
 *   wait      is answered (late) when the client cancels it
 *   input     answers with a 2026-07-28 input_required result
 * MCP 2026-07-28 (requests whose _meta declares that version; see
 * src/observe/operation-book.ts): `server/discover` is answered (unless started with
 * --legacy, which answers it -32601 so that a client falls back to
 * `initialize`), every result carries `resultType` and the server's identity
 * in `_meta`, and:
 *   confirm   a multi round-trip call: without `inputResponses` it answers
 *             input_required (one elicitation and a requestState); retried
 *             with them it answers the result
 *   job       starts a task (resultType "task"); `tasks/get` polls it: working,
 *             then input_required (answered by `tasks/update`), then completed;
 *             `tasks/cancel` cancels it
 *   odd       answers with a resultType this revision does not define
 * Other traffic: it writes a notification without id, a malformed line and a blank
 * line after `initialize`, answers `initialize` with a CRLF line ending, answers a
 * batch with a batch, and on stdin EOF writes a final frame with no newline.
 */

import { getField, isObject, type Json, parseJson } from "../core/json.ts";
import { FrameSplitter } from "../observe/frames.ts";
import { idJson } from "../observe/own-answers.ts";
import type { ByteSink, ByteSource } from "../runtime/types.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

export const FIXTURE_TOOLS = ["echo", "big", "fail", "iserror", "never", "slow", "ask", "wait", "input"] as const;
/** Tools only a 2026-07-28 request sees (listed only to such a request, so the legacy bytes stay as they were). */
export const FIXTURE_MODERN_TOOLS = ["confirm", "job", "odd"] as const;
export const MODERN_VERSION = "2026-07-28";
const SERVER_META = `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"seam-fixture","version":"1.0.0"}}`;
/** Fixed task timestamps: the fixture's output must depend on nothing but its input. */
const TASK_TIMES = `"createdAt":"2026-07-28T00:00:00Z","lastUpdatedAt":"2026-07-28T00:00:00Z","ttlMs":null`;

export interface FixtureServerOptions {
  /** Answer server/discover with -32601, as a server of an earlier revision does. */
  legacy?: boolean;
}
export const BIG_RESULT_BYTES = 4 * 1024 * 1024;

export async function runFixtureServer(
  stdin: ByteSource,
  stdout: ByteSink,
  record?: (chunk: Uint8Array) => void,
  opts: FixtureServerOptions = {},
): Promise<void> {
  const out: string[] = [];
  const send = async () => {
    for (const line of out.splice(0)) {
      const w = stdout.write(enc.encode(line));
      if (w) await w;
    }
  };
  let slowPending: string | null = null;
  const asked = new Map<string, string>();
  const waiting = new Set<string>();
  /** Tasks by id: how many times each was polled, and whether it was cancelled. */
  const tasks = new Map<string, { polls: number; cancelled: boolean; updated: boolean }>();

  const answer = (id: string, result: string) => `{"jsonrpc":"2.0","id":${id},"result":${result}}\n`;
  const text = (s: string) => `{"content":[{"type":"text","text":${JSON.stringify(s)}}]}`;

  const handle = (m: Json, rawId: string | undefined): string | null => {
    if (!isObject(m)) return null;
    const method = getField(m, "method");
    const params = getField(m, "params") ?? null;
    if (typeof method !== "string") {
      // The client answering our sampling request: now answer the call that asked.
      if (rawId !== undefined && asked.has(rawId)) {
        const callId = asked.get(rawId)!;
        asked.delete(rawId);
        return answer(callId, text("the client answered"));
      }
      return null;
    }
    if (method === "notifications/cancelled") {
      const key = idJson(getField(params, "requestId"));
      if (key === undefined || !waiting.delete(key)) return null;
      return answer(key, text("too late: cancelled"));
    }
    if (rawId === undefined) return null;
    if (!opts.legacy && isModern(params)) {
      const a = modern(method, params, rawId);
      if (a !== null) return a;
    }
    switch (method) {
      case "initialize":
        return `{"jsonrpc":"2.0","id":${rawId},"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"seam-fixture","version":"1.0.0"}}}\r\n`;
      case "tools/list":
        return answer(
          rawId,
          `{"tools":[${FIXTURE_TOOLS.map((n) => `{"name":"${n}","inputSchema":{"type":"object"}}`).join(",")}]}`,
        );
      case "tools/call": {
        const name = getField(params, "name");
        const args = getField(params, "arguments");
        switch (name) {
          case "echo": {
            let r = answer(rawId, text(`echo: ${args === undefined ? "" : summarize(args)}`));
            if (slowPending !== null) {
              r += answer(slowPending, text("slow, answered after the next call"));
              slowPending = null;
            }
            return r;
          }
          case "big":
            return answer(rawId, text("x".repeat(BIG_RESULT_BYTES)));
          case "fail":
            return `{"jsonrpc":"2.0","id":${rawId},"error":{"code":-32602,"message":"fixture: this tool always fails"}}\n`;
          case "iserror":
            return answer(rawId, `{"content":[{"type":"text","text":"fixture: tool error"}],"isError":true}`);
          case "never":
            return null;
          case "slow":
            slowPending = rawId;
            return null;
          case "ask":
            asked.set(rawId, rawId);
            return `{"jsonrpc":"2.0","id":${rawId},"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"what now?"}}],"maxTokens":5}}\n`;
          case "wait":
            waiting.add(rawId);
            return null;
          case "input":
            return answer(rawId, `{"resultType":"input_required","inputRequests":{}}`);
          default:
            return `{"jsonrpc":"2.0","id":${rawId},"error":{"code":-32601,"message":"unknown tool"}}\n`;
        }
      }
      case "ping":
        return answer(rawId, "{}");
      default:
        return `{"jsonrpc":"2.0","id":${rawId},"error":{"code":-32601,"message":"method not found"}}\n`;
    }
  };

  /** A 2026-07-28 request: its answer, or null for one the legacy code answers the same way. */
  const modern = (method: string, params: Json, rawId: string): string | null => {
    const done = (body: string) => answer(rawId, `{"resultType":"complete",${body}${body ? "," : ""}${SERVER_META}}`);
    const taskState = (id: string, status: string, extra = "") =>
      `"taskId":${JSON.stringify(id)},"status":"${status}",${TASK_TIMES},"pollIntervalMs":10${extra}`;
    switch (method) {
      case "server/discover":
        return done(
          `"supportedVersions":["${MODERN_VERSION}"],"capabilities":{"tools":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`,
        );
      case "tools/list":
        return done(
          `"tools":[${[...FIXTURE_TOOLS, ...FIXTURE_MODERN_TOOLS].map((n) => `{"name":"${n}","inputSchema":{"type":"object"}}`).join(",")}]`,
        );
      case "tools/call": {
        const name = getField(params, "name");
        if (name === "confirm") {
          if (getField(params, "inputResponses") === undefined)
            return answer(
              rawId,
              `{"resultType":"input_required","inputRequests":{"ok":{"method":"elicitation/create","params":{"mode":"form","message":"Go ahead?","requestedSchema":{"type":"object","properties":{"go":{"type":"boolean"}}}}}},"requestState":${JSON.stringify(`fixture-state-${rawId}`)},${SERVER_META}}`,
            );
          return done(`"content":[{"type":"text","text":"confirmed"}]`);
        }
        if (name === "job") {
          const id = `task-${rawId}`;
          tasks.set(id, { polls: 0, cancelled: false, updated: false });
          return answer(rawId, `{"resultType":"task",${taskState(id, "working")},${SERVER_META}}`);
        }
        if (name === "odd") return answer(rawId, `{"resultType":"deferred","retryAfterMs":5,${SERVER_META}}`);
        const text = (s: string) => `"content":[{"type":"text","text":${JSON.stringify(s)}}]`;
        if (name === "echo") {
          const args = getField(params, "arguments");
          return done(text(`echo: ${args === undefined ? "" : summarize(args)}`));
        }
        return null;
      }
      case "tasks/get":
      case "tasks/update":
      case "tasks/cancel": {
        const id = getField(params, "taskId");
        const t = typeof id === "string" ? tasks.get(id) : undefined;
        if (t === undefined || typeof id !== "string")
          return `{"jsonrpc":"2.0","id":${rawId},"error":{"code":-32602,"message":"Failed to retrieve task: Task not found"}}\n`;
        if (method === "tasks/cancel") {
          t.cancelled = true;
          return done("");
        }
        if (method === "tasks/update") {
          t.updated = true;
          return done("");
        }
        t.polls++;
        if (t.cancelled) return done(taskState(id, "cancelled"));
        if (t.polls === 1) return done(taskState(id, "working"));
        if (!t.updated)
          return done(
            taskState(
              id,
              "input_required",
              `,"inputRequests":{"name":{"method":"elicitation/create","params":{"mode":"form","message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}}`,
            ),
          );
        return done(
          taskState(id, "completed", `,"result":{"content":[{"type":"text","text":"job done"}],"isError":false}`),
        );
      }
      default:
        return null;
    }
  };

  let initialized = false;
  const frames = new FrameSplitter(Number.MAX_SAFE_INTEGER, {
    frame(bytes) {
      const s = dec.decode(bytes);
      let msg: Json;
      try {
        msg = parseJson(s);
      } catch {
        return;
      }
      if (Array.isArray(msg)) {
        const answers = msg.map((m) => handle(m, rawIdOf(m))).filter((a): a is string => a !== null);
        if (answers.length > 0) out.push(`[${answers.map((a) => a.trimEnd()).join(",")}]\n`);
        return;
      }
      const a = handle(msg, rawIdOf(msg));
      if (a !== null) out.push(a);
      if (!initialized && getField(msg, "method") === "initialize") {
        initialized = true;
        out.push(
          `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"h\u00e9llo \ud83d\udd12"}}\n`,
        );
        out.push("this line is not JSON\n");
        out.push("\n");
      }
    },
    oversize() {},
  });
  for await (const chunk of stdin) {
    record?.(chunk);
    frames.push(chunk);
    await send();
  }
  frames.end();
  out.push(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"bye"}}`);
  await send();
  await stdout.end();
}

/** The id's JSON text exactly as written by the client (for answers that echo it byte for byte). */
function rawIdOf(m: Json): string | undefined {
  return isObject(m) ? idJson(getField(m, "id")) : undefined;
}

/** Does the request's _meta declare the 2026-07-28 revision? */
function isModern(params: Json): boolean {
  const meta = getField(params, "_meta");
  return meta !== undefined && getField(meta, "io.modelcontextprotocol/protocolVersion") === MODERN_VERSION;
}

function summarize(v: Json): string {
  const s = typeof v === "string" ? v : isObject(v) ? String(getField(v, "text") ?? "") : "";
  return s.length > 64 ? `${s.length} characters` : s;
}
