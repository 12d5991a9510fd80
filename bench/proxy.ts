/**
 * `seam proxy` against a bare streaming reverse proxy that records nothing
 * (bench/bare-http-proxy.mjs, same runtime) and against no proxy at all, in
 * front of @modelcontextprotocol/server-everything in streamableHttp mode:
 *
 *   latency     one session, sequential tools/call (echo) round trips; the
 *               median added over direct, and seam's added as a ratio of the
 *               bare proxy's (goal ≤ 1.5x), under Bun (source) and Node (bundle)
 *   throughput  many sessions at once, calls/s through seam (Bun) beside the
 *               same load sent direct (the upstream's own ceiling on this
 *               machine); every call must have its tool_call row and the
 *               ledger must verify
 *
 *   bun bench/proxy.ts [--calls 300] [--rounds 3] [--sessions 50] [--load-calls 2000] [--smoke] [--json FILE]
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import http from "node:http";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Flags, ROOT, type Row, built, fmt, median, writeResult } from "./lib.ts";

const flags = new Flags();
const CALLS = flags.number("--calls", 300, 20);
const ROUNDS = flags.number("--rounds", 3, 1);
const SESSIONS = flags.number("--sessions", 50, 5);
const LOAD_CALLS = flags.number("--load-calls", 2000, 50);
const BUN = process.execPath;
const dir = mkdtempSync(join(tmpdir(), "seam-bench-proxy-"));

const procs: ChildProcess[] = [];
function cleanup(): void {
  for (const p of procs) if (p.exitCode === null) p.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
}
process.on("exit", cleanup);

/** Starts argv and waits for `pattern` on stdout or stderr; returns the first group. */
function startWaiting(
  argv: string[],
  pattern: RegExp,
  env: Record<string, string> = {},
): Promise<{ p: ChildProcess; m: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(argv[0]!, argv.slice(1), { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    procs.push(p);
    let text = "";
    const on = (d: Buffer) => {
      text += d.toString();
      const m = pattern.exec(text);
      if (m) resolve({ p, m: m[1]! });
    };
    p.stdout!.on("data", on);
    p.stderr!.on("data", on);
    p.on("exit", (code) => reject(new Error(`${argv.join(" ")} exited ${code}: ${text}`)));
  });
}

async function freePort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

async function post(
  url: string,
  body: string,
  headers: Record<string, string>,
): Promise<{ status: number; sid?: string; text: string }> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body,
  });
  return { status: res.status, sid: res.headers.get("mcp-session-id") ?? undefined, text: await res.text() };
}

/** An initialized MCP session; `call` does one tools/call round trip and returns its milliseconds. */
async function session(url: string) {
  const init = await post(
    url,
    `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`,
    {},
  );
  const sid = init.sid;
  if (!sid) throw new Error(`no session from ${url}: ${init.status} ${init.text}`);
  const h = { "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" };
  await post(url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h);
  let id = 1;
  return {
    async call(): Promise<number> {
      const t0 = performance.now();
      const r = await post(
        url,
        `{"jsonrpc":"2.0","id":${id++},"method":"tools/call","params":{"name":"echo","arguments":{"message":"bench"}}}`,
        h,
      );
      const ms = performance.now() - t0;
      if (!r.text.includes("Echo: bench")) throw new Error(`unexpected answer: ${r.status} ${r.text.slice(0, 200)}`);
      return ms;
    },
  };
}

const upPort = await freePort();
await startWaiting(
  ["node", `${ROOT}node_modules/@modelcontextprotocol/server-everything/dist/index.js`, "streamableHttp"],
  /listening on port (\d+)/,
  { PORT: String(upPort) },
);
const direct = `http://127.0.0.1:${upPort}/mcp`;
const have = built();

interface Target {
  name: string;
  kind: "direct" | "bare" | "seam";
  runtime: string;
  url: string;
  ledger?: string;
  p?: ChildProcess;
}
const targets: Target[] = [{ name: "direct", kind: "direct", runtime: "-", url: direct }];
async function addProxy(kind: "bare" | "seam", runtime: "bun" | "node"): Promise<void> {
  const ledger = join(dir, `${kind}-${runtime}.jsonl`);
  const argv =
    kind === "bare"
      ? [runtime === "bun" ? BUN : "node", `${ROOT}bench/bare-http-proxy.mjs`, direct]
      : runtime === "bun"
        ? [BUN, `${ROOT}commands/seam.ts`, "proxy", "--upstream", direct, "--ledger", ledger]
        : ["node", `${ROOT}dist/seam.mjs`, "proxy", "--upstream", direct, "--ledger", ledger];
  const { p, m } = await startWaiting(argv, /^(http:\/\/\S+)$/m);
  const origin = new URL(m).origin;
  targets.push({
    name: `${kind} (${runtime})`,
    kind,
    runtime,
    url: `${origin}/mcp`,
    ledger: kind === "seam" ? ledger : undefined,
    p,
  });
}
await addProxy("bare", "bun");
await addProxy("seam", "bun");
if (have.node) {
  await addProxy("bare", "node");
  await addProxy("seam", "node");
}

