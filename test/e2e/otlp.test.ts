/**
 * seam export --otlp against a loopback OTLP/HTTP receiver: what arrives is
 * decoded with the official OTLP message definitions (the protobufjs code
 * the OpenTelemetry JS project generates from opentelemetry-proto, shipped
 * in @opentelemetry/otlp-transformer up to 0.214) and checked against the
 * demo ledger: span names and MCP attributes, log records one per row.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import * as generated from "@opentelemetry/otlp-transformer/build/src/generated/root.js";
import { built, seamArgv, VIAS } from "../helpers/cli.ts";
import { run, tempDir } from "../helpers/proc.ts";

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

/** A 64-bit field as decoded (protobufjs gives a Long). */
type Int64 = { toString(): string };
interface AnyValue {
  /** The oneof: the name of the one field that is set. */
  value?: string;
  [kind: string]: unknown;
}
interface KeyValue {
  key: string;
  value: AnyValue;
}
interface Span {
  traceId: Uint8Array;
  spanId: Uint8Array;
  name: string;
  kind: number;
  startTimeUnixNano: Int64;
  endTimeUnixNano: Int64;
  attributes: KeyValue[];
  status?: { code: number; message: string };
}
interface LogRecord {
  traceId: Uint8Array;
  body: AnyValue;
}
interface MessageType<T> {
  fromObject(o: unknown): T;
  toObject(m: T, o: Record<string, unknown>): Record<string, unknown>;
}
const proto = (generated as unknown as { opentelemetry: { proto: Record<string, any> } }).opentelemetry.proto;
const TraceRequest: MessageType<{ resourceSpans: { scopeSpans: { spans: Span[] }[] }[] }> =
  proto.collector.trace.v1.ExportTraceServiceRequest;
const LogsRequest: MessageType<{ resourceLogs: { scopeLogs: { logRecords: LogRecord[] }[] }[] }> =
  proto.collector.logs.v1.ExportLogsServiceRequest;
const SPAN_KIND_CLIENT: number = proto.trace.v1.Span.SpanKind.SPAN_KIND_CLIENT;
const STATUS_CODE_ERROR: number = proto.trace.v1.Status.StatusCode.STATUS_CODE_ERROR;

/**
 * OTLP/JSON is protobuf's JSON mapping but for ids: trace and span ids are
 * hex, not base64 (and enums are numbers only). The ids become bytes here,
 * as the definitions read them; a string that is not hex fails.
 */
function idsToBytes(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(idsToBytes);
  if (v === null || typeof v !== "object") return v;
  return Object.fromEntries(
    Object.entries(v).map(([k, x]) => {
      if (!/^(traceId|spanId|parentSpanId)$/.test(k)) return [k, idsToBytes(x)];
      expect([k, x]).toEqual([k, expect.stringMatching(/^([0-9a-f]{2})*$/)]);
      return [k, Buffer.from(x as string, "hex")];
    }),
  );
}

/** Every member of a JSON value, with leaves as null and empty arrays left out. */
function shape(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(shape);
  if (v === null || typeof v !== "object" || v instanceof Uint8Array) return null;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v).sort()) {
    const x = (v as Record<string, unknown>)[k];
    if (!(Array.isArray(x) && x.length === 0)) out[k] = shape(x);
  }
  return out;
}

/** Decodes a request with its definition; every member sent must be a field of it (none is lost on the way back). */
function decode<T>(type: MessageType<T>, json: unknown): T {
  const m = type.fromObject(idsToBytes(json));
  expect(shape(type.toObject(m, { longs: String, enums: Number, bytes: String }))).toEqual(shape(json));
  return m;
}

/** An AnyValue: exactly one of its fields set (the oneof), of a kind seam sends. */
function anyValue(v: AnyValue): string | boolean | number {
  expect(["stringValue", "intValue", "boolValue", "doubleValue"]).toContain(v.value!);
  const x = v[v.value!];
  return v.value === "intValue" ? Number((x as Int64).toString()) : (x as string | boolean | number);
}

function attrs(list: KeyValue[]): Record<string, string | boolean | number> {
  return Object.fromEntries(list.map((kv) => [kv.key, anyValue(kv.value)]));
}

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

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
      decode(TraceRequest, t.body).resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)),
    );
    // Enums are numbers in OTLP/JSON (the definitions would also take their names).
    for (const t of traces)
      for (const k of JSON.stringify(t.body).matchAll(/"(kind|code)":([^,}]*)/g)) expect(k[2]).toMatch(/^\d+$/);
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
    expect(JSON.parse(origin).ok).toBe(true);
    for (const s of spans) {
      expect([s.traceId.length, s.spanId.length]).toEqual([16, 8]);
      expect(s.kind).toBe(SPAN_KIND_CLIENT);
      expect(s.startTimeUnixNano.toString()).toMatch(/^\d{19}$/);
      expect(BigInt(s.endTimeUnixNano.toString()) >= BigInt(s.startTimeUnixNano.toString())).toBe(true);
      const a = attrs(s.attributes);
      expect(a["network.transport"]).toBe("pipe");
      expect(a["seam.ledger.origin"]).toMatch(/^seam-ledger\/[0-9a-f]{32}$/);
      const line = a["seam.ledger.line"] as number;
      expect(lines[line - 1]).toContain(`"chain": "${a["seam.chain"]}"`);
      expect(a["mcp.protocol.version"]).toBe("2025-06-18");
      expect(a["mcp.session.id"]).toMatch(/^demo-/);
    }
    const byName = (n: string) => attrs(spans.find((s) => s.name === n)!.attributes);
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
    const failed = spans.find((s) => s.name === "tools/call fail")!.status!;
    expect([failed.code, failed.message]).toEqual([STATUS_CODE_ERROR, "-32602"]);
    const records = logs.flatMap((l) =>
      decode(LogsRequest, l.body).resourceLogs.flatMap((rl) => rl.scopeLogs.flatMap((sl) => sl.logRecords)),
    );
    expect(records.map((x) => anyValue(x.body))).toEqual(lines);
    expect(new Set(records.map((x) => hex(x.traceId)))).toEqual(new Set(spans.map((s) => hex(s.traceId))));
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
