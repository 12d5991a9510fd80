/**
 * `seam demo`: the first thing a newcomer runs. It wraps the built-in example
 * server with a built-in scripted client (a few tool calls, one error, one
 * left unanswered), verifies the ledger, and says what happened.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { lineForm } from "../core/canonical/index.ts";
import { getField, type Json, parseJson } from "../core/json.ts";
import { exec } from "../runtime/exec.ts";
import { fileChunks, type VerifyReport } from "../verify/ledger-verifier.ts";
import { verifyLedger } from "../verify/verify-ledger.ts";
import { CHILD_DEADLINE_MS, clientWait } from "./fixture-runs.ts";

export interface DemoResult {
  /** The text to print on stdout. */
  text: string;
  ok: boolean;
}

const COLUMNS = "  seq  event             tool       status                        ms";

export async function runDemo(
  self: string[],
  ledger: string,
  isWriterAlive: (pid: number, host: string) => boolean,
): Promise<DemoResult> {
  const session = `demo-${randomUUID()}`;
  const server = [...self, "fixture", "server"];
  const r = await exec(
    [
      ...self,
      "fixture",
      "client",
      "--script",
      "demo",
      ...clientWait(),
      "--",
      ...self,
      "wrap",
      "--ledger",
      ledger,
      "--session",
      session,
      "--server",
      "example",
      "--",
      ...server,
    ],
    { timeoutMs: CHILD_DEADLINE_MS },
  );
  if (r.code !== 0) return { text: "", ok: false };
  const rows: Json[] = [];
  let fileRows = 0;
  for (const line of readFileSync(ledger, "utf8").split("\n")) {
    if (line.trim() === "") continue;
    fileRows++;
    try {
      const row = parseJson(line);
      if (getField(row, "session") === session) rows.push(row);
    } catch {}
  }
  const report = await verifyLedger(fileChunks(ledger), { isWriterAlive });
  const out: string[] = [];
  out.push("seam demo: the example server, wrapped by seam, driven by a scripted client", "", COLUMNS);
  for (const row of rows) out.push(describe(row));
  out.push("");
  out.push(
    `ledger  ${ledger}: ${rows.length} rows from this session${fileRows > rows.length ? `, ${fileRows} in the file` : ""}`,
  );
  out.push(`verify  ${verdictLine(report)}`);
  out.push("");
  out.push("next");
  const verifyCmd = `seam verify ${shellQuote(ledger)}`;
  const wrapCmd = "seam wrap --ledger seam.jsonl -- <your server command>";
  // Each command on a line of its own, what it does below it: the demo fits an 80-column terminal.
  out.push(`  ${verifyCmd}`, "      check it again (then edit any byte and check once more)");
  out.push(`  ${wrapCmd}`, "      record your own MCP server (in the command of your client's config)");
  return { text: `${out.join("\n")}\n`, ok: report.verdict === "ok" };
}

function describe(row: Json): string {
  const s = (k: string) => {
    const v = getField(row, k);
    return v === undefined ? "" : typeof v === "string" ? v : lineForm(v);
  };
  const evt = s("evt");
  let tail = "";
  if (evt === "session_end") {
    const unanswered = getField(row, "unanswered");
    tail = `${s("reason")}, ${s("calls")} calls${unanswered ? `, ${lineForm(unanswered)} unanswered` : ""}`;
  } else if (evt === "session_begin") {
    tail = s("runtime");
  } else {
    const ms = getField(row, "ms");
    const status = evt === "tool_call" && getField(row, "reason") ? `${s("status")} (${s("reason")})` : s("status");
    tail = `${s("tool").padEnd(10)} ${status.padEnd(24)}${ms === undefined ? "" : (typeof ms === "number" ? ms : Number(lineForm(ms))).toFixed(1).padStart(8)}`;
  }
  return `  ${s("seq").padStart(3)}  ${evt.padEnd(17)} ${tail}`.trimEnd();
}

function verdictLine(r: VerifyReport): string {
  if (r.verdict === "ok")
    return `ok: ${r.rows} rows, chain unbroken, ${r.sessions.length} session${r.sessions.length === 1 ? "" : "s"} complete`;
  if (r.first_break) return `${r.verdict}: ${r.first_break.message}`;
  return `${r.verdict}: ${r.findings[0] ?? r.notes[0] ?? ""}`;
}

function shellQuote(s: string): string {
  return /^[\w./@%+=:,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
