/**
 * .githooks/commit-msg refuses a subject longer than 72 characters, and
 * scripts/install-hooks.ts turns it on only in seam's own work tree. Both run
 * as real processes: the hook under sh and under git, the installer in
 * temporary repositories (never in this one).
 */
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { installHooks } from "../../scripts/install-hooks.ts";
import { tempDir } from "../helpers/proc.ts";

const ROOT = join(import.meta.dir, "../..");
const HOOK = join(ROOT, ".githooks", "commit-msg");
const hasGit = spawnSync("git", ["--version"]).status === 0;

function hook(message: string): { code: number | null; stderr: string } {
  const dir = tempDir("seam-hook-");
  const file = join(dir, "COMMIT_EDITMSG");
  writeFileSync(file, message);
  const r = spawnSync("sh", [HOOK, file], { encoding: "utf8" });
  return { code: r.status, stderr: r.stderr };
}

const subject = (n: number, fill = "x") => `area: ${fill.repeat(n - 6)}`;

describe(".githooks/commit-msg", () => {
  test.each([
    ["a 72-character subject", `${subject(72)}\n\nbody ${"y".repeat(200)}\n`, 0],
    ["a 73-character subject", `${subject(73)}\n`, 1],
    ["72 characters of which some take two or three bytes", `${subject(72, "…")}\n`, 0],
    ["73 such characters", `${subject(73, "µ")}\n`, 1],
    ["comments and blank lines before the subject", `# Please enter\n\n${subject(72)}\n`, 0],
    ["a long line that is a comment", `${subject(20)}\n# ${"z".repeat(100)}\n`, 0],
    ["git's own merge subject, however long", `Merge branch '${"b".repeat(80)}' into docs\n`, 0],
    ["an empty message", "# only a comment\n\n", 1],
  ])("%s", (_name, message, code) => {
    const r = hook(message);
    expect(r.code).toBe(code);
    if (code !== 0) expect(r.stderr).toContain("commit-msg:");
  });

  test.skipIf(!hasGit)("git runs it: a commit with a 73-character subject is refused, 72 made", () => {
    const repo = tempDir("seam-hook-repo-");
    const git = (...args: string[]) =>
      spawnSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
        cwd: repo,
        encoding: "utf8",
      });
    expect(git("init", "-q").status).toBe(0);
    mkdirSync(join(repo, ".githooks"));
    copyFileSync(HOOK, join(repo, ".githooks", "commit-msg"));
    expect(installHooks(repo)).toBe("installed");
    writeFileSync(join(repo, "f"), "1");
    git("add", "f");
    const refused = git("commit", "-q", "-m", subject(73));
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain("at most 72");
    expect(git("commit", "-q", "-m", subject(72)).status).toBe(0);
    expect(git("log", "--format=%s").stdout.trim()).toBe(subject(72));
  });
});

describe.skipIf(!hasGit)("scripts/install-hooks.ts", () => {
  const hooksPath = (dir: string) =>
    spawnSync("git", ["config", "--get", "core.hooksPath"], { cwd: dir, encoding: "utf8" }).stdout.trim();

  test("does nothing, and does not fail, outside a git work tree", () => {
    const dir = tempDir("seam-nogit-");
    mkdirSync(join(dir, ".githooks"));
    copyFileSync(HOOK, join(dir, ".githooks", "commit-msg"));
    expect(installHooks(dir)).toBe("skipped");
    const r = spawnSync(process.execPath, [join(ROOT, "scripts", "install-hooks.ts"), dir]);
    expect(r.status).toBe(0);
  });

  test("leaves a work tree seam was unpacked into alone", () => {
    const outer = tempDir("seam-outer-");
    spawnSync("git", ["init", "-q"], { cwd: outer });
    const pkg = join(outer, "node_modules", "seam-mcp");
    mkdirSync(join(pkg, ".githooks"), { recursive: true });
    copyFileSync(HOOK, join(pkg, ".githooks", "commit-msg"));
    expect(installHooks(pkg)).toBe("skipped");
    expect(hooksPath(outer)).toBe("");
  });

  test("does nothing without the hook (a packed tarball has none)", () => {
    const repo = tempDir("seam-nohook-");
    spawnSync("git", ["init", "-q"], { cwd: repo });
    expect(installHooks(repo)).toBe("skipped");
    expect(hooksPath(repo)).toBe("");
  });
});
