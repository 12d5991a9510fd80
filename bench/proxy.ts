/**
 * `seam proxy` against a bare streaming reverse proxy that records nothing
 * (bench/bare-http-proxy.mjs, same runtime) and against no proxy at all:
 *
 *   latency     in front of @modelcontextprotocol/server-everything in
 *               streamableHttp mode (it answers a call as an SSE stream): one
 *               session, sequential tools/call (echo) round trips, the targets
 *               taking turns ten calls at a time; the median added over
 *               direct, and seam's added as a ratio of the bare proxy's (goal
 *               ≤ 1.5x), under Bun (source) and Node (bundle); and each
 *               proxy's CPU a call over the timed rounds (all its threads,
 *               from /proc), steadier than latency on a busy machine
 *   throughput  in front of the upstream --upstream names: `fast` (default,
 *               bench/fast-mcp-server.mjs, which answers each call at once as
 *               application/json, so the figure is the proxy's and not
 *               server-everything's own, lower ceiling) or
 *               `everything`; many sessions at once, calls/s direct, through
 *               the bare proxy and through seam, each runtime, in alternating
 *               order; every call must have its tool_call row and each seam
 *               ledger must verify
 *
 *   bun bench/proxy.ts [--calls 300] [--rounds 3] [--warmup N] [--slice 100] [--sessions 50] [--load-calls 2000]
 *                      [--upstream fast|everything] [--latency-upstream everything|fast-sse]
 *                      [--only latency|throughput] [--pin] [--smoke] [--json FILE]
 *                      [--runtimes bun,node] [--also "CMD …"]
 *
 * --latency-upstream fast-sse times latency in front of bench/fast-mcp-server.mjs --sse instead of
 * server-everything: the same SSE answers, from an upstream that uses a small part of server-everything's
 * CPU a call. The three processes share two cores, so what the upstream uses is CPU the proxies wait
 * for, and what a proxy uses, the upstream and the client wait for: the ratio in front of each shows
 * how much of the proxy's figure that sharing makes. The goal is judged in front of server-everything
 * only (the default), the upstream the bench has always timed.
 *
 * --also "CMD …" adds a target beside the Bun seam: CMD (another build or tree of seam, e.g.
 * `bun OTHER/commands/seam.ts`) run as `CMD proxy --upstream URL --ledger FILE`, in the same turns
 * and compared with the same bare Bun proxy, so two builds are measured side by side in one run.
 *
 * --slice N: calls a latency target makes in one turn before the next target's turn (default 100,
 * long against seam proxy's recording delay, RECORD_DELAY_MS, so that its recording runs in its own turn).
 *
 * --pin puts the proxies on CPU 1 and the client and upstream on CPU 0 (taskset), so that the
 * three processes do not share cores as they please. It does not make seam's ratio repeat: pinned
 * runs spread as widely as unpinned ones; read several runs of either.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import {
  built,
  cpuNs,
  cpuNsByThread,
  cpuNsSince,
  Flags,
  fmt,
  median,
  perCallByThread,
  pinSelf,
  ROOT,
  type Row,
  threadsText,
  totalNs,
  writeResult,
} from "./lib.ts";

const flags = new Flags();
const CALLS = flags.number("--calls", 300, 20);
const ROUNDS = flags.number("--rounds", 3, 1);
// Calls each target answers before the timed rounds, as bench/relay.ts warms its relays: long
// enough for the JIT to have compiled the hot paths (a proxy runs for hours; its first calls are not
// what a user waits on). Timed in 1,000-call windows of one process (CPU a call, all threads), seam
// proxy settles only after several thousand calls under both runtimes, later than the bare proxy, and
// under Bun its JIT threads stay busy longest. A shorter warmup times seam's code being compiled, not
// its work. --warmup 20 gives the figures of a process just started.
const WARMUP = flags.number("--warmup", 8000, 0);
/** Calls a latency target makes in one turn (see the timed rounds below). */
const TURN = flags.number("--slice", 100, 1);
const SESSIONS = flags.number("--sessions", 50, 5);
const LOAD_CALLS = flags.number("--load-calls", 2000, 50);
const LOAD_UPSTREAM = flags.string("--upstream") ?? "fast";
if (LOAD_UPSTREAM !== "fast" && LOAD_UPSTREAM !== "everything") throw new Error("--upstream takes fast or everything");
const LATENCY_UPSTREAM = flags.string("--latency-upstream") ?? "everything";
if (LATENCY_UPSTREAM !== "everything" && LATENCY_UPSTREAM !== "fast-sse")
  throw new Error("--latency-upstream takes everything or fast-sse");
