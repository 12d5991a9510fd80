/**
 * `seam log`, `seam stats` and `seam check` as a user runs them, the three
 * ways seam ships (Bun source, Node bundle, executable): columns and NDJSON
 * fields as literal goldens, every filter, the break marker at its line,
 * every check rule passing and failing, JUnit read back by a real XML
 * parser, hostile ledgers, and --follow against concurrent writers.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { appendFileSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { getField, parseJson } from "../../src/core/json.ts";
import { built, runCli as runSeam, seamArgv, VIAS } from "../helpers/cli.ts";

/** seam as on a terminal 400 columns wide (every column fits), unless a test says otherwise. */
const runCli: typeof runSeam = (via, args, opts = {}) =>
  runSeam(via, args, { ...opts, env: { COLUMNS: "400", ...opts.env } });

import { KEY, writeCheckpointed } from "../helpers/checkpoint-helpers.ts";
import { start, tempDir, until } from "../helpers/proc.ts";
import { BIG_ID, mainLedger, S1, sessionOf, writeLedger } from "../helpers/read-fixtures.ts";
import { HAVE_PYTHON, LedgerBuilder } from "../helpers/verify-helpers.ts";

let dir: string;
let main: string;
let mainLines: string[];

beforeAll(() => {
  dir = tempDir("seam-read-cli-");
  mainLines = mainLedger().lines;
  main = writeLedger(dir, "main.jsonl", mainLines);
  const e = [...mainLines];
  e[4] = e[4]!.replace('"tool": "read_file"', '"tool": "rm_rf"');
  writeLedger(dir, "edited.jsonl", e);
  const b = new LedgerBuilder();
  for (const r of sessionOf(
    "c0ffee00-0000-4000-8000-000000000001",
    "x",
    [["tool_call", { tool: "t", rpc_id: 1, status: "ok", ms: 1 }]],
    false,
  ))
    b.add(r);
  writeLedger(dir, "open.jsonl", b.lines);
  writeFileSync(join(dir, "empty.jsonl"), "");
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
    expect(s.stdout.toString()).toContain("+ files           read_file                      2       2       0");
    expect(s.code).toBe(0);
    const c = await runCli(via, ["check", "edited.jsonl", "--max-errors", "5"], { cwd: dir });
    expect(c.stdout.toString()).toContain(
      "FAIL  verify edited.jsonl: broken: line 5: chain mismatch (1 break) (edited.jsonl:5)",
    );
    expect(c.code).toBe(1);
  });
});

describe.each(VIAS)("a file that cannot be read via %s", (via) => {
  const it = built(via) ? test : test.skip;
  // Exit 1 is for what a file holds; a file not there to read is an error of the command line, in every command.
  const commands: [string, string[]][] = [
    ["verify", ["verify"]],
    ["verify --json", ["verify", "--json"]],
    ["log", ["log"]],
    ["log --last", ["log", "--last", "3"]],
    ["stats", ["stats"]],
    ["check", ["check", "--max-errors", "0"]],
    ["report", ["report", "--out", "r.html"]],
    ["diff", ["diff", "main.jsonl"]],
  ];
  const files: [string, string, string][] = [
    ["missing", "nope.jsonl", "no such file or directory"],
    ["a directory", ".", "is a directory"],
  ];
  it.each(commands.flatMap(([name, argv]) => files.map(([what, f, why]) => [name, what, argv, f, why] as const)))(
    "%s on a file %s: seam: error, exit 2, nothing on stdout, nothing written",
    async (_name, _what, argv, f, why) => {
      const r = await runCli(via, [...argv, f], { cwd: dir });
      expect(r.stderr).toBe(`seam: error: cannot read ${f}: ${why}\n`);
      expect(r.stdout.toString()).toBe("");
      expect(r.code).toBe(2);
      expect(existsSync(join(dir, "r.html"))).toBe(false);
    },
  );
});

describe.each(VIAS)("filter values via %s", (via) => {
  const it = built(via) ? test : test.skip;
  // A value outside the known set is a usage error naming the set, with the near one: a typo never passes a gate.
  const WRONG: [string[], string, string | null][] = [
    [["check", "--status", "errror", "--max-errors", "0"], '--status "errror"', "did you mean --status error?"],
    [["log", "--status", "okk"], '--status "okk"', "did you mean --status ok?"],
    [["log", "--status", "ok,unansered"], '--status "unansered"', "did you mean --status unanswered?"],
    [["stats", "--status", "frobbed"], '--status "frobbed"', null],
    [["report", "--status", "cancelld"], '--status "cancelld"', "did you mean --status cancelled?"],
    [
      ["stats", "--by", "srever"],
      '--by "srever" is not one of tool, server, session, day',
      "did you mean --by server?",
    ],
  ];
  it.each(WRONG)("seam %p: exit 2, the known values, the near one", async (argv, error, hint) => {
    const r = await runCli(via, [...argv, "main.jsonl"], { cwd: dir });
    const [first, second, ...rest] = r.stderr.split("\n");
    expect(first).toStartWith(`seam: error: ${error}`);
    if (argv.includes("--status")) expect(first).toContain(" is not one of ok, error, unanswered, cancelled,");
    expect(second).toBe(hint === null ? "" : `seam: hint: ${hint}`);
    expect(rest.join("")).toBe("");
    expect(r.stdout.toString()).toBe("");
    expect(r.code).toBe(2);
  });
  // Values that are known pass, including a session's end reason and a signal.
  it.each([["ok"], ["client_eof"], ["signal:SIGTERM"], ["no_result"]])("--status %p is taken", async (status) => {
    const r = await runCli(via, ["log", "--status", status, "main.jsonl"], { cwd: dir });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });
});

