/**
 * `verify --key` in process: every way a checkpoint can fail, each with its
 * exact message, on tampering that the bare chain does not see (the
 * attacker re-chains); the witness and state findings with their evidence;
 * proofs made and checked; the report texts.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { formatTlogProof, ledgerOrigin, parseTlogProof, TLOG_PROOF_HEADER } from "../../src/checkpoint/checkpoint.ts";
import { checkpointJson, checkpointLines } from "../../src/checkpoint/checkpoint-report.ts";
import { type CheckpointCheckOptions, verifyCheckpointed } from "../../src/checkpoint/checkpoint-verifier.ts";
import { leafHash } from "../../src/checkpoint/merkle.ts";
import { newSigner, newVerifier, signNote } from "../../src/checkpoint/note.ts";
import { checkProof, proveLine } from "../../src/checkpoint/proof.ts";
import { StateDir, StateDirError } from "../../src/checkpoint/state.ts";
import { lineForm } from "../../src/core/canonical/index.ts";
import { getField, type Json, parseJson } from "../../src/core/json.ts";
import type { BreakKind } from "../../src/format/kinds.ts";
import { verifyBytes } from "../../src/verify/verify-ledger.ts";
import {
  joinLines,
  KEY,
  linesOf,
  OTHER,
  rechain,
  reforge,
  signer,
  verifier,
  writeCheckpointed,
} from "../helpers/checkpoint-helpers.ts";
import { tempDir } from "../helpers/proc.ts";

const enc = new TextEncoder();
const other = newSigner(OTHER.privateKey);
const LABEL = "seam-test+dfb6af93";

// session_begin, 6 tool_calls, session_end; checkpoints every 3 rows and at the end:
//  1 session_begin  2 tc  3 tc  4 CP(3)  5 tc  6 tc  7 tc  8 CP(7)  9 tc  10 session_end  11 CP(10)
const dir = tempDir();
const base = await writeCheckpointed(join(dir, "base.jsonl"), { calls: 6, every: 3, begin: { checkpoint_key: LABEL } });
const LINES = linesOf(base.path);
const WITNESS = readFileSync(base.witness, "utf8");
const ORIGIN = ledgerOrigin(leafHash(enc.encode(LINES[0]!)));

const sealed = (bytes: Uint8Array, o: Partial<CheckpointCheckOptions> = {}) =>
  verifyCheckpointed([bytes], {}, { keys: [verifier], ...o });
const noteOf = (line: string) => getField(parseJson(line), "note") as string;
/** A line with one JSON field changed (the chain to be fixed by rechain). */
const edit = (line: string, key: string, value: Json) => {
  const m = new Map(parseJson(line) as Map<string, Json>);
  m.set(key, value);
  return lineForm(m);
};
const withLine = (ls: readonly string[], i: number, line: string) => ls.map((l, j) => (j === i ? line : l));

test("the base ledger: as expected, ok, sealed through line 10", async () => {
  expect(LINES.map((l) => getField(parseJson(l), "evt"))).toEqual([
    "session_begin",
    "tool_call",
    "tool_call",
    "checkpoint",
    "tool_call",
    "tool_call",
    "tool_call",
    "checkpoint",
    "tool_call",
    "session_end",
    "checkpoint",
  ]);
  const { report, checkpointReport: seal } = await sealed(joinLines(LINES), { witness: { name: "w", text: WITNESS } });
  expect([report.verdict, report.breaks, report.findings, report.notes]).toEqual(["ok", 0, [], []]);
  expect(seal).toMatchObject({
    origin: ORIGIN,
    lines: 11,
    checkpoints: 3,
    valid: 3,
    sealed_through: 10,
    unsealed_rows: 0,
    keys: [LABEL],
    witness: { file: "w", checkpoints: 3 },
  });
});