const ONLY = flags.string("--only");
const ALSO = flags.string("--also")?.split(" ").filter(Boolean);
const RUNTIMES = (flags.string("--runtimes") ?? "bun,node").split(",");
if (RUNTIMES.some((r) => r !== "bun" && r !== "node")) throw new Error("--runtimes takes bun, node or both");
if (ALSO !== undefined && !RUNTIMES.includes("bun"))
  throw new Error("--also runs beside the Bun seam: --runtimes needs bun");
// --pin: the proxies on CPU 1, this process (the client) and the upstream on CPU 0, so that
// the latency is the proxy's own work rather than how the three share two cores.
const PIN = flags.has("--pin");
if (PIN && (process.platform !== "linux" || Bun.which("taskset") === null || cpus().length < 2))
  throw new Error("--pin needs Linux, taskset and two CPUs");
if (PIN) pinSelf("0");
/** argv run on the CPUs `cpu` names when --pin is given. */
const on = (cpu: string, argv: string[]) => (PIN ? ["taskset", "-c", cpu, ...argv] : argv);
if (ONLY !== undefined && ONLY !== "latency" && ONLY !== "throughput")
  throw new Error("--only takes latency or throughput");
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
    /** Ends the session (DELETE), so that neither upstream nor proxy carries it on. */
    async end(): Promise<void> {
      await (await fetch(url, { method: "DELETE", headers: h })).arrayBuffer();
    },
  };
}

const have = built();
const runtimes = (["bun", "node"] as const).filter((r) => RUNTIMES.includes(r) && (r === "bun" || have.node));

/** The upstream's process, once started (its CPU is shown beside the proxies'). */
let upstreamProc: ChildProcess | undefined;

/** Starts an upstream and returns its /mcp URL. */
async function startUpstream(which: "fast" | "fast-sse" | "everything"): Promise<string> {
  if (which !== "everything") {
    const argv = ["node", `${ROOT}bench/fast-mcp-server.mjs`, ...(which === "fast-sse" ? ["--sse"] : [])];
    const { p, m } = await startWaiting(on("0", argv), /^(http:\/\/\S+)$/m);
    upstreamProc = p;
    return m;
  }
  const port = await freePort();
  ({ p: upstreamProc } = await startWaiting(
    on("0", ["node", `${ROOT}node_modules/@modelcontextprotocol/server-everything/dist/index.js`, "streamableHttp"]),
    /listening on port (\d+)/,
    { PORT: String(port) },
  ));
  return `http://127.0.0.1:${port}/mcp`;
}

interface Target {
  name: string;
  kind: "direct" | "bare" | "seam";
  runtime: string;
  url: string;
  ledger?: string;
  p?: ChildProcess;
  /** tools/call sent through it, to check against its ledger's rows. */
  calls: number;
}

/** Direct, then the bare proxy and seam in each runtime, all in front of `upstream`. */
async function startTargets(upstream: string, tag: string): Promise<Target[]> {
  const targets: Target[] = [{ name: "direct", kind: "direct", runtime: "-", url: upstream, calls: 0 }];
  for (const runtime of runtimes) {
    for (const kind of ["bare", "seam"] as const) {
      const ledger = join(dir, `${tag}-${kind}-${runtime}.jsonl`);
      const argv =
        kind === "bare"
          ? [runtime === "bun" ? BUN : "node", `${ROOT}bench/bare-http-proxy.mjs`, upstream]
          : runtime === "bun"
            ? [BUN, `${ROOT}commands/seam.ts`, "proxy", "--upstream", upstream, "--ledger", ledger]
            : ["node", `${ROOT}dist/seam.mjs`, "proxy", "--upstream", upstream, "--ledger", ledger];
      const { p, m } = await startWaiting(on("1", argv), /^(http:\/\/\S+)$/m);
      const url = `${new URL(m).origin}/mcp`;
      targets.push({
        name: `${kind} (${runtime})`,
        kind,
        runtime,
        url,
        ledger: kind === "seam" ? ledger : undefined,
        p,
        calls: 0,
      });
    }
    if (runtime === "bun" && ALSO !== undefined) {
      const ledger = join(dir, `${tag}-also.jsonl`);
      const { p, m } = await startWaiting(
        on("1", [...ALSO, "proxy", "--upstream", upstream, "--ledger", ledger]),
        /^(http:\/\/\S+)$/m,
      );
      targets.push({ name: "also (bun)", kind: "seam", runtime, url: `${new URL(m).origin}/mcp`, ledger, p, calls: 0 });
    }
  }
  return targets;
}

