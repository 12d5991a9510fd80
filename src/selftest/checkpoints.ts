/**
 * selftest's checkpoint cases: the tampering a bare hash chain cannot see
 * (its limit is shown by the tamper_detected LIMIT arm), each caught by the
 * signed checkpoints, the witness file or the remembered state.
 *
 * The running build of seam makes a key (`keygen`) and a ledger (`wrap
 * --sign --checkpoint-every 5 --witness`) with the built-in fixture; every
 * RED arm then changes that ledger as someone who can write it would
 * (re-chaining whatever they touch, so the chain alone still holds), passes
 * a no-op guard (the bytes changed, and the bare chain is not broken), and
 * requires the specific verdict: the exact first break.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type Checkpoint, checkpointText, parseCheckpointText } from "../checkpoint/checkpoint.ts";
import { leafHash } from "../checkpoint/merkle.ts";
import { generateKey, keyLabel, newSigner, newVerifier, type Signer, signNote } from "../checkpoint/note.ts";
import { StateDir } from "../checkpoint/state.ts";
import { type CheckpointSetup, verifyCheckpointedSource } from "../checkpoint/verify-file.ts";
import { lineForm } from "../core/canonical/index.ts";
import { getField, type Json, type JsonObject, parseJson } from "../core/json.ts";
import type { BreakKind } from "../format/kinds.ts";
import { exec } from "../runtime/exec.ts";
import type { VerifyReport } from "../verify/ledger-verifier.ts";
import { verifyBytes } from "../verify/verify-ledger.ts";
import type { Arm } from "./arm.ts";
import { CHILD_DEADLINE_MS, clientWait } from "./fixture-runs.ts";
import { flipArgsDigest, rechainLines } from "./tamper.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/**
 * The checkpoint row at index `i` with its (origin, size, root) changed by
 * `change` and its note signed anew by `sign`, then re-chained: a checkpoint
 * that lies, made by whoever holds the key (or claims to).
 */
export function reforgeCheckpoint(
  lines: readonly string[],
  i: number,
  change: (c: Checkpoint) => void,
  sign: (text: string) => string,
): string[] {
  const row = new Map(parseJson(lines[i]!) as JsonObject);
  const note = row.get("note") as string;
  const c = parseCheckpointText(note.slice(0, note.lastIndexOf("\n\n") + 1));
  change(c);
  row.set("size", c.size);
  row.set("root", Buffer.from(c.root).toString("base64"));
  row.set("note", sign(checkpointText(c)));
  const out = lines.slice();
  out[i] = lineForm(row);
  return rechainLines(out, i);
}

const join1 = (ls: readonly string[]) => enc.encode(ls.map((l) => `${l}\n`).join(""));

function evtOf(line: string): Json | undefined {
  try {
    return getField(parseJson(line), "evt");
  } catch {
    return undefined;
  }
}

function summary(r: VerifyReport): string {
  return `${r.verdict}${r.first_break ? `, ${r.first_break.message}` : ""}, ${r.breaks} break${r.breaks === 1 ? "" : "s"}`;
}

/** The awkward script sends lines that are not JSON on purpose: they are rowed, and allowed here. */
const AWKWARD_JUNK = true;

