/** `seam selftest` and `seam demo` from each build a user may run. */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { selftestLine } from "../../commands/selftest.ts";
import { getField } from "../../src/core/json.ts";
import { DROP_OFFSET } from "../../src/selftest/faults.ts";
import { firstDiff, fixtureSessions } from "../../src/selftest/fixture-runs.ts";
import { runCli, seamArgv, VIAS } from "../helpers/cli.ts";
import { ledgerRows, tempDir } from "../helpers/proc.ts";

// The lines say what each arm showed, in words; --json keeps the arm names.
test.each([
  [{ arm: "GREEN", pass: true }, "PASS c holds: d\n"],
  [{ arm: "GREEN", pass: false }, "FAIL c does not hold: d\n"],
  [
    { arm: "GREEN with an unknown extra signature (ignored)", pass: true },
    "PASS c holds with an unknown extra signature (ignored): d\n",
  ],
  [{ arm: "RED on drop-byte", pass: true }, "PASS c catches the fault drop-byte: d\n"],
  [{ arm: "RED on drop-byte", pass: false }, "FAIL c misses the fault drop-byte: d\n"],
  [{ arm: "RED on a checkpoint with a wrong root", pass: true }, "PASS c catches a checkpoint with a wrong root: d\n"],
  [
    { arm: "RED with the shutdown flush disabled", pass: true },
    "PASS c catches a build with the shutdown flush disabled: d\n",
  ],
])("%p", (a, line) => {
  expect(selftestLine({ case: "c", detail: "d", ...a })).toBe(line);
});

describe.each(VIAS)("via %s", (via) => {
  test("selftest: every arm passes, one line each, and the plain closing count", async () => {
    const r = await runCli(via, ["selftest"]);
    const lines = r.stdout.toString().trimEnd().split("\n");
    expect(lines.filter((l) => !l.startsWith("PASS "))).toEqual([`${lines.length - 1} passed, 0 failed`]);
    for (const c of [
      "passthrough_fidelity",
      "one_row_per_call",
      "unanswered_call_logged",
      "ids_not_crossed",
      "tamper_detected",
      "digest_recipe_frozen",
      "chain_recipe_frozen",
      "log_marks_breaks",
      "answers_paired_as_clients_pair",
      "sse_event_types",
    ]) {
      expect(lines.some((l) => l.startsWith(`PASS ${c} holds: `))).toBe(true);
      expect(lines.some((l) => l.startsWith(`PASS ${c} catches `))).toBe(true);
    }
    expect(lines.some((l) => l.startsWith("PASS checkpoints_sealed holds: "))).toBe(true);
    for (const arm of [
      "a deleted tail under a checkpoint",
      "a rollback to an older copy with witness state present",
      "a re-chained edit under a signed checkpoint",
      "a checkpoint with a wrong size",
      "a checkpoint with a wrong root",
      "a checkpoint with a wrong signature",
      "a known key with a bad signature",
    ]) {
      expect(lines.some((l) => l.startsWith(`PASS checkpoint_tamper_detected catches ${arm}: `))).toBe(true);
    }
    expect(
      lines.some((l) =>
        l.startsWith("PASS checkpoint_tamper_detected holds with an unknown extra signature (ignored): "),
      ),
    ).toBe(true);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
  });

  test("demo: wraps, verifies, and says what to do next", async () => {
    const dir = tempDir();
    const r = await runCli(via, ["demo"], { cwd: dir });
    const text = r.stdout.toString();
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(text).toContain("verify  ok: 10 rows, chain unbroken, 1 session complete\n");
    expect(text).toContain("  seam verify seam-demo.jsonl\n      check it again");
    // A newcomer's first screen fits 80 columns.
    for (const line of text.split("\n")) expect([line, line.length <= 80]).toEqual([line, true]);
    // The example server writes one line that is not JSON: it is rowed (row 3), not only counted.
    expect(text).toMatch(/^ +3 {2}unparsed_frame$/m);
    expect(text).toMatch(/^ +9 {2}tool_call {9}never {6}unanswered \(client_eof\) +\d+\.\d$/m);
    const rows = ledgerRows(join(dir, "seam-demo.jsonl"));
    expect(rows.map((row) => getField(row, "evt"))).toEqual([
      "session_begin",
      "mcp_initialize",
      "unparsed_frame",
      "tools_list",
      "tool_call",
      "tool_call",
      "tool_call",
      "tool_call",
      "tool_call",
      "session_end",
    ]);
  });
});

// A RED run whose stream is corrupted on purpose reads blind to the end: what
// it keeps is the whole stream, not what arrived before a timer ran out.
// strip-newlines leaves no answer the client could recognise; drop-byte may leave one.
test("a corrupted run keeps the whole stream, changed by its defect alone", async () => {
  const session = fixtureSessions(seamArgv("bun"), tempDir());
  const direct = await session(false);
  const stripped = await session(true, "strip-newlines");
  expect(stripped.serverIn).toEqual(direct.serverIn);
  expect(stripped.received).toEqual(direct.received.filter((b) => b !== 0x0a));
  const dropped = await session(true, "drop-byte");
  expect(dropped.received.length).toBe(direct.received.length - 1);
  expect(firstDiff(direct.received, dropped.received)).toBe(DROP_OFFSET);
  expect(firstDiff(direct.received.subarray(DROP_OFFSET + 1), dropped.received.subarray(DROP_OFFSET))).toBe(-1);
});

test("fixture client --blind: the same bytes each way as a client that waits", async () => {
  const dir = tempDir();
  const p = (s: string) => join(dir, s);
  const server = (tag: string) => [...seamArgv("bun"), "fixture", "server", "--record-in", p(`${tag}.in`)];
  const client = (tag: string, more: string[], target: string[]) =>
    runCli("bun", [
      "fixture",
      "client",
      ...more,
      "--sent",
      p(`${tag}.sent`),
      "--received",
      p(`${tag}.recv`),
      "--",
      ...target,
    ]);
  const waited = await client("w", [], server("w"));
  const blind = await client(
    "b",
    ["--blind"],
    [...seamArgv("bun"), "wrap", "--ledger", p("b.jsonl"), "--", ...server("b")],
  );
  expect([waited.code, blind.code]).toEqual([0, 0]);
  for (const s of ["sent", "recv", "in"]) {
    const w = readFileSync(p(`w.${s}`));
    expect(w.length).toBeGreaterThan(0);
    expect(readFileSync(p(`b.${s}`)).equals(w)).toBe(true);
  }
});
