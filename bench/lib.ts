/**
 * What the benchmark scripts share: their command-line flags, the figures
 * they hand to bench/run.ts, and a description of the machine.
 *
 * A script run with `--json FILE` writes its results there as
 *   {"script":"relay","rows":[{"section":"round trip","name":"seam (bun)","value":"212 µs",
 *     "ratio":"1.4x bare","goal":"≤ 2x bare","met":true}, …],"details":{…}}
 * `rows` are what the one table of `npm run bench` shows; `details` holds the raw numbers.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, release, totalmem } from "node:os";
import { dirname } from "node:path";

export const ROOT = new URL("..", import.meta.url).pathname;

/** The fields of a typical tool_call row, for the benchmarks that append rows. */
export const TOOL_CALL_FIELDS = {
  tool: "read_file",
  rpc_id: 12345,
  args_digest: "sha256:json-c14n:v1:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
  result_digest: "sha256:json-c14n:v1:60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752",
  status: "ok",
  ms: 3.25,
};

/** One line of the summary table. `met` is set only where a goal applies. */
export interface Row {
  section: string;
  name: string;
  value: string;
  ratio?: string;
  goal?: string;
  met?: boolean;
}

export interface ScriptResult {
  script: string;
  rows: Row[];
  details: unknown;
}

/** `--name value` flags of a script; a flag given twice takes the last. */
export class Flags {
  constructor(private readonly argv: string[] = process.argv.slice(2)) {}

  has(name: string): boolean {
    return this.argv.includes(name);
  }

  string(name: string): string | undefined {
    const i = this.argv.lastIndexOf(name);
    return i >= 0 ? this.argv[i + 1] : undefined;
  }

  /** A number flag; `smoke` is the default under --smoke, `full` otherwise. */
  number(name: string, full: number, smoke = full): number {
    const s = this.string(name);
    if (s === undefined) return this.has("--smoke") ? smoke : full;
    const n = Number(s);
    if (!Number.isFinite(n) || n < 0) throw new Error(`${name} takes a number, not ${JSON.stringify(s)}`);
    return n;
  }
}

/** Writes the script's result where `--json` says, if it says. */
export function writeResult(flags: Flags, result: ScriptResult): void {
  const path = flags.string("--json");
  if (path === undefined) return;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(result, null, 1)}\n`);
}

export interface Machine {
  cpus: number;
  cpu: string;
  memory_gb: number;
  os: string;
  bun: string;
  node: string | null;
  python: string | null;
}

function versionOf(cmd: string, args: string[]): string | null {
  try {
    return execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })
      .trim()
      .replace(/^v|^Python /, "");
  } catch {
    return null;
  }
}

/** The machine, without anything that names it (no hostname, user or path). */
export function machine(): Machine {
  let os = `${process.platform} ${release()}`;
  try {
    const pretty = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(readFileSync("/etc/os-release", "utf8"));
    if (pretty) os = `${pretty[1]}, ${process.platform} ${release()}`;
  } catch {}
  let cpu = cpus()[0]?.model ?? "unknown";
  try {
    cpu = /^model name\s*:\s*(.*)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1]?.trim() ?? cpu;
  } catch {}
  return {
    cpus: cpus().length,
    cpu,
    memory_gb: Math.round(totalmem() / 2 ** 30),
    os,
    bun: process.versions.bun ?? "none",
    node: versionOf("node", ["--version"]),
    python: versionOf("python3", ["--version"]),
  };
}

/** Whether the shipped builds exist (bun scripts/build.ts --exe makes them). */
export function built(): { node: boolean; exe: boolean } {
  return { node: existsSync(`${ROOT}dist/seam.mjs`), exe: existsSync(`${ROOT}dist/seam`) };
}

export const fmt = {
  int: (n: number) => Math.round(n).toLocaleString("en-US"),
  x: (r: number) => `${r.toFixed(r >= 10 ? 0 : r >= 1 ? 2 : 3)}x`,
  us: (ms: number) => `${ms < 0.01 ? (ms * 1000).toFixed(1) : Math.round(ms * 1000)} µs`,
  mb: (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`,
};

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}
