/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance, its
 * server scenarios) against server-everything in streamableHttp mode, once
 * directly and once through `seam proxy`: the verdicts must be the same, but
 * for the DNS-rebinding scenario, where the proxy's own loopback guard answers
 * the foreign Host with 403 and so passes where server-everything alone does
 * not. The suite runs offline; it needs Node 22's fs.globSync, so it runs
 * under Bun here.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { getField } from "../../src/core/json.ts";
import { built, ROOT, runCli, type Via } from "../helpers/cli.ts";
import { ledgerRows, tempDir } from "../helpers/proc.ts";
import { type Running, startEverything, startProxy } from "../helpers/proxy-helpers.ts";

const SUITE = `${ROOT}node_modules/@modelcontextprotocol/conformance/dist/index.js`;

let everything: Running;
beforeAll(async () => {
  everything = await startEverything();
});
afterAll(async () => {
  await everything?.stop("SIGKILL");
});

/** Runs the server scenarios against `url`; scenario name → "✓ N passed, M failed" (the suite's summary line). */
function runSuite(url: string): Promise<Map<string, string>> {
  return new Promise((resolve, reject) => {
    const out: Buffer[] = [];
    const child = spawn(process.execPath, [SUITE, "server", "--url", url, "-o", tempDir()], {
      cwd: tempDir(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.on("data", (d: Buffer) => out.push(d));
    child.stderr.on("data", (d: Buffer) => out.push(d));
    child.on("error", reject);
    child.on("close", () => {
      const text = Buffer.concat(out).toString("utf8");
      const summary = text.slice(text.indexOf("=== SUMMARY ==="));
      const verdicts = new Map<string, string>();
      for (const m of summary.matchAll(/^([✓✗]) (\S+): (\d+ passed, \d+ failed)$/gm))
        verdicts.set(m[2]!, `${m[1]} ${m[3]}`);
      resolve(verdicts);
    });
  });
}

let direct: Map<string, string>;

test.each((["bun", "node"] as Via[]).filter(built))(
  "conformance server scenarios: the same verdicts directly and through seam proxy (%s)",
  async (via) => {
    direct ??= await runSuite(everything.url);
    expect(direct.size).toBeGreaterThan(20);
    const ledger = join(tempDir(), "ledger.jsonl");
    const proxy = await startProxy(via, ["--upstream", everything.url, "--ledger", ledger]);
    let through: Map<string, string>;
    try {
      through = await runSuite(proxy.url);
    } finally {
      expect(await proxy.stop()).toBe(0);
    }
    const differ = [...direct.keys()].filter((k) => direct.get(k) !== through.get(k));
    expect(differ).toEqual(direct.get("dns-rebinding-protection")?.startsWith("✗") ? ["dns-rebinding-protection"] : []);
    expect(through.get("dns-rebinding-protection")).toStartWith("✓");
    expect([...through.keys()].sort()).toEqual([...direct.keys()].sort());

    // One complete ledger session per MCP session, each opened by its initialize.
    const v = await runCli("bun", ["verify", "--json", ledger]);
    expect(v.code).toBe(0);
    const report = JSON.parse(v.stdout.toString());
    expect(report.sessions.every((s: { complete: boolean }) => s.complete)).toBe(true);
    const rows = ledgerRows(ledger);
    const inits = rows.filter((r) => getField(r, "evt") === "mcp_initialize");
    expect(new Set(inits.map((r) => getField(r, "session"))).size).toBe(inits.length);
    expect(report.sessions.length).toBe(inits.length);
  },
  180_000,
);
