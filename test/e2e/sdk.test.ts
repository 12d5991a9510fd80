/**
 * A real MCP client (the official TypeScript SDK over its stdio transport)
 * talking through `seam wrap` to the reference servers gets the same results
 * as without seam, and the ledger holds one tool_call per call.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CreateMessageRequestSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { getField } from "../../src/core/json.ts";
import { ROOT, seamArgv, type Via } from "../helpers/cli.ts";
import { ledgerRows, tempDir } from "../helpers/proc.ts";

const EVERYTHING = ["node", `${ROOT}node_modules/@modelcontextprotocol/server-everything/dist/index.js`, "stdio"];
const FILESYSTEM = ["node", `${ROOT}node_modules/@modelcontextprotocol/server-filesystem/dist/index.js`];

async function session(argv: string[], work: (c: Client) => Promise<unknown[]>): Promise<unknown[]> {
  const transport = new StdioClientTransport({ command: argv[0]!, args: argv.slice(1), stderr: "ignore" });
  const client = new Client(
    { name: "seam-sdk-test", version: "1.0.0" },
    { capabilities: { sampling: {}, elicitation: {} } },
  );
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({
    role: "assistant",
    content: { type: "text", text: "sampled by the test" },
    model: "test-model",
  }));
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "decline" }));
  await client.connect(transport);
  try {
    return await work(client);
  } finally {
    await client.close();
  }
}

const wrapped = (via: Via, ledger: string, server: string[]) => [
  ...seamArgv(via),
  "wrap",
  "--ledger",
  ledger,
  "--",
  ...server,
];

describe.each(["bun", "node"] as Via[])("the MCP SDK client through seam via %s", (via) => {
  test("server-everything: same results, sampling and elicitation round trips, one row per call", async () => {
    const work = async (c: Client) => [
      (await c.listTools()).tools.map((t) => t.name),
      await c.callTool({ name: "echo", arguments: { message: "héllo 🔒" } }),
      await c.callTool({ name: "get-sum", arguments: { a: 2, b: 40 } }),
      await c.callTool({ name: "trigger-sampling-request", arguments: { prompt: "hi", maxTokens: 5 } }),
      await c.callTool({ name: "trigger-elicitation-request", arguments: {} }),
      await c.callTool({ name: "no-such-tool", arguments: {} }).catch((e: Error) => `rejected: ${e.message}`),
    ];
    const direct = await session(EVERYTHING, work);
    const dir = tempDir();
    const ledger = join(dir, "l.jsonl");
    const through = await session(wrapped(via, ledger, EVERYTHING), work);
    expect(through).toEqual(direct);
    const rows = ledgerRows(ledger);
    const calls = rows.filter((r) => getField(r, "evt") === "tool_call");
    expect(calls.map((r) => getField(r, "tool"))).toEqual([
      "echo",
      "get-sum",
      "trigger-sampling-request",
      "trigger-elicitation-request",
      "no-such-tool",
    ]);
    expect(calls.map((r) => getField(r, "status"))).toEqual(["ok", "ok", "ok", "ok", "error"]);
    const serverRequests = rows
      .filter((r) => getField(r, "evt") === "server_request")
      .map((r) => [getField(r, "method"), getField(r, "status")]);
    expect(serverRequests).toContainEqual(["sampling/createMessage", "ok"]);
    expect(serverRequests).toContainEqual(["elicitation/create", "ok"]);
    expect(getField(rows.at(-1)!, "evt")).toBe("session_end");
    expect(getField(rows.at(-1)!, "calls")).toBe(5);
  });

  test("server-filesystem: same results, one row per call", async () => {
    const dir = tempDir();
    const root = join(dir, "root");
    mkdirSync(root);
    writeFileSync(join(root, "a.txt"), "alpha\n");
    const server = [...FILESYSTEM, root];
    const work = async (c: Client) => [
      await c.callTool({ name: "read_text_file", arguments: { path: join(root, "a.txt") } }),
      await c.callTool({ name: "list_directory", arguments: { path: root } }),
      await c.callTool({ name: "read_text_file", arguments: { path: join(root, "missing.txt") } }),
    ];
    const direct = await session(server, work);
    const ledger = join(dir, "l.jsonl");
    const through = await session(wrapped(via, ledger, server), work);
    expect(through).toEqual(direct);
    const calls = ledgerRows(ledger).filter((r) => getField(r, "evt") === "tool_call");
    expect(calls.map((r) => [getField(r, "tool"), getField(r, "status")])).toEqual([
      ["read_text_file", "ok"],
      ["list_directory", "ok"],
      ["read_text_file", "error"],
    ]);
  });
});
