/**
 * Builds the shipped forms of seam:
 *   dist/seam.mjs  a Node bundle (`#!/usr/bin/env node`) of commands/seam.ts, the package `bin`;
 *   dist/lib/      the library entry points of src/api/ (ESM, shared chunks), the package `exports`,
 *                  with their declarations in dist/types/;
 *   dist/seam      one compiled executable (`--exe`, its code compiled to bytecode), which must never load a
 *                  `.env` or `bunfig.toml` from the directory it is started in:
 *                  the wrapped server's environment is not seam's to change.
 * Usage: bun scripts/build.ts [--exe]
 */
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";

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

rmSync(`${root}dist/lib`, { recursive: true, force: true });
const lib = await Bun.build({
  entrypoints: ["index", "actions", "checkpoint"].map((n) => `${root}src/api/${n}.ts`),
  target: "node",
  format: "esm",
  splitting: true,
  outdir: `${root}dist/lib`,
  naming: { entry: "[name].mjs", chunk: "chunk-[hash].mjs" },
});
if (!lib.success) {
  for (const m of lib.logs) console.error(m);
  process.exit(1);
}

// Declarations for the library: tsc emits them with the sources' `.ts`
// specifiers, which a consumer's TypeScript resolves only as `.js`.
rmSync(`${root}dist/types`, { recursive: true, force: true });
const tsc = Bun.spawnSync({
  cmd: [process.execPath, `${root}node_modules/typescript/bin/tsc`, "-p", `${root}tsconfig.api.json`],
  stdout: "inherit",
  stderr: "inherit",
});
if (tsc.exitCode !== 0) process.exit(tsc.exitCode ?? 1);
for (const f of readdirSync(`${root}dist/types`, { recursive: true, encoding: "utf8" })) {
  if (!f.endsWith(".d.ts")) continue;
  const path = `${root}dist/types/${f}`;
  writeFileSync(path, readFileSync(path, "utf8").replace(/(from ["']\.\.?\/[^"']+)\.ts(["'])/g, "$1.js$2"));
}

if (process.argv.includes("--exe")) {
  const proc = Bun.spawnSync({
    cmd: [
      process.execPath,
      "build",
      "--compile",
      // Compiled to bytecode at build time: the executable starts without
      // parsing and compiling its bundle, sooner and smaller (bench/footprint.ts).
      // Bytecode of ES modules asks for the ESM output format.
      "--bytecode",
      "--format=esm",
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
