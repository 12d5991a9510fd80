/**
 * seam export --otlp against a loopback OTLP/HTTP receiver: what arrives is
 * decoded by the rules of OTLP's JSON encoding (opentelemetry-proto: hex
 * trace and span ids of 16 and 8 bytes, times as decimal nanoseconds, enums
 * as numbers, attributes as KeyValue/AnyValue) and checked against the
 * demo ledger: span names and MCP attributes, log records one per row.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { VIAS, built, seamArgv } from "./cli.ts";
import { run, tempDir } from "./proc.ts";

interface KV {
  key: string;
  value: Record<string, unknown>;
}
const got: { path: string; body: Record<string, unknown> }[] = [];
let base = "";
let failNext = 0;
const server = http.createServer((req, res) => {
  let b = "";
  req.on("data", (d) => {
    b += d;
  });
  req.on("end", () => {
    if (failNext > 0) {
      failNext--;
      res.writeHead(503).end();
      return;
    }
    got.push({ path: req.url ?? "", body: JSON.parse(b) });
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
});
beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => server.close());

/** Decodes OTLP/JSON attributes strictly: exactly one AnyValue field of a known kind. */
function attrs(list: KV[]): Record<string, string | boolean | number> {
  const out: Record<string, string | boolean | number> = {};
  for (const kv of list) {
    const kinds = Object.keys(kv.value);
    expect(kinds).toHaveLength(1);
    const k = kinds[0]!;
    expect(["stringValue", "intValue", "boolValue", "doubleValue"]).toContain(k);
    const v = kv.value[k];
    if (k === "intValue") expect(String(v)).toMatch(/^-?\d+$/);
    out[kv.key] = k === "intValue" ? Number(v) : (v as string | boolean | number);
  }
  return out;
}

const dir = tempDir("seam-otlp-");
const demo = join(dir, "demo.jsonl");

describe.each(VIAS.filter(built))("seam export --otlp via %s", (via) => {
  test("the demo ledger: one span per MCP operation with the MCP attributes, one log record per row", async () => {
    got.length = 0;
    if (via === "bun") expect((await run([...seamArgv("bun"), "demo", "--ledger", demo])).code).toBe(0);
    const r = await run([...seamArgv(via), "export", "--otlp", base, demo]);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    const traces = got.filter((g) => g.path === "/v1/traces");
    const logs = got.filter((g) => g.path === "/v1/logs");
    const spans = traces.flatMap((t) =>
      (
        t.body.resourceSpans as { scopeSpans: { scope: { name: string }; spans: Record<string, unknown>[] }[] }[]
      ).flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)),
    );
    expect(spans.map((s) => s.name)).toEqual([
      "initialize",
      "tools/list",
      "tools/call echo",
      "tools/call echo",
      "tools/call fail",
      "tools/call iserror",
      "tools/call never",
    ]);
    const lines = readFileSync(demo, "utf8").split("\n").slice(0, -1);
    const origin = (await run([...seamArgv("bun"), "verify", "--json", demo])).stdout.toString();
    expect(origin).toContain('"ok":true');
    for (const s of spans) {
      expect(s.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(s.spanId).toMatch(/^[0-9a-f]{16}$/);
      expect(s.kind).toBe(3);
      expect(String(s.startTimeUnixNano)).toMatch(/^\d{19}$/);
      expect(BigInt(s.endTimeUnixNano as string) >= BigInt(s.startTimeUnixNano as string)).toBe(true);
      const a = attrs(s.attributes as KV[]);
      expect(a["network.transport"]).toBe("pipe");
      expect(a["seam.ledger.origin"]).toMatch(/^seam-ledger\/[0-9a-f]{32}$/);
      const line = a["seam.ledger.line"] as number;
      expect(lines[line - 1]).toContain(`"chain": "${a["seam.chain"]}"`);
      expect(a["mcp.protocol.version"]).toBe("2025-06-18");
      expect(a["mcp.session.id"]).toMatch(/^demo-/);
    }
    const byName = (n: string) => attrs(spans.find((s) => s.name === n)!.attributes as KV[]);
    expect(byName("tools/call fail")).toMatchObject({
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "fail",
      "gen_ai.operation.name": "execute_tool",
      "jsonrpc.request.id": "4",
      "error.type": "-32602",
    });
    expect(byName("tools/call iserror")["error.type"]).toBe("tool_error");
    expect(byName("tools/call never")["error.type"]).toBe("unanswered");
    expect(byName("tools/call echo")["error.type"]).toBeUndefined();
    expect(spans.find((s) => s.name === "tools/call fail")!.status).toEqual({ code: 2, message: "-32602" });
    const records = logs.flatMap((l) =>
      (l.body.resourceLogs as { scopeLogs: { logRecords: Record<string, unknown>[] }[] }[]).flatMap((rl) =>
        rl.scopeLogs.flatMap((sl) => sl.logRecords),
      ),
    );
    expect(records.map((x) => (x.body as { stringValue: string }).stringValue)).toEqual(lines);
    expect(new Set(records.map((x) => x.traceId))).toEqual(new Set(spans.map((s) => s.traceId)));
  });
});

test("an endpoint that refuses: one warning per cause, exit 1, the ledger untouched", async () => {
  const before = readFileSync(demo);
  failNext = 100;
  const r = await run([...seamArgv("bun"), "export", "--otlp", base, demo]);
  failNext = 0;
  expect(r.code).toBe(1);
  expect(r.stderr.split("\n").filter(Boolean)).toEqual([
    `seam: warning: ${base}/v1/logs answered 503: logs not exported (the ledger is unchanged)`,
    `seam: warning: ${base}/v1/traces answered 503: traces not exported (the ledger is unchanged)`,
    `seam: error: ${readFileSync(demo, "utf8").split("\n").length - 1 + 7} spans and log records were not exported`,
  ]);
  expect(readFileSync(demo).equals(before)).toBe(true);
});
