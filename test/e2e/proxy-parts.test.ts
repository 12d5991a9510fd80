/** Tables for the pure parts of seam proxy: SSE splitting, the loopback guard, header and query rules. */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { sharedLock } from "../../src/ledger/shared-lock.ts";
import { delayed, RECORD_DELAY_MS, RECORD_MAX_BYTES, soon } from "../../src/proxy/deferred-recording.ts";
import { foreignRequest, isLoopbackHost } from "../../src/proxy/guard.ts";
import { endToEnd, headerSummary, upstreamRequestHeaders } from "../../src/proxy/headers.ts";
import { McpProxy } from "../../src/proxy/server.ts";
import { ProxySession } from "../../src/proxy/session.ts";
import { BodyCollector, SseSplitter } from "../../src/proxy/sse.ts";
import { redactTarget } from "../../src/redact/http.ts";
import { openAppend } from "../../src/runtime/file.ts";
import { nodeHttp } from "../../src/runtime/http-node.ts";
import { runCli } from "../helpers/cli.ts";
import { tempDir } from "../helpers/proc.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Splits `stream` fed in pieces of `step` bytes; returns the events' data and the oversize lengths. */
function split(stream: string | Uint8Array, step: number, maxFrame = 1024): { events: string[]; oversize: number[] } {
  const bytes = typeof stream === "string" ? enc.encode(stream) : stream;
  const events: string[] = [];
  const oversize: number[] = [];
  const s = new SseSplitter(maxFrame, { frame: (f) => events.push(dec.decode(f)), oversize: (n) => oversize.push(n) });
  for (let i = 0; i < bytes.length; i += step) s.push(bytes.subarray(i, i + step));
  s.end();
  return { events, oversize };
}

describe("SseSplitter", () => {
  const cases: [string, string, string[]][] = [
    ["one event", 'data: {"a":1}\n\n', ['{"a":1}']],
    ["CRLF line ends", "id: 1\r\ndata: x\r\n\r\n", ["x"]],
    ["CR line ends", "data: x\r\rdata: y\r\r: end\r", ["x", "y"]],
    ["data lines join with LF", "data: a\ndata: b\n\n", ["a\nb"]],
    ["no space after the colon", "data:x\n\n", ["x"]],
    ["only one leading space is dropped", "data:  x\n\n", [" x"]],
    ["comments and other fields are not data", ": hi\nevent: message\nid: 7\nretry: 10\ndata: x\n\n", ["x"]],
    ["an event without data is none", "id: 1\n\n", []],
    ["an empty data field is an empty event (a priming event)", "id: 1\ndata: \n\n", [""]],
    ["`data` without a colon is an empty data line", "data\n\n", [""]],
    ["a field named datax is not data", "datax: 1\n\n", []],
    ["an unfinished event is dropped at the end", "data: x\n\ndata: y\n", ["x"]],
    ["a BOM at the start is dropped", "\uFEFFdata: x\n\n", ["x"]],
  ];
  for (const [name, stream, want] of cases) {
    test(name, () => {
      for (const step of [1, 2, 3, 7, 1000]) expect([step, split(stream, step).events]).toEqual([step, want]);
    });
  }

  test("an event over maxFrame is counted, never kept; the next one is", () => {
    const big = "x".repeat(100);
    for (const step of [1, 5, 64, 1000]) {
      const r = split(`data: ${big}\ndata: ${big}\n\ndata: ok\n\n`, step, 150);
      expect(r.events).toEqual(["ok"]);
      expect(r.oversize.length).toBe(1);
    }
    // A single line longer than maxFrame: the same, however it is cut.
    for (const step of [1, 7, 1000]) {
      const r = split(`data: ${"y".repeat(400)}\n\n: ${"z".repeat(400)}\ndata: ok\n\n`, step, 150);
      expect([step, r.events, r.oversize.length]).toEqual([step, ["ok"], 1]);
    }
  });

  test("invalid UTF-8 reaches the observer as bytes", () => {
    const bytes = new Uint8Array([...enc.encode("data: "), 0xff, 0xfe, 0x0a, 0x0a]);
    const frames: Uint8Array[] = [];
    const s = new SseSplitter(100, { frame: (f) => frames.push(f.slice()), oversize: () => {} });
    s.push(bytes);
    expect([...frames[0]!]).toEqual([0xff, 0xfe]);
  });

  test("BodyCollector: whole body at the end, or counted when over maxFrame", () => {
    const got: string[] = [];
    const over: number[] = [];
    const c = new BodyCollector(10, { frame: (f) => got.push(dec.decode(f)), oversize: (n) => over.push(n) });
    c.push(enc.encode("12345"));
    c.push(enc.encode("6789"));
    c.end();
    const d = new BodyCollector(10, { frame: (f) => got.push(dec.decode(f)), oversize: (n) => over.push(n) });
    d.push(enc.encode("123456"));
    d.push(enc.encode("789012"));
    d.end();
    expect(got).toEqual(["123456789"]);
    expect(over).toEqual([12]);
  });
});

