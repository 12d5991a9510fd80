/**
 * The payload store with real parts: the official SDK client through `seam
 * wrap --payloads` to server-everything over stdio, and through `seam proxy
 * --payloads` over Streamable HTTP; then `seam verify --payloads` and `seam
 * erase`, under each build.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateMessageRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { getField, type Json } from "../../src/core/json.ts";
import { built, ROOT, runCli, seamArgv, VIAS, type Via } from "../helpers/cli.ts";
import { ledgerRows, tempDir } from "../helpers/proc.ts";
import { type Running, startEverything, startProxy } from "../helpers/proxy-helpers.ts";
import { expectReferenceOk } from "../helpers/verify-helpers.ts";

const EVERYTHING = ["node", `${ROOT}node_modules/@modelcontextprotocol/server-everything/dist/index.js`, "stdio"];

/** The digests rows hold a payload by, with the line (from 1) of the first row naming each. */
function payloadDigests(ledger: string): Map<string, number> {
  const out = new Map<string, number>();
  ledgerRows(ledger).forEach((r, i) => {
    for (const f of ["args_digest", "result_digest", "params_digest"]) {
      const d = getField(r, f);
      if (typeof d === "string" && d.startsWith("sha256:json-c14n:v1:") && !out.has(d)) out.set(d, i + 1);
    }
  });
  return out;
}

const fileOf = (store: string, digest: string) => join(store, "sha256", digest.slice("sha256:json-c14n:v1:".length));

async function verify(via: Via, ledger: string, store: string) {
  const r = await runCli(via, ["verify", "--json", ledger, "--payloads", store]);
  return { code: r.code, report: JSON.parse(r.stdout.toString()), stderr: r.stderr };
}

async function client(transport: StdioClientTransport | StreamableHTTPClientTransport): Promise<Client> {
  const c = new Client({ name: "seam-payloads-test", version: "1.0.0" }, { capabilities: { sampling: {} } });
  c.setRequestHandler(CreateMessageRequestSchema, async () => ({
    role: "assistant",
    content: { type: "text", text: "sampled by the test" },
    model: "test-model",
  }));
  await c.connect(transport);
  return c;
}

