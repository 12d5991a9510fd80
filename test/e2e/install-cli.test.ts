/**
 * seam install / status / uninstall as a user runs them, from each build:
 * every client's file set up in one command, each wrapped entry launched as
 * the client would launch it and driven by a real MCP SDK client against the
 * built-in fixture server (a ledger row appears), status reading it back, and
 * uninstall giving back every file byte for byte.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { getField } from "../../src/core/json.ts";
import { launchOf } from "../../src/install/entry.ts";
import { built, lastingCheckout, ROOT, runCli, seamArgv, VIAS, type Via } from "../helpers/cli.ts";
import { CASES, type Case, layOut, serversOf } from "../helpers/install-fixtures.ts";
import { ledgerRows, run, tempDir } from "../helpers/proc.ts";

/** The fixture entry of a client's file, as the client starts it. */
function fixtureEntry(c: Case, text: string): { command: string; args: string[]; env?: Record<string, string> } {
  const { value, shape } = serversOf(c, text).get("fixture")!;
  const env = (value.env ?? value.envs ?? value.environment) as Record<string, string> | undefined;
  return { ...(launchOf(value, shape) as { command: string; args: string[] }), env };
}

/** What the entry's command and first args must be: the seam that ran install. */
function seamPrefix(via: Via): { command: RegExp; args: string[] } {
  switch (via) {
    case "bun":
      return { command: /^\/.*bun[^/]*$/, args: ["--no-env-file", `${ROOT}commands/seam.ts`] };
    case "node":
      return { command: /^\/.*node[^/]*$/, args: [`${ROOT}dist/seam.mjs`] };
    case "exe":
      return { command: new RegExp(`^${ROOT}dist/seam$`), args: [] };
  }
}

/** Starts the entry as a client would and calls one tool through the official SDK. */
async function drive(entry: { command: string; args: string[]; env?: Record<string, string> }): Promise<unknown> {
  const transport = new StdioClientTransport({
    command: entry.command,
    args: entry.args,
    env: entry.env,
    stderr: "ignore",
  });
  const client = new Client({ name: "seam-install-test", version: "1.0.0" });
  // The fixture server writes a malformed line on purpose; the SDK reports it here and goes on.
  client.onerror = () => {};
  await client.connect(transport);
  try {
    return await client.callTool({ name: "echo", arguments: { message: "héllo" } });
  } finally {
    await client.close();
  }
}

