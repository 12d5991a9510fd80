/**
 * The official TypeScript SDK clients (@modelcontextprotocol/sdk and
 * @modelcontextprotocol/client 2.x, stdio) through `seam wrap` to a server
 * that answers with id twins (test/fixtures/twin-server.mjs): every
 * tool_call row's result_digest is the digest of the result the client
 * delivered, the rows say `ambiguous` where clients' id rules differ, each
 * extra answer has its own row, and `seam verify` says inconclusive (3),
 * never ok, in all three builds.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { Client as ModernClient } from "@modelcontextprotocol/client";
import { StdioClientTransport as ModernTransport } from "@modelcontextprotocol/client/stdio";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { digestJson } from "../../src/core/digest.ts";
import { getField, parseJson } from "../../src/core/json.ts";
import { built, ROOT, runCli, seamArgv, VIAS } from "../helpers/cli.ts";
import { ledgerRows, tempDir } from "../helpers/proc.ts";

const SERVER = ["node", `${ROOT}test/fixtures/twin-server.mjs`];

/** [mode, the rows its call leaves: the call's status, then each extra row's evt]. */
const MODES: [string, string, string[]][] = [
  ["string", "ambiguous", ["answer_ambiguous", "answer_duplicate"]],
  // 7.0 is 7 to every SDK: the answer pairs exactly, and the decoy after it is a duplicate.
  ["float", "ok", ["answer_duplicate"]],
  ["spaced", "ambiguous", ["answer_ambiguous"]],
  ["exact-then-string", "ok", ["answer_duplicate"]],
  ["twice", "ok", ["answer_duplicate"]],
  ["plain", "ok", []],
  ["unversioned-decoy", "ok", ["answer_ambiguous"]],
  ["extra-key-decoy", "ambiguous", ["answer_ambiguous", "answer_duplicate"]],
];

async function through(via: Via, ledger: string, modes: string[], modern = false): Promise<unknown[]> {
  const [cmd, ...pre] = seamArgv(via);
  const spec = {
    command: cmd!,
    args: [...pre, "wrap", "--ledger", ledger, "--", ...SERVER],
    stderr: "ignore" as const,
  };
  const transport = modern ? new ModernTransport(spec) : new StdioClientTransport(spec);
  const client = modern
    ? new ModernClient({ name: "seam-answer-test", version: "2.0.0" })
    : new Client({ name: "seam-answer-test", version: "1.0.0" });
  client.onerror = () => {}; // the SDK reports answers it has no handler for here
  await client.connect(transport as never);
  const results: unknown[] = [];
  try {
    for (const mode of modes) {
      results.push(await client.callTool({ name: "echo", arguments: { mode } }));
      // The server writes a twin right after the answer the client takes: let it arrive before the next call.
      await new Promise((r) => setTimeout(r, 30));
    }
  } finally {
    await client.close();
  }
  return results;
}

type Via = (typeof VIAS)[number];

describe.each(VIAS.filter(built))("id twins on stdio, SDK clients through seam wrap (%s)", (via) => {
  test.each([
    ["@modelcontextprotocol/sdk", false],
    ["@modelcontextprotocol/client", true],
  ])(
    "%s: each call's row holds what the client got; twins are rowed; verify is inconclusive",
    async (_n, modern) => {
      const dir = tempDir();
      const ledger = join(dir, "l.jsonl");
      const results = await through(
        via,
        ledger,
        MODES.map((m) => m[0]),
        modern,
      );
      // The client got each first answer.
      expect(results.map((r) => (r as { content: { text: string }[] }).content[0]!.text)).toEqual(
        MODES.map((_, i) => `real ${i + 1}`),
      );
      const rows = ledgerRows(ledger);
      const calls = rows.filter((r) => getField(r, "evt") === "tool_call");
      expect(calls.map((r) => getField(r, "status"))).toEqual(MODES.map((m) => m[1]));
      calls.forEach((r, i) => {
        const got = digestJson(parseJson(JSON.stringify(results[i])));
        // An ok row holds what the client got; an ambiguous one holds one reader's answer, and a row of the
        // same call holds the client's.
        if (getField(r, "status") === "ok") expect([i, getField(r, "result_digest")]).toEqual([i, got]);
        else {
          const same = rows.filter((x) => getField(x, "rpc_id") === getField(r, "rpc_id"));
          expect([i, same.some((x) => getField(x, "result_digest") === got)]).toEqual([i, true]);
        }
      });
      const extra = rows
        .map((r) => getField(r, "evt"))
        .filter((e): e is string => e === "answer_ambiguous" || e === "answer_duplicate");
      expect(extra).toEqual(MODES.flatMap((m) => m[2]));
      const v = await runCli(via, ["verify", "--json", ledger]);
      expect(v.code).toBe(3);
      const kinds = new Set(JSON.parse(v.stdout.toString()).finding_kinds as string[]);
      expect([...kinds].sort()).toEqual(["answer_ambiguous", "answer_duplicate"]);
    },
    60000,
  );

  test("plain answers alone verify ok", async () => {
    const dir = tempDir();
    const ledger = join(dir, "l.jsonl");
    await through(via, ledger, ["plain", "plain"]);
    expect((await runCli(via, ["verify", ledger])).code).toBe(0);
  }, 60000);
});
