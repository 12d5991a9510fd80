/**
 * What `seam verify` does with --key, --witness, --state, --prove and
 * --check-proof, between reading the command line (commands/verify.ts) and
 * the checks themselves (src/checkpoint/checkpoint-verifier.ts): reading the witness file,
 * consulting and updating the state directory, and the texts printed.
 */
import { EXIT } from "../base/exit.ts";
import { terminalText } from "../base/terminal-text.ts";
import type { Json } from "../core/json.ts";
import { fileChunks, type VerifyOptions, type VerifyReport } from "../verify/ledger-verifier.ts";
import { checkpointJson, checkpointLines } from "./checkpoint-report.ts";
import { type CheckpointCheckOptions, verifyCheckpointed } from "./checkpoint-verifier.ts";
import type { Verifier } from "./note.ts";
import type { Policy } from "./policy.ts";
import { checkProof, proveLine } from "./proof.ts";
import type { StateDir } from "./state.ts";

export interface CheckpointSetup {
  keys: readonly Verifier[];
  /** The witness file's name and text, read before the ledger. */
  witness?: { name: string; text: string };
  state?: StateDir;
  /** --policy: its log keys are `keys`; its quorum judges the cosignatures. */
  policy?: Policy;
}

export interface CheckpointedResult {
  report: VerifyReport;
  /** Lines for the human report (humanReport's `extra`). */
  extra: string[];
  /** The `seal` member of the --json report. */
  json: Record<string, Json>;
}

/**
 * Verifies one ledger with its checkpoints. With --state, the remembered
 * checkpoint and path binding are checked, and afterwards (unless the
 * ledger is broken) the latest holding checkpoint is remembered if it is
 * larger, and the path bound to the ledger's origin.
 */
export async function verifyCheckpointedSource(
  path: string,
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  vopts: VerifyOptions & { onProgress?: (p: { bytes: number; rows: number }) => void },
  setup: CheckpointSetup,
): Promise<CheckpointedResult> {
  const state = setup.state;
  const onPath = state !== undefined && path !== "-";
  const sopts: CheckpointCheckOptions = {
    keys: setup.keys,
    witness: setup.witness,
    remembered: state ? (origin) => state.noteFor(origin) : undefined,
    rememberedOrigin: onPath ? state.originAt(path) : null,
    policy: setup.policy,
    reread: path === "-" ? undefined : () => fileChunks(path),
  };
  const { report, checkpointReport: cr } = await verifyCheckpointed(source, vopts, sopts);
  let now: number | null | undefined;
  if (state !== undefined) {
    now = cr.remembered;
    if (report.verdict !== "broken" && cr.latest !== null && cr.origin !== null) {
      now = state.remember(cr.origin, cr.latest.note, cr.latest.size);
      if (onPath) state.bind(path, cr.origin);
    }
  }
  return { report, extra: checkpointLines(cr, now), json: checkpointJson(cr, now) };
}

/** `--prove LINE` (with --key or --policy): the tlog-proof text for one line of the ledger at `path` (read twice). */
export function proveFile(path: string, line: number, vopts: VerifyOptions, setup: CheckpointSetup) {
  return proveLine(() => fileChunks(path), line, vopts, { keys: setup.keys, policy: setup.policy });
}

/**
 * `--check-proof FILE`: the report on a tlog-proof, e.g.
 *   proof.tlog-proof: ok
 *     origin    seam-ledger/0123456789abcdef0123456789abcdef
 *     entry     line 12 of 40 (index 11)
 *     signed    by seam+1a2b3c4d
 *     row       {"evt": "tool_call", …}
 * (with a policy, `  cosigned  by W1, W2 (quorum Q met)`) or
 * `  problem   <why>` when it does not hold; exit 0 ok, 1 broken, 3
 * inconclusive (no key to check the signature with, or the policy's quorum
 * not met).
 */
export function checkProofFile(
  name: string,
  text: string,
  keys: readonly Verifier[],
  policy?: Policy,
): { code: number; human: string; json: Record<string, Json> } {
  const c = checkProof(text, keys, policy);
  const code = c.verdict === "ok" ? EXIT.OK : c.verdict === "broken" ? EXIT.FAIL : EXIT.INCONCLUSIVE;
  const entry = c.entry === null ? null : new TextDecoder().decode(c.entry);
  const out = [`${terminalText(name)}: ${c.verdict}`];
  if (c.origin !== null) out.push(`  origin    ${terminalText(c.origin)}`);
  if (c.index !== null)
    out.push(`  entry     line ${c.index + 1}${c.size === null ? "" : ` of ${c.size}`} (index ${c.index})`);
  if (c.signedBy.length > 0) out.push(`  signed    by ${c.signedBy.join(", ")}`);
  if (c.witnessed !== null)
    out.push(
      `  cosigned  by ${c.witnessed.by.length > 0 ? c.witnessed.by.join(", ") : "none of the policy's witnesses"} (quorum ${c.witnessed.quorum} ${c.witnessed.ok ? "met" : "not met"})`,
    );
  if (entry !== null && c.verdict !== "broken") out.push(`  row       ${terminalText(entry)}`);
  if (c.problem !== null) out.push(`  problem   ${terminalText(c.problem)}`);
  const json: Record<string, Json> = {
    file: name,
    ok: c.verdict === "ok" ? true : c.verdict === "broken" ? false : null,
    problem: c.problem,
    origin: c.origin,
    line: c.index === null ? null : c.index + 1,
    size: c.size,
    signed_by: c.signedBy,
    ...(c.witnessed === null ? {} : { witnessed: c.witnessed }),
    entry,
  };
  return { code, human: `${out.join("\n")}\n`, json };
}
