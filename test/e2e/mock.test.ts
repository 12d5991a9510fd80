/**
 * seam mock with real parts: the official SDK client records
 * server-everything over stdio through `seam wrap --payloads`, then gets
 * the same answers from `seam mock` with no server at all; a request never
 * recorded gets an error naming it; the MCP inspector's CLI lists and calls
 * its tools; a changed ledger or payload is refused. Under each build.
 *
 * What varies between two live runs of server-everything: the dynamic text
 * resource (it carries the time it was read). The mock serves what was
 * recorded, so it is compared with the recorded run; the deterministic
 * answers are also compared with a fresh direct run of the server.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { getField } from "../../src/core/json.ts";
import { built, ROOT, runCli, seamArgv, VIAS } from "../helpers/cli.ts";
import { ledgerRows, tempDir } from "../helpers/proc.ts";

const EVERYTHING = ["node", `${ROOT}node_modules/@modelcontextprotocol/server-everything/dist/index.js`, "stdio"];
/** The MCP inspector's command-line client (its own JSON on stdout); it finds its package.json from its build folder. */
const INSPECTOR_BUILD = `${ROOT}node_modules/@modelcontextprotocol/inspector-cli/build`;

/** What the inspector CLI prints for one request to the server `command` starts. */
async function inspect(command: string[], request: string[]): Promise<unknown> {
  const argv = ["node", `${INSPECTOR_BUILD}/index.js`, command[0]!, ...request, "--", ...command.slice(1)];
  const p = Bun.spawn(argv, { cwd: INSPECTOR_BUILD, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`inspector exited ${code}: ${err}`);
  return JSON.parse(out);
}

/** What the client asks, by name; `varies`: its answer is not the same from one live run to the next. */
const ASKED: { name: string; varies?: true; ask: (c: Client) => Promise<unknown> }[] = [
  { name: "tools/list", ask: (c) => c.listTools() },
  { name: "echo", ask: (c) => c.callTool({ name: "echo", arguments: { message: "héllo 🔒" } }) },
  { name: "get-sum", ask: (c) => c.callTool({ name: "get-sum", arguments: { a: 2, b: 40 } }) },
  { name: "get-sum again", ask: (c) => c.callTool({ name: "get-sum", arguments: { b: 40, a: 2 } }) },
  { name: "get-tiny-image", ask: (c) => c.callTool({ name: "get-tiny-image", arguments: {} }) },
  {
    name: "get-structured-content",
    ask: (c) => c.callTool({ name: "get-structured-content", arguments: { location: "Chicago" } }),
  },
  { name: "simple-prompt", ask: (c) => c.getPrompt({ name: "simple-prompt" }) },
  { name: "args-prompt", ask: (c) => c.getPrompt({ name: "args-prompt", arguments: { city: "Oslo" } }) },
  { name: "dynamic resource", varies: true, ask: (c) => c.readResource({ uri: "demo://resource/dynamic/text/1" }) },
];

async function session(command: string[]): Promise<{ answers: unknown[]; server: unknown; client: Client }> {
  const c = new Client({ name: "seam-mock-test", version: "1.0.0" });
  await c.connect(new StdioClientTransport({ command: command[0]!, args: command.slice(1), stderr: "ignore" }));
  const answers: unknown[] = [];
  for (const a of ASKED) answers.push(await a.ask(c));
  return { answers, server: c.getServerVersion(), client: c };
}

/** The message of the error a request got (it must get one). */
async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error("the request was answered");
}

describe.each(VIAS.filter(built))("seam mock via %s", (via) => {
  test("serves the recorded answers; an unrecorded request gets an error; a changed ledger is refused", async () => {
    const dir = tempDir();
    const ledger = join(dir, "l.jsonl");
    const store = join(dir, "store");
    const seam = seamArgv(via);
    const live = await session([...seam, "wrap", "--ledger", ledger, "--payloads", store, "--", ...EVERYTHING]);
    await live.client.close();
    expect(ledgerRows(ledger).some((r) => getField(r, "evt") === "tools_list")).toBe(true);

    const mock = await session([...seam, "mock", ledger, "--payloads", store]);
    try {
      expect(mock.server).toEqual(live.server);
      expect(mock.answers).toEqual(live.answers);
      // Never recorded: these arguments, this tool, this method.
      expect(await refusal(mock.client.callTool({ name: "echo", arguments: { message: "other" } }))).toBe(
        'MCP error -32602: seam mock: tools/call "echo" was never recorded with these params',
      );
      expect(await refusal(mock.client.callTool({ name: "get-env", arguments: {} }))).toBe(
        'MCP error -32602: seam mock: tools/call "get-env" was never recorded with these params',
      );
      expect(await refusal(mock.client.listResources())).toBe(
        "MCP error -32601: seam mock: resources/list was never recorded",
      );
      // The mock answers as often as asked (the last recorded answer again).
      expect(await ASKED[2]!.ask(mock.client)).toEqual(live.answers[2]);
    } finally {
      await mock.client.close();
    }
    // The MCP inspector's CLI lists the mock's tools and calls one, as it would the server.
    const mockCommand = [...seam, "mock", ledger, "--payloads", store];
    expect(await inspect(mockCommand, ["--method", "tools/list"])).toEqual(live.answers[0]);
    expect(
      await inspect(mockCommand, ["--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=héllo 🔒"]),
    ).toEqual(live.answers[1]);

    // The deterministic answers are those of a fresh run of the server itself.
    const direct = await session(EVERYTHING);
    await direct.client.close();
    ASKED.forEach((a, i) => {
      if (!a.varies)
        expect({ name: a.name, answer: mock.answers[i] }).toEqual({ name: a.name, answer: direct.answers[i] });
    });

    // A changed payload, then a changed row: refused before serving, exit 1.
    const echo = ledgerRows(ledger).find((r) => getField(r, "tool") === "echo")!;
    const digest = getField(echo, "result_digest") as string;
    const file = join(store, "sha256", digest.slice("sha256:json-c14n:v1:".length));
    expect(existsSync(file)).toBe(true);
    const kept = readFileSync(file);
    writeFileSync(file, Buffer.from(kept.toString("utf8").replace("héllo", "hello")));
    let r = await runCli(via, ["mock", ledger, "--payloads", store]);
    expect([r.code, r.stdout.length]).toEqual([1, 0]);
    expect(r.stderr).toContain(`seam: error: the payload of ${digest} does not give its digest`);
    expect(r.stderr).toContain("seam: hint: run 'seam verify");
    writeFileSync(file, kept);

    const text = readFileSync(ledger, "utf8");
    writeFileSync(ledger, text.replace(`"tool": "echo"`, `"tool": "ech0"`));
    r = await runCli(via, ["mock", ledger, "--payloads", store]);
    expect([r.code, r.stdout.length]).toEqual([1, 0]);
    expect(r.stderr).toMatch(/^seam: error: .*l\.jsonl does not verify: broken \(.*\); not serving it\n/);
    expect(r.stderr).toContain("seam: hint: run 'seam verify");
  }, 90_000);
});
