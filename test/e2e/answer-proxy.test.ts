/**
 * `seam proxy` in front of an upstream whose answers take shapes the SDK
 * clients read and a careless recorder does not (test/fixtures/answer-upstream.ts):
 * SSE events of another type, BOMs, gzip/deflate/br bodies, id twins. The
 * readers are the official clients (@modelcontextprotocol/sdk's Streamable
 * HTTP client and @modelcontextprotocol/client 2.x): each call's row holds the
 * digest of the result the client returned, the row kinds say what readers
 * differ on, and `seam verify` is inconclusive when they do, in all three builds.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { digestJson } from "../../src/core/digest.ts";
import { getField, type Json, parseJson } from "../../src/core/json.ts";
import { answerUpstream } from "../fixtures/answer-upstream.ts";
import { built, runCli, VIAS } from "../helpers/cli.ts";
import { ledgerRows, tempDir } from "../helpers/proc.ts";
import { startProxy, upstream } from "../helpers/proxy-helpers.ts";

/** [mode, the call row's status, the rows its answer adds]. */
const MODES: [string, string, string[]][] = [
  ["plain-json", "ok", []],
  ["plain-sse", "ok", []],
  ["decoy-event", "ok", ["sse_ambiguous"]],
  ["sse-bom", "ok", []],
  ["sse-mojibake", "ok", ["sse_ambiguous"]],
  ["json-bom", "ok", []],
  ["json-gzip", "ok", []],
  ["sse-gzip", "ok", []],
  ["json-deflate", "ok", []],
  ["sse-br", "ok", []],
  ["sse-string-id", "ambiguous", ["answer_ambiguous", "answer_duplicate"]],
];
const EXTRA = new Set(["sse_ambiguous", "answer_ambiguous", "answer_duplicate"]);

type Caller = (url: string, modes: string[]) => Promise<unknown[]>;

const CLIENTS: [string, Caller][] = [
  [
    "@modelcontextprotocol/sdk",
    async (url, modes) => {
      const client = new Client({ name: "answer-proxy-test", version: "1.0.0" });
      client.onerror = () => {};
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      const out: unknown[] = [];
      for (const mode of modes) out.push(await client.callTool({ name: "echo", arguments: { mode } }));
      await client.close();
      return out;
    },
  ],
  [
    "@modelcontextprotocol/client",
    async (url, modes) => {
      const client = new ModernClient({ name: "answer-proxy-test", version: "2.0.0" });
      client.onerror = () => {};
      await client.connect(new ModernTransport(new URL(url)));
      const out: unknown[] = [];
      for (const mode of modes) out.push(await client.callTool({ name: "echo", arguments: { mode } }));
      await client.close();
      return out;
    },
  ],
];

let up: Awaited<ReturnType<typeof upstream>>;
beforeAll(async () => {
  up = await upstream(answerUpstream());
});
afterAll(async () => {
  await up?.close();
});

const text = (r: unknown) => (r as { content: { text: string }[] }).content[0]!.text;

describe.each(VIAS.filter(built))("answers the SDK clients read, through seam proxy (%s)", (via) => {
  test.each(CLIENTS)(
    "%s: each call's row holds what the client got",
    async (_name, calls) => {
      const ledger = join(tempDir(), "l.jsonl");
      const proxy = await startProxy(via, ["--upstream", up.url, "--ledger", ledger]);
      let results: unknown[];
      try {
        results = await calls(
          proxy.url,
          MODES.map((m) => m[0]),
        );
      } finally {
        await proxy.stop();
      }
      expect(results.map(text).map((t) => t.split(" ")[0])).toEqual(MODES.map(() => "real"));
      const rows = ledgerRows(ledger);
      const evt = (r: Json) => getField(r, "evt") as string;
      const calls_ = rows.filter((r) => evt(r) === "tool_call");
      expect(calls_.map((r) => [getField(r, "status")])).toEqual(MODES.map((m) => [m[1]]));
      calls_.forEach((r, i) =>
        expect([MODES[i]![0], getField(r, "result_digest")]).toEqual([
          MODES[i]![0],
          digestJson(parseJson(JSON.stringify(results[i]))),
        ]),
      );
      expect(rows.map(evt).filter((e) => EXTRA.has(e))).toEqual(MODES.flatMap((m) => m[2]));
      const v = await runCli(via, ["verify", "--json", ledger]);
      expect(v.code).toBe(3);
      expect([...new Set(JSON.parse(v.stdout.toString()).finding_kinds as string[])].sort()).toEqual([
        "answer_ambiguous",
        "answer_duplicate",
        "sse_ambiguous",
      ]);
    },
    60000,
  );
});

