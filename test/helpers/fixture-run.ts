/**
 * The built-in scripted client and server (`seam fixture`) run twice, once
 * directly and once with `seam wrap` between them, recording what the client
 * sent and received and what the server read, so that the two runs can be
 * compared byte for byte.
 */
import { expect } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { FAULT_ENV } from "../../src/selftest/faults.ts";
import { seamArgv, type Via } from "./cli.ts";
import { run, tempDir } from "./proc.ts";

/** `seam fixture` under Bun: the client and the server of every run. */
export const FIXTURE = [...seamArgv("bun"), "fixture"];

/**
 * The client running `script` through `between` (nothing, or seam wrap and
 * its flags up to `--`) to the server with `server` args; `<tag>.sent`,
 * `<tag>.recv` and `<tag>.in` in `dir` record the bytes.
 */
function clientArgv(dir: string, tag: string, script: string, between: string[], server: string[]): string[] {
  return [
    ...FIXTURE,
    "client",
    "--script",
    script,
    "--sent",
    join(dir, `${tag}.sent`),
    "--received",
    join(dir, `${tag}.recv`),
    "--",
    ...between,
    ...FIXTURE,
    "server",
    ...server,
    "--record-in",
    join(dir, `${tag}.in`),
  ];
}

/**
 * Runs `script` directly and through `seam wrap` (via `via`, with the
 * selftest `fault` on when given) and checks that both exit 0, say nothing on
 * stderr but the fault's warning, and carry the same bytes. The wrapped run's
 * files are `w.sent`, `w.recv` and `w.in` in `dir`, beside the ledger.
 */
export async function directAndWrapped(
  via: Via,
  script: string,
  server: string[] = [],
  fault?: string,
): Promise<{ ledger: string; dir: string }> {
  const dir = tempDir();
  const direct = await run(clientArgv(dir, "d", script, [], server));
  expect(direct.stderr).toBe("");
  expect(direct.code).toBe(0);
  const ledger = join(dir, "ledger.jsonl");
  const wrap = [...seamArgv(via), "wrap", "--ledger", ledger, "--"];
  const wrapped = await run(clientArgv(dir, "w", script, wrap, server), { env: { [FAULT_ENV]: fault } });
  expect(wrapped.stderr).toBe(
    fault === undefined ? "" : `seam: warning: selftest fault ${fault} is on: traffic or rows are deliberately wrong\n`,
  );
  expect(wrapped.code).toBe(0);
  for (const part of ["sent", "recv", "in"]) {
    const a = readFileSync(join(dir, `d.${part}`));
    const b = readFileSync(join(dir, `w.${part}`));
    expect(a.length).toBeGreaterThan(0);
    expect(Buffer.compare(a, b)).toBe(0);
  }
  return { ledger, dir };
}
