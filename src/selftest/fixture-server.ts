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
 * Other traffic: it writes a notification without id, a malformed line and a blank
 * line after `initialize`, answers `initialize` with a CRLF line ending, answers a
 * batch with a batch, and on stdin EOF writes a final frame with no newline.
 */
import type { ByteSink, ByteSource } from "../runtime/types.ts";
import { type Json, getField, isObject, parseJson } from "../core/json.ts";
import { FrameSplitter } from "../wrap/frames.ts";
import { idJson } from "../wrap/mcp.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

export const FIXTURE_TOOLS = ["echo", "big", "fail", "iserror", "never", "slow", "ask", "wait", "input"] as const;
export const BIG_RESULT_BYTES = 4 * 1024 * 1024;

export async function runFixtureServer(
  stdin: ByteSource,
  stdout: ByteSink,
  record?: (chunk: Uint8Array) => void,
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

function summarize(v: Json): string {
  const s = typeof v === "string" ? v : isObject(v) ? String(getField(v, "text") ?? "") : "";
  return s.length > 64 ? `${s.length} characters` : s;
}
