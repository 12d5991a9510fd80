/**
 * Cosignatures (c2sp.org/tlog-cosignature). Ed25519: the signed message
 * against the spec's example, its example signature line read back, the key
 * ID rule, and signing and checking through openNote's trust rules.
 * ML-DSA-44: the subtree/v1 message against the spec's struct, with keys
 * and signatures made by the library apart from seam's code.
 */
import { describe, expect, test } from "bun:test";
import { createHash, createPublicKey, verify } from "node:crypto";
import { ml_dsa44 } from "@noble/post-quantum/ml-dsa.js";
import {
  COSIGNATURE_TYPE,
  cosignatureTime,
  cosignedMessage,
  isCosignatureKey,
  isMlDsaCosignatureKey,
  newCosignatureVerifier,
  newCosigner,
  newMlDsaCosigner,
  subtreeMessage,
} from "../../src/checkpoint/cosignature.ts";
import { loadMlDsa44 } from "../../src/checkpoint/ml-dsa.ts";
import {
  decodeBase64,
  generateKey,
  NoteError,
  newSigner,
  newVerifier,
  openNote,
  parseNote,
  signNote,
} from "../../src/checkpoint/note.ts";
import { loadPolicy, quorumOn } from "../../src/checkpoint/policy.ts";

// The spec's example checkpoint and its witness's cosignature line.
const SPEC_TEXT = "example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n";
const SPEC_COSIG =
  "— witness.example.com/w1 jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrDJsX3b2oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA==\n";
const SPEC_LOG_SIG =
  "— example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n";

const WITNESS = generateKey("witness.example/w1", new Uint8Array(32).fill(3));
const OTHER_WITNESS = generateKey("witness.example/w2", new Uint8Array(32).fill(4));
const LOG = generateKey("log.example", new Uint8Array(32).fill(5));
const cosigner = newCosigner(newSigner(WITNESS.privateKey));
const logSigner = newSigner(LOG.privateKey);
const TEXT = "seam-ledger/00112233445566778899aabbccddeeff\n12\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n";

const pubOf = (vkey: string) => decodeBase64(vkey.slice(vkey.indexOf("+", vkey.indexOf("+") + 1) + 1))!.subarray(1);

function outcome(f: () => unknown): string {
  try {
    const r = f() as { verified: { name: string }[] };
    return `ok ${r.verified.map((s) => s.name).join(",")}`;
  } catch (e) {
    return e instanceof NoteError ? `${e.kind}: ${e.message}` : `other: ${String(e)}`;
  }
}

