/**
 * A recording over Streamable HTTP as a fixture, with real parts: the
 * official SDK client (declaring sampling, and answering the server's
 * sampling request) drives server-everything in its streamableHttp mode
 * through `seam proxy --payloads`; `seam replay --upstream` sends the
 * recorded requests to a fresh server-everything, answering its sampling
 * request from the recording; `seam mock --listen` serves the SDK client's
 * StreamableHTTPClientTransport the answers the live server gave, and a
 * replay to it finds them all the same. Under each build.
 *
 * What varies between two live servers: get-env (it answers with the
 * server's environment, whose PORT differs), in /content/0/text.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateMessageRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { getField } from "../../src/core/json.ts";
import { built, runCli, VIAS } from "../helpers/cli.ts";
import { ledgerRows, tempDir } from "../helpers/proc.ts";
import { freePort, rawRequest, startEverything, startProxy, startServing } from "../helpers/proxy-helpers.ts";

/** What the client asks; `varies`: its answer differs from one live server to the next. */
const ASKED: { method: string; name: string; varies?: true; ask: (c: Client) => Promise<unknown> }[] = [
  { method: "tools/list", name: "", ask: (c) => c.listTools() },
  { method: "tools/call", name: "echo", ask: (c) => c.callTool({ name: "echo", arguments: { message: "héllo 🔒" } }) },
  { method: "tools/call", name: "get-sum", ask: (c) => c.callTool({ name: "get-sum", arguments: { a: 2, b: 40 } }) },
  { method: "tools/call", name: "get-tiny-image", ask: (c) => c.callTool({ name: "get-tiny-image", arguments: {} }) },
  {
    method: "tools/call",
    name: "trigger-sampling-request",
    ask: (c) => c.callTool({ name: "trigger-sampling-request", arguments: { prompt: "one word", maxTokens: 5 } }),
  },
  { method: "tools/call", name: "get-env", varies: true, ask: (c) => c.callTool({ name: "get-env", arguments: {} }) },
  { method: "prompts/get", name: "simple-prompt", ask: (c) => c.getPrompt({ name: "simple-prompt" }) },
  {
    method: "prompts/get",
    name: "args-prompt",
    ask: (c) => c.getPrompt({ name: "args-prompt", arguments: { city: "Oslo" } }),
  },
  {
    method: "resources/read",
    name: "demo://resource/static/document/architecture.md",
    ask: (c) => c.readResource({ uri: "demo://resource/static/document/architecture.md" }),
  },
  { method: "resources/list", name: "", ask: (c) => c.listResources() },
  { method: "resources/templates/list", name: "", ask: (c) => c.listResourceTemplates() },
  { method: "prompts/list", name: "", ask: (c) => c.listPrompts() },
  {
    method: "completion/complete",
    name: "",
    ask: (c) =>
      c.complete({
        ref: { type: "ref/prompt", name: "completable-prompt" },
        argument: { name: "department", value: "E" },
      }),
  },
];

/** A client that declares sampling, answering each sampling request with one fixed message. */
async function client(url: string): Promise<{ c: Client; t: StreamableHTTPClientTransport }> {
  const c = new Client({ name: "seam-fixture-test", version: "1.0.0" }, { capabilities: { sampling: {} } });
  c.setRequestHandler(CreateMessageRequestSchema, async () => ({
    model: "fixture-model",
    role: "assistant" as const,
    content: { type: "text" as const, text: "fixed" },
  }));
  const t = new StreamableHTTPClientTransport(new URL(url));
  await c.connect(t);
  return { c, t };
}

async function askAll(c: Client): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const a of ASKED) out.push(await a.ask(c));
  return out;
}

