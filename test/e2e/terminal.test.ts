/**
 * What a user sees in a real terminal of 80×24: tmux runs seam (the three
 * builds) on a pseudo-terminal of that size and the screen is read back,
 * wrapped lines joined (`capture-pane -J`). Each line on the screen must be
 * within 80 columns (a line the terminal wrapped comes back longer), and the
 * screen must show what seam prints for 80 columns through a pipe.
 * Skipped, with a message, where tmux is not installed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { built, runCli, seamArgv, VIAS } from "../helpers/cli.ts";
import { tempDir } from "../helpers/proc.ts";
import { mainLedger, writeLedger } from "../helpers/read-fixtures.ts";

const HAVE_TMUX = spawnSync("tmux", ["-V"]).status === 0;
if (!HAVE_TMUX) console.warn("test/e2e/terminal.test.ts: skipped, tmux is not installed");

let dir: string;
let socket: string;
beforeAll(() => {
  dir = tempDir("seam-terminal-");
  socket = join(dir, "tmux.sock");
  writeLedger(dir, "main.jsonl", mainLedger().lines);
  // A session that outlives the tests keeps the server up: one that exits with its last session can
  // refuse the next test's new session while it goes.
  if (HAVE_TMUX)
    spawnSync("tmux", ["-S", socket, "-f", "/dev/null", "new-session", "-d", "-s", "keep", "sleep", "3600"]);
});
afterAll(() => {
  if (HAVE_TMUX) spawnSync("tmux", ["-S", socket, "kill-server"]);
  rmSync(dir, { recursive: true, force: true });
});

const DONE = "--seam-terminal-test-done--";
const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** Runs argv in a fresh tmux session of 80×24 and returns every line it showed (history too), wrapped lines joined. */
async function onScreen(name: string, argv: string[]): Promise<string[]> {
  const env = { ...process.env, NO_COLOR: "1", COLUMNS: undefined, LINES: undefined, TZ: "UTC" };
  const script = `${argv.map(quote).join(" ")}; echo ${DONE}; sleep 600`;
  const tmux = (...args: string[]) =>
    spawnSync("tmux", ["-S", socket, "-f", "/dev/null", ...args], { cwd: dir, env, encoding: "utf8" });
  const made = tmux("new-session", "-d", "-x", "80", "-y", "24", "-s", name, "-c", dir, "sh", "-c", script);
  expect(made.stderr).toBe("");
  const deadline = Date.now() + 30_000;
  let lines: string[] = [];
  while (Date.now() < deadline) {
    const shown = tmux("capture-pane", "-p", "-J", "-S", "-", "-t", name).stdout;
    lines = shown.split("\n");
    const at = lines.indexOf(DONE);
    if (at >= 0) {
      tmux("kill-session", "-t", name);
      return lines.slice(0, at);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  tmux("kill-session", "-t", name);
  throw new Error(`${argv.join(" ")} did not finish in tmux; the screen showed:\n${lines.join("\n")}`);
}

describe.each(VIAS)("an 80×24 terminal (tmux) via %s", (via) => {
  const it = HAVE_TMUX && built(via) ? test : test.skip;
  const CASES: [string, string[], string][] = [
    ["help", ["--help"], "Run 'seam COMMAND --help' for a command's arguments and options."],
    ["wrap-help", ["wrap", "--help"], "  seam wrap --ledger PATH [OPTIONS] -- CMD [ARGS…]"],
    ["log", ["log", "main.jsonl"], "  TIME            SESSION   SERVER    OPERATION             STATUS           MS"],
    [
      "stats",
      ["stats", "main.jsonl"],
      "  SERVER    TOOL         CALLS      OK   ERROR   ERR%      P50      P95      MAX",
    ],
  ];
  it.each(CASES)("seam %s: every line within 80 columns, as seam prints it for 80", async (name, argv, seen) => {
    const screen = await onScreen(`${via}-${name}`, [...seamArgv(via), ...argv]);
    const over = screen.filter((l) => [...l].length > 80);
    expect(over).toEqual([]);
    expect(screen).toContain(seen);
    const piped = await runCli(via, argv, { cwd: dir, env: { COLUMNS: "80", TZ: "UTC" } });
    const printed = piped.stdout.toString().replace(/\n$/, "").split("\n");
    // The terminal shows no trailing spaces; seam prints none either.
    expect(screen.slice(-printed.length).map((l) => l.trimEnd())).toEqual(printed);
  });
});
