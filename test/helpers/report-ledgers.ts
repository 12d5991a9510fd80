/**
 * The ledgers the report tests open: seam's own (the demo, a --raw run of the
 * awkward script, a signed one), the demo with one row edited, and a hostile
 * one written here, chained as seam chains, full of strings that must be
 * shown and never run.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { lineForm } from "../../src/core/canonical/index.ts";
import { chainOf, GENESIS } from "../../src/core/chain.ts";
import type { Json } from "../../src/core/json.ts";
import { runCli, seamArgv } from "./cli.ts";
import { run } from "./proc.ts";

export const INJECT_IMG = "<img src=x onerror=alert(1)>";
export const INJECT_SCRIPT = "</script><script>alert('script')</script>";
export const ANSI = "\u001b[31mred\u001b[0m\u001b]0;title\u0007";
/** One mebibyte in one tool name. */
export const HUGE = "A".repeat(1 << 20);

/** `seam demo --ledger DIR/demo.jsonl`. */
export async function demoLedger(dir: string): Promise<string> {
  const path = join(dir, "demo.jsonl");
  const r = await runCli("bun", ["demo", "--ledger", path]);
  if (r.code !== 0) throw new Error(`seam demo failed: ${r.stderr}`);
  return path;
}

/** The demo ledger with the tool name of line `line` changed: `seam verify` breaks at that line. */
export function editedLedger(demo: string, dir: string, line = 5): string {
  const lines = readFileSync(demo, "utf8").split("\n");
  const before = lines[line - 1]!;
  lines[line - 1] = before.replace('"tool": "echo"', '"tool": "ecHo"');
  if (lines[line - 1] === before) throw new Error(`line ${line} has no echo tool to edit`);
  const path = join(dir, "edited.jsonl");
  writeFileSync(path, lines.join("\n"));
  return path;
}

/** `seam fixture client --script SCRIPT -- seam wrap WRAP… --ledger DIR/NAME --server example -- seam fixture server`. */
async function wrapped(dir: string, name: string, script: string, wrap: string[]): Promise<string> {
  const path = join(dir, name);
  const self = seamArgv("bun");
  const fixture = ["fixture", "client", "--script", script, "--"];
  const r = await run([
    ...[...self, ...fixture, ...self, "wrap", ...wrap, "--ledger", path, "--server", "example", "--"],
    ...[...self, "fixture", "server"],
  ]);
  if (r.code !== 0) throw new Error(`the ${script} run for ${name} failed: ${r.stderr}`);
  return path;
}

/** The fixture client's `awkward` script through `seam wrap --raw`: arguments and results in the rows, a 2^64 id. */
export function rawLedger(dir: string): Promise<string> {
  return wrapped(dir, "raw.jsonl", "awkward", ["--raw", "--session", "raw-session"]);
}

/**
 * The fixture client's `modern` script (MCP 2026-07-28) through `seam wrap --write-ahead`: operations of several
 * rows each (a write-ahead intent, input_required rounds and their retries, task polls, an operation_end).
 */
export function modernLedger(dir: string): Promise<string> {
  return wrapped(dir, "modern.jsonl", "modern", ["--write-ahead"]);
}

/** A signed ledger (checkpoints every 3 rows) and the verifier key that checks it. */
export async function signedLedger(dir: string): Promise<{ path: string; vkey: string }> {
  const keyFile = join(dir, "seam.key");
  const k = await runCli("bun", ["keygen", "--name", "report.test", "--out", keyFile]);
  if (k.code !== 0) throw new Error(`keygen failed: ${k.stderr}`);
  const vkey = k.stdout.toString("utf8").trim().split("\n").pop()!.trim();
  const path = await wrapped(dir, "signed.jsonl", "demo", ["--sign", keyFile, "--checkpoint-every", "3"]);
  return { path, vkey };
}

/** Rows chained exactly as seam chains them, from plain objects. */
export function writeChained(path: string, rows: { [k: string]: Json }[]): void {
  let prev = GENESIS;
  const out: string[] = [];
  for (const row of rows) {
    const chain = chainOf(prev, row);
    out.push(lineForm({ ...row, chain }));
    prev = chain;
  }
  writeFileSync(path, `${out.join("\n")}\n`);
}

/** A well-chained, complete session whose every string field tries something. */
export function hostileLedger(dir: string): string {
  const path = join(dir, "hostile.jsonl");
  const session = `s-${INJECT_IMG}`;
  const server = `srv ${ANSI} ${INJECT_SCRIPT}`;
  let seq = 0;
  let t = Date.UTC(2026, 10, 30, 12, 0, 0);
  const head = (evt: string) => ({
    evt,
    seam: "mcp-stdio",
    seam_impl: "seam/0.1.0",
    session,
    seq: ++seq,
    server,
  });
  const ts = () => new Date((t += 5)).toISOString();
  const call = (tool: string, rpc: number, status: string, extra: { [k: string]: Json } = {}) => ({
    ...head("tool_call"),
    tool,
    rpc_id: rpc,
    args_digest: `sha256:json-c14n:v1:${"ab".repeat(32)}`,
    status,
    ms: 1.5,
    ...extra,
    ts: ts(),
  });
  const rows: { [k: string]: Json }[] = [
    { ...head("session_begin"), command: [INJECT_SCRIPT], pid: 1, host: INJECT_IMG, ts: ts() },
    call(INJECT_IMG, 1, "ok"),
    call(INJECT_SCRIPT, 2, `error ${INJECT_IMG}`),
    call(`ansi ${ANSI}`, 3, "ok", { "<b onmouseover=alert(2)>": "key as markup" }),
    call(HUGE, 4, "ok", { note: HUGE }),
    call("javascript:alert(3)", `${INJECT_IMG}` as unknown as number, "ok"),
  ];
  const calls = rows.length - 1;
  rows.push({ ...head("session_end"), reason: "client_eof", exit_code: 0, rows_before_end: seq - 1, calls, ts: ts() });
  writeChained(path, rows);
  return path;
}

/** One complete session of `calls` tool calls (several of the page's chunks), call i taking i % 1000 ms. */
export function longLedger(dir: string, calls: number): string {
  const path = join(dir, "long.jsonl");
  const session = "long-session";
  let t = Date.UTC(2026, 10, 30, 9, 0, 0);
  let seq = 0;
  const head = (evt: string) => ({
    evt,
    seam: "mcp-stdio",
    seam_impl: "seam/0.1.0",
    session,
    seq: ++seq,
    server: "long",
  });
  const rows: { [k: string]: Json }[] = [
    { ...head("session_begin"), pid: 1, host: "h", ts: new Date(t).toISOString() },
  ];
  for (let i = 0; i < calls; i++) {
    rows.push({
      ...head("tool_call"),
      tool: i % 2 ? "odd" : "even",
      rpc_id: i + 1,
      status: "ok",
      ms: i % 1000,
      ts: new Date((t += 10)).toISOString(),
    });
  }
  rows.push({
    ...head("session_end"),
    reason: "client_eof",
    exit_code: 0,
    rows_before_end: calls + 1,
    calls,
    ts: new Date(t + 10).toISOString(),
  });
  writeChained(path, rows);
  return path;
}
