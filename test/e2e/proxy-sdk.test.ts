/**
 * seam proxy with real parts: the MCP TypeScript SDK's Streamable HTTP client,
 * @modelcontextprotocol/server-everything in its streamableHttp mode, and the
 * proxy as a real process (from source under Bun, the Node bundle, the exe).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ProgressNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { getField, type Json } from "../../src/core/json.ts";
import { built, runCli, VIAS } from "../helpers/cli.ts";
import { ledgerRows, tempDir } from "../helpers/proc.ts";
import { type Running, startEverything, startProxy } from "../helpers/proxy-helpers.ts";

const SECRET = "sk-proxyTESTsecret0123456789abcdef";
const COOKIE = "sid=cookieSECRETvalue42";

let everything: Running;
beforeAll(async () => {
  everything = await startEverything();
});
afterAll(async () => {
  await everything?.stop("SIGKILL");
});

function rowsOf(ledger: string, evt: string): Json[] {
  return ledgerRows(ledger).filter((r) => getField(r, "evt") === evt);
}

/** Connects an SDK client (sampling and elicitation on) through `url`, with credentials the ledger must not keep. */
async function connect(url: string) {
  const client = new Client(
    { name: "proxy-test", version: "1.0.0" },
    { capabilities: { sampling: {}, elicitation: {} } },
  );
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({
    model: "test-model",
    role: "assistant" as const,
    content: { type: "text" as const, text: "sampled by the test" },
  }));
  client.setRequestHandler(ElicitRequestSchema, async () => ({
    action: "accept" as const,
    content: { name: "Ada", check: true, firstLine: "x", email: "ada@example.com", number: 1 },
  }));
  const transport = new StreamableHTTPClientTransport(new URL(`${url}?api_key=${SECRET}&mode=test`), {
    requestInit: { headers: { Authorization: `Bearer ${SECRET}`, Cookie: COOKIE } },
  });
  await client.connect(transport);
  return { client, transport };
}

/** The scenario every build of the proxy must pass unchanged. */
async function scenario(url: string): Promise<Record<string, unknown>> {
  const { client, transport } = await connect(url);
  const seen: Record<string, unknown> = {};
  const tools = await client.listTools();
  seen.tools = tools.tools.map((t) => t.name).sort();
  seen.echo = await client.callTool({ name: "echo", arguments: { message: "through the proxy" } });
  const resources = await client.listResources();
  const first = resources.resources[0]!;
  seen.resource = (await client.readResource({ uri: first.uri })).contents[0]?.uri;
  const prompts = await client.listPrompts();
  seen.prompts = prompts.prompts.map((p) => p.name).sort();
  seen.prompt = (await client.getPrompt({ name: "simple-prompt" })).messages.length;
  seen.sampling = JSON.stringify(
    await client.callTool({ name: "trigger-sampling-request", arguments: { prompt: "hello", maxTokens: 5 } }),
  ).includes("sampled by the test");
  seen.elicitation = JSON.stringify(
    await client.callTool({ name: "trigger-elicitation-request", arguments: {} }),
  ).includes("Ada");
  // A long SSE stream: progress notifications arrive one by one before the result.
  const progress: number[] = [];
  client.setNotificationHandler(ProgressNotificationSchema, (n) => {
    progress.push(n.params.progress);
  });
  const long = await client.callTool(
    { name: "trigger-long-running-operation", arguments: { duration: 1, steps: 4 } },
    undefined,
    { onprogress: (p) => progress.push(p.progress) },
  );
  seen.long = JSON.stringify(long).includes("completed");
  seen.progress = progress.length >= 4;
  seen.session = transport.sessionId !== undefined;
  await transport.terminateSession();
  await client.close();
  return seen;
}

const expected = {
  echo: { content: [{ type: "text", text: "Echo: through the proxy" }] },
  sampling: true,
  elicitation: true,
  long: true,
  progress: true,
  session: true,
};