describe("checkpoint rows: what a bare chain misses, the checkpoint catches", () => {
  const cases: {
    name: string;
    mutate: () => string[];
    first: string;
    kind: BreakKind;
    breaks: number;
    sealedThrough: number;
  }[] = [
    {
      name: "a re-chained edit under the first checkpoint",
      mutate: () => rechain(withLine(LINES, 1, edit(LINES[1]!, "tool", "forged")), 1),
      first: "line 4: checkpoint root does not match lines 1..3",
      kind: "checkpoint_root",
      breaks: 3,
      sealedThrough: 0,
    },
    {
      name: "a re-chained edit under the last checkpoint only",
      mutate: () => rechain(withLine(LINES, 8, edit(LINES[8]!, "status", "error")), 8),
      first: "line 11: checkpoint root does not match lines 1..10",
      kind: "checkpoint_root",
      breaks: 1,
      sealedThrough: 7,
    },
    {
      name: "a checkpoint signed by the key but with the wrong size",
      mutate: () => reforge(LINES, 10, (c) => (c.size = 11)),
      first: "line 11: checkpoint size 11, but 10 lines precede it",
      kind: "checkpoint_size",
      breaks: 1,
      sealedThrough: 7,
    },
    {
      name: "a checkpoint signed by the key but with the wrong root",
      mutate: () => reforge(LINES, 10, (c) => (c.root = leafHash(enc.encode("another tree")))),
      first: "line 11: checkpoint root does not match lines 1..10",
      kind: "checkpoint_root",
      breaks: 1,
      sealedThrough: 7,
    },
    {
      name: "a checkpoint signed by another key only",
      mutate: () =>
        reforge(
          LINES,
          10,
          () => {},
          (t) => signNote(t, [other]),
        ),
      first: `line 11: checkpoint not signed by ${LABEL}`,
      kind: "checkpoint_signature",
      breaks: 1,
      sealedThrough: 7,
    },
    {
      name: "a known key's bad signature",
      mutate: () => {
        const note = noteOf(LINES[10]!);
        const at = note.indexOf("— seam-test ") + 20;
        const flipped = note.slice(0, at) + (note[at] === "A" ? "B" : "A") + note.slice(at + 1);
        return rechain(withLine(LINES, 10, edit(LINES[10]!, "note", flipped)), 10);
      },
      first: `line 11: checkpoint has an invalid signature for key ${LABEL}`,
      kind: "checkpoint_signature",
      breaks: 1,
      sealedThrough: 7,
    },
    {
      name: "a row whose size field differs from its note",
      mutate: () => rechain(withLine(LINES, 10, edit(LINES[10]!, "size", 9)), 10),
      first: "line 11: checkpoint row's size or root differ from its note's",
      kind: "checkpoint_fields",
      breaks: 1,
      sealedThrough: 7,
    },
    {
      name: "a checkpoint of another origin",
      mutate: () => reforge(LINES, 10, (c) => (c.origin = "seam-ledger/00000000000000000000000000000000")),
      first: `line 11: checkpoint origin seam-ledger/00000000000000000000000000000000 is not this ledger's (${ORIGIN})`,
      kind: "checkpoint_origin",
      breaks: 1,
      sealedThrough: 7,
    },
    {
      name: "a note that is not a signed note",
      mutate: () => rechain(withLine(LINES, 10, edit(LINES[10]!, "note", "garbage")), 10),
      first: "line 11: checkpoint note is malformed",
      kind: "checkpoint_signature",
      breaks: 1,
      sealedThrough: 7,
    },
    {
      name: "a signed note that is not a checkpoint",
      mutate: () => rechain(withLine(LINES, 10, edit(LINES[10]!, "note", signNote("hello\n", [signer]))), 10),
      first: "line 11: checkpoint note is not a checkpoint: a checkpoint is at least three lines: origin, size, root",
      kind: "checkpoint_not_checkpoint",
      breaks: 1,
      sealedThrough: 7,
    },
    {
      name: "a checkpoint row without a note",
      mutate: () => {
        const m = new Map(parseJson(LINES[10]!) as Map<string, Json>);
        m.delete("note");
        return rechain(withLine(LINES, 10, lineForm(m)), 10);
      },
      first: "line 11: checkpoint row without a note",
      kind: "checkpoint_no_note",
      breaks: 1,
      sealedThrough: 7,
    },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const bytes = joinLines(c.mutate());
      expect(bytes).not.toEqual(joinLines(LINES));
      expect(verifyBytes(bytes).breaks).toBe(0); // the chain alone sees nothing
      const { report, checkpointReport: seal } = await sealed(bytes);
      expect([
        report.verdict,
        report.first_break?.kind,
        report.first_break?.message,
        report.breaks,
        seal.sealed_through,
      ]).toEqual(["broken", c.kind, c.first, c.breaks, c.sealedThrough]);
    });
  }

  test("an unknown extra signature is ignored, and said so", async () => {
    const bytes = joinLines(
      reforge(
        LINES,
        10,
        () => {},
        (t) => signNote(t, [signer, other]),
      ),
    );
    const { report, checkpointReport: seal } = await sealed(bytes);
    expect([report.verdict, report.notes, seal.valid]).toEqual([
      "ok",
      ["1 checkpoint signature by other keys ignored"],
      3,
    ]);
  });

  test("every checkpoint removed (and re-chained): nothing is sealed, and the announcing session is named", async () => {
    const bytes = joinLines(
      rechain(
        LINES.filter((l) => getField(parseJson(l), "evt") !== "checkpoint"),
        0,
      ),
    );
    expect(verifyBytes(bytes).verdict).toBe("ok");
    const { report, checkpointReport: seal } = await sealed(bytes);
    expect([report.verdict, report.findings, seal.sealed_through, seal.unsealed_rows]).toEqual([
      "inconclusive",
      [
        `no checkpoint signed by ${LABEL} holds: nothing is sealed`,
        "session s1: its session_begin announces checkpoints, but none of its own holds (still running, or removed)",
      ],
      0,
      8,
    ]);
  });

  test("the unsealed tail counts the rows after the last holding checkpoint", async () => {
    const { report, checkpointReport: seal } = await sealed(joinLines(LINES.slice(0, 9)));
    expect([seal.sealed_through, seal.unsealed_rows, report.breaks]).toEqual([7, 1, 0]);
  });

  test("without a key the Merkle claims are still checked; signatures are not, and that is said", async () => {
    const { report, checkpointReport: seal } = await verifyCheckpointed(
      [
        joinLines(
          reforge(
            LINES,
            10,
            () => {},
            (t) => signNote(t, [other]),
          ),
        ),
      ],
      {},
      { keys: [] },
    );
    expect([report.verdict, report.notes, seal.valid]).toEqual([
      "ok",
      ["checkpoint signatures not checked (no key given)"],
      3,
    ]);
  });

  test("a checkpoint on line 1 has nothing to seal", async () => {
    const { checkpointReport: seal } = await sealed(joinLines([LINES[10]!]));
    expect(seal.breaks).toEqual([
      { line: 1, kind: "checkpoint_before_lines", message: "line 1: checkpoint before any line" },
    ]);
  });
});