export async function checkpointArms(self: string[], dir: string): Promise<Arm[]> {
  const arms: Arm[] = [];
  const add = (c: string, arm: string, pass: boolean, detail: string) => arms.push({ case: c, arm, pass, detail });
  const p = (s: string) => join(dir, `cp.${s}`);

  const keygen = await exec([...self, "keygen", "--name", "selftest", "--out", p("key")], {
    timeoutMs: CHILD_DEADLINE_MS,
  });
  const vkey = dec.decode(keygen.stdout).trim();
  let signer: Signer;
  try {
    signer = newSigner(readFileSync(p("key"), "utf8").trim());
  } catch {
    add(
      "checkpoints_sealed",
      "GREEN",
      false,
      `seam keygen made no usable key (exit ${keygen.code}): ${keygen.stderr.trim()}`,
    );
    return arms;
  }
  const verifier = newVerifier(vkey);
  const label = keyLabel(signer.name, signer.id);
  const server = [...self, "fixture", "server"];
  const wrap = [
    ...self,
    "wrap",
    "--ledger",
    p("jsonl"),
    "--session",
    "selftest-cp",
    "--sign",
    p("key"),
    "--checkpoint-every",
    "5",
    "--witness",
    p("witness"),
    "--",
    ...server,
  ];
  const run = await exec(
    [
      ...self,
      "fixture",
      "client",
      "--script",
      "awkward",
      ...clientWait(),
      "--sent",
      p("sent"),
      "--received",
      p("recv"),
      "--",
      ...wrap,
    ],
    { timeoutMs: CHILD_DEADLINE_MS },
  );
  const read = (s: string) => {
    try {
      return readFileSync(p(s), "utf8");
    } catch {
      return "";
    }
  };
  const lines = read("jsonl").split("\n").slice(0, -1);
  const witness = { name: "witness", text: read("witness") };
  const setup: CheckpointSetup = { keys: [verifier], witness };
  const check = async (ls: readonly string[], s: CheckpointSetup = setup, path = "-") =>
    (await verifyCheckpointedSource(path, [join1(ls)], { isWriterAlive: () => false, allowUnparsed: AWKWARD_JUNK }, s))
      .report;
  const cps = lines.flatMap((l, i) => (evtOf(l) === "checkpoint" ? [i] : []));
  const last = cps.at(-1) ?? -1;

  {
    const c = "checkpoints_sealed";
    const r = await check(lines);
    const witnessed = witness.text.split("\n").filter((l) => l !== "").length;
    const ok =
      run.code === 0 && r.verdict === "ok" && cps.length >= 3 && last === lines.length - 1 && witnessed === cps.length;
    add(
      c,
      "GREEN",
      ok,
      ok
        ? `${cps.length} checkpoints signed by ${label}, each in the witness file; sealed through line ${last}, nothing unsealed`
        : `wrap exit ${run.code}; verify says ${summary(r)}; ${cps.length} checkpoints, ${witnessed} witnessed, last on line ${last + 1} of ${lines.length}`,
    );
  }

  const c = "checkpoint_tamper_detected";
  const other = newSigner(generateKey("stranger").privateKey);
  const callLine = lines.findIndex((l) => l.includes(`"evt": "tool_call"`) && l.includes(`"args_digest": "sha256:`));
  // The first checkpoint that covers the edited call.
  const cpAfter = cps.find((i) => i > callLine) ?? -1;
  const flipSig = (ls: readonly string[], i: number) => {
    const row = new Map(parseJson(ls[i]!) as JsonObject);
    const note = row.get("note") as string;
    const at = note.lastIndexOf(` `) + 10;
    row.set("note", note.slice(0, at) + (note[at] === "A" ? "B" : "A") + note.slice(at + 1));
    return rechainLines(
      ls.map((l, j) => (j === i ? lineForm(row) : l)),
      i,
    );
  };
  const older = lines.slice(0, cps[1]! + 1); // a copy taken just after the second checkpoint
  const stateDir = p("state");
  const cases: {
    arm: string;
    mutate: () => string[];
    setup?: () => Promise<CheckpointSetup>;
    /** The break expected first (its kind and line), and its message as shown. */
    kind?: BreakKind;
    line?: number | null;
    want: string;
    verdict?: VerifyReport["verdict"];
  }[] = [
    {
      arm: "RED on a deleted tail under a checkpoint",
      mutate: () => lines.slice(0, cps.at(-2)! + 1),
      kind: "witness_rolled_back",
      line: null,
      want: `witness: truncated or rolled back: witness checkpoint (witness line ${cps.length}) has size ${last}; the ledger holds ${cps.at(-2)! + 1} lines`,
    },
    {
      arm: "RED on a rollback to an older copy with witness state present",
      mutate: () => older,
      setup: async () => {
        // The verifier saw the whole ledger once and remembers it.
        await check(lines, { keys: [verifier], state: new StateDir(stateDir) }, p("jsonl"));
        return { keys: [verifier], state: new StateDir(stateDir) };
      },
      kind: "state_rolled_back",
      line: null,
      want: `state: truncated or rolled back: remembered checkpoint has size ${last}; the ledger holds ${older.length} lines`,
    },
    {
      arm: "RED on a re-chained edit under a signed checkpoint",
      mutate: () =>
        rechainLines(
          lines.map((l, i) => (i === callLine ? flipArgsDigest(l) : l)),
          callLine,
        ),
      kind: "checkpoint_root",
      line: cpAfter + 1,
      want: `line ${cpAfter + 1}: checkpoint root does not match lines 1..${cpAfter}`,
    },
    {
      arm: "RED on a checkpoint with a wrong size",
      mutate: () =>
        reforgeCheckpoint(
          lines,
          last,
          (cp) => (cp.size += 1),
          (t) => signNote(t, [signer]),
        ),
      kind: "checkpoint_size",
      line: last + 1,
      want: `line ${last + 1}: checkpoint size ${last + 1}, but ${last} lines precede it`,
    },
    {
      arm: "RED on a checkpoint with a wrong root",
      mutate: () =>
        reforgeCheckpoint(
          lines,
          last,
          (cp) => (cp.root = leafHash(enc.encode("another ledger"))),
          (t) => signNote(t, [signer]),
        ),
      kind: "checkpoint_root",
      line: last + 1,
      want: `line ${last + 1}: checkpoint root does not match lines 1..${last}`,
    },
    {
      arm: "RED on a checkpoint with a wrong signature",
      mutate: () =>
        reforgeCheckpoint(
          lines,
          last,
          () => {},
          (t) => signNote(t, [other]),
        ),
      kind: "checkpoint_signature",
      line: last + 1,
      want: `line ${last + 1}: checkpoint not signed by ${label}`,
    },
    {
      arm: "RED on a known key with a bad signature",
      mutate: () => flipSig(lines, last),
      kind: "checkpoint_signature",
      line: last + 1,
      want: `line ${last + 1}: checkpoint has an invalid signature for key ${label}`,
    },
    {
      arm: "GREEN with an unknown extra signature (ignored)",
      mutate: () =>
        reforgeCheckpoint(
          lines,
          last,
          () => {},
          (t) => signNote(t, [signer, other]),
        ),
      want: "",
      verdict: "ok",
    },
  ];
  for (const t of cases) {
    let mutated: string[];
    try {
      mutated = t.mutate();
    } catch (e) {
      add(c, t.arm, false, `could not tamper with the ledger: ${e instanceof Error ? e.message : String(e)}`);
      continue;
    }
    const bytes = join1(mutated);
    const bare = verifyBytes(bytes, { isWriterAlive: () => false, allowUnparsed: AWKWARD_JUNK });
    if (dec.decode(bytes) === dec.decode(join1(lines))) {
      add(c, t.arm, false, "no-op guard: the mutation changed nothing");
      continue;
    }
    if (bare.verdict === "broken") {
      add(
        c,
        t.arm,
        false,
        `no-op guard: the bare chain already catches it (${summary(bare)}), so it proves nothing about checkpoints`,
      );
      continue;
    }
    const r = await check(mutated, t.setup ? await t.setup() : setup);
    const pass =
      t.verdict === "ok"
        ? r.verdict === "ok" && r.notes.includes("1 checkpoint signature by other keys ignored")
        : r.verdict === "broken" && r.first_break?.kind === t.kind && r.first_break?.line === t.line;
    const expected = t.verdict === "ok" ? "ok, the extra signature ignored" : `broken, ${t.want}`;
    add(
      c,
      t.arm,
      pass,
      `bare chain: ${bare.verdict}; with checkpoints: ${summary(r)}${pass ? "" : ` (expected ${expected})`}`,
    );
  }
  return arms;
}