const LOG_80 = [
  "  TIME (UTC)       SESSION   SERVER    OPERATION             STATUS           MS",
  "+ 11-30T03:24:07Z  3f2a9c1e  files     session begin         -                 -",
  "+ 11-30T03:24:07Z  3f2a9c1e  files     initialize            ok             3.50",
  "+ 11-30T03:24:07Z  3f2a9c1e  files     tools/list            ok            0.800",
  "+ 11-30T03:24:07Z  3f2a9c1e  files     read_file             ok             12.0",
  "+ 11-30T03:24:07Z  3f2a9c1e  files     write_file            error          40.3",
  "+ 11-30T03:24:07Z  3f2a9c1e  files     file:///etc/hosts     ok             2.00",
  "+ 11-30T03:24:07Z  3f2a9c1e  files     review                ok             1.00",
  "+ 11-30T03:24:07Z  3f2a9c1e  files     sampling/createMess…  ok              250",
  "+ 11-30T03:24:07Z  3f2a9c1e  files     read_file             ok             7.00",
  "+ 11-30T03:24:07Z  3f2a9c1e  files     slow_scan             unanswered     1500",
  "+ 11-30T03:24:07Z  3f2a9c1e  files     session end           client_eof        -",
  "+ 11-30T03:24:07Z  b7c8d9e0  git       session begin         -                 -",
  "+ 11-30T03:24:07Z  b7c8d9e0  git       git_log               ok             30.0",
  '    {"n": 3} → {"content": [{"type": "text", "text": "abc"}]}',
  "+ 11-30T03:24:07Z  b7c8d9e0  git       git_push              cancelled      90.0",
  "+ 11-30T03:24:07Z  b7c8d9e0  git       git_log               input_req…     5.00",
  "+ 11-30T03:24:07Z  b7c8d9e0  git       session end           client_eof        -",
  "main.jsonl: ok (17 rows; 16 operations, all vouched for by the chain)",
  "",
].join("\n");

const STATS_80 = [
  "CALLS BY TOOL (tools/call only; most calls first)",
  "  SERVER    TOOL         CALLS      OK   ERROR   ERR%      P50      P95      MAX",
  "+ files     read_file        2       2       0     0%     7.00     12.0     12.0",
  "+ git       git_log          2       1       0     0%     5.00     30.0     30.0",
  "+ files     slow_scan        1       0       0     0%     1500     1500     1500",
  "+ files     write_file       1       0       1   100%     40.3     40.3     40.3",
  "+ git       git_push         1       0       0     0%     90.0     90.0     90.0",
  "",
  "SESSIONS (most calls first)",
  "SESSION   SERVER    BEGIN (UTC)                CALLS  ENDED",
  "3f2a9c1…  files     2026-11-30T03:24:07.007Z       4  client_eof, exit 0",
  "b7c8d9e…  git       2026-11-30T03:24:07.091Z       3  client_eof, exit 0",
  "",
  "main.jsonl: ok (17 rows; 16 operations, all vouched for by the chain)",
  "",
].join("\n");

describe.each(VIAS)("80 columns via %s", (via) => {
  const it = built(via) ? test : test.skip;
  // Not a terminal and no $COLUMNS: 80 columns. Goldens; then every line within the width at other widths.
  it.each([
    ["log", ["log", "--utc", "main.jsonl"], LOG_80],
    ["stats", ["stats", "main.jsonl"], STATS_80],
  ])("seam %s: the default layout (golden)", async (_name, argv, golden) => {
    const r = await runCli(via, argv, { cwd: dir, env: { COLUMNS: undefined } });
    expect(r.stdout.toString()).toBe(golden);
    expect(r.code).toBe(0);
  });
  it.each([40, 60, 80, 100, 132])("at %p columns every line of log and stats fits, none ends in a space", async (w) => {
    for (const argv of [
      ["log", "main.jsonl"],
      ["log", "--utc", "edited.jsonl"],
      ["log", "--last", "3", "main.jsonl"],
      ["stats", "main.jsonl"],
      ["stats", "--by", "server", "edited.jsonl"],
      ["stats", "--by", "session", "main.jsonl"],
      ["stats", "--by", "day", "main.jsonl"],
    ]) {
      // log's narrowest line (time, operation, status, ms) takes 51 columns.
      if (argv[0] === "log" && w < 51) continue;
      const r = await runCli(via, argv, { cwd: dir, env: { COLUMNS: String(w) } });
      const over = r.stdout
        .toString()
        .split("\n")
        .filter((l) => [...l].length > w || / $/.test(l));
      expect({ argv, over }).toEqual({ argv, over: [] });
    }
  });
  it("--wide: every column and whole values, whatever the width", async () => {
    const r = await runCli(via, ["log", "--wide", "--utc", "main.jsonl"], { cwd: dir, env: { COLUMNS: "40" } });
    const lines = r.stdout.toString().split("\n");
    expect(lines[0]).toBe("  TIME (UTC)                SESSION  SERVER  OPERATION  STATUS                 MS  ID");
    expect(lines[8]).toContain("  3f2a9c1e-5b6d-4e7f-8a9b-0c1d2e3f4a5b  files  sampling/createMessage  ok ");
    const s = await runCli(via, ["stats", "--wide", "main.jsonl"], { cwd: dir, env: { COLUMNS: "40" } });
    expect(s.stdout.toString().split("\n")[1]).toContain("  P99      MAX         IN        OUT  FIRST (UTC)");
  });
});

