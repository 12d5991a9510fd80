/**
 * MCP 2026-07-28 end to end, with real processes: the scripted client's
 * `modern` and `fallback` scripts against the built-in server, directly and
 * through `seam wrap` (Bun, Node bundle, compiled executable). Bytes are
 * identical both ways, rows are as src/observe/operation-book.ts says, the ledger
 * verifies (and the Python reference agrees), and `seam verify` finds each
 * operation defect put into it.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { getField, type Json } from "../../src/core/json.ts";
import { SCRIPT_CALLS } from "../../src/selftest/fixture-client.ts";
import { rechainLines } from "../../src/selftest/tamper.ts";
import { verifyBytes } from "../../src/verify/verify-ledger.ts";
import { built, runCli, VIAS, type Via } from "../helpers/cli.ts";
import { directAndWrapped } from "../helpers/fixture-run.ts";
import { ledgerRows } from "../helpers/proc.ts";
import { expectReferenceOk } from "../helpers/verify-helpers.ts";

const f = (r: Json, k: string) => getField(r, k);

/** `evt rpc_id status` of each row between session_begin and session_end (operation_end: `evt op status`). */
function shape(ledger: string): string[] {
  return ledgerRows(ledger)
    .slice(1, -1)
    .map((r) =>
      [f(r, "evt"), f(r, "evt") === "operation_end" ? `op=${f(r, "op")}` : f(r, "rpc_id"), f(r, "status") ?? ""]
        .join(" ")
        .trim(),
    );
}

async function verifiesOk(via: Via, ledger: string) {
  const r = await runCli(via, ["verify", "--json", ledger]);
  const report = JSON.parse(r.stdout.toString());
  expect({ ok: report.ok, findings: report.findings, notes: report.notes }).toEqual({
    ok: true,
    findings: [],
    notes: [],
  });
  expect(r.code).toBe(0);
  expectReferenceOk(ledger, report);
  return report;
}

describe.each(VIAS)("2026-07-28 through seam wrap via %s", (via: Via) => {
  test.skipIf(!built(via))(
    "the modern script: byte-identical, one row per round trip, operations as specified",
    async () => {
      const { ledger } = await directAndWrapped(via, "modern");
      expect(shape(ledger)).toEqual([
        "mcp_client 0",
        "mcp_discover 0 ok",
        "mcp_client 1",
        "tools_list 1 ok",
        "tool_call 2 ok",
        "tool_call 3 input_required",
        "tool_call 4 ok",
        "operation_end op=7 ok",
        "tool_call 5 input_required",
        "tool_call 6 task",
        "task_get 7 ok",
        "task_get 8 ok",
        "task_update 9 ok",
        "task_get 9b ok",
        "operation_end op=11 completed",
        "tool_call 10 task",
        "task_cancel 11 ok",
        "task_get 12 ok",
        "operation_end op=17 cancelled",
        "mcp_client 13",
        "tool_call 13 unknown_result_type",
        "mcp_client 14",
        "tool_call 14 task",
        "task_get 15 ok",
        "operation_end op=24 unanswered",
      ]);
      const rows = ledgerRows(ledger);
      const bySeq = (n: number) => rows[n - 1]!;
      // Every request row of this session says its era; the discover row names the server from the result's _meta.
      for (const r of rows.slice(1, -1))
        if (!["mcp_client", "operation_end"].includes(f(r, "evt") as string))
          expect(f(r, "protocol_version")).toBe("2026-07-28");
      expect(f(f(bySeq(3), "server_info")!, "name")).toBe("seam-fixture");
      // Rounds 1 and 2 of op 7; round 1 of op 10, abandoned (no operation_end).
      expect([f(bySeq(7), "op"), f(bySeq(7), "round"), f(bySeq(8), "op"), f(bySeq(8), "round")]).toEqual([7, 1, 7, 2]);
      expect([f(bySeq(10), "op"), f(bySeq(10), "round")]).toEqual([10, 1]);
      expect(rows.filter((r) => f(r, "evt") === "operation_end" && f(r, "op") === 10)).toEqual([]);
      // Task rows name their operation; the task still open at EOF.
      expect(rows.filter((r) => f(r, "task_id") === "task-6").map((r) => f(r, "op"))).toEqual([11, 11, 11, 11, 11, 11]);
      expect([f(bySeq(26), "reason"), f(bySeq(26), "task_id")]).toEqual(["task_open", "task-14"]);
      const end = rows.at(-1)!;
      expect([f(end, "calls"), f(end, "operations"), f(end, "abandoned_operations"), f(end, "tasks_open")]).toEqual([
        SCRIPT_CALLS.modern,
        4,
        1,
        1,
      ]);
      expect(f(end, "unanswered")).toBeUndefined();
      const report = await verifiesOk(via, ledger);
      expect(report.sessions[0].operations).toEqual({ ended: 4, abandoned: 1, abandoned_ops: [10] });
    },
  );

  test.skipIf(!built(via))(
    "probe with server/discover, -32601, fall back to initialize: legacy rows after",
    async () => {
      const { ledger } = await directAndWrapped(via, "fallback", ["--legacy"]);
      expect(shape(ledger)).toEqual([
        "mcp_client 0",
        "mcp_discover 0 error",
        "mcp_initialize 1 ok",
        // The legacy fixture server writes a line that is not JSON: a server frame, rowed (not a finding).
        "unparsed_frame",
        "tools_list 2 ok",
        "tool_call 3 ok",
      ]);
      const rows = ledgerRows(ledger);
      expect(f(rows[2]!, "error_code")).toBe(-32601);
      expect(f(rows[3]!, "protocol_version")).toBe("2025-06-18");
      expect(f(rows[4]!, "dir")).toBe("s2c");
      for (const k of ["protocol_version", "op", "round"]) expect(f(rows[6]!, k)).toBeUndefined();
      const report = await verifiesOk(via, ledger);
      expect(report.sessions[0].operations).toBeUndefined();
    },
  );
});

