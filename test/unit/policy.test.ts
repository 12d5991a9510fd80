/**
 * tlog-policy files (src/checkpoint/policy.ts): the table of files and what
 * each parses to or why it is refused, and the table of quorums against the
 * cosignatures a note carries.
 */
import { describe, expect, test } from "bun:test";
import { checkpointText } from "../../src/checkpoint/checkpoint.ts";
import { newCosigner } from "../../src/checkpoint/cosignature.ts";
import { generateKey, newSigner, signNote } from "../../src/checkpoint/note.ts";
import { PolicyError, parsePolicy, quorumOn } from "../../src/checkpoint/policy.ts";

const LOG = generateKey("log.example", new Uint8Array(32).fill(21));
const W = [1, 2, 3, 4].map((i) =>
  newCosigner(newSigner(generateKey(`w${i}.example`, new Uint8Array(32).fill(30 + i)).privateKey)),
);
const [w1, w2, w3, w4] = W.map((w) => w.verifierKey) as [string, string, string, string];
const TEXT = checkpointText({ origin: "seam-ledger/00", size: 3, root: new Uint8Array(32) });
const note = (...by: number[]) =>
  signNote(TEXT, [newSigner(LOG.privateKey)]) + by.map((i) => W[i - 1]!.cosign(TEXT, 1700000000)).join("");

function parsed(text: string): string {
  try {
    const p = parsePolicy(text, "p");
    return `logs ${p.logs.length}, witnesses ${p.witnesses.map((w) => w.name).join(",")}, quorum ${p.quorumName}`;
  } catch (e) {
    return e instanceof PolicyError ? `error: ${e.message}` : `other: ${String(e)}`;
  }
}

describe("policy files", () => {
  test("the table", () => {
    const cases: [string, string][] = [
      [`log ${LOG.verifierKey}\nquorum none\n`, "logs 1, witnesses , quorum none"],
      [
        `# two of three\n  log ${LOG.verifierKey} https://log.example/\n\nwitness A ${w1}\nwitness B\t${w2} https://w2.example/\nwitness C ${w3}\ngroup G 2 A B C\nquorum G\n`,
        "logs 1, witnesses A,B,C, quorum G",
      ],
      [`log ${LOG.verifierKey}\nwitness A ${w1}\nquorum A`, "logs 1, witnesses A, quorum A"],
      [`log ${LOG.verifierKey}\n`, "error: p has no quorum line"],
      [`witness A ${w1}\nquorum A\n`, "error: p names no log: seam needs the key its checkpoints are signed with"],
      [`log ${LOG.verifierKey}\nquorum A\n`, "error: p line 2: A is not defined on a line before"],
      [`log ${LOG.verifierKey}\nquorum none\nquorum none\n`, "error: p line 3: a second quorum line"],
      [
        `log ${LOG.verifierKey}\nwitness A ${LOG.verifierKey}\nquorum A\n`,
        "error: p line 2: not a cosignature verifier key (<name>+<id>+<base64 of 0x04 or 0x06 and the key>, as seam witness prints)",
      ],
      [
        `log ${w1}\nquorum none\n`,
        "error: p line 1: not a log verifier key (<name>+<id>+<base64 of 0x01 and the key>)",
      ],
      [
        `log ${LOG.verifierKey}\nwitness A ${w1}\nwitness B ${w1}\nquorum A\n`,
        "error: p line 3: this key is given already",
      ],
      [`log ${LOG.verifierKey}\nwitness A ${w1}\nwitness A ${w2}\nquorum A\n`, "error: p line 3: A is defined already"],
      [
        `log ${LOG.verifierKey}\nwitness none ${w1}\nquorum none\n`,
        'error: p line 2: "none" cannot name a witness or group',
      ],
      [
        `log ${LOG.verifierKey}\nwitness A ${w1}\ngroup G 2 A\nquorum G\n`,
        'error: p line 3: threshold "2" is not all, any, or 1..1',
      ],
      [
        `log ${LOG.verifierKey}\nwitness A ${w1}\ngroup G 0 A\nquorum G\n`,
        'error: p line 3: threshold "0" is not all, any, or 1..1',
      ],
      [
        `log ${LOG.verifierKey}\nwitness A ${w1}\ngroup G any A A\nquorum G\n`,
        "error: p line 3: a member is listed twice",
      ],
      [
        `log ${LOG.verifierKey}\nwitness A ${w1}\ngroup G any A B\nquorum G\n`,
        "error: p line 3: B is not defined on a line before",
      ],
      [`log ${LOG.verifierKey}\nwitnesses A ${w1}\nquorum none\n`, 'error: p line 2: unknown line "witnesses"'],
      [`log ${LOG.verifierKey}\nquorum none\u000b\n`, "error: p line 2: a control character"],
    ];
    for (const [text, want] of cases) expect([text, parsed(text)]).toEqual([text, want]);
  });
});

describe("quorums", () => {
  test("the table: which cosignatures make which quorum", () => {
    const policy = (q: string) =>
      parsePolicy(
        `log ${LOG.verifierKey}\nwitness X1 ${w1}\nwitness X2 ${w2}\nwitness Y1 ${w3}\nwitness Y2 ${w4}\ngroup X all X1 X2\ngroup Y any Y1 Y2\ngroup XY all X Y\ngroup two 2 X1 X2 Y1\n${q}\n`,
        "p",
      );
    const cases: [string, number[], boolean, string[]][] = [
      ["quorum none", [], true, []],
      ["quorum X1", [1], true, ["X1"]],
      ["quorum X1", [2], false, ["X2"]],
      ["quorum X", [1], false, ["X1"]],
      ["quorum X", [1, 2], true, ["X1", "X2"]],
      ["quorum Y", [4], true, ["Y2"]],
      ["quorum XY", [1, 2], false, ["X1", "X2"]],
      ["quorum XY", [1, 2, 3], true, ["X1", "X2", "Y1"]],
      ["quorum two", [2, 3], true, ["X2", "Y1"]],
      ["quorum two", [4], false, ["Y2"]],
      ["quorum two", [], false, []],
    ];
    for (const [q, by, ok, names] of cases)
      expect([q, by, quorumOn(policy(q), note(...by))]).toEqual([q, by, { ok, by: names }]);
  });

  test("a witness's bad cosignature makes the note count for none", () => {
    const p = parsePolicy(`log ${LOG.verifierKey}\nwitness A ${w1}\nwitness B ${w2}\ngroup G any A B\nquorum G\n`, "p");
    const good = note(1, 2);
    const raw = Buffer.from(good.trimEnd().split("\n").at(-1)!.split(" ")[2]!, "base64");
    raw[30] = raw[30]! ^ 1;
    const bad = `${good.trimEnd().split("\n").slice(0, -1).join("\n")}\n— w2.example ${raw.toString("base64")}\n`;
    expect([quorumOn(p, good), quorumOn(p, bad)]).toEqual([
      { ok: true, by: ["A", "B"] },
      { ok: false, by: [] },
    ]);
  });
});