/** JSON as every seam --json writes it: ", " between members and items, ": " after a key. */
function spaced(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(spaced).join(", ")}]`;
  if (v !== null && typeof v === "object")
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}: ${spaced(x)}`)
      .join(", ")}}`;
  return JSON.stringify(v);
}

describe.each(VIAS)("one JSON spacing via %s", (via) => {
  const it = built(via) ? test : test.skip;
  it.each([
    [["verify", "--json", "main.jsonl", "edited.jsonl"]],
    [["check", "--json", "--max-errors", "0", "main.jsonl"]],
    [["stats", "--json", "main.jsonl"]],
    [["log", "--json", "--last", "3", "main.jsonl"]],
    [["diff", "--json", "main.jsonl", "edited.jsonl"]],
  ])("seam %p", async (argv) => {
    const r = await runCli(via, argv, { cwd: dir });
    const lines = r.stdout.toString().trimEnd().split("\n");
    expect(lines.length).toBeGreaterThan(0);
    for (const l of lines) expect(l).toBe(spaced(JSON.parse(l)));
  });
});

describe.each(VIAS)("one explanation of inconclusive via %s", (via) => {
  const it = built(via) ? test : test.skip;
  // An empty file is inconclusive for one reason, said in the same words by every command that reads it.
  it.each([
    [["verify"], "  why       no rows, so nothing is proven"],
    [["log"], "empty.jsonl: inconclusive (0 rows; no rows, so nothing is proven; 0 operations"],
    [["stats"], "empty.jsonl: inconclusive (0 rows; no rows, so nothing is proven; 0 operations"],
    [["check"], "FAIL  verify empty.jsonl: inconclusive: no rows, so nothing is proven"],
    [["report", "--out", "empty.html"], "empty.jsonl: inconclusive (no rows, so nothing is proven)"],
  ])("seam %p", async (argv, said) => {
    const r = await runCli(via, [...argv, "empty.jsonl"], { cwd: dir });
    expect(r.stdout.toString()).toContain(said);
    expect(r.code).toBe(3);
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
      ["--no-verify"],
    ]) {
      const r = await log(...args, "main.jsonl");
      expect(r.code).toBe(2);
      expect(r.stderr).toStartWith("seam: error: ");
    }
  });

  // One meaning of --last, as in seam report: the last N operations of a file read and verified whole.
  test("--last verifies the whole file, as seam report --last does", async () => {
    const r = await log("--last", "2", "main.jsonl");
    expect(r.text.split("\n").slice(1)).toEqual([
      "+ 2026-11-30T03:24:07.112Z  b7c8d9e0  git             git_log                       input_required       5.00  3",
      "+ 2026-11-30T03:24:07.119Z  b7c8d9e0  git             session end                   client_eof              -  -",
      "main.jsonl: ok (17 rows; 2 operations, all vouched for by the chain)",
      "",
    ]);
    expect(r.code).toBe(0);
  });

  test("--last --no-verify reads the end only, vouches for nothing, exit 3", async () => {
    const r = await log("--last", "2", "--no-verify", "main.jsonl");
    expect(r.text.split("\n").slice(1)).toEqual([
      "! 2026-11-30T03:24:07.112Z  b7c8d9e0  git             git_log                       input_required       5.00  3",
      "! 2026-11-30T03:24:07.119Z  b7c8d9e0  git             session end                   client_eof              -  -",
      "main.jsonl: not verified: --no-verify read only the end of the file; leave it out to check it all",
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
    const r = await runCli("bun", ["log", "--json", "--last", "1", "--no-verify", "--tool", "echo", p]);
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

  test("--key marks operations under a valid checkpoint S, the unsealed tail +", async () => {
    const p = join(dir, "sealed.jsonl");
    await writeCheckpointed(p, { calls: 5, every: 3 });
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

describe("hostile ledgers", () => {
  const HOSTILE = [
    "\x1b[31mRED\x1b[0m",
    "\x1b]0;owned\x07title",
    "line\nbreak\rreturn",
    "csi\u009b2Jc1",
    "sep\u2028par\u2029",
    "bidi\u202eevil",
    "tab\tdel\u007f",
  ];
  let lineCount: number;

  beforeAll(() => {
    const b = new LedgerBuilder();
    b.add({ kind: "arcaeon.memory", text: "\x1b[2J not seam", id: 1 });
    const rows: [string, Record<string, string | number>][] = HOSTILE.map((t, i) => [
      "tool_call",
      { tool: t, rpc_id: t, status: t, ms: i },
    ]);
    rows.push(["tool_call", { tool: "A".repeat(1 << 20), rpc_id: 99, status: "ok", ms: 1 }]);
    rows.push(["brand_new_evt", { what: "\x1b[5m" }]);
    for (const r of sessionOf("\x1b[1mS\u009b", "\x1b[7msrv", rows)) b.add(r);
    b.add({ evt: "tool_call", seam: "mcp-stdio" });
    b.add({ seam: "mcp-stdio", session: "x", tool: 5, ms: "slow", ts: "\x1b[0m" });
    b.raw("[1, 2, 3]");
    b.raw('"just a string"');
    b.raw("not json at all \x1b[31m");
    b.add({ evt: "after", seam: "other" });
    writeLedger(dir, "hostile.jsonl", b.lines);
    lineCount = b.lines.length;
  });

  const noRawEscapes = (out: Buffer) => {
    const text = out.toString("utf8");
    expect(text.includes("\x1b")).toBe(false);
    expect(text.includes("\u009b")).toBe(false);
    expect(text.includes("\r")).toBe(false);
    expect(text.includes("\x07")).toBe(false);
    expect(text.includes("\u2028")).toBe(false);
    expect(text.includes("\u202e")).toBe(false);
    expect(text.includes("\u007f")).toBe(false);
    return text;
  };

  test("seam log: one line per operation, escapes shown escaped, exit as seam verify", async () => {
    const r = await runCli("bun", ["log", "--utc", "hostile.jsonl"], { cwd: dir });
    const text = noRawEscapes(r.stdout);
    const lines = text.trimEnd().split("\n");
    // Header, a marker, the verdict, and one line per object row (the row after the three unparseable ones is one too).
    const ops = lines.filter((l) => /^[+!] /.test(l));
    expect(ops.length).toBe(lineCount - 3);
    expect(lines.length).toBe(ops.length + 3);
    expect(lines.every((l) => l.length < 400)).toBe(true);
    expect(text).toContain("\\u001b[31mRED\\u001b[0m");
    expect(text).toContain("csi\\u009b2Jc1");
    expect(text).toContain("line\\u000abreak\\u000dreturn");
    expect(text).toContain("arcaeon.memory");
    expect(text).toContain("brand_new_evt");
    expect(text).toContain("── line 15: not a JSON object: rows below are not vouched for by the chain ──");
    const v = spawnSync(seamArgv("bun")[0]!, [...seamArgv("bun").slice(1), "verify", "hostile.jsonl"], { cwd: dir });
    expect(r.code).toBe(v.status!);
    expect(r.code).toBe(1);
  });

  const HAVE_SCRIPT = spawnSync("script", ["--version"]).status === 0;
  (HAVE_SCRIPT ? test : test.skip)(
    "on a terminal: colour is seam's own, the ledger's escapes still shown escaped",
    () => {
      // `script` gives the log a pseudo-terminal, as a user's shell would.
      const cmd = [...seamArgv("bun"), "log", "--utc", "--wide", "hostile.jsonl"].map((x) => `'${x}'`).join(" ");
      const r = spawnSync("script", ["-qec", cmd, "/dev/null"], {
        cwd: dir,
        env: { ...process.env, NO_COLOR: undefined },
      });
      const text = r.stdout.toString("utf8");
      const own = /\x1b\[(?:0|2|31|32|33|1;31)m/g;
      expect(text.match(own)?.length ?? 0).toBeGreaterThan(0);
      const rest = text.replace(own, "");
      expect(rest.includes("\x1b")).toBe(false);
      expect(rest.includes("\u009b")).toBe(false);
      expect(rest).toContain("\\u001b[31mRED\\u001b[0m");
      expect(rest).toContain("\\u001b]0;owned\\u0007title");
    },
  );

  test("seam log --json, stats and check: no raw escapes either, nothing crashes", async () => {
    for (const args of [
      ["log", "--json", "hostile.jsonl"],
      ["log", "--wide", "hostile.jsonl"],
      ["log", "--last", "5", "hostile.jsonl"],
      ["stats", "hostile.jsonl"],
      ["stats", "--by", "session", "hostile.jsonl"],
      ["stats", "--json", "hostile.jsonl"],
      ["check", "hostile.jsonl", "--forbid-tool", "*", "--junit", "hostile.xml"],
    ]) {
      const r = await runCli("bun", args, { cwd: dir });
      noRawEscapes(r.stdout);
      expect(r.stderr).toBe("");
      expect([1, 3]).toContain(r.code!);
    }
    const json = await runCli("bun", ["log", "--json", "hostile.jsonl"], { cwd: dir });
    for (const l of json.stdout.toString().trimEnd().split("\n")) expect(() => parseJson(l)).not.toThrow();
    expect(json.stdout.toString()).toContain('"name": "csi\\u009b2Jc1"');
    noRawEscapes(readFileSync(join(dir, "hostile.xml")));
  }, 60000);
});

describe("seam check", () => {
  const check = async (...args: string[]) => {
    const r = await runCli("bun", ["check", "main.jsonl", ...args], { cwd: dir });
    return { ...r, lines: r.stdout.toString().trimEnd().split("\n") };
  };
  const RULES: [string[], string, string][] = [
    [["--expect-tool", "read_file"], "pass  expect-tool read_file: called 2 times", "ok"],
    [["--expect-tool", "delete_file"], "FAIL  expect-tool delete_file: called 0 times", "fail"],
    [["--expect-tool", "read_file=2"], "pass  expect-tool read_file=2: called 2 times", "ok"],
    [
      ["--expect-tool", "read_file=1"],
      "FAIL  expect-tool read_file=1: called 2 times (main.jsonl:5, main.jsonl:10)",
      "fail",
    ],
    [["--forbid-tool", "rm*"], "pass  forbid-tool rm*: called 0 times", "ok"],
    [
      ["--forbid-tool", "git_*"],
      "FAIL  forbid-tool git_*: called 3 times (main.jsonl:14, main.jsonl:15, main.jsonl:16)",
      "fail",
    ],
    [["--max-errors", "1"], "pass  max-errors 1: 1 with status error", "ok"],
    [["--max-errors", "0"], "FAIL  max-errors 0: 1 with status error (main.jsonl:6)", "fail"],
    [["--max-unanswered", "1"], "pass  max-unanswered 1: 1 unanswered", "ok"],
    [["--max-unanswered", "0"], "FAIL  max-unanswered 0: 1 unanswered (main.jsonl:11)", "fail"],
    [["--max-ms", "1500"], "pass  max-ms 1500: 0 calls longer, the longest 1500 ms", "ok"],
    [["--max-ms", "50"], "FAIL  max-ms 50: 2 calls longer, the longest 1500 ms (main.jsonl:11, main.jsonl:15)", "fail"],
    [["--require-complete"], "pass  require-complete: 2 of 2 sessions ended", "ok"],
  ];
  test.each(RULES)("%p", async (args, line, outcome) => {
    const r = await check(...args);
    expect(r.lines).toEqual([
      "pass  verify main.jsonl: ok, 17 rows",
      line,
      outcome === "ok" ? "ok: 2 of 2 rules hold" : "failed: 1 of 2 rules hold",
    ]);
    expect(r.code).toBe(outcome === "ok" ? 0 : 1);
  });

  // Filters that select nothing make every rule hold vacuously: that fails unless --allow-empty says it may.
  const FILTERED: [string[], string, number][] = [
    [["--status", "error", "--max-errors", "0"], "pass  filters --status error: select 1 operation", 1],
    [
      ["--tool", "nosuch", "--max-errors", "0"],
      "FAIL  filters --tool nosuch: select no operation (--allow-empty to pass)",
      1,
    ],
    [
      ["--tool", "nosuch", "--max-errors", "0", "--allow-empty"],
      "pass  filters --tool nosuch: select no operation (allowed by --allow-empty)",
      0,
    ],
    [
      ["--session", "ffff", "--server", "files"],
      "FAIL  filters --session ffff --server files: select no operation (--allow-empty to pass)",
      1,
    ],
    [["--server", "git"], "pass  filters --server git: select 5 operations", 0],
  ];
  test.each(FILTERED)("filters %p: said, and failing when they select nothing", async (args, line, code) => {
    const r = await check(...args);
    expect(r.lines[1]).toBe(line);
    expect(r.lines.at(-1)).toStartWith(code === 0 ? "ok: " : "failed: ");
    expect(r.code).toBe(code);
  });
  test("no filters: no filters rule", async () => {
    const r = await check("--max-errors", "5");
    expect(r.lines.some((l) => l.includes("filters"))).toBe(false);
  });

  test("require-complete fails on a session without its end; the ledger's inconclusive verdict alone exits 3", async () => {
    const r = await runCli("bun", ["check", "open.jsonl", "--require-complete"], { cwd: dir });
    expect(r.stdout.toString().split("\n")[1]).toBe("FAIL  require-complete: 0 of 1 session ended (open.jsonl:1)");
    expect(r.code).toBe(1);
    const v = await runCli("bun", ["check", "open.jsonl"], { cwd: dir });
    expect(v.stdout.toString().split("\n")[0]).toBe(
      "FAIL  verify open.jsonl: inconclusive: session c0ffee00-0000-4000-8000-000000000001: no session_end (truncated or still running)",
    );
    expect(v.code).toBe(3);
  });

  test("--key: every row sealed, or the unsealed rows named", async () => {
    const p = join(dir, "sealed-check.jsonl");
    await writeCheckpointed(p, { calls: 5, every: 3 });
    const ok = await runCli("bun", ["check", p, "--key", KEY.verifierKey]);
    expect(ok.stdout.toString().split("\n")[1]).toBe(`pass  key ${p}: sealed through line 9; 0 rows after it unsealed`);
    expect(ok.code).toBe(0);
    // A row appended after the last checkpoint, chained as a writer would.
    const b = new LedgerBuilder();
    b.prev = getField(parseJson(readFileSync(p, "utf8").trimEnd().split("\n").at(-1)!), "chain") as string;
    b.add({ evt: "note", text: "late" });
    appendFileSync(p, `${b.lines[0]}\n`);
    const r = await runCli("bun", ["check", p, "--key", KEY.verifierKey]);
    expect(r.stdout.toString().split("\n")[1]).toBe(
      `FAIL  key ${p}: sealed through line 9; 1 row after it unsealed (${p}:10)`,
    );
    expect(r.code).toBe(1);
    const none = await runCli("bun", ["check", "main.jsonl", "--key", KEY.verifierKey], { cwd: dir });
    expect(none.stdout.toString()).toContain("FAIL  key main.jsonl: nothing sealed");
    expect(none.code).not.toBe(0);
  });

  test("rules from a JSON and a YAML file, merged with the flags", async () => {
    writeFileSync(join(dir, "rules.json"), JSON.stringify({ "expect-tool": ["review"], max_errors: 0 }));
    writeFileSync(
      join(dir, "rules.yaml"),
      "expect-tool:\n  - read_file=2\nforbid-tool: git_push\nrequire-complete: true\n",
    );
    const j = await check("--rules", "rules.json", "--max-ms", "2000");
    expect(j.lines.slice(1, -1)).toEqual([
      "FAIL  expect-tool review: called 0 times",
      "FAIL  max-errors 0: 1 with status error (main.jsonl:6)",
      "pass  max-ms 2000: 0 calls longer, the longest 1500 ms",
    ]);
    const y = await check("--rules", "rules.yaml");
    expect(y.lines.slice(1, -1)).toEqual([
      "pass  expect-tool read_file=2: called 2 times",
      "FAIL  forbid-tool git_push: called 1 time (main.jsonl:15)",
      "pass  require-complete: 2 of 2 sessions ended",
    ]);
    writeFileSync(join(dir, "bad.yaml"), "max-errors: lots\n");
    const bad = await check("--rules", "bad.yaml");
    expect(bad.stderr).toBe(
      "seam: error: rules file bad.yaml: max-errors takes a number of at least 0, not \"lots\"\nseam: hint: run 'seam check --help' for usage\n",
    );
    expect(bad.code).toBe(2);
  });

  test("--json: one object, each result with its stable kind", async () => {
    const r = await check("--json", "--max-errors", "0", "--expect-tool", "review");
    expect(r.lines).toEqual([
      '{"ok": false, "rules": 3, "failed": 2, "results": [{"kind": "verify", "rule": "verify main.jsonl", "ok": true, "observed": "ok, 17 rows", "where": [], "more": 0}, {"kind": "expect-tool", "rule": "expect-tool review", "ok": false, "observed": "called 0 times", "where": [], "more": 0}, {"kind": "max-errors", "rule": "max-errors 0", "ok": false, "observed": "1 with status error", "where": ["main.jsonl:6"], "more": 0}]}',
    ]);
    expect(r.code).toBe(1);
  });

  const itPy = HAVE_PYTHON ? test : test.skip;
  itPy("--junit: one test case per rule, failures with their message, read back by an XML parser", async () => {
    await check("--expect-tool", "read_file", "--max-errors", "0", "--junit", "junit.xml");
    const py = spawnSync(
      "python3",
      [
        "-c",
        "import json,sys,xml.etree.ElementTree as E;r=E.parse(sys.argv[1]).getroot();s=r.find('testsuite');print(json.dumps([r.tag,r.get('tests'),r.get('failures'),[(c.get('name'),[(f.get('message'),f.text) for f in c.findall('failure')]) for c in s.findall('testcase')]]))",
        join(dir, "junit.xml"),
      ],
      { encoding: "utf8" },
    );
    expect(py.stderr).toBe("");
    expect(JSON.parse(py.stdout)).toEqual([
      "testsuites",
      "3",
      "1",
      [
        ["verify main.jsonl", []],
        ["expect-tool read_file", []],
        ["max-errors 0", [["1 with status error", "FAIL  max-errors 0: 1 with status error (main.jsonl:6)"]]],
      ],
    ]);
  });
});

describe("seam stats", () => {
  test("--by tool: the table (golden) and the sessions", async () => {
    const r = await runCli("bun", ["stats", "main.jsonl"], { cwd: dir });
    expect(r.stdout.toString().split("\n").slice(0, 7)).toEqual([
      "CALLS BY TOOL (tools/call only; most calls first)",
      "  SERVER          TOOL                       CALLS      OK   ERROR   UNANS   CANC   ERR%      P50      P95      P99      MAX         IN        OUT  FIRST (UTC)               LAST (UTC)",
      "+ files           read_file                      2       2       0       0      0     0%     7.00     12.0     12.0     12.0          -          -  2026-11-30T03:24:07.028Z  2026-11-30T03:24:07.070Z",
      "+ git             git_log                        2       1       0       0      0     0%     5.00     30.0     30.0     30.0          -          -  2026-11-30T03:24:07.098Z  2026-11-30T03:24:07.112Z",
      "+ files           slow_scan                      1       0       0       1      0     0%     1500     1500     1500     1500          -          -  2026-11-30T03:24:07.077Z  2026-11-30T03:24:07.077Z",
      "+ files           write_file                     1       0       1       0      0   100%     40.3     40.3     40.3     40.3          -          -  2026-11-30T03:24:07.042Z  2026-11-30T03:24:07.042Z",
      "+ git             git_push                       1       0       0       0      1     0%     90.0     90.0     90.0     90.0          -          -  2026-11-30T03:24:07.105Z  2026-11-30T03:24:07.105Z",
    ]);
    expect(r.stdout.toString()).toContain(
      "\nSESSIONS (most calls first)\nSESSION                               SERVER          BEGIN (UTC)               DURATION   CALLS  ENDED\n3f2a9c1e-5b6d-4e7f-8a9b-0c1d2e3f4a5b  files           2026-11-30T03:24:07.007Z      77ms       4  client_eof, exit 0\n",
    );
    expect(r.code).toBe(0);
  });

  // A call is a tools/call in every grouping and in the sessions: the views add up alike.
  test.each(["tool", "server", "session", "day"])("--by %s counts the calls the sessions count", async (by) => {
    const r = await runCli("bun", ["stats", "--json", "--by", by, "main.jsonl"], { cwd: dir });
    const v = parseJson(r.stdout.toString());
    const sum = (k: string) =>
      (getField(v, k) as unknown[]).reduce((n: number, g) => n + (getField(g as never, "calls") as number), 0);
    expect(sum("groups")).toBe(7);
    expect(sum("sessions")).toBe(7);
  });

  test("a row with calls the chain does not vouch for is marked !, and the mark is said", async () => {
    const r = await runCli("bun", ["stats", "--by", "server", "edited.jsonl"], { cwd: dir });
    const lines = r.stdout.toString().split("\n");
    expect(lines[2]).toMatch(/^! files +4 /);
    expect(lines[3]).toMatch(/^! git +3 /);
    expect(lines[4]).toBe("! some of the row's calls are not vouched for by the chain");
    const ok = await runCli("bun", ["stats", "--by", "server", "main.jsonl"], { cwd: dir });
    expect(ok.stdout.toString()).not.toContain("\n! ");
    expect(r.code).toBe(1);
  });

  test("--by server, session, day in --json: the documented fields", async () => {
    const by = async (b: string) => {
      const r = await runCli("bun", ["stats", "--json", "--by", b, "main.jsonl"], { cwd: dir });
      return parseJson(r.stdout.toString());
    };
    const server = await by("server");
    const groups = getField(server, "groups") as unknown[];
    const files = groups[0]!;
    expect([...(files as Map<string, unknown>).keys()]).toEqual([
      "key",
      "server",
      "tool",
      "calls",
      "ok",
      "error",
      "unanswered",
      "cancelled",
      "statuses",
      "error_rate",
      "p50_ms",
      "p95_ms",
      "p99_ms",
      "max_ms",
      "bytes_in",
      "bytes_out",
      "first",
      "last",
      "vouched",
    ]);
    expect(
      ["key", "calls", "error", "bytes_in", "bytes_out", "max_ms"].map((k) => getField(files as never, k)),
    ).toEqual(["files", 4, 1, 1200, 3400, 1500]);
    const day = await by("day");
    expect(
      (getField(day, "groups") as unknown[]).map((g) => [getField(g as never, "key"), getField(g as never, "calls")]),
    ).toEqual([["2026-11-30", 7]]);
    const session = await by("session");
    expect((getField(session, "groups") as unknown[]).map((g) => getField(g as never, "key"))).toEqual([
      "3f2a9c1e-5b6d-4e7f-8a9b-0c1d2e3f4a5b",
      "b7c8d9e0-1f2a-4b3c-9d4e-5f6a7b8c9d0e",
    ]);
    const bad = await runCli("bun", ["stats", "--by", "week", "main.jsonl"], { cwd: dir });
    expect(bad.code).toBe(2);
  });
});

describe("seam log --follow", () => {
  test("concurrent writers: every row shows up; a new row within 1 s; a torn line is waited for, not reported; Ctrl-C exits 0", async () => {
    const p = join(dir, "follow.jsonl");
    writeFileSync(p, "");
    const follow = start([...seamArgv("bun"), "log", "--follow", "--json", p]);
    const opLines = () =>
      follow
        .stdoutSoFar()
        .toString()
        .split("\n")
        .filter((l) => l.startsWith('{"type": "operation"'));
    const writer = (session: string) =>
      start([process.execPath, join(import.meta.dir, "..", "fixtures", "ledger-writer.ts"), p, session, "150"]).done;
    const [a, b] = await Promise.all([writer("wa"), writer("wb")]);
    expect([a.code, b.code]).toEqual([0, 0]);
    // 150 calls, a begin and an end per writer.
    await until(() => opLines().length === 304, 10000, "every row of both writers");

    // One more row, chained to what the writers left.
    const last = readFileSync(p, "utf8").trimEnd().split("\n").at(-1)!;
    const tail = new LedgerBuilder();
    tail.prev = getField(parseJson(last), "chain") as string;
    tail.add({ evt: "note", text: "appended by hand" });
    tail.add({ evt: "note", text: "the torn one" });
    const t0 = Date.now();
    appendFileSync(p, `${tail.lines[0]}\n`);
    await until(() => opLines().length === 305, 1000, "the appended row within 1 s");
    expect(Date.now() - t0).toBeLessThan(1000);

    const torn = tail.lines[1]!;
    appendFileSync(p, torn.slice(0, 20));
    await new Promise((r) => setTimeout(r, 400));
    expect(opLines().length).toBe(305);
    expect(follow.stdoutSoFar().toString()).not.toContain("torn");
    appendFileSync(p, `${torn.slice(20)}\n`);
    await until(() => opLines().length === 306, 1000, "the completed line");
    expect(opLines().at(-1)).toContain('"name": "note"');

    // Interrupted while a line is half written: that line is not read, so not judged torn.
    tail.add({ evt: "note", text: "never finished" });
    appendFileSync(p, tail.lines[2]!.slice(0, 30));
    await new Promise((r) => setTimeout(r, 300));
    follow.child.kill("SIGINT");
    const done = await follow.done;
    const out = done.stdout.toString().trimEnd().split("\n");
    expect(out.at(-1)).toStartWith('{"type": "verdict", "file": ');
    expect(out.at(-1)).toContain('"verdict": "ok", "ok": true, "rows": 306, "operations": 306, "unvouched": 0');
    expect(done.code).toBe(0);
  }, 30000);
});

describe("seam diff", () => {
  test("tools added and removed, status flips, slowdowns; --exit-code; sessions of one ledger", async () => {
    const side = (id: string, tools: string[], digest: string, status: string, ms: number) =>
      sessionOf(id, "srv", [
        ["tools_list", { rpc_id: 1, status: "ok", tools, tool_count: tools.length, tools_digest: digest, ms: 1 }],
        ["tool_call", { tool: "a", rpc_id: 2, status, ms }],
        ["tool_call", { tool: "a", rpc_id: 3, status, ms }],
        ["tool_call", { tool: "b", rpc_id: 4, status: "ok", ms: 5 }],
      ]);
    const b1 = new LedgerBuilder();
    for (const r of side("s-a", ["a", "b"], "sha256:json-c14n:v1:aa", "ok", 10)) b1.add(r);
    const b2 = new LedgerBuilder();
    for (const r of side("s-b", ["a", "c"], "sha256:json-c14n:v1:bb", "error", 30)) b2.add(r);
    writeLedger(dir, "diff-a.jsonl", b1.lines);
    writeLedger(dir, "diff-b.jsonl", b2.lines);
    writeLedger(dir, "diff-ab.jsonl", [...b1.lines, ...b2.lines]);
    const r = await runCli("bun", ["diff", "diff-a.jsonl", "diff-b.jsonl"], { cwd: dir });
    expect(r.stdout.toString().split("\n").slice(0, 5)).toEqual([
      "--- diff-a.jsonl",
      "+++ diff-b.jsonl",
      "tool removed  b",
      "tool added    c",
      "status flip   a: ok 2 → error 2",
    ]);
    expect(r.stdout.toString()).toContain("slower        a: p50 10 ms → 30 ms (3.0x, at least 2x)\n");
    expect(r.code).toBe(0);
    const e = await runCli("bun", ["diff", "--exit-code", "diff-a.jsonl", "diff-b.jsonl"], { cwd: dir });
    expect(e.code).toBe(1);
    const same = await runCli("bun", ["diff", "--exit-code", "diff-a.jsonl", "diff-a.jsonl"], { cwd: dir });
    expect(same.stdout.toString()).toContain("no differences in tools, statuses or p50\n");
    expect(same.code).toBe(0);
    // The same tools listed, another called: said, and no "no differences" under it.
    const calls = await runCli("bun", ["diff", "main.jsonl", "edited.jsonl"], { cwd: dir });
    const said = calls.stdout.toString();
    expect(said).toContain("called in B only: rm_rf\n");
    expect(said).not.toContain("no differences");
    // Two sessions of one ledger; a changed digest with the same names.
    const s = await runCli("bun", ["diff", "--json", "diff-ab.jsonl#s-a", "diff-ab.jsonl#s-b", "--factor", "4"], {
      cwd: dir,
    });
    const d = parseJson(s.stdout.toString());
    expect([getField(d, "added"), getField(d, "removed"), getField(d, "slowdowns")]).toEqual([["c"], ["b"], []]);
    // A broken side: the verdict decides the exit status.
    const broken = await runCli("bun", ["diff", "main.jsonl", "edited.jsonl"], { cwd: dir });
    expect(broken.code).toBe(1);
    expect(broken.stdout.toString()).toContain("edited.jsonl: broken (");
  }, 60000);
});