describe.each(VIAS.filter(built))("seam proxy (%s) with the SDK client and server-everything", (via) => {
  test("tools, resources, prompts, sampling, elicitation, progress and DELETE pass and are recorded", async () => {
    const dir = tempDir();
    const ledger = join(dir, "ledger.jsonl");
    const direct = await scenario(everything.url);
    const proxy = await startProxy(via, ["--upstream", everything.url, "--ledger", ledger]);
    let through: Record<string, unknown>;
    try {
      through = await scenario(proxy.url.replace(/\/mcp$/, "/mcp"));
    } finally {
      expect(await proxy.stop("SIGTERM")).toBe(0);
    }
    expect(through).toEqual(direct);
    expect(through).toMatchObject(expected);

    // One MCP session: one complete ledger session, ended by the client's DELETE.
    const v = await runCli("bun", ["verify", "--json", ledger]);
    expect(v.code).toBe(0);
    const report = JSON.parse(v.stdout.toString());
    expect(report.sessions.length).toBe(1);
    expect(report.sessions[0].complete).toBe(true);
    const ends = rowsOf(ledger, "session_end");
    expect(ends.map((r) => getField(r, "reason"))).toEqual(["client_delete"]);
    expect(getField(ledger ? rowsOf(ledger, "session_begin")[0]! : null, "seam")).toBe("mcp-http");

    const calls = rowsOf(ledger, "tool_call").map((r) => [getField(r, "tool"), getField(r, "status")]);
    expect(calls).toEqual([
      ["echo", "ok"],
      ["trigger-sampling-request", "ok"],
      ["trigger-elicitation-request", "ok"],
      ["trigger-long-running-operation", "ok"],
    ]);
    const serverRequests = rowsOf(ledger, "server_request").map((r) => [getField(r, "method"), getField(r, "status")]);
    expect(serverRequests).toEqual([
      ["sampling/createMessage", "ok"],
      ["elicitation/create", "ok"],
    ]);
    expect(rowsOf(ledger, "resource_read").map((r) => getField(r, "status"))).toEqual(["ok"]);
    expect(rowsOf(ledger, "prompt_get").map((r) => getField(r, "prompt"))).toEqual(["simple-prompt"]);
    expect(rowsOf(ledger, "mcp_initialize").map((r) => getField(r, "status"))).toEqual(["ok"]);
    // Each listed tool's definition digest (src/format/tool-defs.ts): the proxy observes as seam wrap does.
    const defs = rowsOf(ledger, "tools_list").flatMap((r) => getField(r, "tool_digests") as [string, string][]);
    expect(defs.map((d) => d[0])).toEqual(through.tools as string[]);
    expect(defs.every((d) => /^sha256:json-c14n:v1:[0-9a-f]{64}$/.test(d[1]))).toBe(true);
    const exchanges = rowsOf(ledger, "http_exchange");
    expect(exchanges.every((r) => typeof getField(r, "http_status") === "number")).toBe(true);
    expect(exchanges.some((r) => getField(r, "method") === "DELETE" && getField(r, "http_status") === 200)).toBe(true);
    const long = exchanges.filter((r) => (getField(r, "sse_events") as number) >= 5);
    expect(long.length).toBeGreaterThan(0);

    // Secrets: the Authorization header, the cookie and the api_key query parameter never reach the file.
    const text = readFileSync(ledger, "utf8");
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain("cookieSECRETvalue42");
    expect(text).toContain("api_key=<redacted>&mode=test");
    expect(getField(exchanges[0]!, "withheld_headers")).toEqual(["authorization", "cookie"]);
  }, 60_000);
});

/** Each session's rows whose ts is earlier than the session's row before it in the file: [line, ts]. */
function backwards(ledger: string): [number, string][] {
  const last = new Map<string, string>();
  const out: [number, string][] = [];
  ledgerRows(ledger).forEach((r, i) => {
    const session = getField(r, "session") as string;
    const ts = getField(r, "ts") as string;
    const before = last.get(session);
    if (before !== undefined && Date.parse(ts) < Date.parse(before)) out.push([i + 1, ts]);
    last.set(session, ts);
  });
  return out;
}

describe.each(VIAS.filter(built))("seam proxy (%s) row order with the SDK clients", (via) => {
  test("the rows of each session are in the order of their times (v1 and v2 clients), and verify says so", async () => {
    const ledger = join(tempDir(), "ledger.jsonl");
    const proxy = await startProxy(via, ["--upstream", everything.url, "--ledger", ledger]);
    try {
      await scenario(proxy.url);
      const v2 = new ModernClient({ name: "v2", version: "2.0.0" });
      await v2.connect(new ModernTransport(new URL(proxy.url)));
      for (let i = 0; i < 5; i++) {
        await v2.listTools();
        await v2.callTool({ name: "echo", arguments: { message: `m${i}` } });
      }
      await v2.close();
    } finally {
      expect(await proxy.stop()).toBe(0);
    }
    expect(backwards(ledger)).toEqual([]);
    const v = await runCli("bun", ["verify", "--json", ledger]);
    expect(JSON.parse(v.stdout.toString()).finding_kinds).toEqual([]);
    expect(v.code).toBe(0);
  }, 60_000);
});

