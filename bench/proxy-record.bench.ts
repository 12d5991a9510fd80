/**
 * What `seam proxy` records for one tools/call exchange whose answer is an SSE
 * stream (as server-everything answers), in process, warm: the steps of
 * src/proxy/exchange.ts's recording over an in-memory ledger. The request's
 * and the answer's raw-bytes digests, the answer split into its event, both
 * frames observed and paired into a `tool_call` row, the fields' summaries
 * and the target, the `http_exchange` row; every row made, chained and
 * written. The floor: JSON.parse of both frames and two rows of about the
 * same size hashed. Cases for bench/micro.bench.ts (group "proxy record, per
 * exchange").
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLog } from "../src/base/log.ts";
import { StreamDigest } from "../src/core/digest.ts";
import { msFloat, streamFields } from "../src/format/row.ts";
import { sharedLock } from "../src/ledger/shared-lock.ts";
import { headerSummary } from "../src/proxy/headers.ts";
import { moment, ProxySession } from "../src/proxy/session.ts";
import { SseSplitter } from "../src/proxy/sse.ts";
import { redactTarget } from "../src/redact/http.ts";
import type { AppendFile } from "../src/runtime/types.ts";
import type { MicroCase } from "./digest.bench.ts";
import { sha256Floor } from "./lib.ts";

const GROUP = "proxy record, per exchange";
const enc = new TextEncoder();
const MAX_FRAME = 4 << 20;

// Fields as a client (Bun's fetch) and server-everything send them.
const requestFields: [string, string][] = [
  ["host", "127.0.0.1:3903"],
  ["connection", "keep-alive"],
  ["content-type", "application/json"],
  ["accept", "application/json, text/event-stream"],
  ["mcp-session-id", "6f1d0c6e-2b3a-4f5e-9a61-1d2c3b4a5e6f"],
  ["mcp-protocol-version", "2025-11-25"],
  ["user-agent", "Bun/1.4.5"],
  ["accept-encoding", "gzip, deflate, br, zstd"],
  ["content-length", "111"],
];
const answerFields: [string, string][] = [
  ["x-powered-by", "Express"],
  ["access-control-allow-origin", "*"],
  ["access-control-expose-headers", "mcp-session-id,last-event-id,mcp-protocol-version"],
  ["content-type", "text/event-stream"],
  ["cache-control", "no-cache"],
  ["mcp-session-id", "6f1d0c6e-2b3a-4f5e-9a61-1d2c3b4a5e6f"],
  ["date", "Thu, 03 Dec 2026 11:34:01 GMT"],
  ["connection", "keep-alive"],
  ["keep-alive", "timeout=5"],
  ["transfer-encoding", "chunked"],
];

/**
 * The cases, and `close` to remove the session's scratch directory. `burst`
 * exchanges a run, each with its own request id; `file` is the ledger, in
 * memory (bench/micro.bench.ts's), emptied at each run.
 */
