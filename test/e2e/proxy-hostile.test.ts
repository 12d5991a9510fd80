/**
 * seam proxy against hostile upstreams and clients: the proxy runs as a real
 * process; upstreams are plain HTTP servers written here (they misbehave on
 * purpose), clients are fetch and node:http.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, readlinkSync, renameSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import http from "node:http";
import { type AddressInfo, connect } from "node:net";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { getField, type Json } from "../../src/core/json.ts";
import { built, runCli, type Via } from "../helpers/cli.ts";
import { ledgerRows, tempDir } from "../helpers/proc.ts";
import {
  freePort,
  peakRss,
  type Running,
  rawRequest,
  startProxy,
  upstream,
  wireRequest,
  wireUpstream,
} from "../helpers/proxy-helpers.ts";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

function ledgerPath(): string {
  return join(tempDir(), "ledger.jsonl");
}

async function proxyTo(url: string, ledger: string, extra: string[] = [], via: Via = "bun"): Promise<Running> {
  const p = await startProxy(via, ["--upstream", url, "--ledger", ledger, ...extra]);
  cleanups.push(() => p.stop("SIGKILL"));
  return p;
}

function rowsOf(ledger: string, evt: string): Json[] {
  return ledgerRows(ledger).filter((r) => getField(r, "evt") === evt);
}

/**
 * A minimal MCP upstream: a notification gets 202, `initialize` a server's
 * result (and, with `sessionId`, a new Mcp-Session-Id), any other request
 * `result`; a GET is an event stream it keeps open.
 */
async function mcpUpstream(result: object, sessionId?: () => string) {
  const up = await upstream((req, res) => {
    if (req.method === "GET") {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(": open\n\n");
      return;
    }
    const parts: Buffer[] = [];
    req.on("data", (d: Buffer) => parts.push(d));
    req.on("end", () => {
      const m = JSON.parse(Buffer.concat(parts).toString());
      if (m.id === undefined) {
        res.writeHead(202);
        res.end();
        return;
      }
      const init = m.method === "initialize";
      res.writeHead(200, {
        "content-type": "application/json",
        ...(init && sessionId ? { "mcp-session-id": sessionId() } : {}),
      });
      const server = { protocolVersion: "2025-11-25", capabilities: {}, serverInfo: { name: "u", version: "1" } };
      res.end(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: init ? server : result }));
    });
  });
  cleanups.push(up.close);
  return up;
}

const INIT = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`;
const CALL = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}}}`;
const POST = { "content-type": "application/json", accept: "application/json, text/event-stream" };