/** Stops the proxies (SIGTERM ends every session), then checks each seam ledger has one tool_call row a call and verifies. */
async function stopAndCheck(
  targets: Target[],
): Promise<{ name: string; rowed: number; calls: number; verified: boolean }[]> {
  for (const t of targets) if (t.p) t.p.kill("SIGTERM");
  await Promise.all(targets.map((t) => (t.p && t.p.exitCode === null ? new Promise((r) => t.p!.on("exit", r)) : null)));
  return targets
    .filter((t) => t.kind === "seam")
    .map((t) => {
      const rowed = readFileSync(t.ledger!, "utf8")
        .split("\n")
        .filter((l) => l.includes(`"evt": "tool_call"`)).length;
      const verify = spawnSync(BUN, [`${ROOT}commands/seam.ts`, "verify", t.ledger!], { encoding: "utf8" });
      return { name: t.name, rowed, calls: t.calls, verified: verify.status === 0 };
    });
}

const rows: Row[] = [];
const details: Record<string, unknown> = {};
let complete = true;
function report(checks: Awaited<ReturnType<typeof stopAndCheck>>): void {
  for (const c of checks) {
    console.log(
      `  rows: ${c.name}: ${c.rowed} tool_call rows for ${c.calls} calls; seam verify ${c.verified ? "ok" : "FAILED"}`,
    );
    if (c.rowed !== c.calls || !c.verified) complete = false;
  }
}

