/**
 * Builds the two shipped forms of seam from commands/seam.ts:
 *   dist/seam.mjs  a Node bundle (`#!/usr/bin/env node`), the package `bin`, what `npx seam` runs;
 *   dist/seam      one compiled executable (`--exe`), which must never load a
 *                  `.env` or `bunfig.toml` from the directory it is started in:
 *                  the wrapped server's environment is not seam's to change.
 * Usage: bun scripts/build.ts [--exe]
 */
import { chmodSync, mkdirSync } from "node:fs";

const root = new URL("..", import.meta.url).pathname;
mkdirSync(`${root}dist`, { recursive: true });

const bundle = await Bun.build({
  entrypoints: [`${root}commands/seam.ts`],
  target: "node",
  format: "esm",
  banner: "#!/usr/bin/env node",
  outdir: `${root}dist`,
  naming: "seam.mjs",
});
if (!bundle.success) {
  for (const m of bundle.logs) console.error(m);
  process.exit(1);
}
chmodSync(`${root}dist/seam.mjs`, 0o755);

if (process.argv.includes("--exe")) {
  const proc = Bun.spawnSync({
    cmd: [
      process.execPath,
      "build",
      "--compile",
      "--no-compile-autoload-dotenv",
      "--no-compile-autoload-bunfig",
      `${root}commands/seam.ts`,
      "--outfile",
      `${root}dist/seam`,
    ],
    stdout: "ignore",
    stderr: "inherit",
  });
  if (proc.exitCode !== 0) process.exit(proc.exitCode ?? 1);
}
