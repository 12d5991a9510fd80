/** Small helpers for tests that drive real processes. */
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getField, type Json, parseJson } from "../../src/core/json.ts";

/** The folders tempDir made and has not removed yet. */
const made: string[] = [];

/** A fresh folder under the system's temporary folder, removed with what is in it once its test file has run. */
export function tempDir(prefix = "seam-test-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** Removes the folders tempDir made (test/helpers/preload.ts, after each test file). */
export function removeTempDirs(): void {
  for (const dir of made.splice(0)) {
    try {
      // A test may have left a folder unreadable to its owner (a planted-file case).
      chmodSync(dir, 0o700);
      rmSync(dir, { recursive: true, force: true, maxRetries: 2 });
    } catch {
      // Left for the system's own clean-up: another user's file, or one still in use.
    }
  }
}

export interface Done {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: string;
}

/** Spawns argv; `done` resolves when it has exited and its pipes closed. */
export function start(
  argv: string[],
  opts: {
    input?: Uint8Array | string;
    env?: Record<string, string | undefined>;
    cwd?: string;
    stdin?: "pipe" | "ignore";
  } = {},
) {
  const child: ChildProcess = spawn(argv[0]!, argv.slice(1), {
    env: { ...process.env, NO_COLOR: "1", ...opts.env },
    cwd: opts.cwd,
    stdio: [opts.stdin ?? "pipe", "pipe", "pipe"],
  });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout!.on("data", (d: Buffer) => out.push(d));
  child.stderr!.on("data", (d: Buffer) => err.push(d));
  child.stdin?.on("error", () => {});
  if (opts.input !== undefined) child.stdin!.end(opts.input);
  const done = new Promise<Done>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) =>
      resolve({ code, signal, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString("utf8") }),
    );
  });
  return { child, done, stdoutSoFar: () => Buffer.concat(out), stderrSoFar: () => Buffer.concat(err).toString("utf8") };
}

export function run(argv: string[], opts: Parameters<typeof start>[1] = {}): Promise<Done> {
  return start(argv, opts).done;
}

/** The ledger's rows, parsed losslessly; blank lines skipped. */
export function ledgerRows(path: string): Json[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => parseJson(l));
}

export function field(row: Json, key: string): Json | undefined {
  return getField(row, key);
}

export async function until(check: () => boolean, timeoutMs = 10000, what = "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