// ---- latency: rounds of sequential calls, each target in turn, in front of server-everything ----
if (ONLY !== "throughput") {
  const targets = await startTargets(await startUpstream(LATENCY_UPSTREAM), "latency");
  const upstreamName = LATENCY_UPSTREAM === "everything" ? "server-everything" : "fast-mcp-server --sse";
  const judged = LATENCY_UPSTREAM === "everything";
  const sessions = await Promise.all(targets.map((t) => session(t.url)));
  const times: number[][] = targets.map(() => []);
  // Warmed in turns too, so that no target sits idle while the others warm up before the timed rounds:
  // warmed one after another, the target warmed last came out ahead of one warmed before it whatever
  // the build (two seam trees side by side, either way round: whichever ran last gained, in latency
  // and in CPU a call).
  for (let done = 0; done < WARMUP; done += TURN) {
    const n = Math.min(TURN, WARMUP - done);
    for (let t = 0; t < targets.length; t++) {
      for (let i = 0; i < n; i++) await sessions[t]!.call();
      targets[t]!.calls += n;
    }
  }
  // The targets take turns, each turn starting with the next target: the upstream (server-everything
  // keeps state per session and slows as a run goes on) and the machine drift over seconds, and a
  // target always run after another would carry that drift as its own cost. A turn is long against
  // seam proxy's recording delay (RECORD_DELAY_MS, src/proxy/deferred-recording.ts): with turns shorter than
  // it, each recording batch ran in the next target's turn, and a target's figure carried the recording
  // of the seam before it (two seam trees side by side: whichever ran second came out worse, either way
  // round).
  let turn = 0;
  // Each proxy's CPU over the timed rounds, all its threads: a steadier figure than latency on a shared machine.
  // By thread too, and the upstream's and this client's beside it: the three processes share the
  // machine's cores, so what one uses on any thread may be what another waits for.
  const threads0 = targets.map((t) => (t.p?.pid === undefined ? undefined : cpuNsByThread(t.p.pid)));
  const upstream0 = upstreamProc?.pid === undefined ? 0 : cpuNs(upstreamProc.pid);
  const client0 = process.cpuUsage();
  for (let r = 0; r < ROUNDS; r++) {
    for (let done = 0; done < CALLS; done += TURN, turn++) {
      const n = Math.min(TURN, CALLS - done);
      for (let k = 0; k < targets.length; k++) {
        const t = (turn + k) % targets.length;
        for (let i = 0; i < n; i++) times[t]!.push(await sessions[t]!.call());
        targets[t]!.calls += n;
      }
    }
  }
  const med = times.map((xs) => median(xs));
  const timedCalls = times.reduce((a, xs) => a + xs.length, 0);
  const client = process.cpuUsage(client0);
  const upstreamPerCall =
    upstreamProc?.pid === undefined ? 0 : (cpuNs(upstreamProc.pid) - upstream0) / 1e3 / timedCalls;
  const clientPerCall = (client.user + client.system) / timedCalls;
  const used = targets.map((t, i) =>
    t.p?.pid === undefined ? undefined : cpuNsSince(threads0[i]!, cpuNsByThread(t.p.pid)),
  );
  /** ms a call, all threads, and µs a call by thread role, over the timed rounds. */
  const cpuPerCall = used.map((u, i) => (u === undefined ? undefined : totalNs(u) / 1e6 / times[i]!.length));
  const byThread = used.map((u, i) => (u === undefined ? undefined : perCallByThread(u, times[i]!.length)));
  const threadsOf = (t: number) => (byThread[t] === undefined ? "" : ` (${threadsText(byThread[t]!)})`);
  console.log(
    `\nlatency (${upstreamName}${PIN ? "; the proxies on CPU 1, client and upstream on CPU 0" : ""}): ${WARMUP} calls to warm up, then ${ROUNDS} rounds × ${CALLS} sequential tools/call per target (in turns of ${TURN}), median`,
  );
  for (let t = 0; t < targets.length; t++) {
    const tg = targets[t]!;
    const added = med[t]! - med[0]!;
    const bare = targets.findIndex((x) => x.kind === "bare" && x.runtime === tg.runtime);
    const bareAdded = bare >= 0 ? med[bare]! - med[0]! : NaN;
    const ratio = tg.kind === "seam" ? added / bareAdded : undefined;
    // The same ratio round by round: on a shared machine one run's ratio moves by ±0.2x, and the
    // rounds show how much of that a run holds.
    const byRound =
      tg.kind === "seam" && bare >= 0
        ? Array.from({ length: ROUNDS }, (_, r) => {
            const m = (i: number) => median(times[i]!.slice(r * CALLS, (r + 1) * CALLS));
            return (m(t) - m(0)) / (m(bare) - m(0));
          })
        : undefined;
    const rounds = byRound === undefined ? "" : ` (rounds ${byRound.map((x) => fmt.x(x)).join(", ")})`;
    console.log(
      `  ${tg.name.padEnd(12)} ${fmt.us(med[t]!).padStart(9)}  added ${tg.kind === "direct" ? "-" : fmt.us(added)}${ratio !== undefined ? `  ${fmt.x(ratio)} bare's added${rounds}` : ""}${cpuPerCall[t] !== undefined ? `  ${fmt.us(cpuPerCall[t]!)} CPU/call${threadsOf(t)}` : ""}`,
    );
    details[tg.name] = {
      median_ms: med[t],
      added_ms: tg.kind === "direct" ? undefined : added,
      cpu_us_per_call: cpuPerCall[t] === undefined ? undefined : 1000 * cpuPerCall[t]!,
      cpu_us_per_call_by_thread: byThread[t] === undefined ? undefined : Object.fromEntries(byThread[t]!),
      ratio_vs_bare_added: ratio,
      ratio_vs_bare_added_by_round: byRound,
    };
    rows.push({
      section: `${PIN ? "proxy tools/call latency, proxy on its own CPU" : "proxy tools/call latency"}${judged ? "" : ", fast upstream"}`,
      name: tg.name,
      value: `${fmt.us(med[t]!)}${tg.kind === "direct" ? "" : ` (+${fmt.us(added)}; ${fmt.us(cpuPerCall[t]!)} CPU/call${threadsOf(t)})`}`,
      ratio: ratio === undefined ? undefined : `${fmt.x(ratio)} bare's added${rounds}`,
      goal: tg.kind === "seam" && judged ? "added ≤ 1.5x bare's" : undefined,
      met: tg.kind === "seam" && judged ? ratio! <= 1.5 : undefined,
    });
  }
  console.log(
    `  beside them, over the timed rounds: the upstream ${fmt.us(upstreamPerCall / 1000)} of CPU a call, this client ${fmt.us(clientPerCall / 1000)}`,
  );
  details.latency_cpu_us_per_call = { upstream: upstreamPerCall, client: clientPerCall };
  details.latency_upstream = LATENCY_UPSTREAM;
  await Promise.all(sessions.map((s) => s.end()));
  report(await stopAndCheck(targets));
}

