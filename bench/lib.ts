/**
 * What the benchmark scripts share: their command-line flags, the figures
 * they hand to bench/run.ts, and a description of the machine.
 *
 * A script run with `--json FILE` writes its results there as
 *   {"script":"relay","rows":[{"section":"round trip","name":"seam (bun)","value":"<figure>",
 *     "ratio":"<ratio>","goal":"≤ 2x bare","met":true}, …],"details":{…}}
 * `rows` are what the one table of `npm run bench` shows; `details` holds the raw numbers.
 */
import { execFileSync } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { cpus, release, totalmem } from "node:os";
import { dirname } from "node:path";
import { lineForm } from "../src/core/canonical/index.ts";
import { chainOf, GENESIS } from "../src/core/chain.ts";
import { digestJson } from "../src/core/digest.ts";
import type { Json } from "../src/core/json.ts";

export const ROOT = new URL("..", import.meta.url).pathname;

/** The floor the micro benchmarks hold seam's hashing to: node:crypto's SHA-256 of a string, as hex. */
export function sha256Floor(s: string): string {
  return createHash("sha256").update(s).digest("hex");
}

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

/** Writes `n` rows of wrap-shaped sessions; returns the count of rows and seconds taken. */
export function generateLedger(path: string, n: number): { rows: number; seconds: number } {
  const t0 = performance.now();
  const fd = openSync(path, "w");
  const enc = new TextEncoder();
  let prev = GENESIS;
  let rows = 0;
  let pending: string[] = [];
  let clock = Date.UTC(2026, 10, 30, 3, 0, 0);
  const digests = Array.from({ length: 64 }, (_, i) => digestJson({ text: `payload ${i}` }));
  const put = (row: { [k: string]: Json }) => {
    row.ts = new Date((clock += 3)).toISOString();
    const chain = chainOf(prev, row);
    row.chain = chain;
    prev = chain;
    pending.push(lineForm(row));
    rows++;
    if (pending.length >= 4096) {
      writeSync(fd, enc.encode(`${pending.join("\n")}\n`));
      pending = [];
    }
  };
  const head = (evt: string, session: string, seq: number) => ({
    evt,
    seam: "mcp-stdio",
    seam_impl: "seam/0.1.0",
    session,
    seq,
    server: "server-everything",
  });
  for (let s = 0; rows < n; s++) {
    const session = randomUUID();
    let seq = 0;
    // 400 calls a session; the last one takes what is left, so the count is exact.
    const calls = Math.min(400, Math.max(0, n - rows - 3));
    put({
      ...head("session_begin", session, ++seq),
      command: ["npx", "-y", "@modelcontextprotocol/server-everything"],
      command_digest: digests[0]!,
      cwd: "/home/user/project",
      pid: 40000 + s,
      host: "bench",
      runtime: "bun 1.4.5",
      raw_payloads: false,
      max_frame: 67108864,
      fsync: "batch",
    });
    put({
      ...head("mcp_initialize", session, ++seq),
      status: "ok",
      client_info: { name: "claude-code", version: "2.1.0" },
      server_info: { name: "example-servers/everything", version: "1.0.0" },
      protocol_version: "2025-06-18",
      result_digest: digests[1]!,
      ms: 4.2,
    });
    let n2 = 0;
    for (let c = 0; c < calls; c++, n2++) {
      put({
        ...head("tool_call", session, ++seq),
        tool: c % 3 ? "echo" : "add",
        rpc_id: c + 2,
        args_digest: digests[c % 64]!,
        result_digest: digests[(c * 7) % 64]!,
        status: c % 50 ? "ok" : "error",
        ms: 1 + (c % 97) / 10,
      });
    }
    put({
      ...head("session_end", session, ++seq),
      reason: "client_eof",
      exit_code: 0,
      rows_before_end: seq - 1,
      calls: n2,
      bytes: { c2s: 12000 * n2, s2c: 34000 * n2 },
      stream_digests: {
        c2s: digests[2]!.replace("json-c14n", "raw-bytes"),
        s2c: digests[3]!.replace("json-c14n", "raw-bytes"),
      },
    });
  }
  if (pending.length > 0) writeSync(fd, enc.encode(`${pending.join("\n")}\n`));
  closeSync(fd);
  return { rows, seconds: (performance.now() - t0) / 1000 };
}

/** Moves this process and all its threads onto the CPUs `cpuList` names (taskset, Linux). */
export function pinSelf(cpuList: string): void {
  const r = Bun.spawnSync({
    cmd: ["taskset", "-a", "-p", "-c", cpuList, String(process.pid)],
    stdout: "ignore",
    stderr: "pipe",
  });
  if (r.exitCode !== 0) throw new Error(`taskset failed: ${r.stderr.toString().trim()}`);
}

/**
 * CPU time a process has used so far, all its threads, in nanoseconds: the
 * first field of /proc/<pid>/task/<tid>/schedstat (0 when unreadable).
 */
export function cpuNs(pid: number): number {
  return totalNs(cpuNsByThread(pid));
}

/** All threads' nanoseconds of a cpuNsByThread reading (or of cpuNsSince's difference of two). */
export function totalNs(by: Map<ThreadRole, number>): number {
  let ns = 0;
  for (const v of by.values()) ns += v;
  return ns;
}

/** The roles threadRole gives, in the order a breakdown lists them. */
export const THREAD_ROLES = ["main", "worker", "jit", "memory", "other"] as const;
export type ThreadRole = (typeof THREAD_ROLES)[number];

/**
 * What a thread of a Bun or Node process is for, by its name in /proc:
 * `main` (the thread the process started with), `worker` (a Worker: seam
 * wrap's recorder), `jit` (JavaScriptCore's compiler threads), `memory`
 * (its collector's helpers and the allocator's scavenger), or `other` (Node
 * names every thread "node", so its threads other than main are all here).
 */
export function threadRole(comm: string, main: boolean): ThreadRole {
  if (main) return "main";
  if (comm === "Worker") return "worker";
  if (comm === "JITWorker") return "jit";
  if (comm === "HeapHelper" || comm.endsWith("ollector Thread") || comm === "mi-scavenger") return "memory";
  return "other";
}

/** What each threadRole used between two cpuNsByThread readings, in nanoseconds. */
export function cpuNsSince(before: Map<ThreadRole, number>, after: Map<ThreadRole, number>): Map<ThreadRole, number> {
  const used = new Map<ThreadRole, number>();
  for (const [role, ns] of after) used.set(role, ns - (before.get(role) ?? 0));
  return used;
}

/** µs a call by threadRole, in the order THREAD_ROLES lists them, from nanoseconds used over `calls`; roles under 0.5 µs left out. */
export function perCallByThread(used: Map<ThreadRole, number>, calls: number): [ThreadRole, number][] {
  return THREAD_ROLES.map((role): [ThreadRole, number] => [role, (used.get(role) ?? 0) / 1e3 / calls]).filter(
    ([, us]) => us >= 0.5,
  );
}

/** "main 30, worker 18, …": a perCallByThread split as the tables show it. */
export function threadsText(split: [ThreadRole, number][], digits = 0): string {
  return split.map(([role, us]) => `${role} ${us.toFixed(digits)}`).join(", ");
}

/** CPU time a process has used so far, in nanoseconds, by threadRole (roles that used none are left out). */
export function cpuNsByThread(pid: number): Map<ThreadRole, number> {
  const by = new Map<ThreadRole, number>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const ns = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
        const role = threadRole(readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim(), tid === String(pid));
        if (ns > 0) by.set(role, (by.get(role) ?? 0) + ns);
      } catch {}
    }
  } catch {}
  return by;
}
