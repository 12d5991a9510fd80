/**
 * Operations as OpenTelemetry: one span per MCP operation and one log record
 * per ledger row, in OTLP/HTTP's JSON encoding (ids as hex, times as
 * decimal nanoseconds, enums as numbers; opentelemetry-proto's
 * ExportTraceServiceRequest and ExportLogsServiceRequest). Spans follow the
 * MCP semantic conventions: name `{mcp.method.name} {target}`, kind client,
 * `mcp.method.name`, `gen_ai.tool.name`, `gen_ai.operation.name`
 * (`execute_tool`), `jsonrpc.request.id`, `mcp.session.id`,
 * `mcp.protocol.version`, `error.type` (`tool_error` for a result with
 * isError), `network.transport`; and seam's own `seam.ledger.origin`,
 * `seam.ledger.line` and `seam.chain`, which lead back to the evidence.
 * Ids are derived from the ledger, so exporting twice gives the same ids.
 */
import { createHash } from "node:crypto";
import { VERSION } from "../base/version.ts";
import { getField, type Json } from "../core/json.ts";
import { SEAM_HTTP } from "../format/row.ts";
import { jsonText } from "../read/format.ts";
import type { Operation } from "../read/read-model.ts";

type AnyValue = { stringValue: string } | { intValue: string } | { boolValue: boolean } | { doubleValue: number };
export interface KeyValue {
  key: string;
  value: AnyValue;
}

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: KeyValue[];
  status: { code: number; message?: string };
}

export interface OtlpLogRecord {
  timeUnixNano: string;
  observedTimeUnixNano: string;
  severityNumber: number;
  severityText: string;
  body: { stringValue: string };
  attributes: KeyValue[];
  traceId: string;
}

const SPAN_KIND_CLIENT = 3;
const STATUS_UNSET = 0;
const STATUS_ERROR = 2;
const SEVERITY_INFO = 9;
const SEVERITY_WARN = 13;

const METHOD: Partial<Record<Operation["kind"], string>> = {
  tool_call: "tools/call",
  resource_read: "resources/read",
  prompt_get: "prompts/get",
  initialize: "initialize",
  discover: "server/discover",
  tools_list: "tools/list",
};

function hexId(bytes: number, ...parts: string[]): string {
  return createHash("sha256")
    .update(parts.join("\u0000"))
    .digest("hex")
    .slice(0, bytes * 2);
}

export function traceIdFor(origin: string, session: string | null): string {
  return hexId(16, "seam-trace", origin, session ?? "");
}

function str(key: string, v: string | null | undefined): KeyValue[] {
  return v === null || v === undefined ? [] : [{ key, value: { stringValue: v } }];
}

function nanos(iso: string | null, plusMs = 0): string | null {
  if (iso === null) return null;
  const t = Date.parse(iso);
  if (!Number.isFinite(t)) return null;
  return (BigInt(t) * 1_000_000n + BigInt(Math.round(plusMs * 1e6))).toString();
}

export interface SpanContext {
  origin: string;
  /** The chain value of each line, by line number. */
  chainOf(line: number): string | null;
  /** The protocol version of a session, once its initialize was seen. */
  protocolOf(session: string | null): string | null;
  /** Arguments and results as attributes (only when the ledger has them: --raw). */
  payloads: boolean;
}