describe.each(VIAS.filter(built))("a hostile upstream mixing every shape over 100 calls (%s)", (via) => {
  test("the ledger matches what the SDK client returned, call by call", async () => {
    // A fixed sequence (a small LCG): every shape comes up, in no regular order.
    let seed = 20261206;
    const modes = Array.from({ length: 100 }, () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return MODES[seed % MODES.length]!;
    });
    expect(new Set(modes.map((m) => m[0])).size).toBe(MODES.length);
    const ledger = join(tempDir(), "l.jsonl");
    const mixed = await upstream(answerUpstream());
    const proxy = await startProxy(via, ["--upstream", mixed.url, "--ledger", ledger]);
    let results: unknown[];
    try {
      results = await CLIENTS[0]![1](
        proxy.url,
        modes.map((m) => m[0]),
      );
    } finally {
      await proxy.stop();
      await mixed.close();
    }
    const rows = ledgerRows(ledger);
    const evt = (r: Json) => getField(r, "evt") as string;
    const callRows = rows.filter((r) => evt(r) === "tool_call");
    expect(callRows.length).toBe(100);
    for (let i = 0; i < 100; i++) {
      const [mode, status] = modes[i]!;
      expect([i, mode, text(results[i]!).split(" ")[0]]).toEqual([i, mode, "real"]);
      // Rows are in answer order, and the client waits for each answer: row i is call i.
      expect([i, mode, getField(callRows[i]!, "status"), getField(callRows[i]!, "result_digest")]).toEqual([
        i,
        mode,
        status,
        digestJson(parseJson(JSON.stringify(results[i]))),
      ]);
    }
    expect(rows.map(evt).filter((e) => EXTRA.has(e))).toEqual(modes.flatMap((m) => m[2]));
    expect((await runCli(via, ["verify", ledger])).code).toBe(3);
  }, 120000);
});

describe.each(VIAS.filter(built))("answer bodies of types the SDK clients refuse (%s)", (via) => {
  test("the TypeScript SDK takes no answer from them: the call stays unanswered; a type the SDKs differ on is flagged", async () => {
    const ledger = join(tempDir(), "l.jsonl");
    const proxy = await startProxy(via, ["--upstream", up.url, "--ledger", ledger]);
    const outcomes: string[] = [];
    try {
      const client = new Client({ name: "answer-proxy-test", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(proxy.url)));
      for (const mode of ["json-seq", "vnd-json"])
        outcomes.push(
          await client.callTool({ name: "echo", arguments: { mode } }).then(
            () => "answered",
            () => "refused",
          ),
        );
      await client.close();
    } finally {
      await proxy.stop();
    }
    expect(outcomes).toEqual(["refused", "refused"]);
    const rows = ledgerRows(ledger);
    const of = (e: string) => rows.filter((r) => getField(r, "evt") === e);
    expect(of("tool_call").map((r) => getField(r, "status"))).toEqual(["unanswered", "unanswered"]);
    expect(of("body_ambiguous").map((r) => getField(r, "content_type"))).toEqual(["application/json-seq"]);
    const v = await runCli(via, ["verify", "--json", ledger]);
    expect([v.code, JSON.parse(v.stdout.toString()).finding_kinds]).toEqual([3, ["body_ambiguous"]]);
  }, 60000);
});
