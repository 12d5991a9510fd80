/** selftest's checkpoint cases, in process against the source build: every arm there, every arm passing. */
import { expect, test } from "bun:test";
import { checkpointArms } from "../../src/selftest/checkpoints.ts";
import { seamArgv } from "../helpers/cli.ts";
import { tempDir } from "../helpers/proc.ts";

test("checkpoint arms: GREEN, seven specific REDs, and the ignored extra signature", async () => {
  const arms = await checkpointArms(seamArgv("bun"), tempDir());
  expect(arms.map((a) => `${a.case} ${a.arm}`)).toEqual([
    "checkpoints_sealed GREEN",
    "checkpoint_tamper_detected RED on a deleted tail under a checkpoint",
    "checkpoint_tamper_detected RED on a rollback to an older copy with witness state present",
    "checkpoint_tamper_detected RED on a re-chained edit under a signed checkpoint",
    "checkpoint_tamper_detected RED on a checkpoint with a wrong size",
    "checkpoint_tamper_detected RED on a checkpoint with a wrong root",
    "checkpoint_tamper_detected RED on a checkpoint with a wrong signature",
    "checkpoint_tamper_detected RED on a known key with a bad signature",
    "checkpoint_tamper_detected GREEN with an unknown extra signature (ignored)",
  ]);
  expect(arms.filter((a) => !a.pass)).toEqual([]);
  for (const a of arms.slice(1, -1))
    expect(a.detail).toMatch(/^bare chain: (ok|inconclusive); with checkpoints: broken, /);
});