/** The span of an operation, or null for what is no MCP operation (session rows, checkpoints, foreign rows). */
export function spanOf(op: Operation, c: SpanContext): OtlpSpan | null {
  const method =
    METHOD[op.kind] ?? (op.kind === "server_request" || op.kind === "client_request" ? op.name : undefined);
  if (method === undefined || method === null) return null;
  const start = nanos(op.ts);
  if (start === null) return null;
  const target = op.kind === "tool_call" || op.kind === "prompt_get" ? op.name : null;
  const transport = getField(op.row, "seam") === SEAM_HTTP ? "tcp" : "pipe";
  const errorType =
    op.error_code !== undefined && op.error_code !== null
      ? jsonText(op.error_code)
      : op.status === "error"
        ? "tool_error"
        : op.status !== null && op.status !== "ok"
          ? op.status
          : null;
  const attributes: KeyValue[] = [
    ...str("mcp.method.name", method),
    ...(op.kind === "tool_call"
      ? [...str("gen_ai.tool.name", op.name), ...str("gen_ai.operation.name", "execute_tool")]
      : []),
    ...(op.kind === "prompt_get" ? str("gen_ai.prompt.name", op.name) : []),
    ...(op.kind === "resource_read" ? str("mcp.resource.uri", op.name) : []),
    ...str("jsonrpc.request.id", op.rpc_id === undefined || op.rpc_id === null ? null : idText(op.rpc_id)),
    ...str("mcp.session.id", op.session),
    ...str("mcp.protocol.version", c.protocolOf(op.session)),
    ...str("error.type", errorType),
    ...str("network.transport", transport),
    ...str("seam.status", op.status),
    ...str("seam.ledger.origin", c.origin),
    { key: "seam.ledger.line", value: { intValue: String(op.line) } },
    ...str("seam.chain", c.chainOf(op.line)),
    { key: "seam.vouched", value: { boolValue: op.vouched } },
    ...(c.payloads && op.args !== undefined ? str("gen_ai.tool.call.arguments", jsonText(op.args)) : []),
    ...(c.payloads && op.result !== undefined ? str("gen_ai.tool.call.result", jsonText(op.result)) : []),
  ];
  return {
    traceId: traceIdFor(c.origin, op.session),
    spanId: hexId(8, "seam-span", c.origin, String(op.line)),
    name: target ? `${method} ${target}` : method,
    kind: SPAN_KIND_CLIENT,
    startTimeUnixNano: start,
    endTimeUnixNano: nanos(op.ts, op.ms ?? 0) ?? start,
    attributes,
    status: errorType === null ? { code: STATUS_UNSET } : { code: STATUS_ERROR, message: errorType },
  };
}

function idText(v: Json): string {
  return typeof v === "string" ? v : jsonText(v);
}

/** A ledger row as a log record: its line as the body, in the trace of its session. */
export function logOf(
  row: Json,
  line: number,
  text: string,
  origin: string,
  chain: string | null,
  now: bigint,
): OtlpLogRecord {
  const ts = getField(row, "ts");
  const session = getField(row, "session");
  const evt = getField(row, "evt");
  const t = nanos(typeof ts === "string" ? ts : null) ?? now.toString();
  const status = getField(row, "status");
  const warn = typeof status === "string" && status !== "ok";
  return {
    timeUnixNano: t,
    observedTimeUnixNano: now.toString(),
    severityNumber: warn ? SEVERITY_WARN : SEVERITY_INFO,
    severityText: warn ? "WARN" : "INFO",
    body: { stringValue: text },
    attributes: [
      ...str("seam.evt", typeof evt === "string" ? evt : null),
      ...str("seam.ledger.origin", origin),
      { key: "seam.ledger.line", value: { intValue: String(line) } },
      ...str("seam.chain", chain),
    ],
    traceId: traceIdFor(origin, typeof session === "string" ? session : null),
  };
}

const RESOURCE = { attributes: [{ key: "service.name", value: { stringValue: "seam" } }] };
const SCOPE = { name: "seam", version: VERSION };

export function tracesRequest(spans: OtlpSpan[]): unknown {
  return { resourceSpans: [{ resource: RESOURCE, scopeSpans: [{ scope: SCOPE, spans }] }] };
}

export function logsRequest(logRecords: OtlpLogRecord[]): unknown {
  return { resourceLogs: [{ resource: RESOURCE, scopeLogs: [{ scope: SCOPE, logRecords }] }] };
}

/** POSTs one OTLP/JSON request; resolves with why it failed, or null. Never rejects. */
export async function postOtlp(url: string, body: unknown, timeoutMs = 10_000): Promise<string | null> {
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
    });
    void res.body?.cancel().catch(() => {});
    return res.status >= 200 && res.status < 300 ? null : `${url} answered ${res.status}`;
  } catch (err) {
    const e = err as { code?: string; cause?: { code?: string }; name?: string };
    return `${url} unreachable (${e?.code ?? e?.cause?.code ?? e?.name ?? "error"})`;
  }
}
