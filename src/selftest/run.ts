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
import type { Arm } from "./arm.ts";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chainOf } from "../core/chain.ts";
import { DROP_OFFSET, FAULT_ENV, type Fault } from "./faults.ts";
import { SCRIPT_CALLS } from "./fixture-client.ts";
import { digestJson } from "../core/digest.ts";
import { type Json, getField, parseJson } from "../core/json.ts";
import { lineForm } from "../core/canonical.ts";
import { exec } from "../runtime/exec.ts";
import type { BreakKind } from "../format/kinds.ts";
import type { VerifyReport } from "../verify/verifier.ts";
import { verifyBytes } from "../verify/verify-ledger.ts";
import { recipeArms } from "./recipes.ts";
import { flipArgsDigest, rechainLines } from "./tamper.ts";

export type { Arm } from "./arm.ts";

export interface SelftestResult {
  arms: Arm[];
  passed: number;
  failed: number;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

/** First offset at which a and b differ, or -1 when equal. */
export function firstDiff(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
}

interface Run {
  sent: Uint8Array;
  received: Uint8Array;
  serverIn: Uint8Array;
  ledger: Uint8Array;
  stderr: string;
  code: number | null;
}

export async function runSelftest(self: string[], onArm?: (a: Arm) => void): Promise<SelftestResult> {
  const dir = mkdtempSync(join(tmpdir(), "seam-selftest-"));
  const arms: Arm[] = [];
  const record = (c: string, arm: string, pass: boolean, detail: string) => {
    const a = { case: c, arm, pass, detail };
    arms.push(a);
    onArm?.(a);
  };
  let n = 0;
  const session = async (wrapped: boolean, fault?: Fault, script = "awkward"): Promise<Run> => {
    const tag = `r${++n}`;
    const p = (s: string) => join(dir, `${tag}.${s}`);
    const server = [...self, "fixture", "server", "--record-in", p("in")];
    const target = wrapped
      ? [...self, "wrap", "--ledger", p("jsonl"), "--session", `selftest-${tag}`, "--", ...server]
      : server;
    const env: Record<string, string | undefined> = { ...process.env, [FAULT_ENV]: fault };
    // A corrupted stream cannot finish the script: the client gives up quickly and keeps what it got.
    const wait = fault && script === "awkward" ? ["--timeout-ms", "1500"] : [];
    const r = await exec(
      [
        ...self,
        "fixture",
        "client",
        "--script",
        script,
        ...wait,
        "--sent",
        p("sent"),
        "--received",
        p("recv"),
        "--",
        ...target,
      ],
      {
        env,
        timeoutMs: 30000,
      },
    );
    const read = (s: string) => {
      try {
        return new Uint8Array(readFileSync(p(s)));
      } catch {
        return new Uint8Array(0);
      }
    };
    return {
      sent: read("sent"),
      received: read("recv"),
      serverIn: read("in"),
      ledger: read("jsonl"),
      stderr: r.stderr,
      code: r.code,
    };
  };

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
      const ask = (rows: Json[]) =>
        rows.find((r) => getField(r, "evt") === "tool_call" && getField(r, "tool") === "ask");
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
          "call 8 completed by the client's answer to the server's request 8",
        );
    }

    await operationArms(session, record);
    tamperArms(green.ledger, record);
    for (const a of await (await import("./read.ts")).readArms(self, dir, green.ledger))
      record(a.case, a.arm, a.pass, a.detail);
    for (const a of recipeArms()) record(a.case, a.arm, a.pass, a.detail);
    for (const a of (await import("./parser-arms.ts")).parserArms()) record(a.case, a.arm, a.pass, a.detail);
    for (const a of await (await import("./checkpoints.ts")).checkpointArms(self, dir))
      record(a.case, a.arm, a.pass, a.detail);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const passed = arms.filter((a) => a.pass).length;
  return { arms, passed, failed: arms.length - passed };
}

/**
 * operations_linked: a multi round-trip call's retry is a round of its
 * operation (MCP 2026-07-28, `modern` script: call 3 asks, call 4 retries
 * with its requestState); with retries left unlinked, `seam verify` says so.
 */