describe("seam proxy, hostile cases", () => {
  test("upstream down: 502 with a JSON-RPC error for the request's id, and rows saying so", async () => {
    const ledger = ledgerPath();
    const port = await freePort();
    const p = await proxyTo(`http://127.0.0.1:${port}/mcp`, ledger);
    const r = await rawRequest(p.url, { method: "POST", headers: POST, body: CALL });
    expect(r.status).toBe(502);
    const body = JSON.parse(r.body.toString());
    expect(body.id).toBe(7);
    expect(body.error.code).toBe(-32000);
    expect(body.error.message).toContain("ECONNREFUSED");
    // A body still arriving when the upstream fails is read to its end: its request's id is answered.
    const slow = CALL.replace('"id":7', '"id":8');
    const late = await rawRequest(p.url, {
      method: "POST",
      headers: { ...POST, "content-length": String(slow.length) },
      body: slow,
      pause: { at: 20, ms: 300 },
    });
    expect(late.status).toBe(502);
    expect(JSON.parse(late.body.toString()).id).toBe(8);
    // A notification has no id to answer: 502 without a JSON-RPC body.
    const n = await rawRequest(p.url, {
      method: "POST",
      headers: POST,
      body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
    });
    expect(n.status).toBe(502);
    expect(n.headers["content-type"]).toStartWith("text/plain");
    expect(await p.stop()).toBe(0);
    const ex = rowsOf(ledger, "http_exchange");
    expect(ex.map((e) => [getField(e, "http_status"), getField(e, "http_error"), getField(e, "error_phase")])).toEqual([
      [502, "ECONNREFUSED", "connect"],
      [502, "ECONNREFUSED", "connect"],
      [502, "ECONNREFUSED", "connect"],
    ]);
    const call = rowsOf(ledger, "tool_call");
    expect(call.map((c) => [getField(c, "tool"), getField(c, "status")])).toEqual([
      ["echo", "error"],
      ["echo", "error"],
    ]);
    expect(getField(rowsOf(ledger, "session_end")[0]!, "reason")).toBe("proxy_stopped");
    expect(getField(rowsOf(ledger, "session_end")[0]!, "http_errors")).toBe(3);
  });

  test("sessions that never were: an initialize the upstream never got, a session id it does not know", async () => {
    const ledger = ledgerPath();
    const port = await freePort();
    const down = await proxyTo(`http://127.0.0.1:${port}/mcp`, ledger);
    for (let i = 0; i < 3; i++) {
      const r = await rawRequest(down.url, { method: "POST", headers: POST, body: INIT });
      expect(r.status).toBe(502);
    }
    await Bun.sleep(200);
    const up = await upstream((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(400, { "content-type": "application/json" });
        res.end(
          `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}`,
        );
      });
    });
    cleanups.push(up.close);
    const ledger2 = ledgerPath();
    const p = await proxyTo(up.url, ledger2);
    for (const sid of ["made-up-1", "made-up-2"]) {
      const r = await rawRequest(p.url, { method: "POST", headers: { ...POST, "mcp-session-id": sid }, body: CALL });
      expect(r.status).toBe(400);
    }
    await Bun.sleep(200);
    // Each ended with its exchange, not left open until the proxy stops.
    const ended = (l: string) => rowsOf(l, "session_end").map((e) => getField(e, "reason"));
    expect(ended(ledger)).toEqual(["upstream_unreachable", "upstream_unreachable", "upstream_unreachable"]);
    expect(ended(ledger2)).toEqual(["unknown_session", "unknown_session"]);
    await down.stop();
    await p.stop();
    expect(ended(ledger).length).toBe(3);
    // The upstream's error names no id (null), so each call stays unanswered, with the session's reason.
    expect(rowsOf(ledger2, "tool_call").map((c) => [getField(c, "status"), getField(c, "reason")])).toEqual([
      ["unanswered", "unknown_session"],
      ["unanswered", "unknown_session"],
    ]);
  });

  test("upstream closes mid-stream: the client sees the cut, the row has the transport error", async () => {
    const ledger = ledgerPath();
    const up = await upstream((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`id: 1\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{}}\n\n`);
      setTimeout(() => res.socket?.destroy(), 50);
    });
    cleanups.push(up.close);
    const p = await proxyTo(up.url, ledger);
    const res = await fetch(p.url, { method: "POST", headers: POST, body: CALL });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain("notifications/message");
    let cut = false;
    try {
      for (;;) {
        const r = await reader.read();
        if (r.done) break;
      }
    } catch {
      cut = true;
    }
    expect(cut).toBe(true);
    await p.stop();
    const ex = rowsOf(ledger, "http_exchange")[0]!;
    expect(getField(ex, "error_phase")).toBe("response_body");
    expect(typeof getField(ex, "http_error")).toBe("string");
    expect(getField(ex, "sse_events")).toBe(1);
    // The call was never answered: its row says so at the end.
    expect(rowsOf(ledger, "tool_call").map((c) => getField(c, "status"))).toEqual(["unanswered"]);
  });

  test("gzip upstream: asked for identity, compressed anyway: bytes forwarded untouched, decoded to observe", async () => {
    const ledger = ledgerPath();
    const answer = gzipSync(Buffer.from(`{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`));
    let asked: string | undefined;
    const up = await upstream((req, res) => {
      asked = req.headers["accept-encoding"];
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
        res.end(answer);
      });
    });
    cleanups.push(up.close);
    const p = await proxyTo(up.url, ledger);
    const r = await rawRequest(p.url, {
      method: "POST",
      headers: { ...POST, "accept-encoding": "gzip, br" },
      body: CALL,
    });
    expect(asked).toBe("identity");
    expect(r.headers["content-encoding"]).toBe("gzip");
    expect(Buffer.compare(r.body, answer)).toBe(0);
    await p.stop();
    const ex = rowsOf(ledger, "http_exchange")[0]!;
    expect(getField(ex, "observed")).toBeUndefined();
    expect(getField(rowsOf(ledger, "session_end")[0]!, "unobserved_bodies")).toBeUndefined();
    expect(rowsOf(ledger, "tool_call").map((c) => getField(c, "status"))).toEqual(["ok"]);
    const digest = `sha256:raw-bytes:v1:${createHash("sha256").update(answer).digest("hex")}`;
    expect(getField(getField(ex, "stream_digests")!, "response")).toBe(digest);
  });

  test("a compressed answer seam cannot decode (corrupt gzip, zstd) is flagged: body_undecoded, verify inconclusive", async () => {
    const good = gzipSync(Buffer.from(`{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`));
    for (const [encoding, answer] of [
      ["gzip", Buffer.concat([good.subarray(0, 12), Buffer.from("not deflate data at all")])],
      ["zstd", good],
    ] as const) {
      const ledger = ledgerPath();
      const up = await upstream((req, res) => {
        req.resume();
        req.on("end", () => {
          res.writeHead(200, { "content-type": "application/json", "content-encoding": encoding });
          res.end(answer);
        });
      });
      cleanups.push(up.close);
      const p = await proxyTo(up.url, ledger);
      const r = await rawRequest(p.url, { method: "POST", headers: POST, body: CALL });
      expect(Buffer.compare(r.body, answer)).toBe(0);
      await p.stop();
      expect([encoding, rowsOf(ledger, "body_undecoded").length]).toEqual([encoding, 1]);
      expect(getField(rowsOf(ledger, "http_exchange")[0]!, "observed")).toBe(false);
      const v = await runCli("bun", ["verify", "--json", ledger]);
      expect([encoding, v.code, JSON.parse(v.stdout.toString()).finding_kinds]).toEqual([
        encoding,
        3,
        ["body_undecoded"],
      ]);
    }
  });

  test("invalid UTF-8 both ways passes byte for byte; the call is rowed as the SDK reads it, and marked ambiguous", async () => {
    const ledger = ledgerPath();
    const bad = Buffer.concat([
      Buffer.from(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"`),
      Buffer.from([0xff, 0xfe, 0xc3]),
      Buffer.from(`"}}`),
    ]);
    let got: Buffer | undefined;
    const back = Buffer.concat([
      Buffer.from(`{"jsonrpc":"2.0","id":7,"result":"`),
      Buffer.from([0xc0, 0x80, 0xed, 0xa0, 0x80]),
      Buffer.from(`"}`),
    ]);
    const up = await upstream((req, res) => {
      const parts: Buffer[] = [];
      req.on("data", (d: Buffer) => parts.push(d));
      req.on("end", () => {
        got = Buffer.concat(parts);
        res.writeHead(200, { "content-type": "application/json" });
        res.end(back);
      });
    });
    cleanups.push(up.close);
    const p = await proxyTo(up.url, ledger);
    const r = await rawRequest(p.url, { method: "POST", headers: POST, body: bad });
    expect(Buffer.compare(got!, bad)).toBe(0);
    expect(Buffer.compare(r.body, back)).toBe(0);
    await p.stop();
    const end = rowsOf(ledger, "session_end")[0]!;
    // Read as the TypeScript SDK reads it (U+FFFD), so the call is rowed; Python would refuse it: ambiguous.
    expect(getField(end, "unparsed_frames")).toBeUndefined();
    expect(getField(end, "ambiguous_frames")).toBe(1);
    expect(getField(rowsOf(ledger, "ambiguous_frame")[0]!, "dir")).toBe("c2s");
    const call = rowsOf(ledger, "tool_call")[0]!;
    expect([getField(call, "rpc_id"), getField(call, "tool")]).toEqual([7, "\ufffd\ufffd\ufffd"]);
    expect(getField(end, "bytes")).toEqual(
      new Map<string, Json>([
        ["c2s", bad.length],
        ["s2c", back.length],
      ]),
    );
  });

  test("a client that disconnects mid-stream: the upstream's stream is closed too, the row says client_gone", async () => {
    const ledger = ledgerPath();
    let upstreamClosed!: () => void;
    const closed = new Promise<void>((r) => {
      upstreamClosed = r;
    });
    const up = await upstream((req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(": open\n\n");
      const t = setInterval(
        () => res.write(`data: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n\n`),
        20,
      );
      req.socket.on("close", () => {
        clearInterval(t);
        upstreamClosed();
      });
    });
    cleanups.push(up.close);
    const p = await proxyTo(up.url, ledger);
    const ac = new AbortController();
    const res = await fetch(p.url, {
      headers: { accept: "text/event-stream", "mcp-session-id": "s-1" },
      signal: ac.signal,
    });
    const reader = res.body!.getReader();
    await reader.read();
    await reader.read();
    ac.abort();
    await Promise.race([closed, Bun.sleep(5000).then(() => Promise.reject(new Error("upstream stream left open")))]);
    await Bun.sleep(100);
    await p.stop();
    const ex = rowsOf(ledger, "http_exchange")[0]!;
    expect(getField(ex, "method")).toBe("GET");
    expect(getField(ex, "client_gone")).toBe(true);
    expect(getField(rowsOf(ledger, "session_begin")[0]!, "opened_by")).toBe("joined");
  });

  test("a client that leaves mid-upload: the upstream's request is cut too, the row says client_gone", async () => {
    const ledger = ledgerPath();
    const seen: string[] = [];
    let upstreamDone!: () => void;
    const done = new Promise<void>((r) => {
      upstreamDone = r;
    });
    const up = await upstream((req, res) => {
      if (req.method === "DELETE") {
        res.end();
        return;
      }
      let bytes = 0;
      req.on("data", (d: Buffer) => {
        bytes += d.length;
      });
      req.on("end", () => seen.push(`end ${bytes}`));
      req.on("close", () => {
        seen.push(req.complete ? "closed" : `cut after ${bytes}`);
        upstreamDone();
      });
    });
    cleanups.push(up.close);
    const p = await proxyTo(up.url, ledger);
    const req = http.request(p.url, {
      method: "POST",
      headers: { ...POST, "mcp-session-id": "s-1", "content-length": String(CALL.length) },
      agent: false,
    });
    req.on("error", () => {});
    req.flushHeaders();
    req.write(CALL.slice(0, 30));
    await Bun.sleep(200);
    req.destroy();
    await Promise.race([done, Bun.sleep(5000).then(() => Promise.reject(new Error("upstream request left open")))]);
    expect(seen).toEqual(["cut after 30"]);
    // The proxy goes on: the next exchange is forwarded.
    expect((await rawRequest(p.url, { method: "DELETE", headers: { "mcp-session-id": "s-2" } })).status).toBe(200);
    await p.stop();
    const ex = rowsOf(ledger, "http_exchange").find((e) => getField(e, "method") === "POST")!;
    expect(getField(ex, "client_gone")).toBe(true);
    expect(getField(getField(ex, "bytes") as Json, "request")).toBe(30);
    expect((await runCli("bun", ["verify", ledger])).code).toBe(0);
  });

  test("Host and Origin that are not loopback get 403 on a loopback listener", async () => {
    const ledger = ledgerPath();
    let reached = 0;
    const up = await upstream((req, res) => {
      reached++;
      req.resume();
      res.writeHead(202);
      res.end();
    });
    cleanups.push(up.close);
    const p = await proxyTo(up.url, ledger);
    const port = new URL(p.url).port;
    const note = `{"jsonrpc":"2.0","method":"notifications/initialized"}`;
    const cases: [Record<string, string>, number][] = [
      [{ host: "evil.example" }, 403],
      [{ host: `evil.example:${port}` }, 403],
      [{ host: `127.0.0.1:${Number(port) + 1}` }, 403],
      [{ host: `localhost:${port}`, origin: "http://evil.example" }, 403],
      [{ host: `localhost:${port}`, origin: "null" }, 403],
      [{ host: `127.0.0.1:${port}`, origin: "http://localhost:3000" }, 202],
      [{ host: `localhost:${port}` }, 202],
      [{ host: `[::1]:${port}` }, 202],
    ];
    for (const [headers, status] of cases) {
      const r = await rawRequest(p.url, { method: "POST", headers: { ...POST, ...headers }, body: note });
      expect([headers, r.status]).toEqual([headers, status]);
    }
    expect(reached).toBe(3);
    await p.stop();
    expect(p.stderr()).toContain("DNS rebinding");
  });

  test("a non-loopback --listen needs --allow-remote, and warns", async () => {
    const ledger = ledgerPath();
    const refused = await runCli("bun", [
      "proxy",
      "--upstream",
      "http://127.0.0.1:9/mcp",
      "--ledger",
      ledger,
      "--listen",
      "0.0.0.0:0",
    ]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("seam: error: --listen 0.0.0.0 is not a loopback address");
    expect(refused.stderr).toContain("--allow-remote");
    const p = await proxyTo("http://127.0.0.1:9/mcp", ledger, ["--listen", "0.0.0.0:0", "--allow-remote"]);
    expect(p.stderr()).toContain("reachable from other machines");
    // Any Host is accepted there: the guard is for loopback listeners.
    const r = await rawRequest(p.url, { method: "POST", headers: { ...POST, host: "mcp.example" }, body: CALL });
    expect(r.status).toBe(502);
  });

  test("secrets in headers, cookies, query and --redact-header never reach the ledger", async () => {
    const ledger = ledgerPath();
    const up = await upstream((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(401, {
          "www-authenticate": 'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"',
          "set-cookie": "session=setCOOKIEsecret99; HttpOnly",
          "content-type": "application/json",
        });
        res.end(`{"error":"unauthorized"}`);
      });
    });
    cleanups.push(up.close);
    const p = await proxyTo(up.url, ledger, ["--redact-header", "X-Tenant-Token"]);
    const r = await rawRequest(`${p.url}?access_token=qTOKENq1&sig=qSIGq2&page=3`, {
      method: "POST",
      headers: {
        ...POST,
        authorization: "Bearer aBEARERsecret1",
        "proxy-authorization": "Basic cFJPWFlzZWNyZXQ=",
        cookie: "a=aCOOKIEsecret2",
        "x-api-key": "aKEYsecret3",
        "x-tenant-token": "aTENANTsecret4",
        "user-agent": "client sk-UAsecretUAsecretUAsecret55",
      },
      body: CALL,
    });
    expect(r.status).toBe(401);
    expect(r.headers["www-authenticate"]).toContain("resource_metadata");
    expect(r.headers["set-cookie"]).toEqual(["session=setCOOKIEsecret99; HttpOnly"]);
    await p.stop();
    const text = readFileSync(ledger, "utf8");
    for (const s of ["BEARER", "PROXY", "cFJPWFlzZWNyZXQ", "COOKIE", "aKEY", "TENANT", "TOKENq", "SIGq", "UAsecret"])
      expect(text).not.toContain(s);
    const ex = rowsOf(ledger, "http_exchange")[0]!;
    expect(getField(ex, "target")).toBe("/mcp?access_token=<redacted>&sig=<redacted>&page=3");
    expect(getField(ex, "http_status")).toBe(401);
    expect(getField(ex, "www_authenticate")).toContain("resource_metadata");
    expect(getField(ex, "withheld_headers")).toEqual([
      "authorization",
      "cookie",
      "proxy-authorization",
      "x-api-key",
      "x-tenant-token",
    ]);
    expect(getField(ex, "response_headers")).toContain("set-cookie");
  });

  test("each request goes upstream to its own path and query, however the one before it went", async () => {
    const ledger = ledgerPath();
    const seen: string[] = [];
    const up = await upstream((req, res) => {
      seen.push(req.url ?? "");
      req.resume();
      req.on("end", () => {
        res.writeHead(202);
        res.end();
      });
    });
    cleanups.push(up.close);
    const p = await proxyTo(up.url, ledger);
    const origin = new URL(p.url).origin;
    const targets = ["/mcp", "/mcp?page=2", "/mcp", "/other/mcp", "/other/mcp", "/mcp?page=2"];
    for (const t of targets) {
      const r = await rawRequest(`${origin}${t}`, { method: "POST", headers: POST, body: CALL });
      expect(r.status).toBe(202);
    }
    await p.stop();
    expect(seen).toEqual(targets);
    expect(rowsOf(ledger, "http_exchange").map((r) => getField(r, "target"))).toEqual(targets);
  });

  test("a ledger planted as a symbolic link while the proxy runs: new sessions pass unrecorded, counted, and the proxy goes on", async () => {
    const ledger = ledgerPath();
    let n = 0;
    const up = await mcpUpstream({ content: [{ type: "text", text: "done" }] }, () => `sess-${++n}`);
    const p = await proxyTo(up.url, ledger);
    const first = await rawRequest(p.url, { method: "POST", headers: POST, body: INIT });
    expect(first.headers["mcp-session-id"]).toBe("sess-1");
    // The ledger is moved away and a link put in its place: a new session's ledger is refused.
    const kept = `${ledger}.real`;
    renameSync(ledger, kept);
    symlinkSync(kept, ledger);
    // The client still gets every answer, byte for byte, as the upstream sent it.
    const second = await rawRequest(p.url, { method: "POST", headers: POST, body: INIT });
    expect([second.status, second.headers["mcp-session-id"]]).toEqual([200, "sess-2"]);
    expect(JSON.parse(second.body.toString()).result.serverInfo.name).toBe("u");
    const call = await rawRequest(p.url, {
      method: "POST",
      headers: { ...POST, "mcp-session-id": "sess-2" },
      body: CALL,
    });
    expect(call.body.toString()).toBe(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"done"}]}}`);
    expect(p.child.exitCode).toBeNull();
    expect(p.stderr()).toContain(`ledger ${ledger} cannot be written: is a symbolic link`);
    // Back in place, a new session is recorded again.
    unlinkSync(ledger);
    renameSync(kept, ledger);
    const third = await rawRequest(p.url, { method: "POST", headers: POST, body: INIT });
    expect(third.headers["mcp-session-id"]).toBe("sess-3");
    expect(await p.stop()).toBe(0);
    // Nothing was written through the link; what the refused session lost is said when the proxy stops.
    expect(rowsOf(ledger, "mcp_initialize")).toHaveLength(2);
    expect(rowsOf(ledger, "tool_call")).toHaveLength(0);
    expect(p.stderr()).toMatch(new RegExp(`warning: \\d+ rows of 1 session could not be written to ${ledger}`));
    expect((await runCli("bun", ["verify", ledger])).code).toBe(0);
  });

  test("sessions left open share one descriptor of the ledger; a ledger renamed away and made anew gets its own", async () => {
    const ledger = ledgerPath();
    let n = 0;
    const up = await mcpUpstream({ content: [] }, () => `sess-${++n}`);
    const p = await proxyTo(up.url, ledger);
    // Descriptors of the process that name `file`, as /proc shows them.
    const held = (file: string) =>
      readdirSync(`/proc/${p.child.pid}/fd`).filter((fd) => {
        try {
          return readlinkSync(`/proc/${p.child.pid}/fd/${fd}`) === file;
        } catch {
          return false; // closed meanwhile
        }
      }).length;
    // Sessions a client never ends (no DELETE): each held a descriptor of its own until it idled out.
    for (let i = 0; i < 150; i++) await rawRequest(p.url, { method: "POST", headers: POST, body: INIT });
    await Bun.sleep(200); // the last session's ledger opens after its answer went (routeEarly)
    expect(held(ledger)).toBe(1);
    const old = `${ledger}.1`;
    renameSync(ledger, old);
    const next = await rawRequest(p.url, { method: "POST", headers: POST, body: INIT });
    expect(next.headers["mcp-session-id"]).toBe("sess-151");
    await rawRequest(p.url, { method: "POST", headers: { ...POST, "mcp-session-id": "sess-1" }, body: CALL });
    await Bun.sleep(200);
    expect([held(old), held(ledger)]).toEqual([1, 1]);
    expect(await p.stop()).toBe(0);
    // Each session's rows stay in the file it began in: sess-1's call in the old one, the new session's in the new.
    expect([rowsOf(old, "session_begin").length, rowsOf(old, "tool_call").length]).toEqual([150, 1]);
    expect([rowsOf(ledger, "session_begin").length, rowsOf(ledger, "session_end").length]).toEqual([1, 1]);
    for (const f of [old, ledger]) expect((await runCli("bun", ["verify", f])).code).toBe(0);
  });

  test("a ledger that is a symbolic link when the proxy starts: it refuses to start, as seam wrap does", async () => {
    const ledger = ledgerPath();
    let reached = 0;
    const up = await upstream((req, res) => {
      reached++;
      req.resume();
      res.end();
    });
    cleanups.push(up.close);
    writeFileSync(`${ledger}.real`, "", { mode: 0o600 });
    symlinkSync(`${ledger}.real`, ledger);
    const r = await runCli("bun", ["proxy", "--upstream", up.url, "--ledger", ledger]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `seam: error: ledger ${ledger} is a symbolic link; not writing to it\nseam: hint: use a ledger in a directory only you can write to\n`,
    );
    expect(r.stdout.length).toBe(0);
    expect([reached, readFileSync(`${ledger}.real`, "utf8")]).toEqual([0, ""]);
  });

  test("the upstream's 404 for a session ends its ledger session", async () => {
    const ledger = ledgerPath();
    let n = 0;
    const up = await upstream((req, res) => {
      req.resume();
      req.on("end", () => {
        if (n++ === 0) {
          res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "sess-404" });
          res.end(
            `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"u","version":"1"}}}`,
          );
        } else {
          res.writeHead(404, { "content-type": "application/json" });
          res.end(`{"jsonrpc":"2.0","id":7,"error":{"code":-32001,"message":"Session not found"}}`);
        }
      });
    });
    cleanups.push(up.close);
    const p = await proxyTo(up.url, ledger);
    const a = await rawRequest(p.url, { method: "POST", headers: POST, body: INIT });
    expect(a.headers["mcp-session-id"]).toBe("sess-404");
    const b = await rawRequest(p.url, {
      method: "POST",
      headers: { ...POST, "mcp-session-id": "sess-404" },
      body: CALL,
    });
    expect(b.status).toBe(404);
    await Bun.sleep(300);
    await p.stop();
    const ends = rowsOf(ledger, "session_end");
    expect(ends.map((e) => getField(e, "reason"))).toEqual(["upstream_404"]);
    expect(rowsOf(ledger, "tool_call").map((c) => getField(c, "status"))).toEqual(["error"]);
    expect(ledgerRows(ledger).every((r) => getField(r, "session") === getField(ends[0]!, "session"))).toBe(true);
    expect(readFileSync(ledger, "utf8")).not.toContain("sess-404");
  });

  test("--fail-closed: a tools/call whose intent cannot be made durable is refused in an HTTP 200 body, never forwarded", async () => {
    const dir = tempDir();
    let calls = 0;
    const up = await upstream((req, res) => {
      const parts: Buffer[] = [];
      req.on("data", (d: Buffer) => parts.push(d));
      req.on("end", () => {
        if (Buffer.concat(parts).includes("tools/call")) calls++;
        res.writeHead(200, { "content-type": "application/json" });
        res.end(`{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`);
      });
    });
    cleanups.push(up.close);
    // A directory where the ledger should be: no row can be written.
    const p = await proxyTo(up.url, dir, ["--fail-closed"]);
    const r = await rawRequest(p.url, { method: "POST", headers: POST, body: CALL });
    expect(r.status).toBe(200);
    const body = JSON.parse(r.body.toString());
    expect(body.id).toBe(7);
    expect(body.error.code).toBe(-32000);
    const batch = await rawRequest(p.url, { method: "POST", headers: POST, body: `[${CALL}]` });
    expect(Array.isArray(JSON.parse(batch.body.toString()))).toBe(true);
    expect(calls).toBe(0);
    await p.stop();
    expect(p.stderr()).toContain("cannot be written");
  });

  test("--write-ahead: the intent row is in the file before the upstream sees the call", async () => {
    const ledger = ledgerPath();
    let intentFirst: boolean | undefined;
    const up = await upstream((req, res) => {
      req.resume();
      req.on("end", () => {
        intentFirst = readFileSync(ledger, "utf8").includes(`"tool_call_intent"`);
        res.writeHead(200, { "content-type": "application/json" });
        res.end(`{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`);
      });
    });
    cleanups.push(up.close);
    const p = await proxyTo(up.url, ledger, ["--write-ahead"]);
    const r = await rawRequest(p.url, { method: "POST", headers: POST, body: CALL });
    expect(r.status).toBe(200);
    expect(intentFirst).toBe(true);
    await p.stop();
    const v = await runCli("bun", ["verify", ledger]);
    expect(v.code).toBe(0);
  });

  test("SIGTERM with streams open: every session ends proxy_stopped and the ledger verifies", async () => {
    const ledger = ledgerPath();
    const up = await upstream((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(": open\n\n");
    });
    cleanups.push(up.close);
    const p = await proxyTo(up.url, ledger);
    const streams = await Promise.all(
      ["a", "b", "c"].map((sid) => fetch(p.url, { headers: { accept: "text/event-stream", "mcp-session-id": sid } })),
    );
    for (const s of streams) await s.body!.getReader().read();
    expect(await p.stop("SIGTERM")).toBe(0);
    const ends = rowsOf(ledger, "session_end");
    expect(ends.map((e) => getField(e, "reason"))).toEqual(["proxy_stopped", "proxy_stopped", "proxy_stopped"]);
    const v = await runCli("bun", ["verify", "--json", ledger]);
    expect(v.code).toBe(0);
    expect(JSON.parse(v.stdout.toString()).sessions.every((s: { complete: boolean }) => s.complete)).toBe(true);
  });
});

describe.each((["bun", "node", "exe"] as Via[]).filter(built))("seam proxy (%s) header fields", (via) => {
  test("an answer the upstream sent in one write reaches the client in one: head, events and end together", async () => {
    const ledger = ledgerPath();
    // Two SSE events, as server-everything sends a call's answer (it writes them apart; here they come at once).
    const events = [
      `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n\n`,
      `data: {"jsonrpc":"2.0","id":7,"result":{"content":[]}}\n\n`,
    ];
    const body = `${events.map((e) => `${Buffer.byteLength(e).toString(16)}\r\n${e}\r\n`).join("")}0\r\n\r\n`;
    const up = await wireUpstream(
      ["HTTP/1.1 200 OK", "Content-Type: text/event-stream", "Transfer-Encoding: chunked", "", body].join("\r\n"),
    );
    cleanups.push(up.close);
    const p = await proxyTo(up.url, ledger, [], via);
    const u = new URL(p.url);
    const reads: Buffer[] = [];
    await new Promise<void>((resolve, reject) => {
      const s = connect(Number(u.port), u.hostname, () =>
        s.write(
          [
            "POST /mcp HTTP/1.1",
            `Host: ${u.host}`,
            "Content-Type: application/json",
            "Accept: application/json, text/event-stream",
            `Content-Length: ${CALL.length}`,
            "Connection: close",
            "",
            CALL,
          ].join("\r\n"),
        ),
      );
      s.on("data", (d: Buffer) => reads.push(d));
      s.on("error", reject);
      s.on("close", () => resolve());
    });
    const text = Buffer.concat(reads).toString();
    expect(text).toStartWith("HTTP/1.1 200 OK\r\n");
    expect(text).toEndWith(body);
    // One read of the client's socket: a head or a first event the proxy wrote on its own would have
    // reached the client, and woken it, before the rest.
    expect(reads.length).toBe(1);
    await p.stop();
    expect(rowsOf(ledger, "tool_call").map((c) => getField(c, "status"))).toEqual(["ok"]);
  });

  test("hop-by-hop fields stay on their hop; end-to-end ones pass as they came: repeats, order, reason phrase", async () => {
    const ledger = ledgerPath();
    const answer = `{"jsonrpc":"2.0","id":1,"result":{}}`;
    const up = await wireUpstream(
      [
        "HTTP/1.1 200 Fine By Me",
        "Content-Type: application/json",
        "X-Drop: 1",
        "Connection: X-Drop",
        "Mcp-Session-Id: abc",
        "X-Multi: 1",
        "set-cookie: a=1",
        "X-Multi: 2",
        "Set-Cookie: b=2",
        "Keep-Alive: timeout=77",
        "Date: Tue, 01 Dec 2026 00:00:00 GMT",
        `Content-Length: ${answer.length}`,
        "",
        answer,
      ].join("\r\n"),
    );
    cleanups.push(up.close);
    const p = await proxyTo(up.url, ledger, [], via);
    const host = new URL(p.url).host;
    const r = await wireRequest(
      p.url,
      [
        "POST /mcp HTTP/1.1",
        `Host: ${host}`,
        "Content-Type: application/json",
        "accept: application/json, text/event-stream",
        "MCP-Protocol-Version: 2025-11-25",
        "X-Hop: secret-for-this-hop",
        "Connection: X-Hop, close",
        "TE: trailers",
        "Zeta: z",
        "x-multi-in: a",
        "Proxy-Connection: keep-alive",
        "Cookie: c=1",
        "X-Multi-In: b",
        "Last-Event-ID: 41",
        "Alpha: a",
        "Cookie: d=2",
        `Content-Length: ${INIT.length}`,
        "\r\n",
      ].join("\r\n"),
      INIT,
    );
    // Upstream: the end-to-end fields exactly as sent (order, case, each repeat on its own line), Host the
    // upstream's, Accept-Encoding identity, and nothing added but the new hop's own Connection field.
    const hop = new Set(["connection", "keep-alive"]);
    expect(up.heads[0]!.start).toBe("POST /mcp HTTP/1.1");
    expect(up.heads[0]!.fields.filter(([k]) => !hop.has(k.toLowerCase()))).toEqual([
      ["Host", new URL(up.url).host],
      ["Content-Type", "application/json"],
      ["accept", "application/json, text/event-stream"],
      ["MCP-Protocol-Version", "2025-11-25"],
      ["Zeta", "z"],
      ["x-multi-in", "a"],
      ["Cookie", "c=1"],
      ["X-Multi-In", "b"],
      ["Last-Event-ID", "41"],
      ["Alpha", "a"],
      ["Cookie", "d=2"],
      ["Content-Length", String(INIT.length)],
      ["Accept-Encoding", "identity"],
    ]);
    // Client: the reason phrase, and the end-to-end fields as the upstream sent them, each repeat on its own
    // line and the values of one name in their order; each hop frames its own body.
    expect(r.start).toBe("HTTP/1.1 200 Fine By Me");
    expect(r.body.toString()).toBe(answer);
    const framing = new Set([...hop, "transfer-encoding", "content-length"]);
    const passed = r.fields.filter(([k]) => !framing.has(k.toLowerCase()));
    const sent: [string, string][] = [
      ["Content-Type", "application/json"],
      ["Mcp-Session-Id", "abc"],
      ["X-Multi", "1"],
      ["set-cookie", "a=1"],
      ["X-Multi", "2"],
      ["Set-Cookie", "b=2"],
      ["Date", "Tue, 01 Dec 2026 00:00:00 GMT"],
    ];
    if (via === "node") expect(passed).toEqual(sent);
    else {
      // Bun's node:http writes the repeats of a name together, where its first one was (and in that one's
      // spelling): the order of lines of different names carries no meaning (RFC 9110 §5.3), that of one
      // name's values does, and is kept.
      const grouped = (f: [string, string][]) =>
        f.map(([k, v]) => [k.toLowerCase(), v]).sort(([a], [b]) => order(f, a!) - order(f, b!));
      const order = (f: [string, string][], n: string) => f.findIndex(([k]) => k.toLowerCase() === n);
      expect(grouped(passed)).toEqual(grouped(sent));
    }
    const keepAlive = r.fields.find(([k]) => k.toLowerCase() === "keep-alive");
    expect(keepAlive?.[1]).not.toBe("timeout=77");
    await p.stop();
  });
});

/**
 * An upstream that answers a POST with an SSE stream: `first` at once, then,
 * 2 s later, `then` and the end; `sent` is called after each of the two writes.
 */
async function pausingUpstream(first: string, then: string, sent: () => void) {
  const up = await upstream((req, res) => {
    req.resume();
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(first);
    sent();
    setTimeout(() => {
      if (then !== "") res.write(then);
      sent();
      res.end();
    }, 2000);
  });
  cleanups.push(up.close);
  return up;
}

describe.each((["bun", "node", "exe"] as Via[]).filter(built))("seam proxy (%s) streams", (via) => {
  test("an SSE event reaches the client within 100 ms of being sent, not when the stream ends", async () => {
    const ledger = ledgerPath();
    const sentAt: number[] = [];
    const up = await pausingUpstream(
      `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}\n\n`,
      `data: {"jsonrpc":"2.0","id":7,"result":{"content":[]}}\n\n`,
      () => sentAt.push(performance.now()),
    );
    const p = await proxyTo(up.url, ledger, [], via);
    const res = await fetch(p.url, { method: "POST", headers: POST, body: CALL });
    const reader = res.body!.getReader();
    const got: number[] = [];
    let text = "";
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      got.push(performance.now());
      text += new TextDecoder().decode(r.value);
    }
    expect(text).toContain(`"progress":1`);
    expect(got[0]! - sentAt[0]!).toBeLessThan(100);
    expect(got.at(-1)! - sentAt[1]!).toBeLessThan(100);
    expect(got[0]!).toBeLessThan(sentAt[1]!);
    await p.stop();
    expect(rowsOf(ledger, "tool_call").map((c) => getField(c, "status"))).toEqual(["ok"]);
  });

  test("an answer's head reaches the client at once when its body has not begun (an SSE stream quiet for 2 s)", async () => {
    const ledger = ledgerPath();
    let headAt = 0;
    const up = await upstream((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "text/event-stream", "x-quiet": "yes" });
      res.flushHeaders();
      headAt = performance.now();
      setTimeout(() => res.end(`data: {"jsonrpc":"2.0","id":7,"result":{"content":[]}}\n\n`), 2000);
    });
    cleanups.push(up.close);
    const p = await proxyTo(up.url, ledger, [], via);
    const res = await fetch(p.url, { method: "POST", headers: POST, body: CALL });
    const gotHead = performance.now();
    expect(res.status).toBe(200);
    expect(res.headers.get("x-quiet")).toBe("yes");
    // Not held until the first chunk (2 s later) could carry it.
    expect(gotHead - headAt).toBeLessThan(500);
    expect(await res.text()).toContain(`"id":7`);
    await p.stop();
    expect(rowsOf(ledger, "tool_call").map((c) => getField(c, "status"))).toEqual(["ok"]);
  });

  test("a call's row is written while its answer's stream goes on, not once the stream ends", async () => {
    const ledger = ledgerPath();
    let sent = 0;
    let endedAt = 0;
    const up = await pausingUpstream(`data: {"jsonrpc":"2.0","id":7,"result":{"content":[]}}\n\n`, "", () => {
      if (++sent === 2) endedAt = performance.now();
    });
    const p = await proxyTo(up.url, ledger, [], via);
    const res = await fetch(p.url, { method: "POST", headers: POST, body: CALL });
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain(`"id":7`);
    let rowedAt = 0;
    while (rowedAt === 0 && endedAt === 0) {
      await Bun.sleep(20);
      if (rowsOf(ledger, "tool_call").length > 0) rowedAt = performance.now();
    }
    while (!(await reader.read()).done) {}
    await p.stop();
    expect(rowedAt).toBeGreaterThan(0);
    expect(rowsOf(ledger, "tool_call").map((c) => getField(c, "status"))).toEqual(["ok"]);
  });

  test("a server's request on one exchange's stream is observed before the client's answer to it on another", async () => {
    const ledger = ledgerPath();
    let stream: http.ServerResponse | undefined;
    const up = await upstream((req, res) => {
      const parts: Buffer[] = [];
      req.on("data", (d: Buffer) => parts.push(d));
      req.on("end", () => {
        const m = JSON.parse(Buffer.concat(parts).toString());
        if (m.method === "tools/call") {
          // The call's stream carries a request to the client, and stays open until the client answers it.
          res.writeHead(200, { "content-type": "text/event-stream" });
          res.write(`data: {"jsonrpc":"2.0","id":"s1","method":"elicitation/create","params":{"message":"ok?"}}\n\n`);
          stream = res;
          return;
        }
        // The client's answer: 202 at once, then the call's result and the end of its stream.
        res.writeHead(202).end();
        stream?.end(`data: {"jsonrpc":"2.0","id":7,"result":{"content":[]}}\n\n`);
      });
    });
    cleanups.push(up.close);
    const p = await proxyTo(up.url, ledger, [], via);
    const res = await fetch(p.url, { method: "POST", headers: POST, body: CALL });
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain("elicitation/create");
    const answer = await fetch(p.url, {
      method: "POST",
      headers: POST,
      body: `{"jsonrpc":"2.0","id":"s1","result":{"action":"accept"}}`,
    });
    expect(answer.status).toBe(202);
    while (!(await reader.read()).done) {}
    await p.stop();
    expect(rowsOf(ledger, "server_request").map((r) => [getField(r, "method"), getField(r, "status")])).toEqual([
      ["elicitation/create", "ok"],
    ]);
    expect(rowsOf(ledger, "tool_call").map((c) => getField(c, "status"))).toEqual(["ok"]);
    const end = rowsOf(ledger, "session_end")[0]!;
    expect(getField(end, "unmatched_responses")).toBeUndefined();
  });

  test("50 sessions at once on kept-alive upstream connections: every request is answered by the upstream, every call rowed", async () => {
    const ledger = ledgerPath();
    let n = 0;
    const up = await mcpUpstream({ content: [{ type: "text", text: "ok" }] }, () => `s${++n}`);
    const p = await proxyTo(up.url, ledger, [], via);
    const SESSIONS = 50;
    const CALLS = 10;
    const statuses: number[] = [];
    const post = async (body: string, sid?: string) => {
      const res = await fetch(p.url, {
        method: "POST",
        headers: { ...POST, ...(sid ? { "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" } : {}) },
        body,
      });
      await res.arrayBuffer();
      statuses.push(res.status);
      return res.headers.get("mcp-session-id") ?? undefined;
    };
    for (let round = 0; round < 2; round++) {
      await Promise.all(
        Array.from({ length: SESSIONS }, async () => {
          const sid = await post(INIT);
          await post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, sid);
          for (let i = 0; i < CALLS; i++) await post(CALL, sid);
        }),
      );
    }
    await p.stop();
    const count: Record<number, number> = {};
    for (const x of statuses) count[x] = (count[x] ?? 0) + 1;
    expect(count).toEqual({ 200: 2 * SESSIONS * (1 + CALLS), 202: 2 * SESSIONS });
    expect(rowsOf(ledger, "tool_call").length).toBe(2 * SESSIONS * CALLS);
  });

  test("an idle kept-alive upstream connection is closed by the proxy after about 2 s (not one in use)", async () => {
    const ledger = ledgerPath();
    const closes: number[] = [];
    const server = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        if (req.headers["x-quiet"] === undefined) {
          res.writeHead(200, { "content-type": "application/json" });
          res.end(`{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`);
          return;
        }
        // A stream in progress that says nothing for longer than the idle time.
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(`data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}\n\n`);
        setTimeout(() => res.end(`data: {"jsonrpc":"2.0","id":7,"result":{"content":[]}}\n\n`), 2600);
      });
    });
    // The upstream itself would keep it a minute: closing it is the proxy's doing.
    server.keepAliveTimeout = 60_000;
    server.on("connection", (sock) => sock.on("close", () => closes.push(performance.now())));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    cleanups.push(
      () =>
        new Promise<void>((r) => {
          server.closeAllConnections();
          server.close(() => r());
        }),
    );
    const p = await proxyTo(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, ledger, [], via);
    expect((await rawRequest(p.url, { method: "POST", headers: POST, body: CALL })).status).toBe(200);
    const answered = performance.now();
    for (let i = 0; i < 50 && closes.length === 0; i++) await Bun.sleep(100);
    expect(closes.length).toBe(1);
    const after = closes[0]! - answered;
    expect(after).toBeGreaterThan(1500);
    expect(after).toBeLessThan(4000);
    // The next call goes on a new connection, and its answer's stream may stay quiet past the idle time.
    const quiet = await rawRequest(p.url, { method: "POST", headers: { ...POST, "x-quiet": "1" }, body: CALL });
    expect(quiet.status).toBe(200);
    expect(quiet.body.toString()).toContain(`"result"`);
    expect(closes.length).toBe(1);
    await p.stop();
  }, 15_000);

  test("back-pressure both ways: a side that stops reading holds the sender back, rather than the proxy buffering", async () => {
    const ledger = ledgerPath();
    const SIZE = 64 * 1024 * 1024;
    const chunk = Buffer.alloc(1024 * 1024, 0x61);
    /** Writes SIZE bytes, a chunk at a time as the stream takes them; `sent()` is how many it has taken. */
    function feed(w: import("node:stream").Writable, done: () => void): () => number {
      let sent = 0;
      (async () => {
        while (sent < SIZE && !w.destroyed) {
          const more = w.write(chunk);
          sent += chunk.length;
          if (!more) await new Promise((r) => w.once("drain", r));
        }
        done();
      })();
      return () => sent;
    }
    let answerSent = () => 0;
    let uploadRead = 0;
    let releaseUpload!: () => void;
    const uploadHeld = new Promise<void>((r) => {
      releaseUpload = r;
    });
    const up = await upstream((req, res) => {
      if (req.headers["x-upload"] !== undefined) {
        // Reads nothing of the body until told to.
        req.pause();
        void uploadHeld.then(() => {
          req.on("data", (d: Buffer) => {
            uploadRead += d.length;
          });
          req.on("end", () => res.end());
          req.resume();
        });
        return;
      }
      req.resume();
      res.writeHead(200, { "content-type": "application/octet-stream" });
      answerSent = feed(res, () => res.end());
    });
    cleanups.push(up.close);
    const p = await proxyTo(up.url, ledger, [], via);

    // Download: the client takes nothing for a while.
    let sentWhilePaused = -1;
    const got = await new Promise<number>((resolve, reject) => {
      const req = http.request(p.url, { method: "POST", headers: POST, agent: false }, (res) => {
        res.pause();
        setTimeout(() => {
          sentWhilePaused = answerSent();
          let n = 0;
          res.on("data", (d: Buffer) => {
            n += d.length;
          });
          res.on("end", () => resolve(n));
          res.resume();
        }, 1500);
      });
      req.on("error", reject);
      req.end(CALL);
    });
    expect(got).toBe(SIZE);
    expect(sentWhilePaused).toBeGreaterThan(0);
    expect(sentWhilePaused).toBeLessThan(SIZE / 2);

    // Upload: the upstream takes nothing for a while.
    let uploadedWhileHeld = -1;
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        p.url,
        { method: "POST", headers: { ...POST, "x-upload": "1", "content-length": String(SIZE) }, agent: false },
        (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        },
      );
      req.on("error", reject);
      const uploaded = feed(req, () => req.end());
      setTimeout(() => {
        uploadedWhileHeld = uploaded();
        releaseUpload();
      }, 1500);
    });
    expect(status).toBe(200);
    expect(uploadRead).toBe(SIZE);
    expect(uploadedWhileHeld).toBeGreaterThan(0);
    expect(uploadedWhileHeld).toBeLessThan(SIZE / 2);
    await p.stop();
  }, 30_000);

  test("256 MiB each way passes with bounded memory", async () => {
    const ledger = ledgerPath();
    const SIZE = 256 * 1024 * 1024;
    const chunk = Buffer.alloc(1024 * 1024, 0x61);
    let received = 0;
    // Answers as many bytes as it was sent.
    const up = await upstream((req, res) => {
      let n = 0;
      req.on("data", (d: Buffer) => {
        n += d.length;
      });
      req.on("end", async () => {
        received = n;
        res.writeHead(200, { "content-type": "application/json" });
        for (let left = n; left > 0; left -= chunk.length) {
          if (!res.write(chunk.subarray(0, Math.min(left, chunk.length))))
            await new Promise((r) => res.once("drain", r));
        }
        res.end();
      });
    });
    cleanups.push(up.close);
    const p = await proxyTo(up.url, ledger, ["--max-frame", "1048576"], via);
    // A small exchange first: the proxy's footprint before the large ones.
    await rawRequest(p.url, { method: "POST", headers: POST, body: CALL }).catch(() => {});
    const before = peakRss(p.child.pid!);
    const got = await new Promise<number>((resolve, reject) => {
      const req = http.request(p.url, { method: "POST", headers: POST, agent: false }, (res) => {
        let n = 0;
        res.on("data", (d: Buffer) => {
          n += d.length;
        });
        res.on("end", () => resolve(n));
        res.on("error", reject);
      });
      req.on("error", reject);
      (async () => {
        for (let i = 0; i < SIZE / chunk.length; i++) {
          if (!req.write(chunk)) await new Promise((r) => req.once("drain", r));
        }
        req.end();
      })();
    });
    expect(received).toBe(SIZE);
    expect(got).toBe(SIZE);
    const after = peakRss(p.child.pid!);
    // Buffering either body whole would add at least its 256 MiB. Streaming, the growth is what the
    // collector lets lie before it runs, which does not grow with the bodies: 45-71 MiB here for
    // bodies of 64 MiB and of 256 alike (so 64 MiB bodies left it no room under their own size).
    expect(after - before).toBeLessThan(SIZE / 2);
    await p.stop();
    const end = rowsOf(ledger, "session_end")[0]!;
    // The answer is counted; the request, which the upstream acted on, is rowed with its length and digest.
    expect(getField(end, "oversize_frames_unlogged")).toBe(1);
    const long = rowsOf(ledger, "unparsed_frame").filter((r) => getField(r, "dir") === "c2s");
    expect(long.map((r) => getField(r, "bytes"))).toEqual([SIZE]);
  }, 60_000);
});

describe("seam proxy, sessions and recording flags", () => {
  test("a stateless upstream (no Mcp-Session-Id): one session for the process, each request's _meta recorded", async () => {
    const ledger = ledgerPath();
    const up = await mcpUpstream({ content: [], resultType: "complete" });
    const p = await proxyTo(up.url, ledger);
    for (let i = 0; i < 2; i++) await rawRequest(p.url, { method: "POST", headers: POST, body: INIT });
    const meta = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {},
      "io.modelcontextprotocol/clientInfo": { name: "stateless-client", version: "2" },
    };
    await rawRequest(p.url, {
      method: "POST",
      headers: { ...POST, "mcp-protocol-version": "2026-07-28" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name: "echo", arguments: {}, _meta: meta },
      }),
    });
    await p.stop();
    const sessions = new Set(ledgerRows(ledger).map((r) => getField(r, "session")));
    expect(sessions.size).toBe(1);
    expect(rowsOf(ledger, "mcp_initialize").length).toBe(2);
    const ex = rowsOf(ledger, "http_exchange").at(-1)!;
    expect(getField(ex, "meta_protocol_version")).toBe("2026-07-28");
    expect(getField(getField(ex, "meta_client_info")!, "name")).toBe("stateless-client");
    expect(getField(ex, "mcp_protocol_version")).toBe("2026-07-28");
    expect(rowsOf(ledger, "tool_call").map((c) => getField(c, "status"))).toEqual(["ok"]);
    expect(getField(rowsOf(ledger, "session_end")[0]!, "reason")).toBe("proxy_stopped");
  });

  test("--sign: signed checkpoints over a ledger of several proxied sessions verify with the key", async () => {
    const dir = tempDir();
    const ledger = join(dir, "l.jsonl");
    const vkey = (await runCli("bun", ["keygen", "--name", "proxy", "--out", join(dir, "k")])).stdout
      .toString()
      .trimEnd();
    let n = 0;
    const up = await upstream((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/json", "mcp-session-id": `s${n++}` });
        res.end(
          `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"u","version":"1"}}}`,
        );
      });
    });
    cleanups.push(up.close);
    const p = await proxyTo(up.url, ledger, ["--sign", join(dir, "k"), "--checkpoint-every", "2"]);
    for (let i = 0; i < 3; i++) await rawRequest(p.url, { method: "POST", headers: POST, body: INIT });
    expect(await p.stop()).toBe(0);
    const rows = ledgerRows(ledger);
    expect(rows.filter((r) => getField(r, "evt") === "checkpoint").length).toBeGreaterThan(2);
    expect(new Set(rowsOf(ledger, "session_begin").map((r) => getField(r, "session"))).size).toBe(3);
    const v = await runCli("bun", ["verify", ledger, "--key", vkey]);
    expect([v.code, v.stderr]).toEqual([0, ""]);
    expect(v.stdout.toString()).toContain("sealed");
  });

  test("--map: a mapped tools/call becomes an action in its intent row before it is forwarded", async () => {
    const dir = tempDir();
    const ledger = join(dir, "l.jsonl");
    const map = join(dir, "map.json");
    require("node:fs").writeFileSync(
      map,
      JSON.stringify({
        agent_id: "bot",
        tools: { echo: { contract_id: "echo_contract", subject: "arguments.message" } },
      }),
    );
    let intentFirst: boolean | undefined;
    const up = await upstream((req, res) => {
      req.resume();
      req.on("end", () => {
        intentFirst = readFileSync(ledger, "utf8").includes(`"tool_call_intent"`);
        res.writeHead(200, { "content-type": "application/json" });
        res.end(`{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`);
      });
    });
    cleanups.push(up.close);
    const p = await proxyTo(up.url, ledger, ["--map", map, "--write-ahead"]);
    await rawRequest(p.url, { method: "POST", headers: POST, body: CALL });
    await p.stop();
    expect(intentFirst).toBe(true);
    const intent = rowsOf(ledger, "tool_call_intent")[0]!;
    const action = getField(intent, "action")!;
    expect(getField(action, "contract_id")).toBe("echo_contract");
    expect(getField(action, "subject_id")).toBe("x");
    expect(getField(rowsOf(ledger, "tool_call")[0]!, "status")).toBe("ok");
  });

  test("--session-idle: a session silent that long ends idle_expired; coming back opens one that continues it", async () => {
    const dir = tempDir();
    const ledger = join(dir, "idle.jsonl");
    const never = join(dir, "never.jsonl");
    let n = 0;
    const up = await mcpUpstream({ content: [] }, () => `idle-${n++}`);
    const p = await proxyTo(up.url, ledger, ["--session-idle", "1"]);
    const q = await proxyTo(up.url, never, ["--session-idle", "0"]);
    const open = async (url: string) => {
      const r = await rawRequest(url, { method: "POST", headers: POST, body: INIT });
      return r.headers["mcp-session-id"] as string;
    };
    const call = (url: string, sid: string) =>
      rawRequest(url, { method: "POST", headers: { ...POST, "mcp-session-id": sid }, body: CALL });
    const quiet = await open(p.url);
    const streaming = await open(p.url);
    const kept = await open(q.url);
    for (const [url, sid] of [
      [p.url, quiet],
      [p.url, streaming],
      [q.url, kept],
    ] as const)
      expect((await call(url, sid)).status).toBe(200);
    // One client keeps its GET stream open: a session with an exchange open is not idle.
    const ac = new AbortController();
    const stream = await fetch(p.url, {
      headers: { accept: "text/event-stream", "mcp-session-id": streaming },
      signal: ac.signal,
    });
    await stream.body!.getReader().read();
    const ends = (l: string) => rowsOf(l, "session_end").map((e) => getField(e, "reason"));
    const until = async (f: () => boolean) => {
      for (let i = 0; i < 100 && !f(); i++) await Bun.sleep(100);
    };
    await until(() => ends(ledger).length > 0);
    await Bun.sleep(1500);
    expect(ends(ledger)).toEqual(["idle_expired"]);
    const sessionOf = (r: Json) => getField(r, "session");
    const first = rowsOf(ledger, "session_begin")[0]!;
    expect(sessionOf(rowsOf(ledger, "session_end")[0]!)).toBe(sessionOf(first));
    // The stream closes: that session goes idle too.
    ac.abort();
    await until(() => ends(ledger).length > 1);
    expect(ends(ledger)).toEqual(["idle_expired", "idle_expired"]);

    // The first client comes back: forwarded as usual, recorded in a new session that continues the expired one.
    expect((await call(p.url, quiet)).status).toBe(200);
    await p.stop();
    await q.stop();
    const begins = rowsOf(ledger, "session_begin");
    expect(begins.map((b) => [getField(b, "opened_by"), getField(b, "continues")])).toEqual([
      ["initialize", undefined],
      ["initialize", undefined],
      ["joined", sessionOf(first)],
    ]);
    expect(getField(begins[2]!, "mcp_session")).toBe(getField(rowsOf(ledger, "mcp_session")[0]!, "mcp_session"));
    expect(getField(first, "session_idle_s")).toBe(1);
    expect(ends(ledger)).toEqual(["idle_expired", "idle_expired", "proxy_stopped"]);
    expect(
      rowsOf(ledger, "tool_call").map((c) => [sessionOf(c) === sessionOf(begins[2]!), getField(c, "status")]),
    ).toEqual([
      [false, "ok"],
      [false, "ok"],
      [true, "ok"],
    ]);
    // --session-idle 0: the silent session stayed open until the proxy stopped.
    expect(ends(never)).toEqual(["proxy_stopped"]);
    for (const l of [ledger, never]) {
      const v = await runCli("bun", ["verify", "--json", l]);
      expect(v.code).toBe(0);
      expect(JSON.parse(v.stdout.toString()).sessions.every((s: { complete: boolean }) => s.complete)).toBe(true);
    }
  }, 30_000);

  test("--session-idle: a request whose body is still arriving keeps its session from going idle", async () => {
    const ledger = ledgerPath();
    const up = await upstream((req, res) => {
      const parts: Buffer[] = [];
      req.on("data", (d: Buffer) => parts.push(d));
      req.on("end", () => {
        const m = JSON.parse(Buffer.concat(parts).toString());
        res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "slow-1" });
        res.end(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: m.method === "initialize" ? {} : { content: [] } }));
      });
    });
    cleanups.push(up.close);
    const p = await proxyTo(up.url, ledger, ["--session-idle", "1"]);
    await rawRequest(p.url, { method: "POST", headers: POST, body: INIT });
    // Half the call now, the rest 2.5 s later: longer than the idle time, with the exchange open throughout.
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        p.url,
        { method: "POST", headers: { ...POST, "mcp-session-id": "slow-1" }, agent: false },
        (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        },
      );
      req.on("error", reject);
      req.write(CALL.slice(0, 20));
      setTimeout(() => req.end(CALL.slice(20)), 2500);
    });
    expect(status).toBe(200);
    expect(rowsOf(ledger, "session_end")).toEqual([]);
    await p.stop();
    expect(rowsOf(ledger, "session_begin").length).toBe(1);
    expect(rowsOf(ledger, "session_end").map((e) => getField(e, "reason"))).toEqual(["proxy_stopped"]);
    expect(rowsOf(ledger, "tool_call").map((c) => getField(c, "status"))).toEqual(["ok"]);
  });

  test("--session-idle takes whole seconds up to setTimeout's limit", async () => {
    for (const bad of ["-1", "1.5", "x", "2147484"]) {
      const r = await runCli("bun", [
        "proxy",
        "--upstream",
        "http://127.0.0.1:9/mcp",
        "--ledger",
        "l",
        "--session-idle",
        bad,
      ]);
      expect([bad, r.code, r.stderr]).toEqual([bad, 2, expect.stringContaining("seam: error: --session-idle")]);
    }
  });
});

describe.each((["bun", "node", "exe"] as Via[]).filter(built))("seam proxy (%s) bodies too long to read", (via) => {
  /** An upstream that counts the POSTs it got and what they held; every POST gets one answer. */
  async function countingUpstream() {
    const got: Buffer[] = [];
    const up = await upstream((req, res) => {
      const parts: Buffer[] = [];
      req.on("data", (d: Buffer) => parts.push(d));
      req.on("end", () => {
        if (req.method === "POST") got.push(Buffer.concat(parts));
        res.writeHead(200, { "content-type": "application/json" });
        res.end(`{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`);
      });
    });
    cleanups.push(up.close);
    return { url: up.url, got };
  }

  /** A tools/call of `size` bytes (its argument padded). */
  function longCall(size: number): Buffer {
    const pad = "x".repeat(size - CALL.length);
    return Buffer.from(CALL.replace(`"message":"x"`, `"message":"x${pad.slice(1)}"`));
  }

  const raw = (b: Buffer) => `sha256:raw-bytes:v1:${createHash("sha256").update(b).digest("hex")}`;

  /** The one unparsed_frame row and the verify report of a ledger whose only client frame was too long. */
  async function rowedLong(ledger: string, body: Buffer, refused: boolean) {
    const frames = rowsOf(ledger, "unparsed_frame");
    expect(frames.length).toBe(1);
    expect(getField(frames[0]!, "dir")).toBe("c2s");
    expect(getField(frames[0]!, "bytes")).toBe(body.length);
    expect(getField(frames[0]!, "frame_digest")).toBe(raw(body));
    expect(getField(frames[0]!, "refused")).toBe(refused ? true : undefined);
    const end = rowsOf(ledger, "session_end")[0]!;
    expect(getField(end, "oversize_frames_unlogged")).toBeUndefined();
    expect(getField(end, "unparsed_frames")).toBe(1);
    const ex = rowsOf(ledger, "http_exchange")[0]!;
    expect(getField(getField(ex, "stream_digests")!, "request")).toBe(raw(body));
    const v = await runCli("bun", ["verify", "--json", ledger]);
    expect(v.code).toBe(3);
    const report = JSON.parse(v.stdout.toString());
    expect(report.finding_kinds).toEqual(["unparsed_client_frame"]);
    return ex;
  }

  for (const flag of ["--fail-closed", "--write-ahead"])
    test(`${flag}: a POST longer than --max-frame is refused with 413, never forwarded, and rowed`, async () => {
      const ledger = ledgerPath();
      const up = await countingUpstream();
      const p = await proxyTo(up.url, ledger, [flag, "--max-frame", "1000"], via);
      const body = longCall(3000);
      const r = await rawRequest(p.url, { method: "POST", headers: POST, body });
      expect(r.status).toBe(413);
      const answer = JSON.parse(r.body.toString());
      expect(answer.id).toBeNull();
      expect(answer.error.code).toBe(-32600);
      expect(answer.error.message).toContain("longer than --max-frame");
      expect(up.got.length).toBe(0);
      // A call within the limit still goes through.
      const ok = await rawRequest(p.url, { method: "POST", headers: POST, body: CALL });
      expect(ok.status).toBe(200);
      expect(up.got.map(String)).toEqual([CALL]);
      expect(await p.stop()).toBe(0);
      const ex = await rowedLong(ledger, body, true);
      expect(getField(ex, "http_status")).toBe(413);
      expect(getField(ex, "seam_answer")).toBe("refused");
      expect(rowsOf(ledger, "tool_call").map((c) => getField(c, "status"))).toEqual(["ok"]);
    }, 30_000);

  test("without --fail-closed or --write-ahead a POST longer than --max-frame is forwarded and rowed", async () => {
    const ledger = ledgerPath();
    const up = await countingUpstream();
    const p = await proxyTo(up.url, ledger, ["--max-frame", "1000"], via);
    const body = longCall(3000);
    const r = await rawRequest(p.url, { method: "POST", headers: POST, body });
    expect(r.status).toBe(200);
    expect(up.got).toEqual([body]);
    expect(await p.stop()).toBe(0);
    const ex = await rowedLong(ledger, body, false);
    expect(getField(ex, "http_status")).toBe(200);
  }, 30_000);

  test("--fail-closed with the default --max-frame: a 65 MiB POST is refused with 413, never forwarded", async () => {
    const ledger = ledgerPath();
    const up = await countingUpstream();
    const p = await proxyTo(up.url, ledger, ["--fail-closed"], via);
    const body = longCall(65 * 1024 * 1024);
    const r = await rawRequest(p.url, { method: "POST", headers: POST, body });
    expect(r.status).toBe(413);
    expect(up.got.length).toBe(0);
    expect(await p.stop()).toBe(0);
    await rowedLong(ledger, body, true);
  }, 60_000);
});

describe.each((["bun", "node", "exe"] as Via[]).filter(built))("seam proxy (%s) bodies held for a decision", (via) => {
  /** An upstream that keeps each POST body it got and answers it. */
  async function keepingUpstream() {
    const got: Buffer[] = [];
    const up = await upstream((req, res) => {
      const parts: Buffer[] = [];
      req.on("data", (d: Buffer) => parts.push(d));
      req.on("end", () => {
        got.push(Buffer.concat(parts));
        res.writeHead(200, { "content-type": "application/json" });
        res.end(`{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`);
      });
    });
    cleanups.push(up.close);
    return { url: up.url, got };
  }

  /** A tools/call of `size` bytes with id `id`. */
  function sized(size: number, id: number): Buffer {
    const head = CALL.replace('"id":7', `"id":${id}`);
    return Buffer.from(head.replace(`"message":"x"`, `"message":"${"x".repeat(size - head.length + 1)}"`));
  }

  test("--fail-closed: past --max-held a POST gets 503 with Retry-After, and goes through once retried", async () => {
    const ledger = ledgerPath();
    const up = await keepingUpstream();
    const p = await proxyTo(up.url, ledger, ["--fail-closed", "--max-held", "1000000"], via);
    const a = sized(600_000, 1);
    const b = sized(600_000, 2);
    // A is held half-read for a while; B comes meanwhile: the two would pass the bound.
    const first = rawRequest(p.url, { method: "POST", headers: POST, body: a, pause: { at: 500_000, ms: 1500 } });
    await Bun.sleep(500);
    const busy = await rawRequest(p.url, { method: "POST", headers: POST, body: b });
    expect(busy.status).toBe(503);
    expect(busy.headers["retry-after"]).toBe("1");
    expect((await first).status).toBe(200);
    const again = await rawRequest(p.url, { method: "POST", headers: POST, body: b });
    expect(again.status).toBe(200);
    expect(up.got).toEqual([a, b]);
    expect(await p.stop()).toBe(0);
    expect(p.stderr()).toContain("answered 1 POST 503");
    expect(rowsOf(ledger, "tool_call").map((c) => getField(c, "rpc_id"))).toEqual([1, 2]);
    expect((await runCli("bun", ["verify", ledger])).code).toBe(0);
  }, 30_000);

  test("--fail-closed: of 12 uploads of 63 MiB held at once, those past --max-held get 503 instead", async () => {
    const ledger = ledgerPath();
    const up = await keepingUpstream();
    const p = await proxyTo(up.url, ledger, ["--fail-closed"], via);
    const SIZE = 63 * 1024 * 1024;
    const body = sized(SIZE, 9);
    // Each upload stops short of its end for a while: the proxy would hold every one of them at once.
    const statuses = await Promise.all(
      Array.from({ length: 12 }, () =>
        rawRequest(p.url, { method: "POST", headers: POST, body, pause: { at: SIZE - 10, ms: 3000 } }).then(
          (r) => r.status,
        ),
      ),
    );
    expect(statuses.every((s) => s === 200 || s === 503)).toBe(true);
    const passed = statuses.filter((s) => s === 200).length;
    // The default bound holds four bodies at the default --max-frame; whichever came first, at least one.
    expect(passed).toBeGreaterThanOrEqual(1);
    expect(passed).toBeLessThanOrEqual(4);
    expect(up.got.length).toBe(passed);
    expect(await p.stop()).toBe(0);
    expect(p.stderr()).toContain(`answered ${12 - passed} POSTs 503`);
    expect(rowsOf(ledger, "tool_call").length).toBe(passed);
    expect((await runCli("bun", ["verify", ledger])).code).toBe(0);
  }, 120_000);
});