describe.each(VIAS.filter(built))("a Streamable HTTP recording via %s", (via) => {
  test("replay --upstream to a fresh server; mock --listen serves the SDK client; a changed ledger is refused", async () => {
    const dir = tempDir();
    const ledger = join(dir, "l.jsonl");
    const store = join(dir, "store");

    // Recorded through seam proxy.
    const everything = await startEverything();
    let live: unknown[];
    let server: ReturnType<Client["getServerVersion"]>;
    try {
      const proxy = await startProxy(via, ["--upstream", everything.url, "--ledger", ledger, "--payloads", store]);
      try {
        const { c } = await client(proxy.url);
        live = await askAll(c);
        server = c.getServerVersion();
        await c.close();
      } finally {
        expect(await proxy.stop()).toBe(0);
      }
    } finally {
      await everything.stop("SIGTERM");
    }
    const rows = ledgerRows(ledger);
    expect(rows.filter((r) => getField(r, "evt") === "server_request").map((r) => getField(r, "method"))).toEqual([
      "sampling/createMessage",
    ]);

    // Replayed to a fresh server: the same answers but get-env's, the sampling request answered as recorded.
    const fresh = await startEverything();
    try {
      const replay = (more: string[]) =>
        runCli(via, ["replay", ledger, "--payloads", store, "--upstream", fresh.url, "--json", ...more]);
      let r = await replay([]);
      expect(r.stderr).toBe("");
      let out = JSON.parse(r.stdout.toString());
      expect(r.code).toBe(1);
      expect(
        out.calls.map((x: { method: string; name: string; verdict: string }) => [x.method, x.name, x.verdict]),
      ).toEqual(ASKED.map((a) => [a.method, a.name, a.varies ? "different" : "same"]));
      r = await replay(["--ignore", "/content/0/text"]);
      out = JSON.parse(r.stdout.toString());
      expect([r.code, out.same, out.different, out.missing, out.no_payload]).toEqual([0, ASKED.length, 0, 0, 0]);
    } finally {
      await fresh.stop("SIGTERM");
    }

    // Nothing listens there: every request is missing, and why is said.
    const nowhere = `http://127.0.0.1:${await freePort()}/mcp`;
    const gone = await runCli(via, ["replay", ledger, "--payloads", store, "--upstream", nowhere]);
    expect(gone.code).toBe(1);
    expect(gone.stdout.toString()).toContain(
      `${ASKED.length} requests replayed: 0 same, 0 different, ${ASKED.length} missing, 0 with no payload`,
    );
    expect(gone.stdout.toString()).toMatch(/\nline \d+: initialize: POST http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED\n/);

    // Served back over Streamable HTTP: the SDK client gets what the live server gave.
    const mock = await startServing(via, ["mock", ledger, "--payloads", store, "--listen", "127.0.0.1:0"]);
    try {
      const { c, t } = await client(mock.url);
      expect(c.getServerVersion()).toEqual(server);
      expect(await askAll(c)).toEqual(live);
      const sid = t.sessionId!;
      expect(sid).toMatch(/^[0-9a-f-]{36}$/);
      // GET (a stream of the server's own messages) is not offered; a foreign Host is refused.
      expect(
        (await rawRequest(mock.url, { headers: { accept: "text/event-stream", "mcp-session-id": sid } })).status,
      ).toBe(405);
      const ping = JSON.stringify({ jsonrpc: "2.0", id: 9, method: "ping" });
      const note = JSON.stringify({ jsonrpc: "2.0", method: "notifications/roots/list_changed" });
      const post = (headers: Record<string, string>, body = ping) =>
        rawRequest(mock.url, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
          body,
        });
      const answered = async (body: string) => {
        const a = await post({ "mcp-session-id": sid }, body);
        return [a.status, a.headers["content-type"], a.body.toString()];
      };
      // A batch is answered with a batch; notifications alone get 202 and no body; a body that is no JSON, a parse error.
      expect(await answered(`[${ping},${note}]`)).toEqual([
        200,
        "application/json",
        `[{"jsonrpc":"2.0","id":9,"result":{}}]`,
      ]);
      expect(await answered(note)).toEqual([202, undefined, ""]);
      expect(await answered("{not json")).toEqual([
        400,
        "application/json",
        `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"seam mock: the body is not JSON"}}`,
      ]);
      expect((await post({ host: "evil.example", "mcp-session-id": sid })).status).toBe(403);
      expect((await post({ origin: "http://evil.example", "mcp-session-id": sid })).status).toBe(403);
      const ok = await post({ "mcp-session-id": sid });
      expect([ok.status, ok.body.toString()]).toEqual([200, `{"jsonrpc":"2.0","id":9,"result":{}}`]);
      expect((await post({})).status).toBe(400);
      // DELETE ends the session: it is then unknown.
      await t.terminateSession();
      expect((await post({ "mcp-session-id": sid })).status).toBe(404);
      await c.close();
      // The recording replayed to its own mock (answers as JSON bodies, not event streams): all the same.
      const r = await runCli(via, ["replay", ledger, "--payloads", store, "--upstream", mock.url, "--json"]);
      const out = JSON.parse(r.stdout.toString());
      expect([r.code, out.same, out.different, out.missing, out.no_payload]).toEqual([0, ASKED.length, 0, 0, 0]);
    } finally {
      expect(await mock.stop("SIGTERM")).toBe(0);
    }

    // Only loopback unless told otherwise.
    const remote = await runCli(via, ["mock", ledger, "--payloads", store, "--listen", "0.0.0.0:0"]);
    expect([remote.code, remote.stdout.length]).toEqual([2, 0]);
    expect(remote.stderr).toContain(
      "seam: error: --listen 0.0.0.0 is not a loopback address\nseam: hint: add --allow-remote",
    );

    // A changed row: mock and replay refuse it before serving or sending anything.
    writeFileSync(ledger, readFileSync(ledger, "utf8").replace(`"tool": "get-sum"`, `"tool": "get-sun"`));
    for (const args of [
      ["mock", ledger, "--payloads", store, "--listen", "127.0.0.1:0"],
      ["replay", ledger, "--payloads", store, "--upstream", "http://127.0.0.1:9/mcp"],
    ]) {
      const r = await runCli(via, args);
      expect([r.code, r.stdout.length]).toEqual([1, 0]);
      expect(r.stderr).toMatch(/^seam: error: .*l\.jsonl does not verify: broken \(.*\); not (serving|replaying) it\n/);
    }
  }, 120_000);
});