describe("cosignature/v1", () => {
  test("the signed message is the spec's example: header, time line, then the note text", () => {
    expect(new TextDecoder().decode(cosignedMessage(new TextEncoder().encode(SPEC_TEXT), 1679315147n))).toBe(
      "cosignature/v1\ntime 1679315147\nexample.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n",
    );
  });

  test("the spec's example cosignature line reads back: key ID, the time of its message, 76 bytes", () => {
    const { sigs } = parseNote(`${SPEC_TEXT}\n${SPEC_LOG_SIG}${SPEC_COSIG}`);
    const w = sigs[1]!;
    expect([w.name, w.id.toString(16), cosignatureTime(w), decodeBase64(w.base64)!.length]).toEqual([
      "witness.example.com/w1",
      "8d66cf3f",
      1679315147,
      76,
    ]);
    // The log's own signature line is a note signature (68 bytes): no cosignature time.
    expect(cosignatureTime(sigs[0]!)).toBeNull();
  });

  test("key ID = first 4 bytes of SHA-256(name ‖ 0x0A ‖ 0x04 ‖ public key), unlike the note key ID of the same key", () => {
    const pub = pubOf(WITNESS.verifierKey);
    const want = createHash("sha256")
      .update("witness.example/w1\n")
      .update(Buffer.from([0x04]))
      .update(pub)
      .digest()
      .readUInt32BE(0);
    expect(cosigner.id).toBe(want);
    expect(cosigner.id).not.toBe(newVerifier(WITNESS.verifierKey).id);
    expect(cosigner.verifierKey).toBe(
      `witness.example/w1+${want.toString(16).padStart(8, "0")}+${Buffer.concat([Buffer.from([COSIGNATURE_TYPE]), pub]).toString("base64")}`,
    );
    expect([isCosignatureKey(cosigner.verifierKey), isCosignatureKey(WITNESS.verifierKey)]).toEqual([true, false]);
  });

  test("a cosignature line: key ID, big-endian time, and Ed25519 over the spec's message (checked apart from seam)", () => {
    const line = cosigner.cosign(TEXT, 1700000000);
    expect(line).toMatch(/^— witness\.example\/w1 [A-Za-z0-9+/]{100}[A-Za-z0-9+/=]{4}\n$/);
    const raw = Buffer.from(line.trimEnd().split(" ")[2]!, "base64");
    expect([raw.length, raw.readUInt32BE(0), raw.readBigUInt64BE(4)]).toEqual([76, cosigner.id, 1700000000n]);
    const spki = Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), pubOf(WITNESS.verifierKey)]);
    const pub = createPublicKey({ key: spki, format: "der", type: "spki" });
    const message = Buffer.from(`cosignature/v1\ntime 1700000000\n${TEXT}`);
    expect(verify(null, message, pub, raw.subarray(12))).toBe(true);
    expect(verify(null, Buffer.from(TEXT), pub, raw.subarray(12))).toBe(false);
  });

  test("verifier keys: the 0x04 form only, its own key ID", () => {
    const id = cosigner.verifierKey.split("+")[1]!;
    const cases: [string, string][] = [
      [cosigner.verifierKey, "ok"],
      [WITNESS.verifierKey, "bad-key"],
      [cosigner.verifierKey.replace(id, "00000000"), "bad-key"],
      [cosigner.verifierKey.replace("witness.example/w1", "witness.example/w9"), "bad-key"],
      [`${cosigner.verifierKey}=`, "bad-key"],
      ["", "bad-key"],
    ];
    for (const [text, want] of cases) {
      let got = "ok";
      try {
        newCosignatureVerifier(text);
      } catch (e) {
        got = e instanceof NoteError ? e.kind : String(e);
      }
      expect([text, got]).toEqual([text, want]);
    }
  });

  test("checking through openNote: the table of who signed what", () => {
    const note = signNote(TEXT, [logSigner]);
    const cos = newCosignatureVerifier(cosigner.verifierKey);
    const other = newCosigner(newSigner(OTHER_WITNESS.privateKey));
    const otherV = newCosignatureVerifier(other.verifierKey);
    const good = cosigner.cosign(TEXT, 1700000000);
    /** `good` with its raw bytes changed by `edit`. */
    const edited = (edit: (raw: Buffer) => void) => {
      const raw = Buffer.from(good.trimEnd().split(" ")[2]!, "base64");
      edit(raw);
      return `— witness.example/w1 ${raw.toString("base64")}\n`;
    };
    const flipped = edited((raw) => {
      raw[40] = raw[40]! ^ 1;
    });
    const laterTime = edited((raw) => raw.writeBigUInt64BE(1700000001n, 4));
    const BAD = `invalid-signature: invalid signature for key witness.example/w1+${cosigner.id.toString(16).padStart(8, "0")}`;
    const cases: [string, string, ReturnType<typeof newVerifier>[], string][] = [
      ["cosigned, witness key given", note + good, [cos], "ok witness.example/w1"],
      [
        "cosigned, log and witness keys",
        note + good,
        [newVerifier(LOG.verifierKey), cos],
        "ok log.example,witness.example/w1",
      ],
      ["two witnesses", note + good + other.cosign(TEXT, 5), [cos, otherV], "ok witness.example/w1,witness.example/w2"],
      ["not cosigned", note, [cos], "unverified: note has no verifiable signatures"],
      [
        "cosigned by another witness only",
        note + other.cosign(TEXT, 5),
        [cos],
        "unverified: note has no verifiable signatures",
      ],
      ["signature bytes changed", note + flipped, [cos], BAD],
      ["time changed", note + laterTime, [cos], BAD],
      ["cosigned another checkpoint", note + cosigner.cosign(TEXT.replace("12", "13"), 1700000000), [cos], BAD],
      // A note signature by the witness's key is no cosignature: its key ID is the type-0x01 one.
      [
        "a plain note signature by the witness key",
        signNote(TEXT, [newSigner(WITNESS.privateKey)]),
        [cos],
        "unverified: note has no verifiable signatures",
      ],
    ];
    for (const [what, text, keys, want] of cases)
      expect([what, outcome(() => openNote(text, keys))]).toEqual([what, want]);
  });

  test("times: any POSIX second up to 2^53 - 1 signs; others are refused before signing", () => {
    const cos = newCosignatureVerifier(cosigner.verifierKey);
    for (const t of [0, 1, 2 ** 32, Number.MAX_SAFE_INTEGER]) {
      const line = cosigner.cosign(TEXT, t);
      expect(cosignatureTime(parseNote(`${TEXT}\n${line}`).sigs[0]!)).toBe(t);
      expect(openNote(`${TEXT}\n${line}`, [cos]).verified.length).toBe(1);
    }
    for (const t of [-1, 1.5, Number.NaN, 2 ** 53]) expect(() => cosigner.cosign(TEXT, t)).toThrow(RangeError);
  });
});