describe.each(VIAS.filter(built))("seam proxy (%s) with a 2026-07-28 server and the v2 client", (via) => {
  test("a call the client cancels by aborting its stream is rowed cancelled at once, with its own duration", async () => {
    // The SDK's 2026-07-28 server over Streamable HTTP, in this process: `slow` answers only after 20 s.
    const handler = createMcpHandler(() => {
      const server = new McpServer({ name: "modern-http", version: "1.0.0" }, { capabilities: { tools: {} } });
      server.registerTool("slow", { inputSchema: z.object({}) }, async () => {
        await Bun.sleep(20_000);
        return { content: [{ type: "text", text: "late" }] };
      });
      return server;
    });
    const upstream = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (r) => handler.fetch(r) });
    const ledger = join(tempDir(), "ledger.jsonl");
    const proxy = await startProxy(via, ["--upstream", `http://127.0.0.1:${upstream.port}/mcp`, "--ledger", ledger]);
    let row: Json | undefined;
    try {
      const client = new ModernClient(
        { name: "v2", version: "2.0.0" },
        { versionNegotiation: { mode: { pin: "2026-07-28" } } },
      );
      await client.connect(new ModernTransport(new URL(proxy.url)));
      const abort = new AbortController();
      const call = client.callTool({ name: "slow", arguments: {} }, { signal: abort.signal }).catch((e) => e);
      await Bun.sleep(300);
      abort.abort();
      await call;
      // The proxy still runs: the call's row is in the ledger all the same.
      const deadline = Date.now() + 5000;
      while (row === undefined && Date.now() < deadline) {
        await Bun.sleep(100);
        row = rowsOf(ledger, "tool_call")[0];
      }
      await client.close();
    } finally {
      expect(await proxy.stop()).toBe(0);
      await upstream.stop(true);
      await handler.close();
    }
    expect(row).toBeDefined();
    expect([getField(row!, "tool"), getField(row!, "status"), getField(row!, "reason")]).toEqual([
      "slow",
      "cancelled",
      "client_gone",
    ]);
    expect(getField(row!, "ms") as number).toBeGreaterThan(200);
    expect(getField(row!, "ms") as number).toBeLessThan(3000);
    const end = rowsOf(ledger, "session_end")[0]!;
    expect(getField(end, "cancelled")).toBe(1);
    expect(getField(end, "unanswered")).toBeUndefined();
    expect((await runCli("bun", ["verify", ledger])).code).toBe(0);
  }, 60_000);
});

describe.each(VIAS.filter(built))("seam proxy (%s) --fail-closed with the SDK clients", (via) => {
  test("a tools/call longer than --max-frame fails at once with seam's answer (v1 and v2 clients), never forwarded", async () => {
    const ledger = join(tempDir(), "ledger.jsonl");
    const proxy = await startProxy(via, [
      "--upstream",
      everything.url,
      "--ledger",
      ledger,
      "--fail-closed",
      "--max-frame",
      "1000",
    ]);
    const message = "y".repeat(2000);
    const failures: string[] = [];
    try {
      const v1 = new Client({ name: "v1", version: "1.0.0" });
      const t1 = new StreamableHTTPClientTransport(new URL(proxy.url));
      await v1.connect(t1);
      failures.push(String(await v1.callTool({ name: "echo", arguments: { message } }).catch((e) => e)));
      // Within the limit, the same client's calls go on.
      expect(JSON.stringify(await v1.callTool({ name: "echo", arguments: { message: "short" } }))).toContain(
        "Echo: short",
      );
      await t1.terminateSession();
      await v1.close();
      const v2 = new ModernClient({ name: "v2", version: "2.0.0" });
      await v2.connect(new ModernTransport(new URL(proxy.url)));
      failures.push(String(await v2.callTool({ name: "echo", arguments: { message } }).catch((e) => e)));
      await v2.close();
    } finally {
      expect(await proxy.stop()).toBe(0);
    }
    expect(failures.length).toBe(2);
    for (const f of failures) expect(f).toContain("longer than --max-frame");
    const frames = rowsOf(ledger, "unparsed_frame");
    expect(frames.map((r) => [getField(r, "dir"), getField(r, "refused")])).toEqual([
      ["c2s", true],
      ["c2s", true],
    ]);
    expect(rowsOf(ledger, "tool_call").map((r) => getField(r, "status"))).toEqual(["ok"]);
    expect(readFileSync(ledger, "utf8")).not.toContain(message);
  }, 60_000);
});

