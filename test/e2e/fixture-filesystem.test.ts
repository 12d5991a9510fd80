/**
 * A recording of @modelcontextprotocol/server-filesystem (stdio) as a
 * fixture: the official SDK client lists and reads a temporary directory
 * through `seam wrap --payloads`, and `seam replay` sends the same requests
 * to a fresh server on the same directory: no difference. The server offers
 * no resources or prompts, so tools/list and tools/call are what it
 * answers. A changed payload, then a changed row, is refused. Under each build.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { getField } from "../../src/core/json.ts";
import { built, ROOT, runCli, seamArgv, VIAS } from "../helpers/cli.ts";
import { ledgerRows, tempDir } from "../helpers/proc.ts";

const FILESYSTEM = `${ROOT}node_modules/@modelcontextprotocol/server-filesystem/dist/index.js`;

describe.each(VIAS.filter(built))("a server-filesystem recording via %s", (via) => {
  test("replays with no difference; a changed payload or row is refused", async () => {
    const dir = tempDir();
    const ledger = join(dir, "l.jsonl");
    const store = join(dir, "store");
    const served = join(dir, "served");
    mkdirSync(join(served, "sub"), { recursive: true });
    writeFileSync(join(served, "a.txt"), "first line\nsecond line ✓\n");
    writeFileSync(join(served, "sub", "b.md"), "# b\n");
    const server = ["node", FILESYSTEM, served];

    const argv = [...seamArgv(via), "wrap", "--ledger", ledger, "--payloads", store, "--", ...server];
    const c = new Client({ name: "seam-fixture-test", version: "1.0.0" });
    await c.connect(new StdioClientTransport({ command: argv[0]!, args: argv.slice(1), stderr: "ignore" }));
    await c.listTools();
    const listed = await c.callTool({ name: "list_directory", arguments: { path: served } });
    expect(JSON.stringify(listed)).toContain("[FILE] a.txt");
    await c.callTool({ name: "read_text_file", arguments: { path: join(served, "a.txt") } });
    await c.callTool({ name: "read_text_file", arguments: { path: join(served, "a.txt"), head: 1 } });
    await c.callTool({ name: "list_allowed_directories", arguments: {} });
    await c.close();

    const replay = () => runCli(via, ["replay", ledger, "--payloads", store, "--json", "--", ...server]);
    let r = await replay();
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout.toString());
    expect(
      out.calls.map((x: { method: string; name: string; verdict: string }) => [x.method, x.name, x.verdict]),
    ).toEqual([
      ["tools/list", "", "same"],
      ["tools/call", "list_directory", "same"],
      ["tools/call", "read_text_file", "same"],
      ["tools/call", "read_text_file", "same"],
      ["tools/call", "list_allowed_directories", "same"],
    ]);

    // The file changed since: its read differs, nothing else does.
    writeFileSync(join(served, "a.txt"), "first line\nchanged\n");
    r = await replay();
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout.toString()).calls.map((x: { verdict: string }) => x.verdict)).toEqual([
      "same",
      "same",
      "different",
      "same",
      "same",
    ]);

    // One byte of a recorded argument changed: refused, nothing replayed.
    const read = ledgerRows(ledger).find((x) => getField(x, "tool") === "read_text_file")!;
    const args = getField(read, "args_digest") as string;
    const file = join(store, "sha256", args.slice("sha256:json-c14n:v1:".length));
    const kept = readFileSync(file);
    writeFileSync(file, Buffer.from(kept.toString("utf8").replace("a.txt", "b.txt")));
    r = await replay();
    expect([r.code, r.stdout.length]).toEqual([1, 0]);
    expect(r.stderr).toContain(`seam: error: the payload of ${args} does not give its digest`);
    writeFileSync(file, kept);

    writeFileSync(ledger, readFileSync(ledger, "utf8").replace(`"tool": "list_directory"`, `"tool": "list_directorY"`));
    r = await replay();
    expect([r.code, r.stdout.length]).toEqual([1, 0]);
    expect(r.stderr).toMatch(/^seam: error: .*l\.jsonl does not verify: broken \(.*\); not replaying it\n/);
  }, 90_000);
});
