/**
 * The official TypeScript SDK's 2026-07-28-capable packages
 * (@modelcontextprotocol/client and @modelcontextprotocol/server 2.4.0; the
 * 1.x @modelcontextprotocol/sdk speaks 2025-11-25 at most) through `seam
 * wrap`: the same results as without seam, a multi round-trip call recorded
 * as one operation of two rounds, and the same server spoken to by a 1.x
 * client recorded exactly as legacy traffic.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { getField, type Json } from "../../src/core/json.ts";
import { ROOT, runCli, seamArgv, type Via } from "../helpers/cli.ts";
import { ledgerRows, tempDir } from "../helpers/proc.ts";
import { HAVE_PYTHON, reference } from "../helpers/verify-helpers.ts";

const SERVER = [process.execPath, `${ROOT}test/fixtures/sdk-modern-server.ts`];
const f = (r: Json, k: string) => getField(r, k);

async function modern(argv: string[]): Promise<unknown[]> {
  const transport = new StdioClientTransport({ command: argv[0]!, args: argv.slice(1), stderr: "ignore" });
  const client = new Client(
    { name: "seam-sdk-modern-test", version: "1.0.0" },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  client.setRequestHandler("elicitation/create", async () => ({ action: "accept", content: { go: true } }));
  await client.connect(transport);
  try {
    return [
      (await client.listTools()).tools.map((t) => t.name),
      await client.callTool({ name: "echo", arguments: { text: "héllo" } }),
      await client.callTool({ name: "confirm", arguments: { what: "the thing" } }),
    ];
  } finally {
    await client.close();
  }
}

async function legacy(argv: string[]): Promise<unknown[]> {
  const transport = new LegacyTransport({ command: argv[0]!, args: argv.slice(1), stderr: "ignore" });
  const client = new LegacyClient({ name: "seam-sdk-legacy-test", version: "1.0.0" });
  await client.connect(transport);
  try {
    return [await client.callTool({ name: "echo", arguments: { text: "old" } })];
  } finally {
    await client.close();
  }
}

const wrapped = (via: Via, ledger: string) => [...seamArgv(via), "wrap", "--ledger", ledger, "--", ...SERVER];
const shape = (rows: Json[]) =>
  rows.map((r) => [f(r, "evt"), f(r, "status") ?? "", f(r, "op") ?? "", f(r, "round") ?? ""].join(" ").trim());

describe.each(["bun", "node"] as Via[])("the 2026-07-28 SDK through seam via %s", (via) => {
  test("same results; the confirm call is one operation of two rounds; a 1.x client's session is legacy rows", async () => {
    const dir = tempDir();
    const ledger = join(dir, "l.jsonl");
    expect(await modern(wrapped(via, ledger))).toEqual(await modern(SERVER));
    expect(await legacy(wrapped(via, ledger))).toEqual(await legacy(SERVER));
    const rows = ledgerRows(ledger);
    const sessions = new Map<Json, Json[]>();
    for (const r of rows) sessions.set(f(r, "session")!, [...(sessions.get(f(r, "session")!) ?? []), r]);
    // The SDK probes with server/discover on a short-lived sibling process, then opens its session.
    const [probe, session, old] = [...sessions.values()];
    expect(shape(probe!)).toEqual(["session_begin", "mcp_client", "mcp_discover ok", "session_end"]);
    expect(f(probe![2]!, "server_info")).toEqual(
      new Map([
        ["name", "seam-sdk-modern"],
        ["version", "1.0.0"],
      ]),
    );
    const first = f(session!.find((r) => f(r, "status") === "input_required")!, "seq");
    expect(shape(session!)).toEqual([
      "session_begin",
      "mcp_client",
      "mcp_server",
      "tools_list ok",
      "tool_call ok",
      `tool_call input_required ${first} 1`,
      `tool_call ok ${first} 2`,
      `operation_end ok ${first}`,
      "session_end",
    ]);
    // This session has no discover of its own: the server's identity comes from its first answer's _meta.
    expect(f(session![2]!, "server_info")).toEqual(
      new Map([
        ["name", "seam-sdk-modern"],
        ["version", "1.0.0"],
      ]),
    );
    for (const r of session!.slice(3, 7)) expect(f(r, "protocol_version")).toBe("2026-07-28");
    expect(f(session!.at(-1)!, "operations")).toBe(1);
    expect(shape(old!)).toEqual(["session_begin", "mcp_initialize ok", "tool_call ok", "session_end"]);
    expect(old!.some((r) => f(r, "protocol_version") !== undefined && f(r, "evt") !== "mcp_initialize")).toBe(false);
    const r = await runCli(via, ["verify", "--json", ledger]);
    const report = JSON.parse(r.stdout.toString());
    expect({ ok: report.ok, findings: report.findings }).toEqual({ ok: true, findings: [] });
    if (HAVE_PYTHON) expect(reference([readFileSync(ledger)])[0]!.verdict).toBe("ok");
  }, 60_000);
});
