/**
 * `seam log`, `seam stats` and `seam check` as a user runs them, the three
 * ways seam ships (Bun source, Node bundle, executable): columns and NDJSON
 * fields as literal goldens, every filter, the break marker at its line,
 * every check rule passing and failing, JUnit read back by a real XML
 * parser, hostile ledgers, and --follow against concurrent writers.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { appendFileSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { getField, parseJson } from "../src/core/json.ts";
import { VIAS, built, runCli, seamArgv } from "./cli.ts";
import { start, tempDir, until } from "./proc.ts";
import { BIG_ID, S1, mainLedger, sessionOf, writeLedger } from "./read-fixtures.ts";
import { KEY, writeSealed } from "./seal-helpers.ts";
import { HAVE_PYTHON, LedgerBuilder } from "./verify-helpers.ts";

let dir: string;
let main: string;
let edited: string;
let open: string;
let mainLines: string[];

beforeAll(() => {
  dir = tempDir("seam-read-cli-");
  mainLines = mainLedger().lines;
  main = writeLedger(dir, "main.jsonl", mainLines);
  const e = [...mainLines];
  e[4] = e[4]!.replace('"tool": "read_file"', '"tool": "rm_rf"');
  edited = writeLedger(dir, "edited.jsonl", e);
  const b = new LedgerBuilder();
  for (const r of sessionOf(
    "c0ffee00-0000-4000-8000-000000000001",
    "x",
    [["tool_call", { tool: "t", rpc_id: 1, status: "ok", ms: 1 }]],
    false,
  ))
    b.add(r);
  open = writeLedger(dir, "open.jsonl", b.lines);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const LOG_UTC = [
  "  TIME (UTC)                SESSION   SERVER          OPERATION                     STATUS                 MS  ID",
  "+ 2026-11-30T03:24:07.007Z  3f2a9c1e  files           session begin                 -                       -  -",
  "+ 2026-11-30T03:24:07.014Z  3f2a9c1e  files           initialize                    ok                   3.50  0",
  "+ 2026-11-30T03:24:07.021Z  3f2a9c1e  files           tools/list                    ok                  0.800  1",
  "+ 2026-11-30T03:24:07.028Z  3f2a9c1e  files           read_file                     ok                   12.0  2",
  "+ 2026-11-30T03:24:07.042Z  3f2a9c1e  files           write_file                    error                40.3  3",
  "+ 2026-11-30T03:24:07.049Z  3f2a9c1e  files           file:///etc/hosts             ok                   2.00  4",
  "+ 2026-11-30T03:24:07.056Z  3f2a9c1e  files           review                        ok                   1.00  5",
  "+ 2026-11-30T03:24:07.063Z  3f2a9c1e  files           sampling/createMessage        ok                    250  0",
  "+ 2026-11-30T03:24:07.070Z  3f2a9c1e  files           read_file                     ok                   7.00  18446744073709551616",
  '+ 2026-11-30T03:24:07.077Z  3f2a9c1e  files           slow_scan                     unanswered           1500  "a-7"',
  "+ 2026-11-30T03:24:07.084Z  3f2a9c1e  files           session end                   client_eof              -  -",
  "+ 2026-11-30T03:24:07.091Z  b7c8d9e0  git             session begin                 -                       -  -",
  '+ 2026-11-30T03:24:07.098Z  b7c8d9e0  git             git_log                       ok                   30.0  1  {"n": 3} → {"content": [{"type": "text", "text": "abc"}]}',
  "+ 2026-11-30T03:24:07.105Z  b7c8d9e0  git             git_push                      cancelled            90.0  2",
  "+ 2026-11-30T03:24:07.112Z  b7c8d9e0  git             git_log                       input_required       5.00  3",
  "+ 2026-11-30T03:24:07.119Z  b7c8d9e0  git             session end                   client_eof              -  -",
  "main.jsonl: ok (17 rows; 16 operations, all vouched for by the chain)",
  "",
].join("\n");

describe.each(VIAS)("seam log via %s", (via) => {
  const it = built(via) ? test : test.skip;

  it("the columns, oldest first, one line per operation (golden); exit 0", async () => {
    const r = await runCli(via, ["log", "--utc", "main.jsonl"], { cwd: dir });
    expect(r.stderr).toBe("");
    expect(r.stdout.toString()).toBe(LOG_UTC);
    expect(r.code).toBe(0);
  });

  it("an edited row: the marker at its line, every operation below it marked, exit 1", async () => {
    const r = await runCli(via, ["log", "--utc", "edited.jsonl"], { cwd: dir });
    const lines = r.stdout.toString().split("\n");
    expect(lines.slice(3, 7)).toEqual([
      "+ 2026-11-30T03:24:07.021Z  3f2a9c1e  files           tools/list                    ok                  0.800  1",
      "── line 5: chain mismatch: rows below are not vouched for by the chain ──",
      "! 2026-11-30T03:24:07.028Z  3f2a9c1e  files           rm_rf                         ok                   12.0  2",
      "! 2026-11-30T03:24:07.042Z  3f2a9c1e  files           write_file                    error                40.3  3",
    ]);
    expect(lines.filter((l) => l.startsWith("!")).length).toBe(13);
    expect(lines.at(-2)).toBe(
      "edited.jsonl: broken (17 rows; line 5: chain mismatch, 1 break; 13 of 16 operations not vouched for by the chain)",
    );
    expect(r.code).toBe(1);
  });

  it("--json: one object per operation with the documented fields, ids exact, then the verdict", async () => {
    const r = await runCli(via, ["log", "--json", "main.jsonl"], { cwd: dir });
    const lines = r.stdout.toString().trimEnd().split("\n");
    expect(lines.length).toBe(17);
    expect(lines[8]).toBe(
      '{"type": "operation", "file": "main.jsonl", "line": 10, "lines": [10], "ts": "2026-11-30T03:24:07.070Z", "session": "3f2a9c1e-5b6d-4e7f-8a9b-0c1d2e3f4a5b", "server": "files", "kind": "tool_call", "evt": "tool_call", "name": "read_file", "status": "ok", "ms": 7, "rpc_id": 18446744073709551616, "op": null, "rounds": 1, "error_code": null, "reason": null, "exit_code": null, "bytes_in": null, "bytes_out": null, "vouched": true, "sealed": null}',
    );
    expect(getField(parseJson(lines[8]!), "rpc_id")).toBe(BIG_ID);
    expect(lines[3]).toContain('"line": 5, "lines": [4, 5]');
    expect(lines[12]).toContain('"args": {"n": 3}, "result": {"content": [{"type": "text", "text": "abc"}]}');
    expect(lines[16]).toBe(
      '{"type": "verdict", "file": "main.jsonl", "verdict": "ok", "ok": true, "rows": 17, "operations": 16, "unvouched": 0, "first_break": null, "breaks": 0, "findings": [], "sealed_through": null}',
    );
    expect(r.code).toBe(0);
  });

  it("stats and check run and say the verdict", async () => {
    const s = await runCli(via, ["stats", "main.jsonl"], { cwd: dir });
    expect(s.stdout.toString()).toContain("files read_file                    2       2       0");
    expect(s.code).toBe(0);
    const c = await runCli(via, ["check", "edited.jsonl", "--max-errors", "5"], { cwd: dir });
    expect(c.stdout.toString()).toContain(
      "FAIL  verify edited.jsonl: broken: line 5: chain mismatch (1 break) (edited.jsonl:5)",
    );
    expect(c.code).toBe(1);
  });
});

describe("seam log (Bun source)", () => {
  const log = async (...args: string[]) => {
    const r = await runCli("bun", ["log", "--utc", ...args], { cwd: dir });
    return { ...r, text: r.stdout.toString() };
  };
  const names = (text: string) =>
    text
      .split("\n")
      .filter((l) => /^[+!S] /.test(l))
      .map((l) => l.slice(54, 84).trim());

  test("local time by default (TZ), ISO UTC with --utc", async () => {
    const r = await runCli("bun", ["log", "main.jsonl"], { cwd: dir, env: { TZ: "Asia/Kolkata" } });
    expect(r.stdout.toString().split("\n").slice(0, 2)).toEqual([
      "  TIME                     SESSION   SERVER          OPERATION                     STATUS                 MS  ID",
      "+ 2026-11-30 08:54:07.007  3f2a9c1e  files           session begin                 -                       -  -",
    ]);
  });

  test("--wide shows whole ids and names; --raw-width cuts the preview", async () => {
    const w = await log("--wide", "main.jsonl");
    expect(w.text.split("\n")[1]).toBe(
      `+ 2026-11-30T03:24:07.007Z  ${S1}  files  session begin  -                       -  -`,
    );
    const r = await log("--raw-width", "12", "--tool", "git_log", "--status", "ok", "main.jsonl");
    expect(r.text.split("\n")[1]).toEndWith('  1  {"n": 3} → …');
    const none = await log("--raw-width", "0", "--tool", "git_log", "--status", "ok", "main.jsonl");
    expect(none.text.split("\n")[1]).toEndWith("30.0  1");
  });

  const FILTERS: [string[], string[]][] = [
    [
      ["--session", "b7c8"],
      ["session begin", "git_log", "git_push", "git_log", "session end"],
    ],
    [["--session", "nope"], []],
    [
      ["--server", "fil*"],
      [
        "session begin",
        "initialize",
        "tools/list",
        "read_file",
        "write_file",
        "file:///etc/hosts",
        "review",
        "sampling/createMessage",
        "read_file",
        "slow_scan",
        "session end",
      ],
    ],
    [
      ["--tool", "read_*"],
      ["read_file", "read_file"],
    ],
    [
      ["--tool", "git_log", "--tool", "slow_scan"],
      ["slow_scan", "git_log", "git_log"],
    ],
    [["--status", "error"], ["write_file"]],
    [
      ["--status", "unanswered", "--status", "cancelled,input_required"],
      ["slow_scan", "git_push", "git_log"],
    ],
    [
      ["--slow", "40"],
      ["write_file", "sampling/createMessage", "slow_scan", "git_push"],
    ],
    [
      ["--since", "2026-11-30T03:24:07.100Z"],
      ["git_push", "git_log", "session end"],
    ],
    [
      ["--until", "2026-11-30T03:24:07.021Z"],
      ["session begin", "initialize"],
    ],
    [
      ["--since", "2026-11-30T03:24:07.049Z", "--until", "2026-11-30T03:24:07.063Z"],
      ["file:///etc/hosts", "review"],
    ],
    [["--since", "1h"], []],
    [
      ["--last", "2", "--verify"],
      ["git_log", "session end"],
    ],
    [["--tool", "git_*", "--status", "ok", "--server", "git"], ["git_log"]],
  ];
  test.each(FILTERS)("filter %p", async (args, want) => {
    const r = await log(...args, "main.jsonl");
    expect(names(r.text)).toEqual(want);
    // Filters never hide the verdict.
    expect(r.text).toContain("main.jsonl: ok (17 rows;");
    expect(r.code).toBe(0);
  });

  test("bad filter values are usage errors", async () => {
    for (const args of [
      ["--since", "yesterday"],
      ["--slow", "fast"],
      ["--last", "0"],
      ["--status", ""],
      ["--verify"],
    ]) {
      const r = await log(...args, "main.jsonl");
      expect(r.code).toBe(2);
      expect(r.stderr).toStartWith("seam: error: ");
    }
  });

  test("--last without --verify reads the end only, vouches for nothing, exit 3", async () => {
    const r = await log("--last", "2", "main.jsonl");
    expect(r.text.split("\n").slice(1)).toEqual([
      "! 2026-11-30T03:24:07.112Z  b7c8d9e0  git             git_log                       input_required       5.00  3",
      "! 2026-11-30T03:24:07.119Z  b7c8d9e0  git             session end                   client_eof              -  -",
      "main.jsonl: not verified: --last read only the end of the file; add --verify to check it all",
      "",
    ]);
    expect(r.code).toBe(3);
  });

  test("--last on a large file reads from its end: line numbers count back from it", async () => {
    const b = new LedgerBuilder();
    const rows: [string, Record<string, number | string>][] = [];
    for (let i = 1; i <= 3000; i++) rows.push(["tool_call", { tool: "echo", rpc_id: i, status: "ok", ms: 1 }]);
    for (const r of sessionOf("big", "srv", rows)) b.add(r);
    const p = writeLedger(dir, "big.jsonl", b.lines);
    const r = await runCli("bun", ["log", "--json", "--last", "1", "--tool", "echo", p]);
    const op = parseJson(r.stdout.toString().split("\n")[0]!);
    expect([getField(op, "line"), getField(op, "rpc_id"), getField(op, "vouched")]).toEqual([-2, 3000, false]);
    const full = await runCli("bun", ["log", "--json", "--last", "1", "--verify", "--tool", "echo", p]);
    const op2 = parseJson(full.stdout.toString().split("\n")[0]!);
    expect([getField(op2, "line"), getField(op2, "vouched")]).toEqual([3001, true]);
  });

  test("an open session: inconclusive, exit 3, as seam verify", async () => {
    const r = await log("open.jsonl");
    expect(r.text.split("\n").at(-2)).toBe(
      "open.jsonl: inconclusive (2 rows; session c0ffee00-0000-4000-8000-000000000001: no session_end (truncated or still running); 2 operations, all vouched for by the chain)",
    );
    expect(r.code).toBe(3);
  });

  test("stdin", async () => {
    const r = await runCli("bun", ["log", "--utc", "-"], { input: readFileSync(main) });
    expect(r.stdout.toString()).toBe(LOG_UTC.replace("main.jsonl: ok", "-: ok"));
  });

  test("a missing file: unreadable, exit 1", async () => {
    const r = await log("nope.jsonl");
    expect(r.text).toContain(
      "── unreadable: no such file or directory: rows below are not vouched for by the chain ──",
    );
    expect(r.code).toBe(1);
  });

  test("--key marks operations under a valid checkpoint S, the unsealed tail +", async () => {
    const p = join(dir, "sealed.jsonl");
    await writeSealed(p, { calls: 5, every: 3 });
    const r = await runCli("bun", ["log", "--json", "--key", KEY.verifierKey, p]);
    const ops = r.stdout
      .toString()
      .trimEnd()
      .split("\n")
      .map((l) => parseJson(l));
    const verdict = ops.pop()!;
    const v = spawnSync(seamArgv("bun")[0]!, [
      ...seamArgv("bun").slice(1),
      "verify",
      "--json",
      "--key",
      KEY.verifierKey,
      p,
    ]);
    const sealedThrough = getField(getField(parseJson(v.stdout.toString()), "seal")!, "sealed_through");
    expect(getField(verdict, "sealed_through")).toBe(sealedThrough!);
    expect(typeof sealedThrough === "number" && sealedThrough > 1).toBe(true);
    for (const op of ops) {
      const line = getField(op, "line") as number;
      expect([line, getField(op, "sealed")]).toEqual([line, line <= (sealedThrough as number)]);
    }
    expect(r.code).toBe(0);
    const human = await runCli("bun", ["log", "--key", KEY.verifierKey, p]);
    expect(human.stdout.toString().split("\n")[1]).toStartWith("S ");
  });
});
