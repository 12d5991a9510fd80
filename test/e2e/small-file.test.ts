/**
 * Files that configure seam are read only when they are regular files of a
 * bounded size (src/runtime/small-file.ts): a client's config in a cloned
 * repository, or a rules file a pull request changed, may be a symlink to
 * /dev/zero or, on a shared disk, a FIFO. Each must be refused at once,
 * never read until memory runs out or waited on forever.
 */
import { describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describeIoError } from "../../src/base/io-error.ts";
import { readSmallFile } from "../../src/runtime/small-file.ts";
import { runCli } from "../helpers/cli.ts";
import { tempDir } from "../helpers/proc.ts";

/** Puts at `path` what the case names: a regular file of `bytes` bytes, a FIFO, or a symlink to /dev/zero. */
function plant(path: string, what: "file" | "fifo" | "zero", bytes = 0): void {
  mkdirSync(join(path, ".."), { recursive: true });
  if (what === "file") writeFileSync(path, "x".repeat(bytes));
  else if (what === "fifo") execFileSync("mkfifo", [path]);
  else symlinkSync("/dev/zero", path);
}

describe("readSmallFile", () => {
  test.each([
    ["a regular file of exactly the limit", "file", 16, "16 bytes"],
    ["a regular file one byte over", "file", 17, "file too large"],
    ["a FIFO (no writer: an open that blocked would never return)", "fifo", 0, "not a regular file"],
    ["a symlink to /dev/zero (endless)", "zero", 0, "not a regular file"],
  ] as const)("%s", (_name, what, bytes, want) => {
    const path = join(tempDir(), "f");
    plant(path, what, bytes);
    let got: string;
    try {
      got = `${readSmallFile(path, 16).length} bytes`;
    } catch (e) {
      got = describeIoError(e);
    }
    expect(got).toBe(want);
  });
});

describe("commands that read such files refuse them at once", () => {
  test.each([
    ["a symlink to /dev/zero", "zero"],
    ["a FIFO", "fifo"],
  ] as const)("seam install --scope project and seam status, the config being %s", async (_name, what) => {
    const project = tempDir();
    const config = join(project, ".cursor", "mcp.json");
    plant(config, what);
    const home = tempDir();
    const install = await runCli("bun", ["install", "--client", "cursor", "--scope", "project", "--dry-run"], {
      cwd: project,
      env: { SEAM_CONFIG_HOME: home },
    });
    expect(install.code).toBe(1);
    expect(install.stderr).toContain(`cannot read ${config}: not a regular file`);
    // status looks at the user's files: the same file, planted in the home it is told to use.
    plant(join(home, ".cursor", "mcp.json"), what);
    const status = await runCli("bun", ["status", "--client", "cursor", "--config-root", home]);
    expect(status.code).toBe(1);
    expect(status.stdout.toString()).toBe(`Cursor (user): ${join(home, ".cursor", "mcp.json")}: cannot be read\n`);
    expect(status.stderr).toBe(`seam: error: cannot read ${join(home, ".cursor", "mcp.json")}: not a regular file\n`);
    // --json names the problem beside the message, for a machine to tell it from a file that does not parse.
    const json = await runCli("bun", ["status", "--json", "--client", "cursor", "--config-root", home]);
    expect(JSON.parse(json.stdout.toString()).map((f: { problem?: string }) => f.problem)).toEqual(["unreadable"]);
  });

  test("seam check --rules: a rules file that is a symlink to /dev/zero", async () => {
    const dir = tempDir();
    const rules = join(dir, "rules.yaml");
    plant(rules, "zero");
    writeFileSync(join(dir, "l.jsonl"), "");
    const r = await runCli("bun", ["check", "--rules", rules, join(dir, "l.jsonl")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toStartWith(`seam: error: cannot read rules file ${rules}: not a regular file\n`);
  });
});
