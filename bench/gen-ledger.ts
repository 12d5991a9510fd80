/**
 * A big ledger shaped as `seam wrap` writes it, for the benchmarks that read
 * one (bench/verify.ts, bench/report.ts): UUID sessions of 400 tool calls
 * each, json-c14n digests, ms timings, chained as seam chains.
 */
import { randomUUID } from "node:crypto";
import { closeSync, openSync, writeSync } from "node:fs";
import { lineForm } from "../src/core/canonical.ts";
import { GENESIS, chainOf } from "../src/core/chain.ts";
import { digestJson } from "../src/core/digest.ts";
import type { Json } from "../src/core/json.ts";

/** Writes `n` rows of wrap-shaped sessions; returns the count of rows and seconds taken. */
export function generate(path: string, n: number): { rows: number; seconds: number } {
  const t0 = performance.now();
  const fd = openSync(path, "w");
  const enc = new TextEncoder();
  let prev = GENESIS;
  let rows = 0;
  let pending: string[] = [];
  let clock = Date.UTC(2026, 10, 30, 3, 0, 0);
  const digests = Array.from({ length: 64 }, (_, i) => digestJson({ text: `payload ${i}` }));
  const put = (row: { [k: string]: Json }) => {
    row.ts = new Date((clock += 3)).toISOString();
    const chain = chainOf(prev, row);
    row.chain = chain;
    prev = chain;
    pending.push(lineForm(row));
    rows++;
    if (pending.length >= 4096) {
      writeSync(fd, enc.encode(pending.join("\n") + "\n"));
      pending = [];
    }
  };
  const head = (evt: string, session: string, seq: number) => ({
    evt,
    seam: "mcp-stdio",
    seam_impl: "seam/0.1.0",
    session,
    seq,
    server: "server-everything",
  });
  for (let s = 0; rows < n; s++) {
    const session = randomUUID();
    let seq = 0;
    // 400 calls a session; the last one takes what is left, so the count is exact.
    const calls = Math.min(400, Math.max(0, n - rows - 3));
    put({
      ...head("session_begin", session, ++seq),
      command: ["npx", "-y", "@modelcontextprotocol/server-everything"],
      command_digest: digests[0]!,
      cwd: "/home/user/project",
      pid: 40000 + s,
      host: "bench",
      runtime: "bun 1.4.5",
      raw_payloads: false,
      max_frame: 67108864,
      fsync: "batch",
    });
    put({
      ...head("mcp_initialize", session, ++seq),
      status: "ok",
      client_info: { name: "claude-code", version: "2.1.0" },
      server_info: { name: "example-servers/everything", version: "1.0.0" },
      protocol_version: "2025-06-18",
      result_digest: digests[1]!,
      ms: 4.2,
    });
    let n2 = 0;
    for (let c = 0; c < calls; c++, n2++) {
      put({
        ...head("tool_call", session, ++seq),
        tool: c % 3 ? "echo" : "add",
        rpc_id: c + 2,
        args_digest: digests[c % 64]!,
        result_digest: digests[(c * 7) % 64]!,
        status: c % 50 ? "ok" : "error",
        ms: 1 + (c % 97) / 10,
      });
    }
    put({
      ...head("session_end", session, ++seq),
      reason: "client_eof",
      exit_code: 0,
      rows_before_end: seq - 1,
      calls: n2,
      bytes: { c2s: 12000 * n2, s2c: 34000 * n2 },
      stream_digests: {
        c2s: digests[2]!.replace("json-c14n", "raw-bytes"),
        s2c: digests[3]!.replace("json-c14n", "raw-bytes"),
      },
    });
  }
  if (pending.length > 0) writeSync(fd, enc.encode(pending.join("\n") + "\n"));
  closeSync(fd);
  return { rows, seconds: (performance.now() - t0) / 1000 };
}
