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
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
mkdirSync(`${root}dist`, { recursive: true });

rmSync(`${root}dist/cli`, { recursive: true, force: true });
const bundle = await Bun.build({
  entrypoints: [`${root}commands/seam.ts`],
  target: "node",
  format: "esm",
  banner: "#!/usr/bin/env node",
  // Each command's code in chunks of its own (dist/cli/), loaded when run: Node
  // parses only what `seam wrap` uses, not every command.
  splitting: true,
  outdir: `${root}dist`,
  naming: { entry: "seam.mjs", chunk: "cli/[hash].mjs" },
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
  const compile = (extra: string[]) => {
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
        ...extra,
        `${root}commands/seam.ts`,
        "--outfile",
        `${root}dist/seam`,
      ],
      stdout: "ignore",
      stderr: "inherit",
    });
    if (proc.exitCode !== 0) process.exit(proc.exitCode ?? 1);
  };
  compile([]);
  // Then again, with the bytecode a wrapped session runs laid out together
  // at the front (Bun's --bytecode-order): a `seam wrap` held open all day
  // then maps a few pages of bytecode instead of pages scattered over all of
  // it (bench/footprint.ts). Recorded from this very build.
  const orderDir = mkdtempSync(join(tmpdir(), "seam-build-order-"));
  const orders = recordBytecodeOrder(orderDir);
  if (orders.length > 0) compile([`--bytecode-order=${orders.join(",")}`]);
  rmSync(orderDir, { recursive: true, force: true });
}

/**
 * Runs dist/seam the way it runs most (`wrap`, one session of a few calls;
 * then `verify` of its ledger) with BUN_BYTECODE_ORDER_OUT, each run's order
 * file most common first; none when a run fails (the build then keeps the
 * bytecode's own layout).
 */
function recordBytecodeOrder(orderDir: string): string[] {
  const ledger = join(orderDir, "ledger.jsonl");
  const calls = [
    {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "build", version: "1" } },
    },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { jsonrpc: "2.0", id: 2, method: "tools/list" },
    { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "echo", arguments: { text: "hello" } } },
  ];
  const runs = [
    {
      argv: ["wrap", "--ledger", ledger, "--", process.execPath, `${root}bench/echo-server.mjs`],
      stdin: new TextEncoder().encode(calls.map((c) => `${JSON.stringify(c)}\n`).join("")),
    },
    { argv: ["verify", ledger], stdin: new Uint8Array(0) },
  ];
  const out: string[] = [];
  for (const [i, run] of runs.entries()) {
    const order = join(orderDir, `order-${i}.txt`);
    const proc = Bun.spawnSync({
      cmd: [`${root}dist/seam`, ...run.argv],
      stdin: run.stdin,
      stdout: "ignore",
      stderr: "inherit",
      env: { ...process.env, BUN_BYTECODE_ORDER_OUT: order },
    });
    if (proc.exitCode !== 0 || !existsSync(order)) {
      console.error(
        `build: no bytecode order from 'seam ${run.argv[0]}' (exit ${proc.exitCode}); the executable keeps its default layout`,
      );
      return [];
    }
    out.push(order);
  }
  return out;
}
