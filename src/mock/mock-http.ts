/**
 * `seam mock --listen`: the recording served over MCP's Streamable HTTP
 * transport
 * (https://modelcontextprotocol.io/specification/2025-06-18/basic/transports#streamable-http),
 * at any path. A POST carries one JSON-RPC message or a batch; its answer is
 * an application/json body (202 and no body for notifications and answers
 * only). A POST holding `initialize` opens a session, named by the
 * `Mcp-Session-Id` of its answer, with answers of its own (a stdio mock's
 * sequence and --strict-order position are per process; here they are per
 * session); every other request must name an open session (400 without
 * one, 404 for one unknown or ended). GET, the stream a server may open
 * for messages of its own, is 405: a mock sends none. DELETE ends a
 * session. A loopback listener refuses a Host or Origin that is not
 * loopback, as seam proxy does (src/proxy/guard.ts).
 */
import { randomUUID } from "node:crypto";
import type { Log } from "../base/log.ts";
import { getField, type Json } from "../core/json.ts";
import { PARSE_ERROR_CODE } from "../observe/own-answers.ts";
import { foreignRequest } from "../proxy/guard.ts";
import { field } from "../proxy/headers.ts";
import { plain, readWholeBody, sendWhole } from "../runtime/http-replies.ts";
import type { HeaderPairs, HttpRuntime, InboundRequest, Listener, Reply } from "../runtime/http-types.ts";
import { answerFrame, frameJson, type MockAnswers } from "./mock-server.ts";

/** The most bytes of a request body read. */
const MAX_BODY = 64 * 1024 * 1024;
/** How long a client may take to send a body. */
const BODY_MS = 30_000;
/** The most sessions open at once: a client that opens sessions and never ends them is refused more. */
const MAX_SESSIONS = 10_000;

const encoder = new TextEncoder();
const JSON_TYPE = "application/json";

export interface MockHttpOptions {
  host: string;
  port: number;
  /** Refuse a Host or Origin that is not loopback (a loopback listener). */
  guardLoopback: boolean;
  /** A new session's answers. */
  answers: () => MockAnswers;
}

/** A JSON-RPC error body with no id: what a POST that is no request of a session gets. */
function rpcError(reply: Reply, status: number, code: number, message: string): void {
  const body = `{"jsonrpc":"2.0","id":null,"error":{"code":${code},"message":${JSON.stringify(`seam mock: ${message}`)}}}`;
  sendWhole(reply, status, JSON_TYPE, encoder.encode(body));
}

/** Whether a message, or one of a batch, is an initialize request. */
function opens(m: Json): boolean {
  const messages = Array.isArray(m) ? m : [m];
  return messages.some((x) => getField(x, "method") === "initialize");
}

export class MockHttpServer {
  private readonly sessions = new Map<string, MockAnswers>();
  private refusedForeign = 0;
  private listener!: Listener;

  private constructor(
    private readonly o: MockHttpOptions,
    private readonly log: Log,
  ) {}

  static async start(http: HttpRuntime, o: MockHttpOptions, log: Log): Promise<MockHttpServer> {
    const s = new MockHttpServer(o, log);
    s.listener = await http.listen(o.host, o.port, (req, reply) => s.handle(req, reply));
    return s;
  }

  /** Where clients reach it. */
  get url(): string {
    const h = this.listener.host.includes(":") ? `[${this.listener.host}]` : this.listener.host;
    return `http://${h}:${this.listener.port}/mcp`;
  }

  close(): Promise<void> {
    return this.listener.close();
  }

  private async handle(req: InboundRequest, reply: Reply): Promise<void> {
    if (this.o.guardLoopback) {
      const why = foreignRequest(field(req.headers, "host"), field(req.headers, "origin"), this.listener.port);
      if (why !== null) {
        if (this.refusedForeign++ === 0)
          this.log.warn(`refused a request to the loopback listener: ${why} (DNS rebinding protection)`);
        return plain(reply, 403, `Forbidden: ${why}\n`);
      }
    }
    const allow: HeaderPairs = [["Allow", "POST, DELETE"]];
    if (req.method !== "POST" && req.method !== "DELETE")
      return plain(reply, 405, `Method Not Allowed: seam mock sends no messages of its own\n`, allow);
    const sid = field(req.headers, "mcp-session-id");
    if (req.method === "DELETE") {
      if (sid === undefined) return plain(reply, 400, "Bad Request: no Mcp-Session-Id\n");
      if (!this.sessions.delete(sid)) return plain(reply, 404, "Not Found: no such session\n");
      return plain(reply, 200, "");
    }
    const body = await readWholeBody(req, reply, MAX_BODY, BODY_MS);
    if (body === null) return;
    if (body === "too-large")
      return plain(reply, 413, `a request body is at most ${MAX_BODY} bytes\n`, [["Connection", "close"]]);
    let answers: MockAnswers | undefined;
    const more: HeaderPairs = [];
    const m = frameJson(body);
    if (m === undefined) return rpcError(reply, 400, PARSE_ERROR_CODE, "the body is not JSON");
    if (opens(m)) {
      if (this.sessions.size >= MAX_SESSIONS)
        return rpcError(reply, 503, -32000, "too many open sessions; end one with DELETE");
      const id = randomUUID();
      answers = this.o.answers();
      this.sessions.set(id, answers);
      more.push(["Mcp-Session-Id", id]);
    } else if (sid === undefined) return rpcError(reply, 400, -32000, "no Mcp-Session-Id: initialize first");
    else {
      answers = this.sessions.get(sid);
      if (answers === undefined) return rpcError(reply, 404, -32001, "no such session");
    }
    const out = answerFrame(answers, body);
    if (out === null) {
      reply.head(202, [["Content-Length", "0"], ...more]);
      await reply.end();
      return;
    }
    sendWhole(reply, 200, JSON_TYPE, encoder.encode(out), more);
  }
}
