/**
 * The benchmark scripts cannot rot: `bun bench/run.ts --smoke` runs every one
 * of them with tiny sizes and must finish and print its table. No timing is
 * asserted; the relay bench's own checks (every call rowed, the ledger
 * verifies) still decide its exit status.
 */
import { expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { ROOT } from "../helpers/cli.ts";

test("bun bench/run.ts --smoke runs every benchmark and prints the table", () => {
  const r = spawnSync(process.execPath, [`${ROOT}bench/run.ts`, "--smoke"], {
    encoding: "utf8",
    maxBuffer: 1 << 26,
    timeout: 110_000,
  });
  expect(r.stderr).not.toContain("bench: ");
  expect(r.status).toBe(0);
  const out = r.stdout;
  expect(out).toContain("== seam benchmarks (smoke");
  for (const section of [
    "micro",
    "ledger append",
    "round trip",
    "pipelined",
    "large (",
    "witness down",
    "verify (",
    "read (",
    "digest (",
    "checkpoints",
    "fleet",
    "footprint",
    "report (",
  ]) {
    expect(out).toMatch(new RegExp(`^${section.replace(/[()]/g, "\\$&")}.*figure`, "m"));
  }
  // Each relay's CPU a call is also shown by thread (from /proc), where the time goes.
  if (process.platform === "linux") expect(out).toMatch(/^round trip .*seam wrap \(bun\) .*CPU\/call \(main \d+/m);
  expect(out).toMatch(/^goals: \d+ met, \d+ missed; \d+ s in all$/m);
}, 120_000);
