/**
 * Shared by the verify tests: ledgers built with the core API (chainOf +
 * lineForm, as `seam wrap` writes them) and the independent Python reference
 * verifier (test/helpers/reference_verify.py).
 */
import { expect } from "bun:test";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { lineForm } from "../../src/core/canonical/index.ts";
import { chainOf, GENESIS } from "../../src/core/chain.ts";
import { digestBytes, digestJson } from "../../src/core/digest.ts";
import type { Json } from "../../src/core/json.ts";

export type Row = { [k: string]: Json };
export const enc = (s: string) => new TextEncoder().encode(s);

/** Appends rows chained the way the ledger writer does; `raw` lines go in untouched and do not move the chain. */
export class LedgerBuilder {
  lines: string[] = [];
  prev: string = GENESIS;

  /** Appends `row` with its chain; returns the chain. */
  add(row: Row): string {
    const chain = chainOf(this.prev, row);
    this.lines.push(lineForm({ ...row, chain }));
    this.prev = chain;
    return chain;
  }
  raw(line: string): this {
    this.lines.push(line);
    return this;
  }
  text(): string {
    return this.lines.length === 0 ? "" : `${this.lines.join("\n")}\n`;
  }
  bytes(): Uint8Array {
    return enc(this.text());
  }
}

let clock = Date.UTC(2026, 10, 30, 3, 24, 7, 0);
const ts = () => new Date((clock += 7)).toISOString();
export function resetClock(): void {
  clock = Date.UTC(2026, 10, 30, 3, 24, 7, 0);
}

/** Gives rows put together out of the order they were made their times in file order (as a writer dates them). */
export function inTimeOrder(rows: Row[]): Row[] {
  const times = rows
    .map((r) => r.ts)
    .filter((t): t is string => typeof t === "string")
    .sort();
  let i = 0;
  for (const r of rows) if (typeof r.ts === "string") r.ts = times[i++]!;
  return rows;
}

/** A row in the writer's key order: evt, seam, seam_impl, session, seq, server, fields…, ts. */
export function seamRow(evt: string, session: string, seq: number | undefined, server: string, fields: Row = {}): Row {
  const row: Row = { evt, seam: "mcp-stdio", seam_impl: "seam/0.1.0", session };
  if (seq !== undefined) row.seq = seq;
  row.server = server;
  Object.assign(row, fields);
  row.ts = ts();
  return row;
}

export interface SessionPlan {
  id: string;
  server?: string;
  /** Tool calls, each `[tool, rpc_id, status]`. */
  calls?: [string, Json, string][];
  /** Write a tool_call_intent before each call. */
  writeAhead?: boolean;
  pid?: number;
  host?: string;
  /** The writer's start time (`pid_start`); left out when undefined. */
  start?: number;
  /** Leave out session_end (default: written). */
  noEnd?: boolean;
}

/** The rows one `seam wrap` session writes, in order, without chains. */
export function sessionRows(p: SessionPlan): Row[] {
  const server = p.server ?? "echo";
  const rows: Row[] = [];
  let seq = 0;
  rows.push(
    seamRow("session_begin", p.id, ++seq, server, {
      command: ["python", "-m", "echo"],
      command_digest: digestJson(["python", "-m", "echo"]),
      cwd: "/home/u",
      pid: p.pid ?? 4242,
      ...(p.start !== undefined ? { pid_start: p.start } : {}),
      host: p.host ?? "builder",
      runtime: "bun 1.4.5",
      raw_payloads: false,
      max_frame: 67108864,
      fsync: "batch",
    }),
  );
  rows.push(
    seamRow("mcp_initialize", p.id, ++seq, server, {
      status: "ok",
      client_info: { name: "client", version: "1.0" },
      server_info: { name: server, version: "0.3" },
      protocol_version: "2025-06-18",
      result_digest: digestJson({ ok: true }),
      ms: 3,
    }),
  );
  const calls = p.calls ?? [];
  for (const [tool, id, status] of calls) {
    const args_digest = digestJson({ text: `hi ${String(id)}` });
    if (p.writeAhead) rows.push(seamRow("tool_call_intent", p.id, ++seq, server, { tool, rpc_id: id, args_digest }));
    rows.push(
      seamRow("tool_call", p.id, ++seq, server, {
        tool,
        rpc_id: id,
        args_digest,
        result_digest: digestJson({ content: [{ type: "text", text: "hi" }] }),
        status,
        ms: 12,
      }),
    );
  }
  if (!p.noEnd) {
    rows.push(
      seamRow("session_end", p.id, ++seq, server, {
        reason: "client_eof",
        exit_code: 0,
        rows_before_end: seq - 1,
        calls: calls.length,
        bytes: { c2s: 1200, s2c: 3400 },
        stream_digests: { c2s: digestBytes(enc("c2s")), s2c: digestBytes(enc("s2c")) },
      }),
    );
  }
  return rows;
}

export interface RefVerdict {
  verdict: "ok" | "broken" | "inconclusive";
  rows: number;
  chained: number;
  prechain: number;
  first_break: string | null;
  first_break_line: number | null;
  breaks: number;
  head: string | null;
}

const REFERENCE = new URL("./reference_verify.py", import.meta.url).pathname;
export const HAVE_PYTHON = spawnSync("python3", ["--version"]).status === 0;
if (!HAVE_PYTHON) {
  console.error("\n!!! python3 not found: the cross-checks against test/helpers/reference_verify.py are SKIPPED !!!\n");
}

/** Runs the Python reference verifier over each ledger (one process for all). */
export function reference(ledgers: readonly Uint8Array[], strict = false): RefVerdict[] {
  const input = `${ledgers.map((l) => Buffer.from(l).toString("base64")).join("\n")}\n`;
  const r = spawnSync("python3", [REFERENCE, ...(strict ? ["--strict"] : []), "--b64-lines"], {
    input,
    maxBuffer: 1 << 30,
  });
  if (r.status !== 0) throw new Error(`reference verifier failed: ${r.stderr.toString()}`);
  const out = r.stdout.toString().trimEnd().split("\n");
  if (out.length !== ledgers.length)
    throw new Error(`reference gave ${out.length} verdicts for ${ledgers.length} ledgers`);
  return out.map((l) => JSON.parse(l) as RefVerdict);
}

/**
 * The reference verifier reads the ledger at `path` as `seam verify` did:
 * ok, with as many rows and the same head (`report` is verify's --json).
 * Skipped without python3.
 */
export function expectReferenceOk(path: string, report: { rows: number; head: string | null }): void {
  if (!HAVE_PYTHON) return;
  const [ref] = reference([readFileSync(path)]);
  expect({ verdict: ref!.verdict, rows: ref!.rows, head: ref!.head }).toEqual({
    verdict: "ok",
    rows: report.rows,
    head: report.head,
  });
}