describe("witness", () => {
  const w = (text = WITNESS) => ({ witness: { name: "w", text } });

  test("a deleted tail under a witnessed checkpoint: truncated or rolled back, with both checkpoints", async () => {
    const { report, checkpointReport: seal } = await sealed(joinLines(LINES.slice(0, 9)), w());
    const msg =
      "witness: truncated or rolled back: witness checkpoint (w line 3) has size 10; the ledger holds 9 lines";
    expect([report.verdict, report.first_break, report.breaks]).toEqual([
      "broken",
      { line: null, kind: "witness_rolled_back", message: msg },
      1,
    ]);
    expect(seal.evidence).toEqual([
      {
        message: msg,
        evidence: [
          { label: "witness checkpoint (w line 3)", note: noteOf(LINES[10]!) },
          { label: "ledger's latest checkpoint (line 8)", note: noteOf(LINES[7]!) },
        ],
      },
    ]);
  });

  test("a re-chained edit whose checkpoint was dropped: forked or rewritten, the witness against the lines as they hash now", async () => {
    const bytes = joinLines(rechain(withLine(LINES, 8, edit(LINES[8]!, "status", "error")), 8).slice(0, 10));
    const { report, checkpointReport: seal } = await sealed(bytes, w());
    const msg =
      "witness: forked or rewritten: the ledger's lines 1..10 do not hash to the root of the witness checkpoint (w line 3)";
    expect([report.verdict, report.first_break?.kind, report.first_break?.message, report.breaks]).toEqual([
      "broken",
      "witness_forked",
      msg,
      1,
    ]);
    expect(seal.evidence[0]!.evidence.map((e) => e.label)).toEqual([
      "witness checkpoint (w line 3)",
      "the ledger's lines 1..10 (computed, unsigned)",
    ]);
    expect(seal.evidence[0]!.evidence[1]!.note).toMatch(new RegExp(`^${ORIGIN}\n10\n[A-Za-z0-9+/]{43}=\n$`));
  });

  test("a rewritten first line gives another origin: forked or rewritten", async () => {
    const bytes = joinLines(
      rechain(
        withLine(LINES, 0, edit(LINES[0]!, "pid", 2)).filter((l) => getField(parseJson(l), "evt") !== "checkpoint"),
        0,
      ),
    );
    const { report } = await sealed(bytes, w());
    expect(report.first_break?.message).toMatch(
      new RegExp(
        `^witness: forked or rewritten: w line 1 is for origin ${ORIGIN}; this ledger's line 1 gives seam-ledger/[0-9a-f]{32}$`,
      ),
    );
  });

  test("an empty ledger against a witness: truncated", async () => {
    const { report, checkpointReport: seal } = await sealed(new Uint8Array(0), w());
    expect(report.first_break?.message).toBe(
      "witness: truncated or rolled back: witness checkpoint (w line 3) has size 10; the ledger holds 0 lines",
    );
    expect(seal.evidence[0]!.evidence[1]!.label).toBe("the ledger (empty: no line, no origin)");
  });

  test("the witness file itself: a line that is not one, a bad signature, another key", async () => {
    const lines = WITNESS.trimEnd().split("\n");
    const wl = (i: number) => parseJson(lines[i]!) as Map<string, Json>;
    const badSig = new Map(wl(1));
    const n = badSig.get("note") as string;
    const at = n.indexOf("— seam-test ") + 20;
    badSig.set("note", n.slice(0, at) + (n[at] === "A" ? "B" : "A") + n.slice(at + 1));
    const foreignKey = new Map(wl(2));
    foreignKey.set("note", signNote(`${(foreignKey.get("note") as string).split("\n\n")[0]}\n`, [other]));
    const text = `${[lines[0], "not json", lineForm(badSig), lineForm(foreignKey)].join("\n")}\n`;
    const { report, checkpointReport: seal } = await sealed(joinLines(LINES), w(text));
    expect(seal.breaks.map((b) => b.kind)).toEqual(["witness_entry", "witness_entry", "witness_entry"]);
    expect(seal.breaks.map((b) => b.message)).toEqual([
      "witness w line 2: not a witness line (not JSON)",
      `witness w line 3: has an invalid signature for key ${LABEL}`,
      `witness w line 4: not signed by ${LABEL}`,
    ]);
    expect([report.verdict, seal.witness]).toEqual(["broken", { file: "w", checkpoints: 1 }]);
  });

  test("a witness line whose fields disagree with its note", async () => {
    const first = parseJson(WITNESS.split("\n")[0]!) as Map<string, Json>;
    first.set("size", 4);
    const { checkpointReport: seal } = await sealed(joinLines(LINES), w(`${lineForm(first)}\n`));
    expect(seal.breaks.map((b) => b.message)).toEqual([
      "witness w line 1: not a witness line (origin, size or root differ from the note's)",
    ]);
  });
});

