#!/usr/bin/env node
/**
 * A minimal MCP server over Streamable HTTP that answers at once, so that a
 * load figure measures the proxy in front of it rather than the server:
 *   node bench/fast-mcp-server.mjs [--sse]      bun bench/fast-mcp-server.mjs [--sse]
 * Listens on 127.0.0.1 on a free port (or PORT) and prints its URL (…/mcp).
 *
 * Per the 2025-06-18 transport: one endpoint; POST carries one JSON-RPC
 * message; a request is answered with one application/json response; a
 * notification or response gets 202 with no body; `initialize` opens a session
 * whose id comes back in Mcp-Session-Id, every later message must carry it
 * (400 without, 404 for an unknown or ended one); DELETE ends the session; GET
 * (no server-initiated stream here) is 405. Batches are not part of that
 * revision and are refused. Tools: `echo` ({message}) answers "Echo: message".
 */
import { randomUUID } from "node:crypto";
import http from "node:http";

const VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26"];
const TOOLS = [
  {
    name: "echo",
    description: "Echoes back the input",
    inputSchema: {
      type: "object",
      properties: { message: { type: "string", description: "Message to echo" } },
      required: ["message"],
    },
  },
];
const sessions = new Set();

function send(res, status, body, headers = {}) {
  const text = body === undefined ? "" : JSON.stringify(body);
  res.writeHead(status, {
    ...(text ? { "content-type": "application/json" } : {}),
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}
/**
 * --sse: a request is answered as server-everything answers it, an SSE stream
 * written in three writes (a priming event with an id and no data, the
 * message's event, the end), each in its own turn, so that each reaches the
 * proxy as its own chunk; and, unlike server-everything, at the same speed
 * all run long.
 */
const SSE = process.argv.includes("--sse");
let eventId = 0;
function sendEvents(res, body) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  res.write(`id: ${++eventId}\ndata: \n\n`);
  setImmediate(() => {
    res.write(`event: message\nid: ${++eventId}\ndata: ${JSON.stringify(body)}\n\n`);
    setImmediate(() => res.end());
  });
}

const rpcError = (id, code, message) => ({ jsonrpc: "2.0", id: id ?? null, error: { code, message } });

function answer(msg) {
  const p = msg.params ?? {};
  switch (msg.method) {
    case "initialize": {
      const asked = p.protocolVersion;
      return {
        protocolVersion: VERSIONS.includes(asked) ? asked : VERSIONS[0],
        capabilities: { tools: {} },
        serverInfo: { name: "seam-bench-fast", version: "1.0.0" },
      };
    }
    case "ping":
      return {};
    case "tools/list":
      return { tools: TOOLS };
    case "tools/call":
      if (p.name !== "echo") return rpcError(msg.id, -32602, `unknown tool: ${p.name}`);
      return { content: [{ type: "text", text: `Echo: ${p.arguments?.message ?? ""}` }] };
    default:
      return rpcError(msg.id, -32601, `method not found: ${msg.method}`);
  }
}

function handle(req, res, raw) {
  const sid = req.headers["mcp-session-id"];
  if (req.method === "DELETE") {
    if (!sid) return send(res, 400, rpcError(null, -32000, "Bad Request: Mcp-Session-Id required"));
    if (!sessions.delete(sid)) return send(res, 404, rpcError(null, -32001, "Session not found"));
    return send(res, 200);
  }
  if (req.method !== "POST") return send(res, 405, undefined, { allow: "POST, DELETE" });
  let msg;
  try {
    msg = JSON.parse(raw);
  } catch {
    return send(res, 400, rpcError(null, -32700, "Parse error"));
  }
  if (msg === null || typeof msg !== "object" || Array.isArray(msg) || msg.jsonrpc !== "2.0") {
    return send(res, 400, rpcError(null, -32600, "Invalid Request"));
  }
  const isRequest = typeof msg.method === "string" && msg.id !== undefined && msg.id !== null;
  if (msg.method === "initialize") {
    if (!isRequest) return send(res, 400, rpcError(null, -32600, "Invalid Request"));
    const id = randomUUID();
    sessions.add(id);
    return send(res, 200, { jsonrpc: "2.0", id: msg.id, result: answer(msg) }, { "mcp-session-id": id });
  }
  if (!sid) return send(res, 400, rpcError(msg.id, -32000, "Bad Request: Mcp-Session-Id required"));
  if (!sessions.has(sid)) return send(res, 404, rpcError(msg.id, -32001, "Session not found"));
  const version = req.headers["mcp-protocol-version"];
  if (version !== undefined && !VERSIONS.includes(version)) {
    return send(res, 400, rpcError(msg.id, -32000, `Bad Request: unsupported protocol version ${version}`));
  }
  if (!isRequest) return send(res, 202); // a notification or a response to us
  const out = answer(msg);
  const body = out.error ? out : { jsonrpc: "2.0", id: msg.id, result: out };
  if (SSE) return sendEvents(res, body);
  send(res, 200, body);
}

const server = http.createServer({ noDelay: true, keepAliveTimeout: 60_000 }, (req, res) => {
  if (new URL(req.url ?? "/", "http://x").pathname !== "/mcp") return send(res, 404);
  const origin = req.headers.origin;
  if (origin !== undefined && !/^https?:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/.test(origin)) {
    return send(res, 403, rpcError(null, -32000, "Forbidden origin"));
  }
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => handle(req, res, Buffer.concat(chunks).toString("utf8")));
});
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  process.stdout.write(`http://127.0.0.1:${server.address().port}/mcp\n`);
});
for (const s of ["SIGINT", "SIGTERM"]) process.on(s, () => process.exit(0));
