/**
 * The observer's arms of `seam selftest`: one row per call, the call never
 * answered still logged, client and server ids not crossed, and a multi
 * round-trip call's retry linked to its operation. Each is GREEN on a real
 * wrapped run and RED with the observer defect it exists for.
 */
import { lineForm } from "../core/canonical/index.ts";
import { digestJson } from "../core/digest.ts";
import { getField, type Json, parseJson } from "../core/json.ts";
import { verifyBytes } from "../verify/verify-ledger.ts";
import type { Fault } from "./faults.ts";
import { SCRIPT_CALLS } from "./fixture-client.ts";
import { type Recorder, type Run, rowsOf, type SessionRun } from "./fixture-runs.ts";

/** one_row_per_call, unanswered_call_logged and ids_not_crossed: the GREEN run's rows, and a run with each defect. */
export async function observerArms(session: SessionRun, record: Recorder, greenRows: Json[]): Promise<void> {
  // one_row_per_call
  {
    const c = "one_row_per_call";
    const calls = greenRows.filter((r) => getField(r, "evt") === "tool_call").length;
    const seqOk = greenRows.every((r, i) => getField(r, "seq") === i + 1);
    const bracket =
      getField(greenRows[0] ?? null, "evt") === "session_begin" &&
      getField(greenRows.at(-1) ?? null, "evt") === "session_end";
    record(
      c,
      "GREEN",
      calls === SCRIPT_CALLS.awkward && seqOk && bracket,
      `${calls} tool_call rows for ${SCRIPT_CALLS.awkward} calls, seq dense 1..${greenRows.length}, session_begin first, session_end last`,
    );
    const red = rowsOf((await session(true, "double-row")).ledger);
    const redCalls = red.filter((r) => getField(r, "evt") === "tool_call").length;
    const validIds = greenRows.filter(
      (r) => getField(r, "evt") === "tool_call" && getField(r, "status") !== "invalid_id",
    ).length;
    if (redCalls === calls)
      record(c, "RED on an observer that also rows the request", false, "no-op guard: the row count did not change");
    else
      record(
        c,
        "RED on an observer that also rows the request",
        redCalls === calls + validIds,
        `${redCalls} tool_call rows for ${SCRIPT_CALLS.awkward} calls (expected ${calls + validIds})`,
      );
  }

  // unanswered_call_logged
  {
    const c = "unanswered_call_logged";
    const never = (rows: Json[]) =>
      rows.find((r) => getField(r, "evt") === "tool_call" && getField(r, "tool") === "never");
    const g = never(greenRows);
    const expectedDigest = digestJson(new Map());
    record(
      c,
      "GREEN",
      getField(g ?? null, "status") === "unanswered" && getField(g ?? null, "args_digest") === expectedDigest,
      g
        ? `rpc_id ${lineForm(getField(g, "rpc_id")!)} rowed ${String(getField(g, "status"))} with args_digest`
        : "no row for the never-answered call",
    );
    const red = rowsOf((await session(true, "no-unanswered-flush")).ledger);
    const calls = red.filter((r) => getField(r, "evt") === "tool_call").length;
    if (red.length === greenRows.length)
      record(c, "RED with the shutdown flush disabled", false, "no-op guard: the ledger did not change");
    else
      record(
        c,
        "RED with the shutdown flush disabled",
        never(red) === undefined && calls === SCRIPT_CALLS.awkward! - 1,
        `no row for the never-answered call; ${calls} of ${SCRIPT_CALLS.awkward} calls rowed`,
      );
  }

  // ids_not_crossed
  {
    const c = "ids_not_crossed";
    const ask = (rows: Json[]) => rows.find((r) => getField(r, "evt") === "tool_call" && getField(r, "tool") === "ask");
    const serverAnswer = digestJson(parseJson(`{"content":[{"type":"text","text":"the client answered"}]}`));
    const clientAnswer = digestJson(
      parseJson(`{"role":"assistant","content":{"type":"text","text":"go on"},"model":"fixture"}`),
    );
    const g = ask(greenRows);
    record(
      c,
      "GREEN",
      getField(g ?? null, "result_digest") === serverAnswer,
      "call 8 completed by the server's answer, not by the client's answer to server request 8",
    );
    const r = ask(rowsOf((await session(true, "shared-id-table")).ledger));
    const got = getField(r ?? null, "result_digest");
    if (got === serverAnswer)
      record(c, "RED with a single shared id table", false, "no-op guard: the call's row did not change");
    else
      record(
        c,
        "RED with a single shared id table",
        got === clientAnswer,
        got === clientAnswer
          ? "call 8 completed by the client's answer to the server's request 8"
          : `call 8 rowed ${String(getField(r ?? null, "status"))} with neither answer's digest`,
      );
  }
}

/**
 * operations_linked: a multi round-trip call's retry is a round of its
 * operation (MCP 2026-07-28, `modern` script: call 3 asks, call 4 retries
 * with its requestState); with retries left unlinked, `seam verify` says so.
 */
export async function operationArms(
  session: (wrapped: boolean, fault?: Fault, script?: string) => Promise<Run>,
  record: (c: string, arm: string, pass: boolean, detail: string) => void,
): Promise<void> {
  const c = "operations_linked";
  const retry = (rows: Json[]) =>
    rows.find(
      (r) => getField(r, "evt") === "tool_call" && getField(r, "rpc_id") === 4 && getField(r, "tool") === "confirm",
    );
  const green = await session(true, undefined, "modern");
  const g = retry(rowsOf(green.ledger));
  const gv = verifyBytes(green.ledger);
  record(
    c,
    "GREEN",
    getField(g ?? null, "round") === 2 && getField(g ?? null, "op") !== undefined && gv.verdict === "ok",
    `retry rpc_id 4 is round ${String(getField(g ?? null, "round"))} of operation ${String(getField(g ?? null, "op"))}; the ledger verifies ${gv.verdict}`,
  );
  const red = await session(true, "unlinked-rounds", "modern");
  const r = retry(rowsOf(red.ledger));
  const rv = verifyBytes(red.ledger);
  if (r === undefined || getField(r, "round") !== undefined)
    record(c, "RED with retries left unlinked", false, "no-op guard: the retry's row did not change");
  else
    record(
      c,
      "RED with retries left unlinked",
      rv.verdict === "inconclusive" && rv.finding_kinds.filter((k) => k === "operation_unlinked").length === 1,
      `seam verify: ${rv.verdict}, finding kinds ${JSON.stringify(rv.finding_kinds)}`,
    );
}