describe("seam verify finds operation defects (each one put into a real ledger, re-chained)", () => {
  let lines: string[] = [];
  const load = async () => {
    if (lines.length === 0)
      lines = readFileSync((await directAndWrapped("bun", "modern")).ledger, "utf8")
        .trimEnd()
        .split("\n");
    return lines;
  };
  /** Edits line `i` (0-based) with `edit`, or drops it (edit null), re-chains, and verifies. */
  const tampered = (src: string[], i: number, edit: ((l: string) => string) | null) => {
    const out = [...src];
    if (edit === null) out.splice(i, 1);
    else out[i] = edit(out[i]!);
    return verifyBytes(new TextEncoder().encode(`${rechainLines(out, Math.min(i, out.length - 1)).join("\n")}\n`));
  };
  const seqOf = (src: string[], seq: number) => src.findIndex((l) => l.includes(`"seq": ${seq},`));

  test("the untouched ledger is ok, without findings", async () => {
    const r = verifyBytes(new TextEncoder().encode(`${(await load()).join("\n")}\n`));
    expect([r.verdict, r.findings, r.finding_kinds]).toEqual(["ok", [], []]);
  });

  test.each([
    // [what, seq of the line, edit, expected kinds]
    [
      "a round skipped",
      8,
      (l: string) => l.replace(`"round": 2`, `"round": 3`),
      ["operation_round_gap", "operation_rounds_mismatch"],
    ],
    [
      "a retry after a round that asked nothing",
      7,
      (l: string) => l.replace(`"status": "input_required"`, `"status": "ok"`),
      ["operation_round_unasked"],
    ],
    [
      "a first round that is not its own row",
      7,
      (l: string) => l.replace(`"op": 7`, `"op": 6`),
      ["operation_id_mismatch", "operation_unknown", "operation_unknown"],
    ],
    ["a task row naming no operation", 12, (l: string) => l.replace(`"op": 11`, `"op": 99`), ["operation_unknown"]],
    [
      "operation_end with the wrong round count",
      9,
      (l: string) => l.replace(`"rounds": 2`, `"rounds": 1`),
      ["operation_rounds_mismatch"],
    ],
    [
      "session_end counting operations wrong",
      27,
      (l: string) => l.replace(`"operations": 4`, `"operations": 5`),
      ["operation_count_mismatch"],
    ],
    [
      "session_end counting abandoned wrong",
      27,
      (l: string) => l.replace(`"abandoned_operations": 1`, `"abandoned_operations": 0`),
      ["operation_count_mismatch"],
    ],
  ] as const)("%s", async (_what, seq, edit, kinds) => {
    const src = await load();
    const r = tampered(src, seqOf(src, seq), edit);
    expect(r.verdict).toBe("inconclusive");
    expect([...r.finding_kinds].sort()).toEqual([...kinds].sort());
  });

  test("an operation_end lost: the operation is unended (and session_end's counts disagree)", async () => {
    const src = await load();
    const at = seqOf(src, 16);
    expect(src[at]).toContain(`"evt": "operation_end"`);
    const r = tampered(src, at, null);
    // Every finding has a kind: the row's loss is also a seq gap and a wrong rows_before_end.
    expect([...r.finding_kinds].sort()).toEqual([
      "end_rows_mismatch",
      "operation_count_mismatch",
      "operation_unended",
      "seq_gap",
    ]);
    expect(r.findings.find((t) => t.includes("operation 11"))).toContain(`tool "job"`);
  });

  test("a retry the recorder failed to link (RED: selftest fault unlinked-rounds, a real run)", async () => {
    const { ledger } = await directAndWrapped("bun", "modern", [], "unlinked-rounds");
    const r = verifyBytes(new Uint8Array(readFileSync(ledger)));
    expect([...r.finding_kinds].sort()).toEqual(["operation_unlinked"]);
    expect(r.findings.join("\n")).toContain("brings the requestState operation 7 was given, but is in no operation");
  });

  test("a retry moved out of its operation", async () => {
    const src = await load();
    const at = seqOf(src, 8);
    const r = tampered(src, at, (l) => l.replace(`"op": 7, "round": 2, `, ""));
    expect([...r.finding_kinds].sort()).toEqual(["operation_rounds_mismatch", "operation_unlinked"]);
  });

  test("an operation_end written twice (in place of another's)", async () => {
    const src = await load();
    const [first, other] = [seqOf(src, 9), seqOf(src, 16)];
    const r = tampered(src, other, () => src[first]!.replace(`"seq": 9,`, `"seq": 16,`));
    // The copy keeps the time of the row it copies: earlier than the row before it.
    expect([...r.finding_kinds].sort()).toEqual(["operation_end_twice", "operation_unended", "ts_backwards"]);
  });
});
