/**
 * seam proxy in front of an https upstream: a real MCP server (the official
 * SDK's McpServer and StreamableHTTPServerTransport) served by node:https with
 * a certificate from a throwaway CA that openssl makes for this test. Only the
 * proxy's process trusts that CA (NODE_EXTRA_CA_CERTS, honoured by Node, Bun
 * and the compiled executable alike); without it the proxy refuses the
 * upstream. Every exchange's bytes are compared at the three points they
 * cross: the client, the upstream, and the ledger's digests.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import type http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";
import { getField, type Json } from "../../src/core/json.ts";
import { built, runCli, VIAS } from "../helpers/cli.ts";
import { ledgerRows, tempDir } from "../helpers/proc.ts";
import { rawRequest, startProxy } from "../helpers/proxy-helpers.ts";

const OPENSSL = spawnSync("openssl", ["version"]).status === 0;

/** Runs openssl; throws with its stderr when it fails. */
function openssl(args: string[], cwd: string): void {
  const r = spawnSync("openssl", args, { cwd, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr}`);
}

/** A CA and a certificate it signed for 127.0.0.1 and localhost, valid for a day; their file paths. */
function throwawayCa(dir: string): { ca: string; key: string; cert: string } {
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
  openssl(
    [
      "req",
      "-x509",
      ...ec,
      "-keyout",
      "ca.key",
      "-out",
      "ca.pem",
      "-days",
      "1",
      "-subj",
      "/CN=seam test CA",
      "-addext",
      "basicConstraints=critical,CA:TRUE",
      "-addext",
      "keyUsage=critical,keyCertSign,cRLSign",
    ],
    dir,
  );
  openssl(["req", ...ec, "-keyout", "leaf.key", "-out", "leaf.csr", "-subj", "/CN=localhost"], dir);
  writeFileSync(
    join(dir, "leaf.ext"),
    "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
  );
  openssl(
    [
      "x509",
      "-req",
      "-in",
      "leaf.csr",
      "-CA",
      "ca.pem",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      "leaf.pem",
      "-days",
      "1",
      "-extfile",
      "leaf.ext",
    ],
    dir,
  );
  return { ca: join(dir, "ca.pem"), key: join(dir, "leaf.key"), cert: join(dir, "leaf.pem") };
}

/** What crossed the upstream in one exchange: the request body it read and the bytes it wrote back. */
interface Seen {
  method: string;
  request: Buffer;
  response: Buffer[];
}

/** The SDK's MCP server (one per session, tool `echo`) on node:https; every exchange's bytes kept. */
async function httpsMcp(key: string, cert: string) {
  const seen: Seen[] = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const server = https.createServer(
    { key: readFileSync(key), cert: readFileSync(cert) },
    async (req: http.IncomingMessage, res: http.ServerResponse) => {
      const parts: Buffer[] = [];
      for await (const d of req) parts.push(d as Buffer);
      const s: Seen = { method: req.method ?? "", request: Buffer.concat(parts), response: [] };
      seen.push(s);
      // Keep the bytes of the answer as the server writes them.
      const write = res.write.bind(res) as (...a: unknown[]) => boolean;
      const end = res.end.bind(res) as (...a: unknown[]) => http.ServerResponse;
      const keep = (chunk: unknown, enc: unknown) => {
        if (typeof chunk === "string") s.response.push(Buffer.from(chunk, (enc as BufferEncoding) ?? "utf8"));
        else if (chunk instanceof Uint8Array) s.response.push(Buffer.from(chunk));
      };
      res.write = ((chunk: unknown, ...a: unknown[]) => {
        keep(chunk, typeof a[0] === "string" ? a[0] : undefined);
        return write(chunk, ...a);
      }) as typeof res.write;
      res.end = ((chunk?: unknown, ...a: unknown[]) => {
        if (chunk !== undefined && typeof chunk !== "function")
          keep(chunk, typeof a[0] === "string" ? a[0] : undefined);
        return end(chunk, ...a);
      }) as typeof res.end;
      const sid = req.headers["mcp-session-id"];
      let t = typeof sid === "string" ? sessions.get(sid) : undefined;
      if (t === undefined) {
        const made = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            sessions.set(id, made);
          },
        });
        const mcp = new McpServer({ name: "https-fixture", version: "1.0.0" });
        mcp.registerTool("echo", { inputSchema: { message: z.string() } }, async ({ message }) => ({
          content: [{ type: "text", text: `Echo: ${message}` }],
        }));
        await mcp.connect(made);
        t = made;
      }
      await t.handleRequest(req, res, s.request.length > 0 ? JSON.parse(s.request.toString("utf8")) : undefined);
    },
  );
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const digest = (b: Uint8Array) => `sha256:raw-bytes:v1:${createHash("sha256").update(b).digest("hex")}`;

function rowsOf(ledger: string, evt: string): Json[] {
  return ledgerRows(ledger).filter((r) => getField(r, "evt") === evt);
}

const POST = { "content-type": "application/json", accept: "application/json, text/event-stream" };

if (!OPENSSL) test.skip("https upstream: skipped, openssl is not on PATH to make the throwaway certificate", () => {});

describe.each(OPENSSL ? VIAS.filter(built) : [])("seam proxy (%s) to an https upstream", (via) => {
  let tls: { ca: string; key: string; cert: string };
  let up: Awaited<ReturnType<typeof httpsMcp>>;
  beforeAll(async () => {
    tls = throwawayCa(tempDir());
    up = await httpsMcp(tls.key, tls.cert);
  });
  afterAll(async () => {
    await up?.close();
  });

  test("calls pass byte for byte both ways, are rowed, and the ledger verifies", async () => {
    const ledger = join(tempDir(), "ledger.jsonl");
    const p = await startProxy(via, ["--upstream", up.url, "--ledger", ledger], { NODE_EXTRA_CA_CERTS: tls.ca });
    const from = up.seen.length;
    const sent: { method: string; body: string }[] = [];
    const got: Buffer[] = [];
    const exchange = async (method: string, headers: Record<string, string>, body = "") => {
      sent.push({ method, body });
      const r = await rawRequest(p.url, { method, headers, body: body === "" ? undefined : body });
      got.push(r.body);
      return r;
    };
    try {
      const init = await exchange(
        "POST",
        POST,
        `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"https-test","version":"1"}}}`,
      );
      expect(init.status).toBe(200);
      const sid = init.headers["mcp-session-id"] as string;
      expect(sid).toBeString();
      const h = { ...POST, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" };
      expect((await exchange("POST", h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)).status).toBe(202);
      const list = await exchange("POST", h, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`);
      expect(list.body.toString()).toContain(`"name":"echo"`);
      const call = await exchange(
        "POST",
        h,
        `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"über TLS ✓"}}}`,
      );
      expect(call.body.toString()).toContain("Echo: über TLS ✓");
      expect((await exchange("DELETE", { "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" })).status).toBe(
        200,
      );
    } finally {
      expect(await p.stop()).toBe(0);
    }

    // Byte for byte: what the client sent is what the upstream read; what the upstream wrote is what the
    // client read; and the ledger's digests are of those same bytes.
    const there = up.seen.slice(from);
    expect(there.map((s) => s.method)).toEqual(sent.map((s) => s.method));
    expect(there.map((s) => s.request.toString("utf8"))).toEqual(sent.map((s) => s.body));
    expect(there.map((s) => digest(Buffer.concat(s.response)))).toEqual(got.map(digest));
    const ex = rowsOf(ledger, "http_exchange");
    expect(
      ex.map((r) => [
        getField(getField(r, "stream_digests")!, "request"),
        getField(getField(r, "stream_digests")!, "response"),
      ]),
    ).toEqual(sent.map((s, i) => [digest(Buffer.from(s.body)), digest(got[i]!)]));
    expect(ex.map((r) => getField(r, "http_status"))).toEqual([200, 202, 200, 200, 200]);

    expect(rowsOf(ledger, "mcp_initialize").map((r) => getField(r, "status"))).toEqual(["ok"]);
    expect(rowsOf(ledger, "tools_list").map((r) => getField(r, "tools"))).toEqual([["echo"]]);
    expect(
      rowsOf(ledger, "tool_call").map((r) => [getField(r, "tool"), getField(r, "rpc_id"), getField(r, "status")]),
    ).toEqual([["echo", 3, "ok"]]);
    expect(getField(rowsOf(ledger, "session_begin")[0]!, "upstream")).toBe(up.url);
    expect(rowsOf(ledger, "session_end").map((r) => getField(r, "reason"))).toEqual(["client_delete"]);
    const v = await runCli("bun", ["verify", "--json", ledger]);
    expect(v.code).toBe(0);
    const report = JSON.parse(v.stdout.toString());
    expect(report.sessions.map((s: { complete: boolean }) => s.complete)).toEqual([true]);
  }, 30_000);

  test("without the CA the upstream's certificate is refused: 502, a JSON-RPC error, the TLS code rowed", async () => {
    const ledger = join(tempDir(), "ledger.jsonl");
    const p = await startProxy(via, ["--upstream", up.url, "--ledger", ledger]);
    const from = up.seen.length;
    try {
      const r = await rawRequest(p.url, {
        method: "POST",
        headers: POST,
        body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"https-test","version":"1"}}}`,
      });
      expect(r.status).toBe(502);
      const body = JSON.parse(r.body.toString());
      expect([body.id, body.error.code]).toEqual([1, -32000]);
      expect(body.error.message).toContain("UNABLE_TO_VERIFY_LEAF_SIGNATURE");
    } finally {
      await p.stop();
    }
    expect(up.seen.length).toBe(from);
    const ex = rowsOf(ledger, "http_exchange")[0]!;
    expect([getField(ex, "http_status"), getField(ex, "http_error"), getField(ex, "error_phase")]).toEqual([
      502,
      "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
      "connect",
    ]);
    const v = await runCli("bun", ["verify", ledger]);
    expect(v.code).toBe(0);
  }, 30_000);
});