// ---- throughput: many sessions at once, each target twice in alternating order ----
if (ONLY !== "latency") {
  const targets = await startTargets(await startUpstream(LOAD_UPSTREAM), "load");
  const per = Math.ceil(LOAD_CALLS / SESSIONS);
  async function load(t: Target): Promise<number> {
    const ss = await Promise.all(Array.from({ length: SESSIONS }, () => session(t.url))).catch((e: Error) => {
      throw new Error(`${t.name}: ${e.message}`);
    });
    const t0 = performance.now();
    await Promise.all(
      ss.map(async (s) => {
        for (let i = 0; i < per; i++) await s.call();
      }),
    );
    const rate = (per * SESSIONS) / ((performance.now() - t0) / 1000);
    t.calls += per * SESSIONS;
    await Promise.all(ss.map((s) => s.end()));
    return rate;
  }
  const rates: number[][] = targets.map(() => []);
  for (const t of targets) rates[targets.indexOf(t)]!.push(await load(t));
  for (const t of [...targets].reverse()) rates[targets.indexOf(t)]!.push(await load(t));
  const rate = rates.map((xs) => (xs[0]! + xs[1]!) / 2);
  console.log(
    `\nthroughput (${LOAD_UPSTREAM} upstream): ${SESSIONS} sessions at once, ${per * SESSIONS} tools/call a pass, mean of 2 passes`,
  );
  for (let t = 0; t < targets.length; t++) {
    const tg = targets[t]!;
    const bare = targets.findIndex((x) => x.kind === "bare" && x.runtime === tg.runtime);
    console.log(
      `  ${tg.name.padEnd(12)} ${fmt.int(rate[t]!).padStart(6)} calls/s  ${((100 * rate[t]!) / rate[0]!).toFixed(0)}% of direct${tg.kind === "seam" ? `, ${((100 * rate[t]!) / rate[bare]!).toFixed(0)}% of bare` : ""}  (passes ${rates[t]!.map((r) => fmt.int(r)).join(", ")})`,
    );
    details[`throughput ${tg.name}`] = { per_s: rate[t], passes: rates[t] };
  }
  const checks = await stopAndCheck(targets);
  report(checks);
  for (const c of checks) {
    const t = targets.findIndex((x) => x.name === c.name);
    const bare = targets.findIndex((x) => x.kind === "bare" && x.runtime === targets[t]!.runtime);
    rows.push({
      section: "proxy throughput",
      name: `${c.name}, ${SESSIONS} sessions, ${LOAD_UPSTREAM} upstream`,
      value: `${fmt.int(rate[t]!)} calls/s`,
      ratio: `bare ${fmt.int(rate[bare]!)}/s, direct ${fmt.int(rate[0]!)}/s`,
      goal: "1,000 calls/s, every call rowed, verify ok",
      met: rate[t]! >= 1000 && c.rowed === c.calls && c.verified,
    });
  }
  details.throughput = { upstream: LOAD_UPSTREAM, sessions: SESSIONS, calls_per_pass: per * SESSIONS, checks };
}

writeResult(flags, { script: "proxy", rows, details });
if (!complete) process.exitCode = 1;
process.exit();