describe("ML-DSA-44 cosignatures (subtree/v1)", () => {
  // Keys made here with the library itself, and the message written out field by field from the spec's struct.
  const NAME = "witness.example/pq";
  const keys = ml_dsa44.keygen(new Uint8Array(32).fill(7));
  const typed = Buffer.concat([Buffer.from([0x06]), keys.publicKey]);
  const id = createHash("sha256").update(`${NAME}\n`).update(typed).digest().readUInt32BE(0);
  const VKEY = `${NAME}+${id.toString(16).padStart(8, "0")}+${typed.toString("base64")}`;
  const ORIGIN = TEXT.split("\n")[0]!;
  const ROOT = Buffer.from(TEXT.split("\n")[2]!, "base64");
  const u64 = (n: bigint) => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64BE(n);
    return b;
  };
  const specMessage = (name: string, time: bigint, origin: string, size: bigint, root: Uint8Array) =>
    Buffer.concat([
      Buffer.from("subtree/v1\n\0", "latin1"),
      Buffer.from([Buffer.byteLength(name)]),
      Buffer.from(name),
      u64(time),
      Buffer.from([Buffer.byteLength(origin)]),
      Buffer.from(origin),
      u64(0n),
      u64(size),
      root,
    ]);
  const line = (time: bigint, message: Uint8Array, keyId = id) => {
    const head = Buffer.alloc(12);
    head.writeUInt32BE(keyId, 0);
    head.writeBigUInt64BE(time, 4);
    return `— ${NAME} ${Buffer.concat([head, ml_dsa44.sign(message, keys.secretKey)]).toString("base64")}\n`;
  };

  test("the signed message is the spec's struct: label, name, time, origin, start 0, end = size, root", () => {
    expect(subtreeMessage(NAME, 1700000000n, ORIGIN, 12, ROOT)).toEqual(
      new Uint8Array(specMessage(NAME, 1700000000n, ORIGIN, 12n, ROOT)),
    );
    // Name and origin are 1..255 bytes in the struct.
    expect([subtreeMessage("x".repeat(256), 0n, ORIGIN, 1, ROOT), subtreeMessage(NAME, 0n, "", 1, ROOT)]).toEqual([
      null,
      null,
    ]);
  });

  test("the verifier is made only once the module is loaded; then keys of type 0x06 with their own key ID", async () => {
    const before = (() => {
      try {
        newCosignatureVerifier(VKEY);
        return "made";
      } catch (e) {
        return String(e);
      }
    })();
    // Another test may have loaded it already in this process; then it is made.
    expect(before === "made" || before.includes("loadMlDsa44")).toBe(true);
    await loadMlDsa44();
    expect([isCosignatureKey(VKEY), isMlDsaCosignatureKey(VKEY), isMlDsaCosignatureKey(cosigner.verifierKey)]).toEqual([
      true,
      true,
      false,
    ]);
    const v = newCosignatureVerifier(VKEY);
    expect([v.name, v.id]).toEqual([NAME, id]);
    for (const bad of [VKEY.replace(id.toString(16).padStart(8, "0"), "00000000"), VKEY.replace(NAME, `${NAME}x`)])
      expect(() => newCosignatureVerifier(bad)).toThrow(NoteError);
  });

  test("checking through openNote: a cosignature per the spec verifies; changed ones reject the note", async () => {
    await loadMlDsa44();
    const cos = newCosignatureVerifier(VKEY);
    const note = signNote(TEXT, [logSigner]);
    const good = line(1700000000n, specMessage(NAME, 1700000000n, ORIGIN, 12n, ROOT));
    const BAD = `invalid-signature: invalid signature for key ${NAME}+${id.toString(16).padStart(8, "0")}`;
    const cases: [string, string, string][] = [
      ["cosigned", note + good, `ok ${NAME}`],
      [
        "time zero (no claim to be the largest)",
        note + line(0n, specMessage(NAME, 0n, ORIGIN, 12n, ROOT)),
        `ok ${NAME}`,
      ],
      ["signed with another time", note + line(1700000001n, specMessage(NAME, 1700000000n, ORIGIN, 12n, ROOT)), BAD],
      ["signed for another size", note + line(1700000000n, specMessage(NAME, 1700000000n, ORIGIN, 13n, ROOT)), BAD],
      ["signed under another name", note + line(1700000000n, specMessage("w", 1700000000n, ORIGIN, 12n, ROOT)), BAD],
    ];
    for (const [what, text, want] of cases)
      expect([what, outcome(() => openNote(text, [newVerifier(LOG.verifierKey), cos]))]).toEqual([
        what,
        want.startsWith("ok") ? `ok log.example,${NAME}` : want,
      ]);
    expect(cosignatureTime(parseNote(note + good).sigs[1]!)).toBe(1700000000);
    // Extension lines are not signed by this type: the same cosignature holds for the text with one.
    const extended = `${TEXT}ext\n`;
    expect(outcome(() => openNote(`${extended}\n${good}`, [cos]))).toBe(`ok ${NAME}`);
  });

  test("a policy with an ML-DSA-44 witness: loadPolicy loads the module, quorumOn counts the cosignature", async () => {
    const text = `log ${LOG.verifierKey}\nwitness PQ ${VKEY}\nwitness E ${cosigner.verifierKey}\ngroup both all PQ E\nquorum both\n`;
    const p = await loadPolicy(text, "p");
    const note = signNote(TEXT, [logSigner]);
    const pq = line(5n, specMessage(NAME, 5n, ORIGIN, 12n, ROOT));
    expect([
      quorumOn(p, note + pq),
      quorumOn(p, note + pq + cosigner.cosign(TEXT, 5)),
      quorumOn(p, note + cosigner.cosign(TEXT, 5)),
    ]).toEqual([
      { ok: false, by: ["PQ"] },
      { ok: true, by: ["PQ", "E"] },
      { ok: false, by: ["E"] },
    ]);
  });

  test("seam's own ML-DSA-44 cosigner signs what the spec's message says", async () => {
    await loadMlDsa44();
    const c = newMlDsaCosigner(NAME, new Uint8Array(32).fill(7));
    expect([c.id, c.verifierKey]).toEqual([id, VKEY]);
    const got = c.cosign(TEXT, 1700000000);
    const raw = Buffer.from(got.trimEnd().split(" ")[2]!, "base64");
    expect([raw.length, raw.readUInt32BE(0), raw.readBigUInt64BE(4)]).toEqual([4 + 8 + 2420, id, 1700000000n]);
    expect(ml_dsa44.verify(raw.subarray(12), specMessage(NAME, 1700000000n, ORIGIN, 12n, ROOT), keys.publicKey)).toBe(
      true,
    );
  });
});
