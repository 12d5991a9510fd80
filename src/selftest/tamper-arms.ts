/**
 * The tamper_detected arms of `seam selftest`: each way someone who can write
 * the ledger could change it, applied to the GREEN run's ledger, with the
 * verdict `seam verify` must give (the exact break kind and line), and the
 * honest limit of a bare chain (a re-chained edit verifies ok).
 */
import { lineForm } from "../core/canonical/index.ts";
import { chainOf } from "../core/chain.ts";
import { getField, type Json, parseJson } from "../core/json.ts";
import type { BreakKind } from "../format/kinds.ts";
import type { VerifyReport } from "../verify/ledger-verifier.ts";
import { verifyBytes } from "../verify/verify-ledger.ts";
import { firstDiff, type Recorder } from "./fixture-runs.ts";
import { flipArgsDigest, rechainLines } from "./tamper.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Each tamper class, applied to the GREEN ledger, with the verdict it must produce. */
export function tamperArms(ledger: Uint8Array, record: Recorder): void {
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
