/**
 * Runs the seam CLI the three ways it ships: from source under Bun, as the
 * Node bundle, and as the compiled executable. `npm test` builds dist/ first.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const ROOT = new URL("../..", import.meta.url).pathname;
export type Via = "bun" | "node" | "exe";
/** SEAM_VIAS (comma-separated, e.g. `node`) narrows a run to some of them: .ci/run's Node matrix. */
export const VIAS: Via[] = (process.env.SEAM_VIAS?.split(",") ?? ["bun", "node", "exe"]).filter((v): v is Via =>
  ["bun", "node", "exe"].includes(v),
);

export function seamArgv(via: Via): string[] {
  switch (via) {
    case "bun":
      // From source, Bun would otherwise load a .env and a bunfig.toml from the
      // working directory: the first into seam's environment (and so the server's).
      return [process.execPath, "--no-env-file", `--config=${ROOT}bunfig.toml`, `${ROOT}commands/seam.ts`];
    case "node":
      // SEAM_NODE: the Node binary to run the bundle with (.ci/run's matrix of LTS lines).
      return [process.env.SEAM_NODE || "node", `${ROOT}dist/seam.mjs`];
    case "exe":
      return [`${ROOT}dist/seam`];
  }
}

export function built(via: Via): boolean {
  if (via === "node") return existsSync(`${ROOT}dist/seam.mjs`);
  if (via === "exe") return existsSync(`${ROOT}dist/seam`);
  return true;
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: string;
}

/** Runs `seam …args` to completion, feeding `input` on stdin. */
export function runCli(
  via: Via,
  args: string[],
  opts: { input?: Uint8Array | string; cwd?: string; env?: Record<string, string | undefined> } = {},
): Promise<CliResult> {
  const [cmd, ...pre] = seamArgv(via);
  const own = INSTALLING.has(args[0] ?? "") ? lastingCheckout() : {};
  return new Promise((resolve, reject) => {
    const child = spawn(cmd!, [...pre, ...args], {
      cwd: opts.cwd ?? ROOT,
      env: definedOnly({ ...process.env, NO_COLOR: "1", ...own, ...opts.env }),
      stdio: ["pipe", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (d: Buffer) => out.push(d));
    child.stderr.on("data", (d: Buffer) => err.push(d));
    child.on("error", reject);
    child.stdin.on("error", () => {});
    child.on("close", (code, signal) =>
      resolve({ code, signal, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString("utf8") }),
    );
    if (opts.input !== undefined) child.stdin.end(opts.input);
    else child.stdin.end();
  });
}

/** An environment without the variables set to undefined (a test's way to unset one). */
function definedOnly(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return out;
}

/** The commands that write, or check, a launcher for this checkout's seam in a client's config. */
const INSTALLING = new Set(["install", "uninstall", "status"]);
let lastingTmp: string | undefined;

/**
 * The environment under which this checkout's seam counts as one that lasts.
 * `seam install` refuses to write a launcher that lives in a temporary folder
 * (src/install/launcher.ts), and a clone may itself lie in one (CI clones
 * anywhere): these runs get a TMPDIR of their own, which the checkout is not in.
 * The tests of that refusal set TMPDIR themselves.
 */
export function lastingCheckout(): { TMPDIR: string } {
  lastingTmp ??= mkdtempSync(join(tmpdir(), "seam-test-tmp-"));
  return { TMPDIR: lastingTmp };
}
