import { beforeAll, describe, expect, test } from "bun:test";
import { spawn, spawnSync } from "node:child_process";
import { closeSync, existsSync, openSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { built, ROOT, runCli, seamArgv, VIAS } from "../helpers/cli.ts";
import { tempDir } from "../helpers/proc.ts";

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

const made = tempDir("seam-ledger-");
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
    const dir = tempDir("seam-out-");
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

/** The commands seam's own documents name (`seam NAME` in backquotes): each must be in `seam --help`. */
function documentedCommands(): string[] {
  const docs = [`${ROOT}README.md`, ...readdirSync(`${ROOT}docs`).map((f) => `${ROOT}docs/${f}`)].filter((f) =>
    f.endsWith(".md"),
  );
  const names = new Set<string>();
  for (const f of docs) for (const m of readFileSync(f, "utf8").matchAll(/`seam ([a-z][a-z-]*)/g)) names.add(m[1]!);
  return [...names].sort();
}

const COMMANDS = [
  "wrap",
  "proxy",
  "verify",
  "verify-release",
  "digest",
  "erase",
  "keygen",
  "witness",
  "ship",
  "export",
  "selftest",
  "demo",
  "log",
  "stats",
  "check",
  "pin",
  "install",
  "uninstall",
  "status",
  "diff",
  "report",
  "mock",
  "replay",
  "fixture",
];

describe.each(VIAS)("--help via %s", (via) => {
  const it = built(via) ? test : test.skip;
  const help = async (argv: string[], columns: number) => {
    const r = await runCli(via, argv, { env: { COLUMNS: String(columns) } });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    return r.stdout.toString();
  };
  // Every line within the width (in characters), none ending in a space, at the default width and a narrow one.
  it.each([80, 50])("every command's help fits %p columns, with no trailing spaces", async (columns) => {
    for (const argv of [["--help"], ...COMMANDS.map((c) => [c, "--help"])]) {
      const lines = (await help(argv, columns)).split("\n");
      const over = lines.filter((l) => [...l].length > columns || / $/.test(l));
      expect({ argv, over }).toEqual({ argv, over: [] });
    }
  });
  it("a bare seam prints the help and exits 0", async () => {
    const r = await runCli(via, []);
    expect(r.code).toBe(0);
    expect(r.stdout.toString()).toBe(await help(["--help"], 80));
  });
  it("every command the documents name is in seam --help", async () => {
    const text = await help(["--help"], 80);
    const listed = [...text.matchAll(/^ {2}([a-z][a-z-]*) {2}/gm)].map((m) => m[1]!);
    expect(listed).toEqual(COMMANDS);
    const named = documentedCommands();
    expect(named.length).toBeGreaterThan(5);
    for (const n of named) expect(listed).toContain(n);
  });
  // The USAGE lines show the arguments (and a server's command after --); required flags are in them and marked.
  const USAGE: [string, string[], string[]][] = [
    ["wrap", ["seam wrap --ledger PATH [OPTIONS] -- CMD [ARGS…]"], ["--ledger PATH"]],
    ["proxy", ["seam proxy --upstream URL --ledger PATH [OPTIONS]"], ["--upstream URL", "--ledger PATH"]],
    ["verify", ["seam verify [OPTIONS] PATH…", "seam verify --check-proof FILE [--key VKEY] [--json|--quiet]"], []],
    ["log", ["seam log [OPTIONS] PATH…"], []],
    ["diff", ["seam diff [OPTIONS] A B"], []],
    ["digest", ["seam digest [OPTIONS] [FILE…]"], []],
    ["export", ["seam export --otlp URL [OPTIONS] LEDGER…"], ["--otlp URL"]],
    ["ship", ["seam ship --to URL [OPTIONS] LEDGER…"], ["--to URL"]],
  ];
  it.each(USAGE)("seam %s --help: its USAGE lines, required flags marked", async (cmd, usage, required) => {
    const text = await help([cmd, "--help"], 120);
    const lines = text.split("\n");
    const at = lines.indexOf("USAGE");
    expect(lines.slice(at + 1, at + 1 + usage.length)).toEqual(usage.map((u) => `  ${u}`));
    expect(lines[at + 1 + usage.length]).toBe("");
    for (const flag of required) expect(text).toMatch(new RegExp(`^  ${flag} +\\(required\\) `, "m"));
    expect(text.match(/\(required\)/g)?.length ?? 0).toBe(required.length);
  });
  it("install, uninstall and status each say what their --client does", async () => {
    const said = await Promise.all(
      ["install", "uninstall", "status"].map(async (cmd) => {
        const text = (await help([cmd, "--help"], 400)).split("\n");
        return text.find((l) => l.startsWith("  --client"))?.replace(/ {2,}/g, " ");
      }),
    );
    expect(said[0]).toContain("a client to set up");
    expect(said[1]).toContain("a client whose entries to put back");
    expect(said[2]).toContain("only this client");
  });
});

describe.each(VIAS)("seam wrap's ledger directory and a terminal on stdin via %s", (via) => {
  const it = built(via) ? test : test.skip;
  // wrap makes at most the ledger's own directory, and says so; a missing parent is a usage error, nothing spawned.
  it("makes the ledger's own directory, says so; never a missing parent", async () => {
    const dir = tempDir("seam-ledger-dir-");
    const marker = join(dir, "spawned");
    const deep = await runCli(via, ["wrap", "--ledger", join(dir, "a", "b", "l.jsonl"), "--", "touch", marker]);
    expect(deep.code).toBe(2);
    expect(deep.stderr).toBe(
      `seam: error: cannot make the ledger's directory ${join(dir, "a", "b")}: no such file or directory\nseam: hint: seam makes only the ledger's own directory: make ${join(dir, "a")} first, or choose another --ledger\n`,
    );
    expect(existsSync(join(dir, "a"))).toBe(false);
    expect(existsSync(marker)).toBe(false);
    const own = await runCli(via, ["wrap", "--ledger", join(dir, "a", "l.jsonl"), "--", "true"]);
    expect(own.code).toBe(0);
    expect(own.stderr).toBe(`seam: info: made the directory ${join(dir, "a")} for the ledger\n`);
    expect(existsSync(join(dir, "a", "l.jsonl"))).toBe(true);
    const again = await runCli(via, ["wrap", "--ledger", join(dir, "a", "l.jsonl"), "--", "true"]);
    expect(again.stderr).toBe("");
  });
  // Started by hand in a terminal, wrap says what it waits for; from a client (a pipe) it says nothing.
  it("a terminal on stdin: a hint on stderr; a pipe: none", async () => {
    const dir = tempDir("seam-tty-");
    const ledger = join(dir, "l.jsonl");
    const cmd = [...seamArgv(via), "wrap", "--ledger", ledger, "--", "true"].map((x) => `'${x}'`).join(" ");
    const r = spawnSync("script", ["-qec", cmd, "/dev/null"], { env: { ...process.env, NO_COLOR: "1" } });
    expect(r.stdout.toString()).toContain("seam: info: stdin is a terminal: seam wrap relays what an MCP client");
    const piped = await runCli(via, ["wrap", "--ledger", ledger, "--", "true"]);
    expect(piped.stderr).toBe("");
  });
});
