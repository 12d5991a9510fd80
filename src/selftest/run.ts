/**
 * `seam selftest`: every guarantee is shown to hold (GREEN) and its check is
 * shown to fail on the defect it exists for (RED). Each RED arm first passes
 * a no-op guard (the mutation really changed something), then requires the
 * *specific* failure: the exact break line, count or differing offset. A
 * crash, a timeout or "something differed" is not a RED pass.
 *
 * It drives the running build of seam (source, Node bundle or compiled
 * executable) as separate processes, with the built-in fixture server and
 * scripted client, so it needs no other file and no network.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getField } from "../core/json.ts";
import type { Arm } from "./arm.ts";
import { DROP_OFFSET } from "./faults.ts";
import { firstDiff, fixtureSessions, rowsOf } from "./fixture-runs.ts";
import { observerArms, operationArms } from "./observer-arms.ts";
import { recipeArms } from "./recipes.ts";
import { tamperArms } from "./tamper-arms.ts";

export type { Arm } from "./arm.ts";

export interface SelftestResult {
  arms: Arm[];
  passed: number;
  failed: number;
}

export async function runSelftest(self: string[], onArm?: (a: Arm) => void): Promise<SelftestResult> {
  const dir = mkdtempSync(join(tmpdir(), "seam-selftest-"));
  const arms: Arm[] = [];
  const record = (c: string, arm: string, pass: boolean, detail: string) => {
    const a = { case: c, arm, pass, detail };
    arms.push(a);
    onArm?.(a);
  };
  const session = fixtureSessions(self, dir);
  try {
    const direct = await session(false);
    const green = await session(true);
    const greenRows = rowsOf(green.ledger);

    // passthrough_fidelity
    {
      const c = "passthrough_fidelity";
      const same =
        firstDiff(direct.received, green.received) < 0 &&
        firstDiff(direct.serverIn, green.serverIn) < 0 &&
        direct.received.length > 2_000_000;
      record(
        c,
        "GREEN",
        same && green.code === 0,
        same
          ? `${green.received.length} bytes to the client and ${green.serverIn.length} to the server, identical to the direct run`
          : `output differs at ${firstDiff(direct.received, green.received)}`,
      );
      const expected: Record<string, number> = {
        "drop-byte": DROP_OFFSET,
        "strip-newlines": direct.received.indexOf(0x0a),
        reserialize: direct.received.indexOf(0x0d),
      };
      for (const fault of ["reserialize", "drop-byte", "strip-newlines"] as const) {
        const red = await session(true, fault);
        const stamped =
          fault === getField(rowsOf(red.ledger)[0] ?? null, "selftest_fault") &&
          red.stderr.includes(`selftest fault ${fault} is on`);
        const at = firstDiff(direct.received, red.received);
        if (!stamped)
          record(c, `RED on ${fault}`, false, "no-op guard: the fault was not announced and stamped in session_begin");
        else if (at < 0) record(c, `RED on ${fault}`, false, "no-op guard: the fault changed nothing");
        else
          record(
            c,
            `RED on ${fault}`,
            at === expected[fault],
            `client stream differs at byte ${at}${at === expected[fault] ? "" : ` (expected ${expected[fault]})`}`,
          );
      }
    }

    await observerArms(session, record, greenRows);
    await operationArms(session, record);
    tamperArms(green.ledger, record);
    for (const a of await (await import("./read.ts")).readArms(self, dir, green.ledger))
      record(a.case, a.arm, a.pass, a.detail);
    for (const a of recipeArms()) record(a.case, a.arm, a.pass, a.detail);
    for (const a of (await import("./parser-arms.ts")).parserArms()) record(a.case, a.arm, a.pass, a.detail);
    for (const a of (await import("./answer-arms.ts")).answerArms()) record(a.case, a.arm, a.pass, a.detail);
    for (const a of await (await import("./checkpoints.ts")).checkpointArms(self, dir))
      record(a.case, a.arm, a.pass, a.detail);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const passed = arms.filter((a) => a.pass).length;
  return { arms, passed, failed: arms.length - passed };
}