describe("state", () => {
  const remembering = (note: string) => ({ remembered: (o: string) => (o === ORIGIN ? note : null) });

  test("an older copy, shorter than what was remembered: rolled back", async () => {
    const { report, checkpointReport: seal } = await sealed(
      joinLines(LINES.slice(0, 8)),
      remembering(noteOf(LINES[10]!)),
    );
    expect(report.first_break?.message).toBe(
      "state: truncated or rolled back: remembered checkpoint has size 10; the ledger holds 8 lines",
    );
    expect(report.first_break?.kind).toBe("state_rolled_back");
    expect(seal.remembered).toBe(10);
    expect(seal.evidence[0]!.evidence.map((e) => e.label)).toEqual([
      "remembered checkpoint",
      "ledger's latest checkpoint (line 8)",
    ]);
  });

  test("lines that no longer hash to the remembered root: forked", async () => {
    const bytes = joinLines(rechain(withLine(LINES, 8, edit(LINES[8]!, "status", "error")), 8).slice(0, 10));
    const { report } = await sealed(bytes, remembering(noteOf(LINES[10]!)));
    expect(report.first_break?.message).toBe(
      "state: forked or rewritten: the ledger's lines 1..10 do not hash to the root of the remembered checkpoint",
    );
    expect(report.first_break?.kind).toBe("state_forked");
  });

  test("the path held another origin before", async () => {
    const { report } = await sealed(joinLines(LINES), {
      rememberedOrigin: "seam-ledger/ffffffffffffffffffffffffffffffff",
    });
    expect(report.first_break?.message).toBe(
      `state: forked or rewritten: this ledger's path held origin seam-ledger/ffffffffffffffffffffffffffffffff; its line 1 now gives ${ORIGIN}`,
    );
  });

  test("a remembered note that does not verify is itself a break", async () => {
    const { report } = await sealed(
      joinLines(LINES),
      remembering(signNote(`${noteOf(LINES[3]!).split("\n\n")[0]}\n`, [other])),
    );
    expect(report.first_break?.message).toBe(`state: the checkpoint remembered for ${ORIGIN} not signed by ${LABEL}`);
    expect(report.first_break?.kind).toBe("state_entry");
  });

  test("StateDir: keeps only a larger checkpoint, binds paths, writes 0600 files", () => {
    const d = join(tempDir(), "state");
    const s = new StateDir(d);
    expect([s.noteFor(ORIGIN), s.originAt(base.path)]).toEqual([null, null]);
    expect(s.remember(ORIGIN, noteOf(LINES[7]!), 7)).toBe(7);
    expect(s.remember(ORIGIN, noteOf(LINES[3]!), 3)).toBe(7);
    expect(s.noteFor(ORIGIN)).toBe(noteOf(LINES[7]!));
    expect(s.remember(ORIGIN, noteOf(LINES[10]!), 10)).toBe(10);
    s.bind(base.path, ORIGIN);
    expect(s.originAt(base.path)).toBe(ORIGIN);
    expect(new StateDir(d).noteFor(ORIGIN)).toBe(noteOf(LINES[10]!));
    const { readdirSync } = require("node:fs") as typeof import("node:fs");
    for (const f of readdirSync(d)) expect([f, statSync(join(d, f)).mode & 0o777]).toEqual([f, 0o600]);
    expect(readdirSync(d).length).toBe(2);
  });

  test("StateDir: a --state that is a file is said to be one, not taken for an empty state", () => {
    const f = join(tempDir(), "state");
    writeFileSync(f, "");
    expect(() => new StateDir(f).noteFor(ORIGIN)).toThrow(new StateDirError(`--state ${f} is not a directory`, ""));
  });
});

