/**
 * seam replay with real parts: the official SDK client records
 * server-everything over stdio through `seam wrap --payloads`; the requests
 * are then replayed to a fresh server-everything and compared. Its get-env
 * tool answers with the environment, so a replay under another environment
 * differs there and only there. Its trigger-sampling-request tool asks the
 * client to sample and answers with what it got: the replay answers from
 * the recording. Under each build.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CreateMessageRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { digestJson } from "../../src/core/digest.ts";
import { getField } from "../../src/core/json.ts";
import { built, ROOT, runCli, seamArgv, VIAS } from "../helpers/cli.ts";
import { ledgerRows, tempDir } from "../helpers/proc.ts";

const EVERYTHING = ["node", `${ROOT}node_modules/@modelcontextprotocol/server-everything/dist/index.js`, "stdio"];

describe.each(VIAS.filter(built))("seam replay via %s", (via) => {
  test("same, different, missing and no payload; --ignore; a changed ledger is refused", async () => {
    const dir = tempDir();
    const ledger = join(dir, "l.jsonl");
    const store = join(dir, "store");
    const argv = [...seamArgv(via), "wrap", "--ledger", ledger, "--payloads", store, "--", ...EVERYTHING];
    const env = { ...process.env, SEAM_REPLAY_TEST: "recorded" } as Record<string, string>;
    const c = new Client({ name: "seam-replay-test", version: "1.0.0" });
    await c.connect(new StdioClientTransport({ command: argv[0]!, args: argv.slice(1), env, stderr: "ignore" }));
    await c.callTool({ name: "echo", arguments: { message: "héllo 🔒" } });
    await c.callTool({ name: "get-sum", arguments: { a: 2, b: 40 } });
    await c.callTool({ name: "get-env", arguments: {} });
    await c.close();
    const rows = ledgerRows(ledger);
    const calls = rows.filter((r) => getField(r, "evt") === "tool_call");
    const lineOf = (tool: string) => rows.findIndex((r) => getField(r, "tool") === tool) + 1;
    const session = (getField(calls[0]!, "session") as string).slice(0, 8);
    const replay = (more: string[], server = EVERYTHING) =>
      runCli(via, ["replay", ledger, "--payloads", store, ...more, "--", ...server], {
        env: { SEAM_REPLAY_TEST: "replayed" },
      });

    // Another environment: get-env differs, the rest is the same.
    const junit = join(tempDir(), "replay.xml");
    let r = await replay(["--junit", junit]);
    const row = (tool: string, verdict: string) =>
      `${String(lineOf(tool)).padStart(6)}  ${session}  ${"tools/call".padEnd(14)}  ${tool.padEnd(34)}  ${verdict}`.trimEnd();
    expect([r.code, r.stdout.toString()]).toEqual([
      1,
      [
        `${"line".padStart(6)}  session   ${"method".padEnd(14)}  ${"name".padEnd(34)}  replayed`,
        row("echo", "same"),
        row("get-sum", "same"),
        row("get-env", "different"),
        "3 requests replayed: 2 same, 1 different, 0 missing, 0 with no payload",
        "",
      ].join("\n"),
    ]);
    for (const l of r.stdout.toString().split("\n")) expect([...l].length).toBeLessThanOrEqual(80);
    // The JUnit report: a test case per call, the different one failed.
    const xml = readFileSync(junit, "utf8");
    expect(xml).toContain('<testsuite name="seam replay" tests="3" failures="1"');
    expect(xml).toContain(`<testcase classname="seam.replay" name="line ${lineOf("echo")}: tools/call echo"/>`);
    expect(xml).toContain(
      `<failure message="different" type="rule">FAIL  line ${lineOf("get-env")}: tools/call get-env: different</failure>`,
    );

    // The field that varies left out: all the same; each answer's own digest is still reported.
    r = await replay(["--ignore", "/content/0/text", "--json"]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout.toString());
    expect([out.same, out.different, out.missing, out.no_payload]).toEqual([3, 0, 0, 0]);
    expect(out.calls.map((x: { method: string; name: string; line: number }) => [x.method, x.name, x.line])).toEqual(
      ["echo", "get-sum", "get-env"].map((t) => ["tools/call", t, lineOf(t)]),
    );
    for (const [i, x] of (out.calls as { recorded: string; replayed: string }[]).entries()) {
      expect(x.recorded).toBe(getField(calls[i]!, "result_digest") as string);
      if (i < 2) expect(x.replayed).toBe(x.recorded);
      else expect(x.replayed).not.toBe(x.recorded);
    }

    // A server that answers nothing: every call is missing.
    r = await replay([], ["node", "-e", "process.exit(0)"]);
    expect(r.code).toBe(1);
    expect(r.stdout.toString()).toContain("3 requests replayed: 0 same, 0 different, 3 missing, 0 with no payload");
    expect(r.stdout.toString()).toContain(`line ${lineOf("echo")}: initialize: the server closed its stdout`);

    // The echo call's payloads erased: it cannot be replayed (exit 3), the others still are.
    expect((await runCli(via, ["erase", ledger, "--payloads", store, "--tool", "echo", "--reason", "test"])).code).toBe(
      0,
    );
    r = await replay(["--ignore", "/content/0/text"]);
    expect(r.code).toBe(3);
    expect(r.stdout.toString()).toContain(row("echo", "no payload"));
    expect(r.stdout.toString()).toContain(`line ${lineOf("echo")}: its arguments are not in the payload store`);
    expect(r.stdout.toString()).toContain("3 requests replayed: 2 same, 0 different, 0 missing, 1 with no payload");

    // A changed row: refused before any server is started.
    writeFileSync(ledger, readFileSync(ledger, "utf8").replace(`"tool": "get-sum"`, `"tool": "get-sun"`));
    r = await replay([]);
    expect([r.code, r.stdout.length]).toEqual([1, 0]);
    expect(r.stderr).toMatch(/^seam: error: .*l\.jsonl does not verify: broken \(.*\); not replaying it\n/);
    expect(r.stderr).toContain("seam: hint: run 'seam verify");
  }, 120_000);
});

describe.each(VIAS.filter(built))("seam replay beyond tools/call via %s", (via) => {
  test("tools/list, prompts/get, resources/read, prompts/list, completion/complete; sampling answered from the recording", async () => {
    const dir = tempDir();
    const ledger = join(dir, "l.jsonl");
    const store = join(dir, "store");
    const argv = [...seamArgv(via), "wrap", "--ledger", ledger, "--payloads", store, "--", ...EVERYTHING];
    const c = new Client({ name: "seam-replay-test", version: "1.0.0" }, { capabilities: { sampling: {} } });
    c.setRequestHandler(CreateMessageRequestSchema, async () => ({
      model: "fixture-model",
      role: "assistant" as const,
      content: { type: "text" as const, text: "fixed" },
    }));
    await c.connect(new StdioClientTransport({ command: argv[0]!, args: argv.slice(1), stderr: "ignore" }));
    await c.listTools();
    await c.getPrompt({ name: "args-prompt", arguments: { city: "Oslo" } });
    await c.readResource({ uri: "demo://resource/static/document/architecture.md" });
    await c.callTool({ name: "trigger-sampling-request", arguments: { prompt: "one word", maxTokens: 5 } });
    await c.listPrompts();
    await c.complete({
      ref: { type: "ref/prompt", name: "completable-prompt" },
      argument: { name: "name", value: "B" },
    });
    await c.close();
    // prompts/list went without params (digested as null): the replay sends none either.
    expect(
      ledgerRows(ledger)
        .filter((r) => getField(r, "evt") === "client_request")
        .map((r) => [getField(r, "method"), getField(r, "params_digest") === digestJson(null)]),
    ).toEqual([
      ["prompts/list", true],
      ["completion/complete", false],
    ]);
    const replay = () =>
      runCli(via, ["replay", ledger, "--payloads", store, "--json", "--", ...EVERYTHING]).then((r) => ({
        code: r.code,
        calls: JSON.parse(r.stdout.toString()).calls.map((x: { method: string; name: string; verdict: string }) => [
          x.method,
          x.name,
          x.verdict,
        ]),
      }));
    const calls = (last: string) => [
      ["tools/list", "", "same"],
      ["prompts/get", "args-prompt", "same"],
      ["resources/read", "demo://resource/static/document/architecture.md", "same"],
      ["tools/call", "trigger-sampling-request", last],
      ["prompts/list", "", "same"],
      ["completion/complete", "", "same"],
    ];
    expect(await replay()).toEqual({ code: 0, calls: calls("same") });

    // The recorded answer to the sampling request gone: the server gets an error, and its tool answers otherwise.
    const sampling = ledgerRows(ledger).find((r) => getField(r, "evt") === "server_request")!;
    expect(getField(sampling, "method")).toBe("sampling/createMessage");
    const answer = getField(sampling, "result_digest") as string;
    rmSync(join(store, "sha256", answer.slice("sha256:json-c14n:v1:".length)));
    expect(await replay()).toEqual({ code: 1, calls: calls("different") });
  }, 90_000);
});
