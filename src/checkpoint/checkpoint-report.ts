/** How the checkpoint layer of `seam verify` shows: its lines in the human report and its `--json` member. */
import type { Json } from "../core/json.ts";
import type { CheckpointReport } from "./checkpoint-verifier.ts";

/**
 * The checkpoint lines of the human report, e.g.
 *   sealed    through line 40; unsealed tail: 2 rows (3 checkpoints; key seam+1a2b3c4d)
 *   witness   w.jsonl: 3 checkpoints
 *   state     remembered size 37 for seam-ledger/…; now 40
 *   evidence  witness: truncated or rolled back: …
 *     witness checkpoint (w.jsonl line 3):
 *       <the note, one line each>
 */
export function checkpointLines(s: CheckpointReport, stateNow?: number | null): string[] {
  const out: string[] = [];
  const cps = `${s.checkpoints} checkpoint${s.checkpoints === 1 ? "" : "s"}${s.valid < s.checkpoints ? `, ${s.valid} holding` : ""}`;
  const keys = s.keys.length > 0 ? `; key ${s.keys.join(", ")}` : "; signatures not checked";
  const sealed = s.sealed_through > 0 ? `through line ${s.sealed_through}` : "nothing";
  out.push(
    `  sealed    ${sealed}; unsealed tail: ${s.unsealed_rows} row${s.unsealed_rows === 1 ? "" : "s"} (${cps}${keys})`,
  );
  if (s.witness)
    out.push(
      `  witness   ${s.witness.file}: ${s.witness.checkpoints} checkpoint${s.witness.checkpoints === 1 ? "" : "s"}`,
    );
  if (s.witnessed) {
    const w = s.witnessed;
    out.push(
      w.through > 0
        ? `  witnessed through line ${w.through} of ${s.lines}; quorum ${w.quorum}${w.by.length > 0 ? ` (cosigned by ${w.by.join(", ")})` : ""}`
        : `  witnessed nothing: no checkpoint that holds is cosigned by quorum ${w.quorum}`,
    );
  }
  if (stateNow !== undefined) {
    const was = s.remembered === null ? "nothing remembered" : `remembered size ${s.remembered}`;
    out.push(`  state     ${was} for ${s.origin ?? "(no origin)"}${stateNow === null ? "" : `; now ${stateNow}`}`);
  }
  for (const f of s.evidence) {
    out.push(`  evidence  ${f.message}`);
    for (const e of f.evidence) {
      out.push(`    ${e.label}:`);
      for (const l of e.note.replace(/\n$/, "").split("\n")) out.push(l === "" ? "" : `      ${l}`);
    }
  }
  return out;
}

/** The `seal` member of a `--json` report. */
export function checkpointJson(s: CheckpointReport, stateNow?: number | null): Record<string, Json> {
  const out: { [k: string]: Json } = {
    origin: s.origin,
    checkpoints: s.checkpoints,
    valid: s.valid,
    sealed_through: s.sealed_through,
    unsealed_rows: s.unsealed_rows,
    latest: s.latest === null ? null : { line: s.latest.line, size: s.latest.size, root: s.latest.root },
    keys: s.keys,
    witness: s.witness === null ? null : { file: s.witness.file, checkpoints: s.witness.checkpoints },
    remembered: s.remembered,
    evidence: s.evidence.map((f) => ({
      message: f.message,
      checkpoints: f.evidence.map((e) => ({ label: e.label, note: e.note })),
    })),
  };
  // Only with --policy: without it the form stays what it was.
  if (s.witnessed !== null)
    out.witnessed = { quorum: s.witnessed.quorum, through: s.witnessed.through, by: s.witnessed.by };
  if (stateNow !== undefined) out.state_now = stateNow;
  return out;
}