describe("proofs", () => {
  const open = () => [joinLines(LINES)];

  test("every sealed line proves and checks without the ledger; the entry is the line", async () => {
    for (let line = 1; line <= 10; line++) {
      const r = await proveLine(open, line, {}, { keys: [verifier] });
      if (!r.ok) throw new Error(r.reason);
      const p = parseTlogProof(r.proof);
      expect([p.index, new TextDecoder().decode(p.extra!), p.checkpoint]).toEqual([
        line - 1,
        LINES[line - 1]!,
        noteOf(LINES[10]!),
      ]);
      expect(checkProof(r.proof, [verifier])).toEqual({
        verdict: "ok",
        problem: null,
        origin: ORIGIN,
        index: line - 1,
        size: 10,
        signedBy: [LABEL],
        witnessed: null,
        entry: enc.encode(LINES[line - 1]!),
      });
    }
  });

  test("refused: an unsealed line, a ledger without checkpoints", async () => {
    expect(await proveLine(open, 11, {}, { keys: [verifier] })).toEqual({
      ok: false,
      reason: "line 11 is not sealed: the latest checkpoint (line 11) covers lines 1..10",
    });
    const bare = () => [joinLines(LINES.filter((l) => getField(parseJson(l), "evt") !== "checkpoint"))];
    expect(await proveLine(bare, 1, {}, { keys: [verifier] })).toEqual({
      ok: false,
      reason: "the ledger has no checkpoint",
      hint: "checkpoints are written by seam wrap --sign KEYFILE",
    });
  });

  test("checkProof: each way a proof fails", async () => {
    const r = await proveLine(open, 5, {}, { keys: [verifier] });
    if (!r.ok) throw new Error(r.reason);
    const p = parseTlogProof(r.proof);
    const flipped = {
      ...p,
      hashes: p.hashes.map((h, i) => (i === 0 ? Uint8Array.from(h, (b, j) => (j === 0 ? b ^ 1 : b)) : h)),
    };
    const table: [string, string, "broken" | "inconclusive"][] = [
      [formatTlogProof(flipped), "the inclusion proof does not hold: root does not match", "broken"],
      [
        formatTlogProof({ ...p, extra: enc.encode("another line") }),
        "the inclusion proof does not hold: root does not match",
        "broken",
      ],
      [formatTlogProof({ ...p, index: 5 }), "the inclusion proof does not hold: root does not match", "broken"],
      [
        formatTlogProof({ ...p, hashes: p.hashes.slice(1) }),
        "the inclusion proof does not hold: proof is too short",
        "broken",
      ],
      [
        formatTlogProof({ ...p, extra: null }),
        "the proof carries no entry (no extra line): there is nothing to check it for",
        "broken",
      ],
      [
        formatTlogProof({ ...p, checkpoint: signNote(`${p.checkpoint.split("\n\n")[0]}\n`, [other]) }),
        `the checkpoint is not signed by ${LABEL}`,
        "broken",
      ],
      ["not a proof", "not a tlog-proof: no blank line before the checkpoint", "broken"],
      [r.proof.replace("index 4", "index 04"), 'not a tlog-proof: line 3: expected "index N"', "broken"],
    ];
    for (const [text, problem, verdict] of table)
      expect([checkProof(text, [verifier]).problem, checkProof(text, [verifier]).verdict]).toEqual([problem, verdict]);
    expect(checkProof(r.proof, [])).toMatchObject({
      verdict: "inconclusive",
      problem: "the proof holds, but no key was given to check who signed its checkpoint",
    });
    expect(checkProof(r.proof, [newVerifier(OTHER.verifierKey)]).problem).toBe(
      `the checkpoint is not signed by other+${OTHER.verifierKey.split("+")[1]}`,
    );
  });
});