/** Reads SSE events off a fetch body until `until` matches one; returns the events' id and data lines. */
async function readEvents(
  body: ReadableStream<Uint8Array>,
  until: (e: { id?: string; data: string }) => boolean,
): Promise<{ id?: string; data: string }[]> {
  const reader = body.getReader();
  const events: { id?: string; data: string }[] = [];
  let buf = "";
  for (;;) {
    const r = await reader.read();
    if (r.done) return events;
    buf += new TextDecoder().decode(r.value);
    let at = buf.indexOf("\n\n");
    while (at >= 0) {
      const block = buf.slice(0, at);
      buf = buf.slice(at + 2);
      at = buf.indexOf("\n\n");
      const e: { id?: string; data: string } = { data: "" };
      for (const line of block.split("\n")) {
        if (line.startsWith("id:")) e.id = line.slice(3).trim();
        if (line.startsWith("data:")) e.data += line.slice(5).trim();
      }
      events.push(e);
      if (until(e)) {
        await reader.cancel();
        return events;
      }
    }
  }
}

test("a stream cut by the client resumes with Last-Event-ID through the proxy", async () => {
  const ledger = join(tempDir(), "ledger.jsonl");
  const proxy = await startProxy("bun", ["--upstream", everything.url, "--ledger", ledger]);
  let resumedEvents = 0;
  try {
    const client = new Client({ name: "resume-test", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(proxy.url));
    await client.connect(transport);
    const headers = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-session-id": transport.sessionId!,
      "mcp-protocol-version": transport.protocolVersion ?? "2025-11-25",
    };
    const call = {
      jsonrpc: "2.0",
      id: 900,
      method: "tools/call",
      params: {
        name: "trigger-long-running-operation",
        arguments: { duration: 1.5, steps: 5 },
        _meta: { progressToken: "p1" },
      },
    };
    const cut = new AbortController();
    const first = await fetch(proxy.url, { method: "POST", headers, body: JSON.stringify(call), signal: cut.signal });
    expect(first.headers.get("content-type")).toStartWith("text/event-stream");
    const before = await readEvents(first.body!, (e) => e.data.includes("notifications/progress"));
    const last = before.at(-1)!;
    expect(last.id).toBeDefined();
    cut.abort();
    // The client went away after one progress event; it comes back on GET with Last-Event-ID once the
    // operation is over (server-everything replays what its event store holds after that id).
    await Bun.sleep(2000);
    const resumed = await fetch(proxy.url, {
      headers: { ...headers, accept: "text/event-stream", "last-event-id": last.id! },
    });
    expect(resumed.status).toBe(200);
    const after = await readEvents(resumed.body!, (e) => e.data.includes('"progress":5'));
    const steps = after.map((e) => /"progress":(\d)/.exec(e.data)?.[1]).filter(Boolean);
    expect(steps).toEqual(["2", "3", "4", "5"]);
    resumedEvents = after.length;
    await transport.terminateSession();
    await client.close();
  } finally {
    await proxy.stop();
  }
  // With the POST stream gone, this server sends the answer on the session's standalone GET stream (the
  // SDK client keeps one open): it pairs within the session all the same, once.
  const calls = rowsOf(ledger, "tool_call");
  expect(calls.map((c) => [getField(c, "tool"), getField(c, "rpc_id"), getField(c, "status")])).toEqual([
    ["trigger-long-running-operation", 900, "ok"],
  ]);
  const gets = rowsOf(ledger, "http_exchange").filter((r) => getField(r, "last_event_id") !== undefined);
  expect(gets.length).toBe(1);
  expect(getField(gets[0]!, "method")).toBe("GET");
  expect(getField(gets[0]!, "sse_events") as number).toBeGreaterThanOrEqual(resumedEvents);
  const v = await runCli("bun", ["verify", ledger]);
  expect(v.code).toBe(0);
}, 30_000);

test("100 concurrent MCP sessions: 100 complete ledger sessions, every call rowed", async () => {
  const ledger = join(tempDir(), "ledger.jsonl");
  const proxy = await startProxy("bun", ["--upstream", everything.url, "--ledger", ledger]);
  const N = 100;
  try {
    await Promise.all(
      Array.from({ length: N }, async (_, i) => {
        const client = new Client({ name: `c${i}`, version: "1.0.0" });
        const transport = new StreamableHTTPClientTransport(new URL(proxy.url));
        await client.connect(transport);
        const r = await client.callTool({ name: "echo", arguments: { message: `m${i}` } });
        expect(JSON.stringify(r)).toContain(`Echo: m${i}`);
        await transport.terminateSession();
        await client.close();
      }),
    );
  } finally {
    expect(await proxy.stop()).toBe(0);
  }
  const v = await runCli("bun", ["verify", "--json", ledger]);
  expect(v.code).toBe(0);
  const report = JSON.parse(v.stdout.toString());
  expect(report.sessions.length).toBe(N);
  expect(report.sessions.every((s: { complete: boolean }) => s.complete)).toBe(true);
  expect(rowsOf(ledger, "tool_call").length).toBe(N);
  expect(rowsOf(ledger, "session_end").every((r) => getField(r, "reason") === "client_delete")).toBe(true);
}, 120_000);