describe.each(VIAS)("seam install via %s", (via) => {
  test.skipIf(!built(via))(
    "install --all; each wrapped fixture server answers a real MCP client and leaves rows; status reads them; uninstall gives back every byte",
    async () => {
      const home = tempDir();
      const files = layOut(home);
      const r = await runCli(via, ["install", "--all", "--config-root", home]);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      const out = r.stdout.toString();
      for (const c of CASES) expect(out).toContain(`(user): ${files.get(c.client)!.path}: changed\n`);
      expect(out).toContain("  remote-notes: not recorded: remote server\n");

      const want = seamPrefix(via);
      for (const c of CASES) {
        const ledger = join(home, ".local/share/seam", `${c.client}.jsonl`);
        const entry = fixtureEntry(c, readFileSync(files.get(c.client)!.path, "utf8"));
        expect(entry.command).toMatch(want.command);
        expect(entry.args.slice(0, want.args.length + 6)).toEqual([
          ...want.args,
          "wrap",
          "--ledger",
          ledger,
          "--server",
          "fixture",
          "--",
        ]);
        const result = await drive(entry);
        expect(JSON.stringify(result)).toContain("echo");
        const calls = ledgerRows(ledger).filter((row) => getField(row, "evt") === "tool_call");
        expect(calls.map((row) => [getField(row, "server"), getField(row, "tool"), getField(row, "status")])).toEqual([
          ["fixture", "echo", "ok"],
        ]);
      }
      expect(readdirSync(dirname(join(home, ".local/share/seam/x"))).sort()).toEqual(
        CASES.map((c) => `${c.client}.jsonl`).sort(),
      );

      const st = await runCli(via, ["status", "--json", "--config-root", home]);
      expect(st.code).toBe(0);
      const report = JSON.parse(st.stdout.toString()) as Array<{
        client: string;
        file: string;
        servers: Array<{ name: string; state: string; ledger?: { verdict: string }; last_session?: { calls: number } }>;
      }>;
      expect(report.map((f) => f.client)).toEqual(CASES.map((c) => c.client));
      for (const f of report) {
        const fixture = f.servers.find((s) => s.name === "fixture")!;
        expect([fixture.state, fixture.ledger?.verdict, fixture.last_session?.calls]).toEqual(["recorded", "ok", 1]);
      }
      const human = await runCli(via, ["status", "--client", "windsurf", "--config-root", home]);
      expect(human.stdout.toString()).toMatch(
        new RegExp(
          `^Windsurf \\(user\\): ${files.get("windsurf")!.path}\n  fixture: recorded into ${join(home, ".local/share/seam/windsurf.jsonl")} \\(verify: ok\\); last session \\d{4}-\\d\\d-\\d\\dT[0-9:.]+Z, 1 call\n  zapier: not recorded: remote server\n  git: recorded into .* \\(verify: ok\\); no session yet\n$`,
        ),
      );

      // A ledger changed after the fact: status says its last session is not vouched for.
      const wl = join(home, ".local/share/seam/windsurf.jsonl");
      writeFileSync(wl, readFileSync(wl, "utf8").replace('"tool": "echo"', '"tool": "ecHo"'));
      const tampered = await runCli(via, ["status", "--client", "windsurf", "--config-root", home]);
      expect(tampered.stdout.toString()).toContain(`  fixture: recorded into ${wl} (verify: broken); last session `);

      const u = await runCli(via, ["uninstall", "--config-root", home]);
      expect(u.code).toBe(0);
      for (const c of CASES) expect(readFileSync(files.get(c.client)!.path, "utf8")).toBe(files.get(c.client)!.text);
    },
    180_000,
  );

  test.skipIf(!built(via))(
    "a file that does not parse: left as it is, the error names it and the position, exit 1",
    async () => {
      const home = tempDir();
      const { path } = layOut(home, [CASES.find((c) => c.client === "gemini")!]).get("gemini")!;
      const bad = '{\n  "mcpServers": {\n    "a": { "command": "x", }\n    "b": {}\n  }\n}\n';
      writeFileSync(path, bad);
      const r = await runCli(via, ["install", "--client", "gemini", "--config-root", home]);
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(`seam: error: ${path}: line 4, column 5: comma expected\n`);
      expect(readFileSync(path, "utf8")).toBe(bad);
      expect(readdirSync(dirname(path))).toEqual(["settings.json"]);
    },
  );

  test.skipIf(!built(via))(
    "a read-only file: refused with a hint, exit 1; a --server that names nothing: a warning",
    async () => {
      const home = tempDir();
      const { path, text } = layOut(home, [CASES.find((c) => c.client === "cursor")!]).get("cursor")!;
      chmodSync(path, 0o444);
      const r = await runCli(via, ["install", "--client", "cursor", "--config-root", home]);
      expect([r.code, r.stderr]).toEqual([
        1,
        `seam: error: ${path} is read-only; seam left it as it is\nseam: hint: make it writable (chmod u+w) and run again\n`,
      ]);
      expect(readFileSync(path, "utf8")).toBe(text);
      chmodSync(path, 0o600);
      const n = await runCli(via, ["install", "--client", "cursor", "--server", "nosuch", "--config-root", home]);
      expect([n.code, n.stderr]).toEqual([0, 'seam: warning: no server named "nosuch" in the files found\n']);
      expect(readFileSync(path, "utf8")).toBe(text);
    },
  );

  test.skipIf(!built(via))(
    "a read-only file among others: each file's lines in order, the read-only one only its error, never 'recorded'",
    async () => {
      const home = tempDir();
      const picked = ["windsurf", "cursor", "gemini"].map((n) => CASES.find((c) => c.client === n)!);
      const files = layOut(home, picked);
      const cursor = files.get("cursor")!;
      chmodSync(cursor.path, 0o444);
      // One stream, as a terminal shows both.
      const argv = [...seamArgv(via), "install", "--client", "windsurf,cursor,gemini", "--config-root", home];
      const r = await run(["sh", "-c", '"$@" 2>&1', "sh", ...argv], { env: { ...process.env, ...lastingCheckout() } });
      expect(r.code).toBe(1);
      const lines = r.stdout.toString().split("\n");
      const error = lines.indexOf(`seam: error: ${cursor.path} is read-only; seam left it as it is`);
      expect(lines[0]).toBe(`Windsurf (user): ${files.get("windsurf")!.path}: changed`);
      expect(error).toBeGreaterThan(0);
      expect(lines[error + 1]).toBe("seam: hint: make it writable (chmod u+w) and run again");
      expect(lines[error + 2]).toBe(`Gemini CLI (user): ${files.get("gemini")!.path}: changed`);
      expect(lines.filter((l) => l.startsWith("seam: error: ")).length).toBe(1);
      expect(lines.filter((l) => l.startsWith("Cursor "))).toEqual([]);
      // Only the two files written say recorded: the windsurf lines before the error, gemini's after it.
      const recorded = (ls: string[]) => ls.filter((l) => /^ {2}\S+: recorded/.test(l)).length;
      expect([recorded(lines.slice(0, error)), recorded(lines.slice(error))]).toEqual([
        picked[0]!.wraps.length,
        picked[2]!.wraps.length,
      ]);
      expect(readFileSync(cursor.path, "utf8")).toBe(cursor.text);
    },
  );

  test.skipIf(!built(via))("--dry-run: the unified diff on stdout, a summary on stderr, nothing written", async () => {
    const home = tempDir();
    const { path, text } = layOut(home, [CASES.find((c) => c.client === "codex")!]).get("codex")!;
    const r = await runCli(via, ["install", "--client", "codex", "--dry-run", "--config-root", home]);
    expect(r.code).toBe(0);
    const diff = r.stdout.toString();
    expect(diff.startsWith(`Index: ${path}\n===`)).toBe(true);
    expect(diff).toContain('-command = "npx"\n');
    expect(diff).toContain("# seam's own fixture server\n");
    expect(r.stderr).toContain(`Codex (user): ${path}: would change (nothing written)\n  fixture: would be recorded`);
    expect(r.stderr).toContain("  figma: not recorded: remote server\n");
    expect(readFileSync(path, "utf8")).toBe(text);
    expect(readdirSync(dirname(path))).toEqual(["config.toml"]);
  });

  test.skipIf(!built(via) || !existsSync("/usr/bin/script"))(
    "on a terminal: the diff is shown and nothing is written unless the answer is yes",
    async () => {
      const home = tempDir();
      const { path, text } = layOut(home, [CASES.find((c) => c.client === "windsurf")!]).get("windsurf")!;
      // util-linux `script` gives seam a terminal for stdin and stderr.
      const line = [...seamArgv(via), "install", "--client", "windsurf", "--config-root", home]
        .map((a) => `'${a}'`)
        .join(" ");
      const env = { ...process.env, ...lastingCheckout() };
      const no = await run(["script", "-qec", line, "/dev/null"], { input: "n\n", env });
      expect(no.stdout.toString()).toContain("write these changes? [y/N]");
      expect(no.stdout.toString()).toContain("seam: info: nothing written");
      expect(readFileSync(path, "utf8")).toBe(text);
      const yes = await run(["script", "-qec", line, "/dev/null"], { input: "y\n", env });
      expect(yes.stdout.toString()).toContain(`Windsurf (user): ${path}: changed`);
      expect(readFileSync(path, "utf8")).not.toBe(text);
    },
  );

  test.skipIf(!built(via))("usage errors: no client named, an unknown client, a bad --scope", async () => {
    const none = await runCli(via, ["install"]);
    expect([none.code, none.stderr]).toEqual([
      2,
      "seam: error: name the clients to set up\nseam: hint: seam install --client claude-code, or --all for every client found\n",
    ]);
    const unknown = await runCli(via, ["install", "--client", "emacs"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toStartWith(
      'seam: error: unknown client "emacs"\nseam: hint: clients: claude-desktop, claude-code,',
    );
    const scope = await runCli(via, ["uninstall", "--scope", "global"]);
    expect([scope.code, scope.stderr]).toEqual([
      2,
      "seam: error: --scope takes user or project, not \"global\"\nseam: hint: run 'seam uninstall --help' for usage\n",
    ]);
  });
});
