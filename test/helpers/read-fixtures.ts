/**
 * Ledgers for the `seam log` / `stats` / `check` tests, built with the core
 * API as `seam wrap` writes them, with fixed times (UTC 2026-11-30 03:24:07
 * on, 7 ms apart) so the outputs are literal goldens.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Json } from "../../src/core/json.ts";
import { LedgerBuilder, type Row, resetClock, seamRow } from "./verify-helpers.ts";

export const S1 = "3f2a9c1e-5b6d-4e7f-8a9b-0c1d2e3f4a5b";
export const S2 = "b7c8d9e0-1f2a-4b3c-9d4e-5f6a7b8c9d0e";
export const BIG_ID = 18446744073709551616n;

/** A session's rows: begin, then `rows`, then session_end (unless `end` is false). */
export function sessionOf(id: string, server: string, rows: [string, Row][], end = true): Row[] {
  let seq = 0;
  const out: Row[] = [seamRow("session_begin", id, ++seq, server, { pid: 4242, host: "builder" })];
  for (const [evt, f] of rows) out.push(seamRow(evt, id, ++seq, server, f));
  if (end) {
    const calls = rows.filter(([e]) => e === "tool_call").length;
    out.push(
      seamRow("session_end", id, ++seq, server, {
        reason: "client_eof",
        exit_code: 0,
        rows_before_end: seq - 1,
        calls,
        bytes: { c2s: 1200, s2c: 3400 },
      }),
    );
  }
  return out;
}

/** The main fixture: two complete sessions with every kind of operation; 20 lines. */
export function mainLedger(): LedgerBuilder {
  resetClock();
  const b = new LedgerBuilder();
  const one = sessionOf(S1, "files", [
    ["mcp_initialize", { rpc_id: 0, status: "ok", protocol_version: "2025-06-18", ms: 3.5 }],
    ["tools_list", { rpc_id: 1, status: "ok", tools: ["read_file", "write_file"], tool_count: 2, ms: 0.8 }],
    ["tool_call_intent", { tool: "read_file", rpc_id: 2 }],
    ["tool_call", { tool: "read_file", rpc_id: 2, status: "ok", ms: 12 }],
    ["tool_call", { tool: "write_file", rpc_id: 3, status: "error", error_code: -32602, ms: 40.25 }],
    ["resource_read", { uri: "file:///etc/hosts", rpc_id: 4, status: "ok", ms: 2 }],
    ["prompt_get", { prompt: "review", rpc_id: 5, status: "ok", ms: 1 }],
    ["server_request", { method: "sampling/createMessage", rpc_id: 0, status: "ok", ms: 250 }],
    ["tool_call", { tool: "read_file", rpc_id: BIG_ID, status: "ok", ms: 7 }],
    ["tool_call", { tool: "slow_scan", rpc_id: "a-7", status: "unanswered", reason: "client_eof", ms: 1500 }],
  ]);
  const two = sessionOf(S2, "git", [
    [
      "tool_call",
      {
        tool: "git_log",
        rpc_id: 1,
        status: "ok",
        ms: 30,
        args: { n: 3 },
        result: { content: [{ type: "text", text: "abc" }] },
      },
    ],
    ["tool_call", { tool: "git_push", rpc_id: 2, status: "cancelled", reason: "client", ms: 90 }],
    ["tool_call", { tool: "git_log", rpc_id: 3, status: "input_required", ms: 5 }],
  ]);
  for (const r of [...one, ...two]) b.add(r);
  return b;
}

export function writeLedger(dir: string, name: string, lines: readonly string[] | string): string {
  const p = join(dir, name);
  writeFileSync(p, typeof lines === "string" ? lines : lines.length === 0 ? "" : `${lines.join("\n")}\n`);
  return p;
}

export type { Json };