// ---- latency: rounds of sequential calls, each target in turn ----
const sessions = await Promise.all(targets.map((t) => session(t.url)));
for (const s of sessions) for (let i = 0; i < 20; i++) await s.call(); // warm up
const times: number[][] = targets.map(() => []);
for (let r = 0; r < ROUNDS; r++) {
  for (let t = 0; t < targets.length; t++) {
    for (let i = 0; i < CALLS; i++) times[t]!.push(await sessions[t]!.call());
  }
}
const med = times.map((xs) => median(xs));
const rows: Row[] = [];
console.log(`\nlatency: ${ROUNDS} rounds × ${CALLS} sequential tools/call per target, median`);
const details: Record<string, unknown> = {};
for (let t = 0; t < targets.length; t++) {
  const tg = targets[t]!;
  const added = med[t]! - med[0]!;
  const bare = targets.findIndex((x) => x.kind === "bare" && x.runtime === tg.runtime);
  const bareAdded = bare >= 0 ? med[bare]! - med[0]! : NaN;
  const ratio = tg.kind === "seam" ? added / bareAdded : undefined;
  console.log(
    `  ${tg.name.padEnd(12)} ${fmt.us(med[t]!).padStart(9)}  added ${tg.kind === "direct" ? "-" : fmt.us(added)}${ratio !== undefined ? `  ${fmt.x(ratio)} bare's added` : ""}`,
  );
  details[tg.name] = {
    median_ms: med[t],
    added_ms: tg.kind === "direct" ? undefined : added,
    ratio_vs_bare_added: ratio,
  };
  rows.push({
    section: "proxy tools/call latency",
    name: tg.name,
    value: `${fmt.us(med[t]!)}${tg.kind === "direct" ? "" : ` (+${fmt.us(added)})`}`,
    ratio: ratio === undefined ? undefined : `${fmt.x(ratio)} bare's added`,
    goal: tg.kind === "seam" ? "added ≤ 1.5x bare's" : undefined,
    met: tg.kind === "seam" ? ratio! <= 1.5 : undefined,
  });
}

// ---- throughput: many sessions at once, seam (bun) beside direct ----
async function load(url: string): Promise<number> {
  const ss = await Promise.all(Array.from({ length: SESSIONS }, () => session(url)));
  const per = Math.ceil(LOAD_CALLS / SESSIONS);
  const t0 = performance.now();
  await Promise.all(
    ss.map(async (s) => {
      for (let i = 0; i < per; i++) await s.call();
    }),
  );
  return (per * SESSIONS) / ((performance.now() - t0) / 1000);
}
const seamBun = targets.find((t) => t.kind === "seam" && t.runtime === "bun")!;
// Sessions are left open, so the upstream carries more of them as the run goes on: alternate the order.
const seamRate1 = await load(seamBun.url);
const directRate = await load(direct);
const seamRate2 = await load(seamBun.url);
const seamRate = (seamRate1 + seamRate2) / 2;
console.log(`\nthroughput: ${SESSIONS} sessions at once, ${LOAD_CALLS} tools/call`);
console.log(`  direct      ${fmt.int(directRate)} calls/s (the upstream's ceiling here)`);
console.log(`  seam (bun)  ${fmt.int(seamRate)} calls/s  ${((100 * seamRate) / directRate).toFixed(0)}% of direct`);

// Stop the proxies (SIGTERM ends every session), then check every call was rowed.
for (const t of targets) if (t.p) t.p.kill("SIGTERM");
await Promise.all(targets.map((t) => (t.p && t.p.exitCode === null ? new Promise((r) => t.p!.on("exit", r)) : null)));
const seamCalls = ROUNDS * CALLS + 20 + 2 * Math.ceil(LOAD_CALLS / SESSIONS) * SESSIONS;
const rowed = readFileSync(seamBun.ledger!, "utf8")
  .split("\n")
  .filter((l) => l.includes(`"evt": "tool_call"`)).length;
const verify = spawnSync(BUN, [`${ROOT}commands/seam.ts`, "verify", seamBun.ledger!], { encoding: "utf8" });
const complete = rowed === seamCalls && verify.status === 0;
console.log(`  rows: ${rowed} tool_call rows for ${seamCalls} calls; seam verify exit ${verify.status}`);
rows.push({
  section: "proxy throughput",
  name: `seam (bun), ${SESSIONS} sessions`,
  value: `${fmt.int(seamRate)} calls/s`,
  ratio: `${((100 * seamRate) / directRate).toFixed(0)}% of direct (${fmt.int(directRate)}/s)`,
  goal: "every call rowed, verify ok",
  met: complete,
});
details.throughput = {
  sessions: SESSIONS,
  calls: LOAD_CALLS,
  direct_per_s: directRate,
  seam_bun_per_s: seamRate,
  rowed,
  expected: seamCalls,
};

writeResult(flags, { script: "proxy", rows, details });
if (!complete) process.exitCode = 1;
process.exit();
