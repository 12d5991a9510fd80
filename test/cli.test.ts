import { beforeAll, describe, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, VIAS, runCli, seamArgv } from "./cli.ts";

describe.each(VIAS)("seam via %s", (via) => {
  test("--version prints the package version on stdout", async () => {
    const r = await runCli(via, ["--version"]);
    expect(r.code).toBe(0);
    expect(r.stdout.toString()).toMatch(/^seam \d+\.\d+\.\d+ \(seam-mcp\)\n$/);
    expect(r.stderr).toBe("");
  });
  test("--help goes to stdout, without colour escapes when stdout is no terminal", async () => {
    const r = await runCli(via, ["wrap", "--help"], { env: { NO_COLOR: undefined, CI: undefined, TEST: undefined } });
    expect(r.code).toBe(0);
    const text = r.stdout.toString();
    expect(text).toContain("--max-frame");
    expect(text).not.toContain("\x1b[");
    expect(r.stderr).toBe("");
  });
  // A near known name is offered for a mistyped command or flag; none when nothing is near.
  test.each([
    [["verfy", "x.jsonl"], `unknown command "verfy"`, "did you mean 'seam verify'?"],
    [["stast"], `unknown command "stast"`, "did you mean 'seam stats'?"],
    [["log", "--lst", "3", "x.jsonl"], "unknown flag --lst for 'seam log'", "did you mean --last?"],
    [
      ["check", "--max-error", "0", "x.jsonl"],
      "unknown flag --max-error for 'seam check'",
      "did you mean --max-errors?",
    ],
    [
      ["verify", "--frobnicate", "x.jsonl"],
      "unknown flag --frobnicate for 'seam verify'",
      "run 'seam verify --help' for the flags it takes",
    ],
  ])("seam %p: did you mean", async (argv, error, hint) => {
    const r = await runCli(via, argv);
    expect(r.stderr).toBe(`seam: error: ${error}\nseam: hint: ${hint}\n`);
    expect(r.stdout.length).toBe(0);
    expect(r.code).toBe(2);
  });
  test("an unknown command is a usage error on stderr, exit 2", async () => {
    const r = await runCli(via, ["frobnicate"]);
    expect(r.code).toBe(2);
    expect(r.stdout.length).toBe(0);
    expect(r.stderr).toBe(
      `seam: error: unknown command "frobnicate"\nseam: hint: run 'seam --help' for the list of commands\n`,
    );
  });
});

const made = mkdtempSync(join(tmpdir(), "seam-ledger-"));
const demoLedger = join(made, "demo.jsonl");
beforeAll(async () => {
  expect((await runCli("bun", ["demo", "--ledger", demoLedger])).code).toBe(0);
});

describe.each(VIAS)("stdout into a regular file via %s", (via) => {
  // Regression: a second end() of the stdout sink never called back under Bun
  // when stdout was a file, and the command spun forever.
  test.each([
    [["--version"], /^seam \d+\.\d+\.\d+ \(seam-mcp\)\n$/],
    [["digest", `${ROOT}examples/tool-call.json`], /^sha256:json-c14n:v1:[0-9a-f]{64}\n$/],
    [["verify", demoLedger], /: ok\n/],
  ])("seam %p finishes and the file holds the result", async (args, expected) => {
    const dir = mkdtempSync(join(tmpdir(), "seam-out-"));
    const outPath = join(dir, "out.txt");
    const fd = openSync(outPath, "w");
    const [cmd, ...pre] = seamArgv(via);
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn(cmd!, [...pre, ...args], {
        stdio: ["ignore", fd, "inherit"],
        env: { ...process.env, NO_COLOR: "1" },
      });
      const timer = setTimeout(() => child.kill("SIGKILL"), 15000);
      child.on("close", (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    closeSync(fd);
    expect(code).toBe(0);
    expect(readFileSync(outPath, "utf8")).toMatch(expected);
  });
});
