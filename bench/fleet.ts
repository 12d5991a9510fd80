/**
 * Shipping and central verification against a local single-node NATS
 * server (Debian's nats-server), as ratios against local `seam verify` of
 * the same ledger:
 *   ship     lines/s of `seam ship` into a fresh stream    (goal ≥ 50,000 lines/s)
 *   central  rows/s of `seam verify nats://…/STREAM`       (goal ≥ 100,000 rows/s)
 *
 *   bun bench/fleet.ts [--rows 1000000] [--smoke] [--json FILE]
 * Without nats-server on the machine it says so and writes no figures.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Flags, generateLedger, ROOT, type Row, writeResult } from "./lib.ts";

const flags = new Flags();
const rows = flags.number("--rows", 1_000_000, 2_000);
const seam = [process.execPath, `${ROOT}commands/seam.ts`];

if (spawnSync("nats-server", ["--version"]).status !== 0) {
  console.log("bench/fleet.ts: nats-server is not installed (apt-get install nats-server): skipped");
  writeResult(flags, { script: "fleet", rows: [], details: { skipped: "no nats-server" } });
  process.exit(0);
}

const dir = mkdtempSync(join(tmpdir(), "seam-bench-fleet-"));
const ledger = join(dir, "ledger.jsonl");
generateLedger(ledger, rows);

const port = await new Promise<number>((resolve) => {
  const s = createServer().listen(0, "127.0.0.1", () => {
    const p = (s.address() as { port: number }).port;
    s.close(() => resolve(p));
  });
});
const server: ChildProcess = spawn(
  "nats-server",
  ["-a", "127.0.0.1", "-p", String(port), "-js", "-sd", join(dir, "js")],
  {
    stdio: ["ignore", "ignore", "pipe"],
  },
);
await new Promise<void>((resolve) => {
  let log = "";
  server.stderr!.on("data", (d: Buffer) => {
    log += d.toString();
    if (log.includes("Server is ready")) resolve();
  });
});

function time(cmd: string[]): number {
  const t0 = performance.now();
  const r = spawnSync(cmd[0]!, cmd.slice(1), { stdio: ["ignore", "ignore", "inherit"] });
  if (r.status !== 0) throw new Error(`${cmd.join(" ")} exited ${r.status}`);
  return (performance.now() - t0) / 1000;
}

try {
  const local = time([...seam, "verify", "--quiet", ledger]);
  const ship = time([...seam, "ship", ledger, "--to", `nats://127.0.0.1:${port}`, "--create-stream"]);
  const central = time([...seam, "verify", "--quiet", `nats://127.0.0.1:${port}/SEAM_LEDGERS`]);
  const rate = (s: number) => Math.round(rows / s);
  const out: Row[] = [
    {
      section: "fleet",
      name: "seam ship (bun)",
      value: `${rate(ship).toLocaleString("en-US")} lines/s`,
      ratio: `${(ship / local).toFixed(2)}x local verify's time`,
      goal: "≥ 50,000 lines/s",
      met: rate(ship) >= 50_000,
    },
    {
      section: "fleet",
      name: "seam verify nats:// (bun)",
      value: `${rate(central).toLocaleString("en-US")} rows/s`,
      ratio: `${(central / local).toFixed(2)}x local verify's time`,
      goal: "≥ 100,000 rows/s",
      met: rate(central) >= 100_000,
    },
  ];
  for (const r of out)
    console.log(`${r.name}: ${r.value} (${r.ratio}); local verify ${rate(local).toLocaleString("en-US")} rows/s`);
  writeResult(flags, { script: "fleet", rows: out, details: { rows, seconds: { local, ship, central } } });
} finally {
  server.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
}