async function operationArms(
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

function rowsOf(ledger: Uint8Array): Json[] {
  const out: Json[] = [];
  for (const line of dec.decode(ledger).split("\n")) {
    if (line.trim() === "") continue;
    try {
      out.push(parseJson(line));
    } catch {
      // A torn line; the tamper cases look at those through verify.
    }
  }
  return out;
}

type Recorder = (c: string, arm: string, pass: boolean, detail: string) => void;

/** Each tamper class, applied to the GREEN ledger, with the verdict it must produce. */
function tamperArms(ledger: Uint8Array, record: Recorder): void {
  const c = "tamper_detected";
  const lines = dec.decode(ledger).split("\n");
  if (lines.at(-1) === "") lines.pop();
  const join = (ls: string[]) => enc.encode(ls.map((l) => `${l}\n`).join(""));
  // The awkward script sends lines that are not JSON on purpose: their unparsed_frame rows are allowed here.
  const verify = (bytes: Uint8Array) => verifyBytes(bytes, { isWriterAlive: () => false, allowUnparsed: true });
  const base = verify(ledger);
  record(c, "GREEN", base.verdict === "ok", `verify says ${base.verdict} on the untouched ledger (${base.rows} rows)`);

  /** The first break is of `kind`, on line `line`. */
  const firstBreak = (r: VerifyReport, kind: BreakKind, line: number) =>
    r.first_break?.kind === kind && r.first_break.line === line;
  const callLine = lines.findIndex((l) => l.includes(`"evt": "tool_call"`) && l.includes(`"args_digest": "sha256:`));
  const cases: { name: string; mutate: () => Uint8Array; want: (r: VerifyReport) => boolean; expect: string }[] = [
    {
      name: "a flipped byte",
      mutate: () => {
        // One bit of the first letter of line 3's server label: still valid JSON, different content.
        const b = ledger.slice();
        const at = lineStart(lines, 2) + enc.encode(lines[2]!.slice(0, lines[2]!.indexOf(`"server": "`) + 11)).length;
        b[at] = b[at]! ^ 0x01;
        return b;
      },
      want: (r) => firstBreak(r, "chain_mismatch", 3) && r.breaks === 1,
      expect: "broken, line 3: chain mismatch, 1 break",
    },
    {
      name: "an edited args_digest with the old chain kept",
      mutate: () => join(lines.map((l, i) => (i === callLine ? flipArgsDigest(l) : l))),
      want: (r) => firstBreak(r, "chain_mismatch", callLine + 1) && r.breaks === 1,
      expect: `broken, line ${callLine + 1}: chain mismatch, 1 break`,
    },
    {
      name: "a deleted middle row",
      mutate: () => join(lines.filter((_, i) => i !== 4)),
      want: (r) => firstBreak(r, "chain_mismatch", 5) && r.breaks === 1,
      expect: "broken, line 5: chain mismatch, 1 break",
    },
    {
      name: "two swapped rows",
      mutate: () => join(lines.map((l, i) => (i === 4 ? lines[5]! : i === 5 ? lines[4]! : l))),
      want: (r) => firstBreak(r, "chain_mismatch", 5) && r.breaks === 3,
      expect: "broken, line 5: chain mismatch, 3 breaks",
    },
    {
      name: "a duplicated row",
      mutate: () => join([...lines.slice(0, 5), lines[4]!, ...lines.slice(5)]),
      want: (r) => firstBreak(r, "chain_mismatch", 6) && r.breaks === 1,
      expect: "broken, line 6: chain mismatch, 1 break",
    },
    {
      name: "an inserted row chained to its predecessor",
      mutate: () => {
        const forged = new Map<string, Json>([
          ["evt", "tool_call"],
          ["tool", "forged"],
        ]);
        forged.set("chain", chainOf(getField(parseJson(lines[3]!), "chain") as string, forged));
        return join([...lines.slice(0, 4), lineForm(forged), ...lines.slice(4)]);
      },
      want: (r) => firstBreak(r, "chain_mismatch", 6) && r.breaks === 1,
      expect: "broken, line 6: chain mismatch, 1 break",
    },
    {
      name: "a deleted row, re-chained",
      mutate: () =>
        join(
          rechainLines(
            lines.filter((_, i) => i !== callLine),
            callLine,
          ),
        ),
      want: (r) => r.verdict === "inconclusive" && r.breaks === 0 && r.finding_kinds.includes("seq_gap"),
      expect: "inconclusive: the chain holds, the completeness checks find the seq gap",
    },
    {
      name: "a deleted tail",
      mutate: () => join(lines.slice(0, -1)),
      want: (r) => r.verdict === "inconclusive" && r.breaks === 0 && r.finding_kinds.includes("session_missing_end"),
      expect: "inconclusive: no session_end (truncated or still running)",
    },
    {
      name: "a torn last line",
      mutate: () =>
        enc.encode(
          lines
            .map((l) => `${l}\n`)
            .join("")
            .slice(0, -40),
        ),
      want: (r) => r.verdict === "inconclusive" && r.breaks === 0 && r.finding_kinds.includes("torn_final_line"),
      expect: `inconclusive, line ${lines.length}: torn final line`,
    },
  ];
  for (const t of cases) {
    const mutated = t.mutate();
    if (firstDiff(mutated, ledger) < 0) {
      record(c, `RED on ${t.name}`, false, "no-op guard: the mutation changed nothing");
      continue;
    }
    const r = verify(mutated);
    const got = `${r.verdict}${r.first_break ? `, ${r.first_break.message}` : ""}, ${r.breaks} break${r.breaks === 1 ? "" : "s"}${r.findings.length ? `, ${r.findings.length} finding${r.findings.length === 1 ? "" : "s"}` : ""}`;
    record(c, `RED on ${t.name}`, t.want(r), t.want(r) ? got : `${got} (expected ${t.expect})`);
  }

  // A re-chained edit keeps every row and every count: a bare chain cannot see it. Said, not hidden.
  const edited = rechainLines(
    lines.map((l, i) => (i === callLine ? flipArgsDigest(l) : l)),
    callLine,
  );
  const r = verify(join(edited));
  record(
    c,
    "LIMIT re-chained edit",
    r.verdict === "ok",
    r.verdict === "ok"
      ? "undetectable without a checkpoint: an edit re-chained by someone who can write the file verifies ok"
      : `verify says ${r.verdict}; expected ok, the honest limit of a bare chain`,
  );
}

function lineStart(lines: string[], index: number): number {
  let at = 0;
  for (let i = 0; i < index; i++) at += enc.encode(lines[i]!).length + 1;
  return at;
}