describe("loopback guard", () => {
  const port = 8788;
  const cases: [string | undefined, string | undefined, string | null][] = [
    ["127.0.0.1:8788", undefined, null],
    ["localhost:8788", undefined, null],
    ["localhost", undefined, null],
    ["[::1]:8788", undefined, null],
    ["127.1.2.3:8788", "http://localhost:3000", null],
    ["localhost:8788", "https://127.0.0.1", null],
    [undefined, undefined, "no Host header"],
    ["evil.example", undefined, "Host is not a loopback name"],
    ["127.0.0.1.evil.example:8788", undefined, "Host is not a loopback name"],
    ["localhost:8789", undefined, "Host names another port"],
    ["localhost:8788", "http://evil.example", "Origin is not a loopback origin"],
    ["localhost:8788", "http://localhost.evil.example", "Origin is not a loopback origin"],
    ["localhost:8788", "null", "Origin is not a URL"],
    ["localhost:8788", "file:///x", "Origin is not http(s)"],
  ];
  for (const [host, origin, want] of cases) {
    test(`Host ${host} Origin ${origin}`, () => expect(foreignRequest(host, origin, port)).toBe(want));
  }
  test("a verdict asked again is the same, and one for another port or Origin is its own", () => {
    const asked: [string, string | undefined, number][] = [
      ["localhost:8788", undefined, 8788],
      ["localhost:8788", undefined, 8789],
      ["localhost:8788", "", 8788],
      ["localhost:8788", undefined, 8788],
      ["localhost:8788", "", 8788],
      ["localhost:8788", undefined, 8789],
    ];
    expect(asked.map(([h, o, p]) => foreignRequest(h, o, p))).toEqual([
      null,
      "Host names another port",
      "Origin is not a URL",
      null,
      "Origin is not a URL",
      "Host names another port",
    ]);
  });
  test("loopback listen hosts", () => {
    expect(["127.0.0.1", "::1", "[::1]", "localhost", "127.0.0.2"].map(isLoopbackHost)).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    expect(["0.0.0.0", "::", "10.0.0.1", "example.com", "::ffff:10.0.0.1"].map(isLoopbackHost)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});

describe("headers", () => {
  test("hop-by-hop fields and those Connection names are dropped, order kept", () => {
    expect(
      endToEnd([
        ["A", "1"],
        ["Connection", "keep-alive, X-Hop"],
        ["X-Hop", "h"],
        ["Keep-Alive", "timeout=5"],
        ["Transfer-Encoding", "chunked"],
        ["TE", "trailers"],
        ["Upgrade", "h2c"],
        ["Proxy-Connection", "keep-alive"],
        ["B", "2"],
        ["A", "3"],
      ]),
    ).toEqual([
      ["A", "1"],
      ["B", "2"],
      ["A", "3"],
    ]);
    // With no Connection field, in any case; a field as long as a hop-by-hop name stays.
    expect(
      endToEnd([
        ["transfer-ENCODING", "chunked"],
        ["X-Same-Length-Ab", "a"],
        ["X-Same-Length-Abc", "b"],
        ["KEEP-ALIVE", "timeout=5"],
        ["te", "trailers"],
        ["Tf", "c"],
        ["UpGrade", "h2c"],
        ["PROXY-connection", "keep-alive"],
      ]),
    ).toEqual([
      ["X-Same-Length-Ab", "a"],
      ["X-Same-Length-Abc", "b"],
      ["Tf", "c"],
    ]);
  });

  test("upstream requests: Host is the upstream's, Accept-Encoding is identity", () => {
    const h = upstreamRequestHeaders(
      [
        ["Host", "127.0.0.1:8788"],
        ["Accept-Encoding", "gzip, br"],
        ["Expect", "100-continue"],
        ["Authorization", "Bearer x"],
      ],
      new URL("https://mcp.example.com:8443/mcp"),
    );
    expect(h).toEqual([
      ["Host", "mcp.example.com:8443"],
      ["Authorization", "Bearer x"],
      ["Accept-Encoding", "identity"],
    ]);
  });

  test("a summary never holds a secret header's value", () => {
    const s = headerSummary(
      [
        ["Content-Type", "application/json"],
        ["Authorization", "Bearer s3cr3t"],
        ["User-Agent", "agent token=abcdef"],
        ["X-Custom", "v"],
      ],
      new Set(["x-custom"]),
    );
    expect(s.names).toEqual(["authorization", "content-type", "user-agent", "x-custom"]);
    expect([...s.values]).toEqual([
      ["content-type", "application/json"],
      ["user-agent", "agent token=<redacted>"],
    ]);
  });

  test("a summary made once serves the same fields again, and only them", () => {
    const none = new Set<string>();
    const fields: [string, string][] = [
      ["Host", "127.0.0.1:8080"],
      ["Content-Type", "application/json"],
      ["Mcp-Session-Id", "s-1"],
      ["MCP-Protocol-Version", "2025-11-25"],
      ["Authorization", "Bearer s3cr3t"],
    ];
    const first = headerSummary(fields, none);
    // Values no row records may differ (a session id, a credential): the same summary, its lists frozen.
    const again = headerSummary(
      fields.map(([k, v]) => [k, k === "Authorization" ? "Bearer other" : k === "Mcp-Session-Id" ? "s-2" : v]),
      none,
    );
    expect(again).toBe(first);
    expect(Object.isFrozen(first.names) && Object.isFrozen(first.withheld)).toBe(true);
    expect(first.withheld).toEqual(["authorization"]);
    // A recorded value, a name's spelling, the fields' order, one more field, other secret names: a new summary.
    const variants: [string, [string, string][], ReadonlySet<string>][] = [
      ["another content type", fields.map(([k, v]) => [k, k === "Content-Type" ? "text/plain" : v]), none],
      ["another version", fields.map(([k, v]) => [k, k === "MCP-Protocol-Version" ? "2026-07-28" : v]), none],
      ["another spelling", fields.map(([k, v]) => [k === "Host" ? "host" : k, v]), none],
      ["another order", [fields[1]!, fields[0]!, ...fields.slice(2)], none],
      ["another field in a field's place", fields.map(([k, v]) => (k === "Host" ? ["Cookie", "a=1"] : [k, v])), none],
      ["one more field", [...fields, ["Mcp-Method", "tools/call"]], none],
      ["one field fewer", fields.slice(0, -1), none],
      ["other secret names", fields, new Set(["content-type"])],
    ];
    for (const [name, h, secret] of variants) {
      const s = headerSummary(h, secret);
      expect({ name, same: s === first }).toEqual({ name, same: false });
      const fresh = headerSummary([...h, ["X-Fresh", name]], secret);
      expect({ name, names: s.names, values: [...s.values], withheld: s.withheld }).toEqual({
        name,
        names: fresh.names.filter((n) => n !== "x-fresh"),
        values: [...fresh.values],
        withheld: fresh.withheld,
      });
    }
    expect(
      headerSummary(
        fields.map(([k, v]) => [k, k === "Content-Type" ? "text/plain" : v]),
        none,
      ).values.get("content-type"),
    ).toBe("text/plain");
  });

  const targets: [string, string, number][] = [
    ["/mcp", "/mcp", 0],
    ["/mcp?a=1&b=2", "/mcp?a=1&b=2", 0],
    ["/mcp?token=abc&page=2", "/mcp?token=<redacted>&page=2", 1],
    [
      "/mcp?api_key=k&apiKey=k2&X-Amz-Signature=s&sig=t",
      "/mcp?api_key=<redacted>&apiKey=<redacted>&X-Amz-Signature=<redacted>&sig=<redacted>",
      4,
    ],
    ["/mcp?access%5Ftoken=abc", "/mcp?access%5Ftoken=<redacted>", 1],
    ["/mcp?q=sk-abcdefghijklmnopqrstuvwxyz", "/mcp?q=<redacted>", 1],
    ["/mcp?token=", "/mcp?token=", 0],
    ["/mcp?max_tokens=5", "/mcp?max_tokens=5", 0],
  ];
  for (const [target, want, n] of targets) {
    test(`query ${target}`, () => expect(redactTarget(target)).toEqual({ target: want, redactions: n }));
  }
});

describe("ProxySession.at", () => {
  test("an observation made after the fact is recorded at the moment it stands for: the row's ts and the call's ms", async () => {
    const ledger = join(tempDir("seam-proxy-at-"), "l.jsonl");
    const quiet = { error() {}, warn() {}, info() {} };
    const o = { ledger, server: "srv", openAppend, begin: {}, runtime: "bun", raw: false, maxFrame: 1 << 20 };
    const wall = Date.UTC(2020, 0, 2, 3, 4, 5, 6);
    const s = await ProxySession.open(
      { ...o, fsync: "never", writeAhead: false, failClosed: false },
      "sessionless",
      sharedLock({ pid: process.pid }),
      quiet,
      delayed(),
      undefined,
      undefined,
      { perf: 900, wall: wall - 100 },
    );
    const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`;
    s.at({ perf: 1000, wall }, () => s.observer.fromClient(enc.encode(call)));
    s.at({ perf: 1250.5, wall: wall + 250 }, () =>
      s.observer.fromServer(enc.encode(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)),
    );
    await s.end("test_over");
    const rows = rowsIn(ledger);
    const toolCall = rows.find((r) => r.evt === "tool_call");
    expect(toolCall.ts).toBe("2020-01-02T03:04:05.256Z");
    expect(toolCall.ms).toBe(250.5);
    // Outside `at`, the session's clock is now again.
    expect(Date.parse(rows.at(-1).ts)).toBeGreaterThan(wall + 1000);
  });
});

describe("ProxySession row order", () => {
  test("rows are written in the order of their times, not the order they are made in; none goes back", async () => {
    const ledger = join(tempDir("seam-proxy-order-"), "l.jsonl");
    const quiet = { error() {}, warn() {}, info() {} };
    const o = { ledger, server: "srv", openAppend, begin: {}, runtime: "bun", raw: false, maxFrame: 1 << 20 };
    const w = Date.UTC(2020, 0, 2, 3, 4, 5, 0);
    const later = delayed(5);
    const s = await ProxySession.open(
      { ...o, fsync: "never", writeAhead: false, failClosed: false },
      "sessionless",
      sharedLock({ pid: process.pid }),
      quiet,
      later,
      undefined,
      undefined,
      { perf: 0, wall: w },
    );
    // One batch's rows, made out of order (as exchanges recording in turn make them).
    for (const [name, dt] of [
      ["third", 30],
      ["first", 10],
      ["second", 20],
    ] as const)
      s.at({ perf: dt, wall: w + dt }, () => s.rows.row("probe", { name }));
    await new Promise<void>((r) => later(r));
    await Bun.sleep(20);
    // A row made once a later one is written: it is written after it, at its time.
    s.at({ perf: 5, wall: w + 5 }, () => s.rows.row("probe", { name: "late" }));
    await s.end("test_over");
    const probes = rowsIn(ledger).filter((r) => r.evt === "probe");
    expect(probes.map((r) => [r.name, Date.parse(r.ts) - w])).toEqual([
      ["first", 10],
      ["second", 20],
      ["third", 30],
      ["late", 30],
    ]);
    const v = await runCli("bun", ["verify", "--json", ledger]);
    expect(JSON.parse(v.stdout.toString()).finding_kinds).toEqual([]);
  });
});

/** A ledger's rows as plain objects. */
function rowsIn(ledger: string) {
  return readFileSync(ledger, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
}

/** A proxy in front of `upstream` whose ledger files take `openMs` to open (a slow disk). */
function proxyOpeningSlowly(upstream: URL, ledger: string, openMs: number, more: { recordDelayMs?: number } = {}) {
  return McpProxy.start(
    nodeHttp,
    {
      ledger,
      server: "srv",
      openAppend: async (path: string, opts?: { allowForeign?: boolean }) => {
        await new Promise((r) => setTimeout(r, openMs));
        return openAppend(path, opts);
      },
      begin: {},
      runtime: "bun",
      raw: false,
      maxFrame: 1 << 20,
      fsync: "never",
      writeAhead: false,
      failClosed: false,
      upstream,
      listenHost: "127.0.0.1",
      listenPort: 0,
      guardLoopback: true,
      redactHeaders: new Set(),
      sessionIdleMs: 0,
      ...more,
    },
    { error() {}, warn() {}, info() {} },
  );
}

describe("an exchange recorded later", () => {
  // The ledger opened at once, and slowly (a slow disk): the session is found only after the request's
  // body ended, and its call's ms still runs from then.
  test.each([0, 60])(
    "its rows give the exchange's own ms and ts, not when its recording ran (ledger open +%i ms)",
    async (openMs) => {
      // The upstream answers 30 ms after the request; the proxy records 400 ms after the answer's bytes.
      const up = createServer((req, res) => {
        req.resume();
        req.on("end", () =>
          setTimeout(() => {
            res.writeHead(200, { "content-type": "application/json" });
            res.end(`{"jsonrpc":"2.0","id":1,"result":{}}`);
          }, 30),
        );
      });
      await new Promise<void>((r) => up.listen(0, "127.0.0.1", r));
      const upstream = new URL(`http://127.0.0.1:${(up.address() as { port: number }).port}/mcp`);
      const ledger = join(tempDir("seam-proxy-ended-"), "l.jsonl");
      const proxy = await proxyOpeningSlowly(upstream, ledger, openMs, { recordDelayMs: 400 });
      const sent = Date.now();
      const res = await fetch(`${proxy.origin}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`,
      });
      expect(await res.text()).toContain(`"result"`);
      const answered = Date.now();
      // 100 ms after the answer nothing of the call is recorded yet: the recording waits its delay.
      await new Promise((r) => setTimeout(r, 100));
      expect(existsSync(ledger) ? readFileSync(ledger, "utf8") : "").not.toContain(`"evt": "tool_call"`);
      await new Promise((r) => setTimeout(r, 500));
      await proxy.stop();
      up.close();
      const rows = rowsIn(ledger);
      const call = rows.find((r) => r.evt === "tool_call");
      const exchange = rows.find((r) => r.evt === "http_exchange");
      for (const row of [call, exchange]) {
        expect(row.ms).toBeGreaterThanOrEqual(25);
        expect(row.ms).toBeLessThan(300);
        expect(Date.parse(row.ts)).toBeGreaterThanOrEqual(sent);
        expect(Date.parse(row.ts)).toBeLessThanOrEqual(answered + 50);
      }
    },
  );
});

describe("a new session's first answer", () => {
  // The ledger is slow to open (a slow disk): the answer to initialize goes to the client at once, and the
  // next request, carrying the id that answer gave, is recorded in the same ledger session.
  test("is not held until the session's ledger is open", async () => {
    const up = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => {
        body += c;
      });
      req.on("end", () => {
        const id = /"id":(\d+)/.exec(body)?.[1];
        if (id === undefined) {
          res.writeHead(202);
          res.end();
          return;
        }
        const result = body.includes(`"initialize"`)
          ? `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"up","version":"1"}}`
          : `{"content":[]}`;
        res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "s-1" });
        res.end(`{"jsonrpc":"2.0","id":${id},"result":${result}}`);
      });
    });
    await new Promise<void>((r) => up.listen(0, "127.0.0.1", r));
    const upstream = new URL(`http://127.0.0.1:${(up.address() as { port: number }).port}/mcp`);
    const ledger = join(tempDir("seam-proxy-first-"), "l.jsonl");
    const proxy = await proxyOpeningSlowly(upstream, ledger, 300);
    const post = (body: string, sid?: string) =>
      fetch(`${proxy.origin}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...(sid === undefined ? {} : { "mcp-session-id": sid }),
        },
        body,
      });
    const t0 = performance.now();
    const init = await post(
      `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
    );
    expect(await init.text()).toContain(`"serverInfo"`);
    // The ledger takes 300 ms to open; the answer does not wait for it.
    expect(performance.now() - t0).toBeLessThan(150);
    const sid = init.headers.get("mcp-session-id")!;
    expect(sid).toBe("s-1");
    const call = await post(
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`,
      sid,
    );
    expect(await call.text()).toContain(`"content"`);
    await proxy.stop();
    up.close();
    const rows = rowsIn(ledger);
    const initRow = rows.find((r) => r.evt === "mcp_initialize");
    const callRow = rows.find((r) => r.evt === "tool_call");
    expect(initRow.status).toBe("ok");
    expect(callRow.status).toBe("ok");
    // One ledger session: the call went to the session the initialize opened.
    expect(callRow.session).toBe(initRow.session);
    expect(rows.filter((r) => r.evt === "session_begin")).toHaveLength(1);
  });
});

describe("delayed (when the proxy records)", () => {
  test("functions run in the order queued, in one batch, no sooner than the delay after the first", async () => {
    const later = delayed();
    const ran: [string, number][] = [];
    const t0 = performance.now();
    const at = (name: string) => () => ran.push([name, performance.now() - t0]);
    later(at("a"));
    await Promise.resolve();
    later(at("b"));
    later(() => {
      at("c")();
      // queued while the batch runs: it follows at the end of the turn, not a delay later
      later(at("d"));
    });
    await new Promise((r) => setTimeout(r, RECORD_DELAY_MS + 30));
    expect(ran.map(([n]) => n)).toEqual(["a", "b", "c", "d"]);
    expect(ran[0]![1]).toBeGreaterThanOrEqual(RECORD_DELAY_MS - 1);
    // no second delay for the one queued meanwhile
    expect(ran[3]![1] - ran[0]![1]).toBeLessThan(RECORD_DELAY_MS);
    // and the queue starts afresh after it
    later(at("e"));
    expect(ran.length).toBe(4);
    await new Promise((r) => setTimeout(r, RECORD_DELAY_MS + 30));
    expect(ran.map(([n]) => n)).toEqual(["a", "b", "c", "d", "e"]);
  });

  test("past RECORD_MAX_BYTES held, the batch runs at once, in order; inside a batch, not again", async () => {
    const later = delayed();
    const ran: string[] = [];
    const half = RECORD_MAX_BYTES / 2 + 1;
    later(() => ran.push("a"), half);
    expect(ran).toEqual([]);
    later(() => {
      ran.push("b");
      // a large chunk queued from inside a batch waits for the batch's follow-up
      later(() => ran.push("d"), 2 * RECORD_MAX_BYTES);
      ran.push("c");
    }, half);
    expect(ran).toEqual(["a", "b", "c"]);
    await new Promise((r) => setImmediate(r));
    expect(ran).toEqual(["a", "b", "c", "d"]);
    // the count starts again: a small function waits for the delay
    later(() => ran.push("e"), 10);
    expect(ran.length).toBe(4);
    await new Promise((r) => setTimeout(r, RECORD_DELAY_MS + 30));
    expect(ran).toEqual(["a", "b", "c", "d", "e"]);
  });

  test("soon runs at the end of the turn", async () => {
    const ran: string[] = [];
    soon(() => ran.push("a"));
    expect(ran).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(ran).toEqual(["a"]);
  });

  test("a function that throws does not keep the rest of its batch from running", async () => {
    const later = delayed(1);
    const ran: string[] = [];
    later(() => ran.push("a"));
    later(() => {
      throw new Error("boom");
    });
    later(() => ran.push("c"));
    await new Promise((r) => setTimeout(r, 40));
    expect(ran).toEqual(["a", "c"]);
  });
});