describe("report texts", () => {
  test("checkpointLines and checkpointJson, literally", async () => {
    const { checkpointReport: seal } = await sealed(joinLines(LINES.slice(0, 9)), {
      witness: { name: "w", text: WITNESS },
    });
    const cp3 = noteOf(LINES[10]!).split("\n");
    const cp2 = noteOf(LINES[7]!).split("\n");
    expect(checkpointLines(seal, 7)).toEqual([
      `  sealed    through line 7; unsealed tail: 1 row (2 checkpoints; key ${LABEL})`,
      "  witness   w: 3 checkpoints",
      `  state     nothing remembered for ${ORIGIN}; now 7`,
      "  evidence  witness: truncated or rolled back: witness checkpoint (w line 3) has size 10; the ledger holds 9 lines",
      "    witness checkpoint (w line 3):",
      `      ${cp3[0]}`,
      `      ${cp3[1]}`,
      `      ${cp3[2]}`,
      "",
      `      ${cp3[4]}`,
      "    ledger's latest checkpoint (line 8):",
      `      ${cp2[0]}`,
      `      ${cp2[1]}`,
      `      ${cp2[2]}`,
      "",
      `      ${cp2[4]}`,
    ]);
    expect(checkpointLines(seal)).toHaveLength(16 - 1);
    const j = checkpointJson(seal, 7);
    expect(Object.keys(j)).toEqual([
      "origin",
      "checkpoints",
      "valid",
      "sealed_through",
      "unsealed_rows",
      "latest",
      "keys",
      "witness",
      "remembered",
      "evidence",
      "state_now",
    ]);
    expect(j).toMatchObject({
      origin: ORIGIN,
      checkpoints: 2,
      valid: 2,
      sealed_through: 7,
      unsealed_rows: 1,
      latest: { line: 8, size: 7 },
      keys: [LABEL],
      witness: { file: "w", checkpoints: 3 },
      remembered: null,
      state_now: 7,
    });
  });

  test("the C2SP spec's tlog-proof example parses (its signatures are elided there, so only up to the checkpoint)", () => {
    const example = `${TLOG_PROOF_HEADER}\nextra YWdlLXYxLjIuMS1kYXJ3aW4tYXJtNjQudGFyLmd6\nindex 73894\ngSKyXoYZUgZ6jduWYrkDOARinOMGJveXjgMkBTcdPlQ=\nB95lDa8R83lS8n0eG+o0buTxRKQTYFi//1U8anccXmA=\n\nexample.com/fancylog\n109482\nsFodV/vSp5O8n9a8QpW6PRY97tfOSW5bsc2Xl/EQi08=\n\n— example.com/fancylog hI2DJw==\n`;
    const p = parseTlogProof(example);
    expect([p.index, p.hashes.length, new TextDecoder().decode(p.extra!), p.checkpoint.split("\n")[0]]).toEqual([
      73894,
      2,
      "age-v1.2.1-darwin-arm64.tar.gz",
      "example.com/fancylog",
    ]);
    expect(formatTlogProof(p)).toBe(example);
  });
});

test("KEY is the fixed test key", () => expect(KEY.verifierKey.startsWith(`${LABEL}+`)).toBe(true));
