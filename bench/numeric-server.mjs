// A stdio MCP server for bench/memory.ts: answers each tools/call with a
// result of about --mib MiB that is one array of numbers (what a data tool
// returns), built once and written in one piece.
import { createInterface } from "node:readline";

const mib = Number(process.argv[2] ?? 32);
const parts = [];
let size = 0;
for (let i = 0; size < mib * 1024 * 1024; i++) {
  const s = `${i % 7 === 0 ? i : (i * 0.001953125).toFixed(6)},`;
  parts.push(s);
  size += s.length;
}
const numbers = parts.join("").slice(0, -1);
const rl = createInterface({ input: process.stdin });
rl.on("line", (line) => {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return;
  }
  if (msg.id === undefined) return;
  const id = JSON.stringify(msg.id);
  if (msg.method === "initialize") {
    process.stdout.write(
      `{"jsonrpc":"2.0","id":${id},"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"numeric","version":"1"}}}\n`,
    );
  } else {
    process.stdout.write(
      `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"data"}],"structuredContent":{"values":[${numbers}]}}}\n`,
    );
  }
});
