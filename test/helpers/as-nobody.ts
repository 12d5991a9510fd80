/**
 * Runs a script as user nobody, for the tests that need a permission error
 * (root ignores file permissions). The checkout may sit under a directory
 * nobody cannot enter, so the script is bundled, and Bun copied, into a
 * world-readable temporary directory first, and run from there.
 */
import { chmodSync, copyFileSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./proc.ts";

let place: string | undefined;

function runnable(): string {
  // Made once for each test file: tempDir's folders go once their file has run.
  if (place && existsSync(place)) return place;
  place = tempDir("seam-nobody-");
  chmodSync(place, 0o755);
  copyFileSync(process.execPath, join(place, "bun"));
  chmodSync(join(place, "bun"), 0o755);
  return place;
}

/** Bundles `source` (TypeScript; absolute imports allowed) and runs it as nobody with `args`. */
export function runAsNobody(
  source: string,
  args: string[] = [],
): { stdout: string; stderr: string; code: number | null } {
  const dir = runnable();
  const name = `s${Math.random().toString(36).slice(2)}`;
  writeFileSync(join(dir, `${name}.ts`), source);
  const built = Bun.spawnSync([
    process.execPath,
    "build",
    join(dir, `${name}.ts`),
    "--target=bun",
    "--outfile",
    join(dir, `${name}.js`),
  ]);
  if (built.exitCode !== 0) throw new Error(`bundling for nobody failed: ${built.stderr.toString()}`);
  chmodSync(join(dir, `${name}.js`), 0o644);
  const p = Bun.spawnSync(
    ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", join(dir, "bun"), join(dir, `${name}.js`), ...args],
    { cwd: dir },
  );
  return { stdout: p.stdout.toString(), stderr: p.stderr.toString(), code: p.exitCode };
}
