/**
 * Signed notes against the published example of golang.org/x/mod/sumdb/note
 * (the PeterNeumann and EnochRoot keys, text and signatures from its tests):
 * parsing keys, signing byte for byte, and the spec's trust rules on open.
 */
import { describe, expect, test } from "bun:test";
import {
  decodeBase64,
  generateKey,
  isValidKeyName,
  keyId,
  keyLabel,
  NoteError,
  newSigner,
  newVerifier,
  openNote,
  parseNote,
  signNote,
} from "../../src/checkpoint/note.ts";

const PETER_VKEY = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";
const PETER_SKEY = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz";
const ENOCH_VKEY = "EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop";
const TEXT = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
const PETER_SIG =
  "— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n";
const ENOCH_SIG =
  "— EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n";
const peter = {
  name: "PeterNeumann",
  id: 0xc74f20a3,
  base64: "x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=",
};
const enoch = {
  name: "EnochRoot",
  id: 0xaf0cfe78,
  base64: "rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=",
};

/** Every proper substring and every one-character increment of `key`. */
function manglings(key: string): string[] {
  const out: string[] = [];
  for (let i = 0; i <= key.length; i++)
    for (let j = i + 1; j <= key.length; j++) if (i !== 0 || j !== key.length) out.push(key.slice(i, j));
  for (let i = 0; i < key.length; i++)
    out.push(key.slice(0, i) + String.fromCharCode(key.charCodeAt(i) + 1) + key.slice(i + 1));
  return out;
}

function thrown(f: () => unknown): string {
  try {
    f();
    return "no error";
  } catch (e) {
    return e instanceof NoteError ? `${e.kind}: ${e.message}` : `other: ${String(e)}`;
  }
}

describe("keys", () => {
  test("the published verifier key parses, and no mangling of it does", () => {
    const v = newVerifier(PETER_VKEY);
    expect([v.name, v.id, v.text]).toEqual(["PeterNeumann", 0xc74f20a3, PETER_VKEY]);
    const accepted = manglings(PETER_VKEY).filter((k) => thrown(() => newVerifier(k)) === "no error");
    expect(accepted).toEqual([]);
    // A wrong-length key and an unknown algorithm, each with its key ID recomputed to match.
    expect(
      thrown(() => newVerifier("PeterNeumann+cc469956+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TWBADKEY==")),
    ).toBe("bad-key: malformed verifier key");
    expect(thrown(() => newVerifier("PeterNeumann+173116ae+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"))).toBe(
      "bad-key: malformed verifier key",
    );
  });

  test("the published private key parses, gives the published verifier key, and no mangling of it parses", () => {
    const s = newSigner(PETER_SKEY);
    expect([s.name, s.id, s.verifierKey]).toEqual(["PeterNeumann", 0xc74f20a3, PETER_VKEY]);
    const accepted = manglings(PETER_SKEY).filter((k) => thrown(() => newSigner(k)) === "no error");
    expect(accepted).toEqual([]);
  });

  test("key ID = first 4 bytes of SHA-256(name ‖ 0x0A ‖ 0x01 ‖ public key)", () => {
    const typed = decodeBase64("ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW")!;
    expect(keyId("PeterNeumann", typed).toString(16)).toBe("c74f20a3");
    expect(keyLabel("PeterNeumann", 0x0000abcd)).toBe("PeterNeumann+0000abcd");
  });

  test("generated keys work together and are each other's; a fixed seed gives fixed texts", () => {
    const { privateKey, verifierKey } = generateKey("seam.example/log");
    expect(privateKey).toMatch(/^PRIVATE\+KEY\+seam\.example\/log\+[0-9a-f]{8}\+[A-Za-z0-9+/]{44}$/);
    const s = newSigner(privateKey);
    const v = newVerifier(verifierKey);
    expect([s.verifierKey, s.id]).toEqual([verifierKey, v.id]);
    const msg = new TextEncoder().encode("hi");
    const sig = s.sign(msg);
    expect(v.verify(msg, sig)).toBe(true);
    sig[0]! ^= 1;
    expect(v.verify(msg, sig)).toBe(false);
    expect(v.verify(msg, sig.subarray(1))).toBe(false);
    const peterSeed = decodeBase64("AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz")!.subarray(1);
    expect(generateKey("PeterNeumann", peterSeed)).toEqual({ privateKey: PETER_SKEY, verifierKey: PETER_VKEY });
  });

  test("key names: non-empty, no spaces of any kind, no '+', no control characters", () => {
    const table: [string, boolean][] = [
      ["PeterNeumann", true],
      ["example.com/log42", true],
      ["ünïcode.例", true],
      ["", false],
      ["a b", false],
      ["a+b", false],
      ["a\tb", false],
      ["a\u00a0b", false],
      ["a\u3000b", false],
      ["a\u2028b", false],
      ["a\u0001b", false],
      ["a\ud800b", false],
    ];
    expect(table.map(([n]) => [n, isValidKeyName(n)])).toEqual(table);
    expect(thrown(() => generateKey("a b"))).toBe(
      'bad-key: invalid key name "a b": it must be non-empty, without spaces or "+"',
    );
  });

  test("base64: only the canonical standard spelling", () => {
    expect(decodeBase64("AAEC")).toEqual(new Uint8Array([0, 1, 2]));
    expect(decodeBase64("AAE=")).toEqual(new Uint8Array([0, 1]));
    expect(decodeBase64("")).toEqual(new Uint8Array(0));
    for (const bad of ["AAE", "AAF=", "AA-_", "AAEC\n", " AAEC", "AA==AA==", "A==="])
      expect([bad, decodeBase64(bad)]).toEqual([bad, null]);
  });
});