describe.each(VIAS.filter(built))("payloads via %s", (via) => {
  test("wrap keeps them; verify checks them; a changed byte breaks; erase is on the record", async () => {
    const dir = tempDir();
    const ledger = join(dir, "l.jsonl");
    const store = join(dir, "store");
    const argv = [...seamArgv(via), "wrap", "--ledger", ledger, "--payloads", store, "--", ...EVERYTHING];
    const c = await client(new StdioClientTransport({ command: argv[0]!, args: argv.slice(1), stderr: "ignore" }));
    try {
      await c.callTool({ name: "echo", arguments: { message: "héllo 🔒" } });
      await c.callTool({ name: "get-sum", arguments: { a: 2, b: 40 } });
      await c.callTool({ name: "trigger-sampling-request", arguments: { prompt: "hi", maxTokens: 5 } });
    } finally {
      await c.close();
    }
    const rows = ledgerRows(ledger);
    const end = rows.at(-1)!;
    expect(getField(end, "evt")).toBe("session_end");
    expect(getField(end, "payloads_unwritten")).toBeUndefined();
    expect(getField(rows[0]!, "payload_store")).toBe(true);

    // Every payload a row names is there, as the bytes of the value in its frame.
    const digests = payloadDigests(ledger);
    expect(rows.some((r) => getField(r, "evt") === "server_request" && getField(r, "params_digest"))).toBe(true);
    for (const d of digests.keys()) expect(existsSync(fileOf(store, d))).toBe(true);
    const echo = rows.find((r) => getField(r, "tool") === "echo")!;
    const echoArgs = fileOf(store, getField(echo, "args_digest") as string);
    expect(JSON.parse(readFileSync(echoArgs, "utf8"))).toEqual({ message: "héllo 🔒" });

    let v = await verify(via, ledger, store);
    expect([v.code, v.report.ok, v.report.payloads]).toEqual([
      0,
      true,
      { checked: digests.size, mismatched: 0, erased: 0, absent: 0 },
    ]);

    // One byte of one payload changed: a break of its own kind, on the line of the row naming it.
    const echoResult = fileOf(store, getField(echo, "result_digest") as string);
    const original = readFileSync(echoResult);
    const changed = Buffer.from(original);
    const at = changed.indexOf("llo");
    changed[at] = "L".charCodeAt(0);
    writeFileSync(echoResult, changed);
    v = await verify(via, ledger, store);
    expect([v.code, v.report.first_break_kind, v.report.first_break_line, v.report.break_kinds]).toEqual([
      1,
      "payload_mismatch",
      digests.get(getField(echo, "result_digest") as string),
      { payload_mismatch: 1 },
    ]);
    writeFileSync(echoResult, original);

    // A payload gone without an erasure is absent: the chain is still ok.
    const sum = rows.find((r) => getField(r, "tool") === "get-sum")!;
    const sumResult = fileOf(store, getField(sum, "result_digest") as string);
    const kept = readFileSync(sumResult);
    unlinkSync(sumResult);
    v = await verify(via, ledger, store);
    expect([v.code, v.report.payloads.absent, v.report.payloads.erased]).toEqual([0, 1, 0]);
    writeFileSync(sumResult, kept, { mode: 0o600 });

    // seam erase: the echo call's payloads go, an erasure row says so, and the ledger still verifies.
    const e = await runCli(via, [
      "erase",
      ledger,
      "--payloads",
      store,
      "--tool",
      "echo",
      "--reason",
      "a test",
      "--json",
    ]);
    expect(e.code).toBe(0);
    const erased = JSON.parse(e.stdout.toString());
    const echoDigests = [getField(echo, "args_digest"), getField(echo, "result_digest")].sort();
    expect(erased.digests).toEqual(echoDigests);
    expect(existsSync(echoArgs)).toBe(false);
    expect(existsSync(echoResult)).toBe(false);
    const after = ledgerRows(ledger).slice(rows.length);
    expect(after.map((r) => getField(r, "evt"))).toEqual(["session_begin", "erasure", "session_end"]);
    const row = after[1]!;
    expect([getField(row, "reason"), getField(row, "count"), getField(row, "digests")]).toEqual([
      "a test",
      2,
      echoDigests as Json,
    ]);
    expect(getField(getField(row, "match")!, "tool")).toBe("echo");
    v = await verify(via, ledger, store);
    expect([v.code, v.report.ok, v.report.payloads]).toEqual([
      0,
      true,
      { checked: digests.size - 2, mismatched: 0, erased: 2, absent: 0 },
    ]);
    expectReferenceOk(ledger, v.report);
  }, 60_000);

  test("a payload that cannot be written is counted and said once; the traffic is the same", async () => {
    const dir = tempDir();
    const ledger = join(dir, "l.jsonl");
    const store = join(dir, "store");
    mkdirSync(store, { mode: 0o700 });
    // Where the payloads' directory would go, a file: no payload can be written.
    writeFileSync(join(store, "sha256"), "");
    // Recorded inline (--write-ahead), where payloads are written a turn later: session_end still counts them all.
    const argv = [
      ...seamArgv(via),
      "wrap",
      "--ledger",
      ledger,
      "--payloads",
      store,
      "--write-ahead",
      "--",
      ...EVERYTHING,
    ];
    const stderr: string[] = [];
    const calls = async (transport: StdioClientTransport) => {
      const c = await client(transport);
      try {
        return [
          await c.callTool({ name: "echo", arguments: { message: "one" } }),
          await c.callTool({ name: "echo", arguments: { message: "two" } }),
        ];
      } finally {
        await c.close();
      }
    };
    const direct = await calls(
      new StdioClientTransport({ command: EVERYTHING[0]!, args: EVERYTHING.slice(1), stderr: "ignore" }),
    );
    const transport = new StdioClientTransport({ command: argv[0]!, args: argv.slice(1), stderr: "pipe" });
    transport.stderr?.on("data", (d: Buffer) => stderr.push(d.toString("utf8")));
    expect(await calls(transport)).toEqual(direct);
    const end = ledgerRows(ledger).at(-1)!;
    expect(getField(end, "payloads_unwritten")).toBe(payloadDigests(ledger).size);
    expect(stderr.join("").match(/a payload could not be kept/g)?.length).toBe(1);
  }, 60_000);

  test("a DIR others can write, or a symlinked one, stops wrap before the server starts", async () => {
    const dir = tempDir();
    const ledger = join(dir, "l.jsonl");
    mkdirSync(join(dir, "open"));
    chmodSync(join(dir, "open"), 0o777);
    symlinkSync(join(dir, "open"), join(dir, "link"));
    for (const [store, why] of [
      ["open", "can be written by others"],
      ["link", "is a symbolic link"],
    ] as const) {
      const r = await runCli(via, ["wrap", "--ledger", ledger, "--payloads", join(dir, store), "--", "true"]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(why);
      expect(existsSync(ledger)).toBe(false);
    }
  });
});

describe.each(VIAS.filter(built))("seam proxy --payloads via %s", (via) => {
  let everything: Running;
  beforeAll(async () => {
    everything = await startEverything();
  });
  afterAll(async () => {
    await everything?.stop("SIGKILL");
  });

  test("the proxy keeps the payloads its rows name", async () => {
    const dir = tempDir();
    const ledger = join(dir, "l.jsonl");
    const store = join(dir, "store");
    const proxy = await startProxy(via, ["--upstream", everything.url, "--ledger", ledger, "--payloads", store]);
    try {
      const transport = new StreamableHTTPClientTransport(new URL(proxy.url));
      const c = await client(transport);
      await c.callTool({ name: "echo", arguments: { message: "through the proxy" } });
      await transport.terminateSession();
      await c.close();
    } finally {
      expect(await proxy.stop("SIGTERM")).toBe(0);
    }
    const echo = ledgerRows(ledger).find((r) => getField(r, "tool") === "echo")!;
    const args = fileOf(store, getField(echo, "args_digest") as string);
    expect(JSON.parse(readFileSync(args, "utf8"))).toEqual({ message: "through the proxy" });
    expect(existsSync(fileOf(store, getField(echo, "result_digest") as string))).toBe(true);
    const v = await verify(via, ledger, store);
    expect([v.code, v.report.payloads.mismatched, v.report.payloads.absent]).toEqual([0, 0, 0]);
    expect(v.report.payloads.checked).toBe(payloadDigests(ledger).size);
  }, 60_000);
});
