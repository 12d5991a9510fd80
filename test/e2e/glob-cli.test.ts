/**
 * `check --forbid-tool` and `log --tool` on a ledger whose tool name is a few
 * hundred kilobytes of near-misses, in all three builds: the globs match in
 * linear time, so each command answers within seconds, and rightly.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { built, runCli, VIAS } from "../helpers/cli.ts";
import { tempDir } from "../helpers/proc.ts";
import { sessionOf, writeLedger } from "../helpers/read-fixtures.ts";
import { LedgerBuilder } from "../helpers/verify-helpers.ts";

let dir: string;
beforeAll(() => {
  dir = tempDir();
  const b = new LedgerBuilder();
  const long = "delete_".repeat(46_000);
  for (const r of sessionOf("s-glob", "srv", [
    ["tool_call", { tool: long, rpc_id: 1, status: "ok", ms: 1 }],
    ["tool_call", { tool: "delete_all", rpc_id: 2, status: "ok", ms: 1 }],
  ]))
    b.add(r);
  writeLedger(dir, "long.jsonl", b.lines);
});

describe.each(VIAS)("globs on a long tool name via %s", (via) => {
  test.skipIf(!built(via))(
    "check --forbid-tool and log --tool answer in seconds and match only the real hit",
    async () => {
      const t0 = performance.now();
      const check = await runCli(
        via,
        ["check", "long.jsonl", "--forbid-tool", "*delete*all*", "--forbid-tool", "*[a-z]*all*"],
        {
          cwd: dir,
        },
      );
      const log = await runCli(
        via,
        ["log", "--json", "--tool", "*delete*all*", "--tool", "delete*?all", "long.jsonl"],
        {
          cwd: dir,
        },
      );
      const seconds = (performance.now() - t0) / 1000;
      expect(check.stdout.toString()).toContain("FAIL  forbid-tool *delete*all*: called 1 time");
      expect(check.code).toBe(1);
      const ops = log.stdout
        .toString()
        .trimEnd()
        .split("\n")
        .filter((l) => l.includes('"type": "operation"'));
      expect(ops.map((l) => JSON.parse(l).name)).toEqual(["delete_all"]);
      // A backtracking matcher is quadratic in the name here, far past this bound; a linear one is well within it.
      expect(seconds).toBeLessThan(8);
    },
    120_000,
  );
});
