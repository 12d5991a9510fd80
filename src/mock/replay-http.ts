/**
 * `seam replay --upstream URL`: a replay's Channel to a server reached over
 * MCP's Streamable HTTP transport
 * (https://modelcontextprotocol.io/specification/2025-06-18/basic/transports#streamable-http).
 * Each message is one POST (Accept: application/json, text/event-stream);
 * the `Mcp-Session-Id` the answer to initialize names is sent with every
 * later one, with the negotiated `MCP-Protocol-Version`. An answer body is
 * read as the SDK clients read it (bodyKind): a JSON body is a message or a
 * batch, an event stream is split by seam proxy's SSE reader, each message
 * event a frame; the server's own requests come that way too, and their
 * answers are POSTed back. The session is ended with a DELETE.
 */
import { BodyCollector, bodyKind, SseSplitter } from "../proxy/sse.ts";
import type { Channel, Conversation } from "./replay.ts";

/** The most bytes of one answer body (or event) read: a larger one is no answer. */
const MAX_BODY = 64 * 1024 * 1024;

export interface HttpChannel extends Channel {
  /** Ends the session (DELETE) and cuts any exchange still open. */
  end(): Promise<void>;
}

/** What a fetch failure says: its code (ECONNREFUSED…), on it (Bun) or its cause (Node), else a message. */
function failure(e: unknown): string {
  const err = e as { code?: unknown; message?: unknown; cause?: { code?: unknown; message?: unknown } };
  for (const v of [err.code, err.cause?.code, err.cause?.message, err.message])
    if (typeof v === "string" && v !== "") return v;
  return String(e);
}

export function httpChannel(url: URL, conv: Conversation): HttpChannel {
  let sessionId: string | undefined;
  let protocol: string | undefined;
  const open = new Set<AbortController>();
  const headers = (): Record<string, string> => ({
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    ...(sessionId === undefined ? {} : { "mcp-session-id": sessionId }),
    ...(protocol === undefined ? {} : { "mcp-protocol-version": protocol }),
  });

  /** Reads one answer body into the conversation; `id`: the request it answers, told when nothing does. */
  async function read(res: Response, id: string | undefined): Promise<void> {
    sessionId ??= res.headers.get("mcp-session-id") ?? undefined;
    const sink = { frame: (b: Uint8Array) => conv.frame(b), oversize() {} };
    const kind = bodyKind(res.headers.get("content-type") ?? undefined).kind;
    const reader = kind === "sse" ? new SseSplitter(MAX_BODY, sink) : new BodyCollector(MAX_BODY, sink, true);
    if (res.body !== null && kind !== null) {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) reader.push(chunk);
      reader.end();
    } else await res.body?.cancel();
    if (id !== undefined && !res.ok) conv.fail(id, `HTTP ${res.status} ${res.statusText}`.trimEnd());
    else if (id !== undefined) conv.fail(id, "the answer body held no answer to it");
  }

  async function post(text: string, id: string | undefined): Promise<void> {
    const cut = new AbortController();
    open.add(cut);
    try {
      const res = await fetch(url, { method: "POST", headers: headers(), body: text, signal: cut.signal });
      await read(res, id);
    } catch (e) {
      if (id !== undefined) conv.fail(id, `POST ${url.origin}: ${failure(e)}`);
      else if (sessionId === undefined) conv.close(`POST ${url.origin}: ${failure(e)}`);
    } finally {
      open.delete(cut);
    }
  }

  return {
    // A request's answer may wait on the replay's answer to a request of the server's, sent on
    // the same stream: its body is read meanwhile. Anything else (a notification, an answer) is
    // waited for, so that the server has taken it before the next request comes.
    async send(text, id) {
      const p = post(text, id);
      if (id === undefined) await p;
    },
    started(version) {
      protocol = version;
    },
    async end() {
      for (const cut of open) cut.abort();
      if (sessionId === undefined) return;
      const cut = new AbortController();
      const t = setTimeout(() => cut.abort(), 2000);
      try {
        const res = await fetch(url, { method: "DELETE", headers: headers(), signal: cut.signal });
        await res.body?.cancel();
      } catch {
        // A server that does not end sessions on request, or is gone: nothing to end.
      } finally {
        clearTimeout(t);
      }
    },
  };
}
