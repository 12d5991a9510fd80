/** The checkpoint, witness-line and tlog-proof texts: golden forms and every way a parse refuses. */
import { describe, expect, test } from "bun:test";
import {
  checkpointText,
  FormatError,
  formatTlogProof,
  ledgerOrigin,
  parseCheckpointText,
  parseDecimal,
  parseTlogProof,
  parseWitnessLine,
  witnessLine,
} from "../../src/checkpoint/checkpoint.ts";
import { leafHash } from "../../src/checkpoint/merkle.ts";
import { refusal } from "../helpers/checkpoint-helpers.ts";

const ROOT = new Uint8Array(32).map((_, i) => i);
const ROOT_B64 = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
const ORIGIN = "seam-ledger/0123456789abcdef0123456789abcdef";

const refused = (f: () => unknown) => refusal(f, FormatError);

describe("checkpoint text", () => {
  test("golden form, and back", () => {
    expect(checkpointText({ origin: ORIGIN, size: 12, root: ROOT })).toBe(`${ORIGIN}\n12\n${ROOT_B64}\n`);
    expect(parseCheckpointText(`${ORIGIN}\n12\n${ROOT_B64}\n`)).toEqual({ origin: ORIGIN, size: 12, root: ROOT });
    expect(parseCheckpointText(`${ORIGIN}\n0\n${ROOT_B64}\nan extension\n`).size).toBe(0);
  });

  test("the origin is line 1's leaf hash, first 16 bytes in hex", () => {
    // SHA-256(0x00 ‖ "") = 6e340b9c…, the RFC 6962 empty leaf.
    expect(ledgerOrigin(leafHash(new Uint8Array(0)))).toBe("seam-ledger/6e340b9cffb37a989ca544e6bb780a2c");
  });

  test("refused", () => {
    const table: [string, string][] = [
      [`${ORIGIN}\n12\n${ROOT_B64}`, "a checkpoint is at least three lines: origin, size, root"],
      [`${ORIGIN}\n12\n`, "a checkpoint is at least three lines: origin, size, root"],
      [`\n12\n${ROOT_B64}\n`, "the checkpoint's origin is empty"],
      [`${ORIGIN}\n012\n${ROOT_B64}\n`, `the checkpoint's size "012" is not a decimal number`],
      [`${ORIGIN}\n-1\n${ROOT_B64}\n`, `the checkpoint's size "-1" is not a decimal number`],
      [
        `${ORIGIN}\n9007199254740992\n${ROOT_B64}\n`,
        `the checkpoint's size "9007199254740992" is not a decimal number`,
      ],
      [`${ORIGIN}\n12\nAAEC\n`, "the checkpoint's root is not the base64 of 32 bytes"],
      [`${ORIGIN}\n12\n${ROOT_B64.replace("=", "")}\n`, "the checkpoint's root is not the base64 of 32 bytes"],
      [`${ORIGIN}\n12\n${ROOT_B64}\n\n`, "a checkpoint's extension lines must not be empty"],
    ];
    expect(table.map(([t]) => [t, refused(() => parseCheckpointText(t))])).toEqual(table);
  });

  test("decimals: no leading zeroes, no signs, up to 2^53 - 1", () => {
    expect(
      ["0", "7", "9007199254740991", "00", "07", "+1", "1e3", "", " 1", "9007199254740992", "99999999999999999999"].map(
        parseDecimal,
      ),
    ).toEqual([0, 7, 9007199254740991, null, null, null, null, null, null, null, null]);
  });
});

describe("witness line", () => {
  const note = `${ORIGIN}\n12\n${ROOT_B64}\n\n— seam AAAAAAA=\n`;

  test("golden form, and back", () => {
    const line = witnessLine({ origin: ORIGIN, size: 12, root: ROOT }, note);
    expect(line).toBe(
      `{"origin": "${ORIGIN}", "size": 12, "root": "${ROOT_B64}", "note": "${ORIGIN}\\n12\\n${ROOT_B64}\\n\\n— seam AAAAAAA=\\n"}\n`,
    );
    expect(parseWitnessLine(line)).toEqual({ checkpoint: { origin: ORIGIN, size: 12, root: ROOT }, note });
  });

  test("refused", () => {
    const table: [string, string][] = [
      ["{", "not JSON"],
      ["[]", "not a JSON object"],
      [`{"note": 1}`, "no note"],
      [`{"note": "a\\nb\\n"}`, "the note has no signature block"],
      [
        `{"origin": "x", "size": 12, "root": "${ROOT_B64}", "note": ${JSON.stringify(note)}}`,
        "origin, size or root differ from the note's",
      ],
      [
        `{"origin": "${ORIGIN}", "size": 12.0, "root": "${ROOT_B64}", "note": ${JSON.stringify(note)}}`,
        "origin, size or root differ from the note's",
      ],
    ];
    expect(table.map(([t]) => [t, refused(() => parseWitnessLine(t))])).toEqual(table);
  });
});

describe("tlog-proof", () => {
  const cp = `${ORIGIN}\n12\n${ROOT_B64}\n\n— seam AAAAAAA=\n`;

  test("golden form with and without extra and hashes, and back", () => {
    const p = { extra: new TextEncoder().encode("row"), index: 3, hashes: [ROOT, ROOT], checkpoint: cp };
    const text = `c2sp.org/tlog-proof@v1\nextra cm93\nindex 3\n${ROOT_B64}\n${ROOT_B64}\n\n${cp}`;
    expect(formatTlogProof(p)).toBe(text);
    expect(parseTlogProof(text)).toEqual(p);
    const bare = { extra: null, index: 0, hashes: [], checkpoint: cp };
    expect(formatTlogProof(bare)).toBe(`c2sp.org/tlog-proof@v1\nindex 0\n\n${cp}`);
    expect(parseTlogProof(formatTlogProof(bare))).toEqual(bare);
  });

  test("refused", () => {
    const table: [string, string][] = [
      ["c2sp.org/tlog-proof@v1\nindex 0\n", "no blank line before the checkpoint"],
      [`c2sp.org/tlog-proof@v2\nindex 0\n\n${cp}`, "the first line is not c2sp.org/tlog-proof@v1"],
      [`c2sp.org/tlog-proof@v1\nextra !!\nindex 0\n\n${cp}`, "line 2: the extra data is not base64"],
      [`c2sp.org/tlog-proof@v1\nindex x\n\n${cp}`, 'line 2: expected "index N"'],
      [`c2sp.org/tlog-proof@v1\n${ROOT_B64}\n\n${cp}`, 'line 2: expected "index N"'],
      [`c2sp.org/tlog-proof@v1\nindex 1\nAAEC\n\n${cp}`, "line 3: not the base64 of a 32-byte hash"],
      [`c2sp.org/tlog-proof@v1\nindex 1\n${`${ROOT_B64}\n`.repeat(65)}\n${cp}`, "more than 64 proof hashes"],
    ];
    expect(table.map(([t]) => [t, refused(() => parseTlogProof(t))])).toEqual(table);
  });
});