describe("notes", () => {
  test("signing the published text gives the published note, byte for byte", () => {
    expect(signNote(TEXT, [newSigner(PETER_SKEY)])).toBe(`${TEXT}\n${PETER_SIG}`);
    expect(thrown(() => signNote("abc", [newSigner(PETER_SKEY)]))).toBe("malformed: malformed note");
    expect(thrown(() => signNote("a\rb\n", []))).toBe("malformed: malformed note");
  });

  test("open: known keys verified, unknown ones kept aside, none known is an error", () => {
    const p = newVerifier(PETER_VKEY);
    const e = newVerifier(ENOCH_VKEY);
    const note = `${TEXT}\n${PETER_SIG}${ENOCH_SIG}`;
    expect(openNote(note, [p])).toEqual({ text: TEXT, verified: [peter], unverified: [enoch] });
    expect(openNote(note, [p, e])).toEqual({ text: TEXT, verified: [peter, enoch], unverified: [] });
    expect(thrown(() => openNote(note, []))).toBe("unverified: note has no verifiable signatures");
    expect(thrown(() => openNote(`${TEXT}\n${ENOCH_SIG}`, [e, p, e]))).toBe(
      "ambiguous: ambiguous key EnochRoot+af0cfe78",
    );
    expect(openNote(`${TEXT}\n${PETER_SIG}`, [e, p, e]).verified).toEqual([peter]);
  });

  test("open: a known key's bad signature rejects the note; repeats count once; 101 lines are too many", () => {
    const p = newVerifier(PETER_VKEY);
    const bad = `${PETER_SIG.slice(0, 60)}ABCD${PETER_SIG.slice(60)}`;
    expect(thrown(() => openNote(`${TEXT}\n${bad}`, [p]))).toBe(
      "invalid-signature: invalid signature for key PeterNeumann+c74f20a3",
    );
    const enochBad = `${ENOCH_SIG.slice(0, 60)}ABCD${ENOCH_SIG.slice(60)}`;
    const opened = openNote(`${TEXT}\n${PETER_SIG}${PETER_SIG}${ENOCH_SIG}${ENOCH_SIG}${enochBad}`, [p]);
    expect(opened.verified).toEqual([peter]);
    expect(opened.unverified).toEqual([enoch, { ...enoch, base64: enochBad.slice("— EnochRoot ".length, -1) }]);
    expect(thrown(() => openNote(`${TEXT}\n${PETER_SIG.repeat(101)}`, [p]))).toBe("malformed: malformed note");
    expect(thrown(() => openNote(`${TEXT}\n${PETER_SIG.repeat(101)}`, []))).toBe("malformed: malformed note");
    expect(openNote(`${TEXT}\n${PETER_SIG.repeat(100)}`, [p]).verified).toEqual([peter]);
  });

  test("open: malformed notes", () => {
    const p = newVerifier(PETER_VKEY);
    const table = [
      TEXT,
      `${TEXT}\n`,
      `${TEXT}\n${PETER_SIG.slice(0, -1)}`,
      `\u0001${TEXT}\n${PETER_SIG}`,
      `\ud800${TEXT}\n${PETER_SIG}`,
      `${TEXT}\n— Bad Name x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=`,
      `${TEXT}\n${PETER_SIG}Unexpected line.\n`,
      `${TEXT}\n-- PeterNeumann ${peter.base64}\n`,
      `${TEXT}\n— PeterNeumann AAAA\n`,
      `${TEXT}\n— PeterNeumann\n`,
      `${TEXT.replace("\n", "\r\n")}\n${PETER_SIG}`,
    ];
    expect(table.map((m) => thrown(() => openNote(m, [p])))).toEqual(table.map(() => "malformed: malformed note"));
  });

  test("parseNote reads the lines without any key", () => {
    expect(parseNote(`${TEXT}\n${PETER_SIG}${ENOCH_SIG}`)).toEqual({ text: TEXT, sigs: [peter, enoch] });
    // The text may hold a blank line: the signatures start after the last one.
    expect(parseNote(`a\n\nb\n\n${PETER_SIG}`).text).toBe("a\n\nb\n");
  });

  test("a changed text no longer verifies", () => {
    const note = `${TEXT}\n${PETER_SIG}`.replace("cryptography", "cryptographY");
    expect(thrown(() => openNote(note, [newVerifier(PETER_VKEY)]))).toBe(
      "invalid-signature: invalid signature for key PeterNeumann+c74f20a3",
    );
  });
});
