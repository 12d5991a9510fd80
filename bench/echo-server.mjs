#!/usr/bin/env node
/**
 * A minimal MCP stdio server for the whole-process benchmarks, in plain
 * JavaScript so that it runs unchanged under Node 20 and Bun:
 *   node bench/echo-server.mjs    bun bench/echo-server.mjs
 *
 * It reads "\n"-delimited JSON-RPC from stdin and answers on stdout:
 *   initialize                      {"protocolVersion":…,"capabilities":{"tools":{}},"serverInfo":{"name":"bench-echo","version":"1.0.0"}}
 *   tools/list                      the two tools below
 *   tools/call echo {…}             {"content":[{"type":"text","text":"<the arguments as JSON>"}]}
 *   tools/call blob {"bytes":N}     a result whose whole line, "\n" included, is exactly N bytes
 *   any other request               error -32601; notifications get no answer
 * Answers to one read go out in one write, and the server waits for 'drain'
 * before reading on, so it never buffers a backlog of big answers.
 */
import { once } from "node:events";

const BLOB_PATTERN = "The quick brown fox jumps over the lazy dog; naïve café 0123456789.\\n";

/** The text of a blob answer, cached by length: plain ASCII and "\\n" escapes, never cut inside one. */
const blobBodies = new Map();
function blobBody(length) {
  let body = blobBodies.get(length);
  if (body === undefined) {
    const pattern = Buffer.from(BLOB_PATTERN, "utf8");
    body = Buffer.alloc(Math.max(0, length), "x");
    for (let at = 0; at + pattern.length <= body.length; at += pattern.length) pattern.copy(body, at);
    blobBodies.set(length, body);
  }
  return body;
}

function blobAnswer(id, bytes) {
  const head = Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"`);
  const tail = Buffer.from(`"}]}}\n`);
  return Buffer.concat([head, blobBody(bytes - head.length - tail.length), tail]);
}

function answer(line) {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return null;
  }
  if (msg === null || typeof msg !== "object" || typeof msg.method !== "string" || msg.id === undefined) return null;
  const id = msg.id;
  const result = (r) => `${JSON.stringify({ jsonrpc: "2.0", id, result: r })}\n`;
  switch (msg.method) {
    case "initialize":
      return result({
        protocolVersion: msg.params?.protocolVersion ?? "2025-06-18",
        capabilities: { tools: {} },
        serverInfo: { name: "bench-echo", version: "1.0.0" },
      });
    case "tools/list":
      return result({
        tools: [
          { name: "echo", description: "answers with its arguments", inputSchema: { type: "object" } },
          {
            name: "blob",
            description: "answers with a line of `bytes` bytes",
            inputSchema: { type: "object", properties: { bytes: { type: "integer" } } },
          },
        ],
      });
    case "tools/call": {
      const args = msg.params?.arguments ?? {};
      if (msg.params?.name === "blob") return blobAnswer(id, Number(args.bytes) || 1024);
      return result({ content: [{ type: "text", text: JSON.stringify(args) }] });
    }
    default:
      return `${JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32601, message: "method not found" } })}\n`;
  }
}

let rest = Buffer.alloc(0);
for await (const chunk of process.stdin) {
  const data = rest.length === 0 ? chunk : Buffer.concat([rest, chunk]);
  const out = [];
  let start = 0;
  for (let nl = data.indexOf(10); nl >= 0; nl = data.indexOf(10, start)) {
    const a = answer(data.toString("utf8", start, nl));
    if (a !== null) out.push(typeof a === "string" ? Buffer.from(a) : a);
    start = nl + 1;
    // Big answers go out one at a time, each waiting for the reader.
    if (out.length > 0 && out[out.length - 1].length >= 1 << 20) {
      if (!process.stdout.write(out.length === 1 ? out[0] : Buffer.concat(out))) await once(process.stdout, "drain");
      out.length = 0;
    }
  }
  rest = data.subarray(start);
  if (out.length > 0 && !process.stdout.write(out.length === 1 ? out[0] : Buffer.concat(out)))
    await once(process.stdout, "drain");
}