export async function proxyRecordCases(
  burst: number,
  file: AppendFile & { reset(): void },
): Promise<{ cases: (MicroCase & { per: number })[]; close(): void }> {
  const dir = mkdtempSync(join(tmpdir(), "seam-micro-proxy-"));
  const redactHeaders = new Set<string>();
  const queued: (() => void)[] = [];
  const session = await ProxySession.open(
    {
      ledger: join(dir, "l.jsonl"),
      server: "127.0.0.1:3901",
      openAppend: async () => file,
      begin: {},
      runtime: "bench",
      raw: false,
      maxFrame: MAX_FRAME,
      writeAhead: false,
      failClosed: false,
      fsync: "never",
    },
    "initialize",
    sharedLock({ pid: process.pid }),
    createLog(() => {}),
    (f) => void queued.push(f),
    "6f1d0c6e-2b3a-4f5e-9a61-1d2c3b4a5e6f",
  );
  session.observer.fromClient(
    enc.encode(
      `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`,
    ),
  );
  session.observer.fromServer(
    enc.encode(
      `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bench","version":"1"}}}`,
    ),
  );
  const requests = Array.from({ length: burst }, (_, i) =>
    enc.encode(
      `{"jsonrpc":"2.0","id":${i + 1},"method":"tools/call","params":{"name":"echo","arguments":{"message":"bench ${i}"}}}`,
    ),
  );
  const answers = Array.from({ length: burst }, (_, i) =>
    enc.encode(
      `event: message\nid: ${i}\ndata: {"result":{"content":[{"type":"text","text":"Echo: bench ${i}"}]},"jsonrpc":"2.0","id":${i + 1}}\n\n`,
    ),
  );

  /** Exchange i, recorded as src/proxy/exchange.ts records it (chunks held until recorded). */
  function exchange(i: number): void {
    const t0 = performance.now();
    const req = { digest: new StreamDigest(true), bytes: 0 };
    const res = { digest: new StreamDigest(true), bytes: 0 };
    const frame = requests[i]!;
    req.digest.update(frame);
    req.bytes += frame.length;
    session.at(moment(), () => session.observer.fromClient(frame));
    const chunk = answers[i]!;
    const crossed = moment();
    res.bytes += chunk.length;
    res.digest.update(chunk);
    const events = new SseSplitter(MAX_FRAME, {
      frame: (view) => {
        const f = view.slice();
        session.at(crossed, () => session.observer.fromServer(f));
      },
      oversize() {},
    });
    events.push(chunk);
    events.end();
    const end = moment();
    const answerSum = headerSummary(answerFields, redactHeaders);
    const t = redactTarget("/mcp");
    const requestSum = headerSummary(requestFields, redactHeaders);
    session.at(end, () =>
      session.rows.row("http_exchange", {
        method: "POST",
        target: t.target,
        http_status: 200,
        ms: msFloat(end.perf - t0),
        request_content_type: requestSum.values.get("content-type"),
        mcp_protocol_version: requestSum.values.get("mcp-protocol-version"),
        request_headers: requestSum.names,
        withheld_headers: requestSum.withheld.length > 0 ? requestSum.withheld : undefined,
        response_content_type: answerSum.values.get("content-type"),
        sse_events: events.events,
        response_headers: answerSum.names,
        ...streamFields([
          ["request", req.bytes, req.digest.digest()],
          ["response", res.bytes, res.digest.digest()],
        ]),
      }),
    );
  }

  const writer = (session as unknown as { writer: { caughtUp(): Promise<void> } }).writer;
  const requestTexts = requests.map((b) => new TextDecoder().decode(b));
  const answerTexts = answers.map((b) => new TextDecoder().decode(b).split("data: ")[1]!);
  const rowText = JSON.stringify({
    evt: "http_exchange",
    seam: "mcp-http",
    session: "0b7c6a52-8f43-4c1e-9d1a-3f0f4b8e2a61",
    request_headers: requestFields.map(([k]) => k),
    response_headers: answerFields.map(([k]) => k),
    stream_digests: {
      request: `sha256:raw-bytes:v1:${"0".repeat(64)}`,
      response: `sha256:raw-bytes:v1:${"0".repeat(64)}`,
    },
  });
  return {
    cases: [
      {
        group: GROUP,
        name: "JSON.parse of both frames + two rows (floor)",
        per: burst,
        fn: () => {
          for (let i = 0; i < burst; i++) {
            JSON.parse(requestTexts[i]!);
            JSON.parse(answerTexts[i]!);
            sha256Floor(rowText);
            sha256Floor(rowText);
          }
        },
      },
      {
        group: GROUP,
        name: `ProxySession (burst of ${burst})`,
        per: burst,
        fn: async () => {
          file.reset();
          for (let i = 0; i < burst; i++) exchange(i);
          // The session stages its rows and writes them in a later batch, which queues the writer's own.
          while (queued.length > 0) for (const f of queued.splice(0)) f();
          await writer.caughtUp();
        },
      },
    ],
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}
