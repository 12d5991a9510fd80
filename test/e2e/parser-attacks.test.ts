/**
 * The three frames that once read a file through `seam wrap --fail-closed`
 * and left no row: a tools/call to the official filesystem server whose
 * arguments carry a 901-deep array, a 4,301-digit integer, or raw invalid
 * UTF-8 in a string. The server (JSON.parse, zod, which keeps the `path` and
 * drops the padding) reads all three. Without --fail-closed each call has its
 * tool_call row and an ambiguous_frame row (Python's json refuses all three);
 * with --fail-closed none reaches the server. Either way `seam verify` says
 * inconclusive (exit 3), and ok with --allow-unparsed.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { getField, type Json } from "../../src/core/json.ts";
import { cat } from "../helpers/bytes.ts";
import { ROOT, runCli, seamArgv } from "../helpers/cli.ts";
import { ledgerRows, start, tempDir, until } from "../helpers/proc.ts";

const FILESYSTEM = ["node", `${ROOT}node_modules/@modelcontextprotocol/server-filesystem/dist/index.js`];
function attacks(path: string): Uint8Array[] {
  const call = (id: number, pad: (string | number[])[]) =>
    cat(
      `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":${JSON.stringify(path)},"pad":`,
      ...pad,
      "}}}\n",
    );
  return [
    call(11, [`${"[".repeat(901)}${"]".repeat(901)}`]),
    call(12, ["1".repeat(4301)]),
    call(13, ['"a', [0xff, 0xfe], 'b"']),
  ];
}

async function session(failClosed: boolean) {
  const dir = tempDir("seam-attack-");
  const root = join(dir, "root");
  mkdirSync(root);
  const secret = join(root, "secret.txt");
  writeFileSync(secret, "the secret\n");
  const ledger = join(dir, "l.jsonl");
  const p = start([
    ...seamArgv("bun"),
    "wrap",
    "--ledger",
    ledger,
    ...(failClosed ? ["--fail-closed"] : []),
    "--",
    ...FILESYSTEM,
    root,
  ]);
  const lines = () =>
    p
      .stdoutSoFar()
      .toString()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as { id?: number; result?: { content?: { text?: string }[] }; error?: unknown });
  p.child.stdin!.write(
    `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"attacker","version":"1"}}}\n`,
  );
  await until(() => lines().some((l) => l.id === 0), 20000, "initialize answer");
  p.child.stdin!.write(`{"jsonrpc":"2.0","method":"notifications/initialized"}\n`);
  for (const f of attacks(secret)) p.child.stdin!.write(f);
  await until(() => [11, 12, 13].every((id) => lines().some((l) => l.id === id)), 20000, "three answers");
  p.child.stdin!.end();
  const done = await p.done;
  expect(done.code).toBe(0);
  const answers = [11, 12, 13].map((id) => lines().find((l) => l.id === id)!);
  /** The ids in the order the server answered (it reads files concurrently): the order of the tool_call rows. */
  const answered = lines()
    .map((l) => l.id)
    .filter((id) => id === 11 || id === 12 || id === 13);
  const rows = ledgerRows(ledger);
  const of = (evt: string) => rows.filter((r) => getField(r, "evt") === evt);
  return { answers, answered, rows, of, ledger };
}

const shape = (r: Json) => [getField(r, "tool"), getField(r, "rpc_id"), getField(r, "status")];

describe("the three attack frames against @modelcontextprotocol/server-filesystem", () => {
  test("without --fail-closed: the file is read, and every call has its row and an ambiguous_frame row", async () => {
    const s = await session(false);
    expect(s.answers.map((a) => a.result?.content?.[0]?.text)).toEqual([
      "the secret\n",
      "the secret\n",
      "the secret\n",
    ]);
    expect(s.answered.toSorted()).toEqual([11, 12, 13]);
    expect(s.of("tool_call").map(shape)).toEqual(s.answered.map((id) => ["read_text_file", id, "ok"]));
    const readings = s
      .of("ambiguous_frame")
      .map((r) =>
        (getField(r, "readings") as Json[]).map((x) => [
          getField(x, "stacks"),
          getField(x, "refused") ?? getField(x, "tool"),
        ]),
      );
    expect(readings).toEqual([
      [
        [["json-parse", "go-encoding-json"], "read_text_file"],
        [["python-json"], "nesting deeper than 900 levels"],
      ],
      [
        [["json-parse", "go-encoding-json"], "read_text_file"],
        [["python-json"], "an integer literal longer than 4300 digits"],
      ],
      [
        [["json-parse", "go-encoding-json"], "read_text_file"],
        [["python-json"], "invalid UTF-8"],
      ],
    ]);
    const v = await runCli("bun", ["verify", "--json", s.ledger]);
    expect([v.code, JSON.parse(v.stdout.toString()).finding_kinds]).toEqual([
      3,
      Array(3).fill("ambiguous_client_frame"),
    ]);
    const allowed = await runCli("bun", ["verify", "--allow-unparsed", s.ledger]);
    expect(allowed.code).toBe(0);
  }, 60000);

  test("with --fail-closed: none reaches the server; each is refused, rowed, and a finding", async () => {
    const s = await session(true);
    expect(s.answers.map((a) => (a.error as { code: number }).code)).toEqual([-32000, -32000, -32000]);
    expect(s.answers.every((a) => a.result === undefined)).toBe(true);
    expect(s.of("tool_call").map(shape)).toEqual([
      ["read_text_file", 11, "refused"],
      ["read_text_file", 12, "refused"],
      ["read_text_file", 13, "refused"],
    ]);
    expect(s.of("ambiguous_frame").map((r) => getField(r, "refused"))).toEqual([true, true, true]);
    const v = await runCli("bun", ["verify", "--json", s.ledger]);
    expect([v.code, JSON.parse(v.stdout.toString()).finding_kinds]).toEqual([
      3,
      Array(3).fill("ambiguous_client_frame"),
    ]);
  }, 60000);
});
