/**
 * Points git at the repository's own hooks (.githooks/, the commit-msg
 * subject check) when seam is built inside its own git work tree. `npm
 * install` runs it from `prepare`, which also runs where there is no git, no
 * work tree, or a work tree that belongs to some other project (a packed
 * tarball unpacked into one): there it does nothing, and it never fails.
 *
 *   bun scripts/install-hooks.ts [DIR]   DIR defaults to the repository root
 */
import { spawnSync } from "node:child_process";
import { existsSync, realpathSync } from "node:fs";
import { join } from "node:path";

export function installHooks(dir: string): "installed" | "skipped" {
  if (!existsSync(join(dir, ".githooks", "commit-msg"))) return "skipped";
  const top = spawnSync("git", ["rev-parse", "--show-toplevel"], { cwd: dir, encoding: "utf8" });
  if (top.status !== 0 || top.error) return "skipped";
  // Only our own work tree: never set hooks on a project seam was unpacked into.
  if (realpathSync(top.stdout.trim()) !== realpathSync(dir)) return "skipped";
  const set = spawnSync("git", ["config", "core.hooksPath", ".githooks"], { cwd: dir, encoding: "utf8" });
  return set.status === 0 && !set.error ? "installed" : "skipped";
}

if (import.meta.main) {
  try {
    installHooks(process.argv[2] ?? join(import.meta.dir, ".."));
  } catch {
    // A build step must not fail for want of git.
  }
}
