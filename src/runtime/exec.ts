/**
 * Runs a command to completion and keeps its output: what selftest, demo and
 * the tests need to drive seam as a user would. node:child_process behaves the
 * same under Bun and Node, so this file has one implementation.
 */
import { spawn } from "node:child_process";

export interface Finished {
  code: number | null;
  signal: string | null;
  stdout: Uint8Array;
  stderr: string;
}

export function exec(
  argv: readonly string[],
  opts: {
    input?: Uint8Array | string;
    env?: Record<string, string | undefined>;
    cwd?: string;
    timeoutMs?: number;
  } = {},
): Promise<Finished> {
  return new Promise((resolve) => {
    const out: Uint8Array[] = [];
    const err: Uint8Array[] = [];
    let child;
    try {
      child = spawn(argv[0]!, argv.slice(1), {
        cwd: opts.cwd,
        env: opts.env ?? process.env,
        stdio: ["pipe", "pipe", "pipe"],
      });
    } catch (e) {
      return resolve({ code: null, signal: null, stdout: new Uint8Array(0), stderr: String(e) });
    }
    const timer = opts.timeoutMs ? setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs) : undefined;
    child.stdout.on("data", (d: Uint8Array) => out.push(d));
    child.stderr.on("data", (d: Uint8Array) => err.push(d));
    child.stdin.on("error", () => {});
    child.on("error", (e) => {
      clearTimeout(timer);
      resolve({ code: null, signal: null, stdout: new Uint8Array(0), stderr: String(e) });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString("utf8") });
    });
    child.stdin.end(opts.input ?? "");
  });
}
