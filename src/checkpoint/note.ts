/**
 * C2SP signed notes (c2sp.org/signed-note) signed with Ed25519, on
 * node:crypto alone (the same calls under Bun and Node).
 *
 * A note, byte for byte:
 *
 *   <text: one or more lines, each ending in "\n">
 *   "\n"
 *   "— <key name> <base64(key ID ‖ signature)>\n"      one line per signature
 *
 * where "—" is U+2014, the signature is Ed25519 over the text's UTF-8 bytes
 * (its final "\n" included), and
 *
 *   key ID        = first 4 bytes (big-endian) of SHA-256(key name ‖ 0x0A ‖ 0x01 ‖ 32-byte public key)
 *   verifier key  = <key name>+<key ID as 8 lowercase hex>+<base64(0x01 ‖ 32-byte public key)>
 *   private key   = PRIVATE+KEY+<key name>+<key ID as 8 lowercase hex>+<base64(0x01 ‖ 32-byte seed)>
 *
 * (0x01 is the Ed25519 signature type; the private key text is the form of
 * golang.org/x/mod/sumdb/note, so keys move between seam and Go tools).
 * A key name is non-empty UTF-8 without Unicode spaces, "+" or control
 * characters. Base64 is RFC 4648's standard alphabet with padding, and only
 * its canonical spelling is accepted.
 *
 * Opening a note follows the spec's trust rules: signatures by unknown keys
 * are ignored (but kept, listed as unverified), a known key's signature that
 * does not verify rejects the whole note, a repeated signature by one known
 * key counts once, and more than 100 signature lines make the note malformed.
 */

import { createHash, createPrivateKey, createPublicKey, type KeyObject, randomBytes, sign, verify } from "node:crypto";
import { SeamError } from "../base/error.ts";
import { isWellFormed } from "../core/canonical/index.ts";

/** What went wrong; the message is one of the spec's outcomes, e.g. `invalid signature for key seam+1a2b3c4d`. */
export class NoteError extends SeamError {
  override readonly name = "NoteError";
  constructor(
    readonly kind: "malformed" | "bad-key" | "invalid-signature" | "unverified" | "ambiguous",
    message: string,
  ) {
    super(`note_${kind.replace(/-/g, "_")}`, message);
  }
}

export interface Signer {
  readonly name: string;
  readonly id: number;
  /** The verifier key text of this signer's public key. */
  readonly verifierKey: string;
  sign(message: Uint8Array): Uint8Array;
}

export interface Verifier {
  readonly name: string;
  readonly id: number;
  /** The verifier key text it was made from. */
  readonly text: string;
  verify(message: Uint8Array, signature: Uint8Array): boolean;
}

/** One signature line: the key's name and ID and the base64 of (key ID ‖ signature), as written. */
export interface NoteSignature {
  name: string;
  id: number;
  base64: string;
}

export interface OpenedNote {
  text: string;
  /** By known keys, each verified (one per key). */
  verified: NoteSignature[];
  /** By keys not given (ignored; identical lines listed once). */
  unverified: NoteSignature[];
}

const ED25519 = 0x01;
const SIG_PREFIX = "— ";
const MAX_SIGNATURES = 100;
/** Longer notes (in UTF-16 code units) are refused unread: checkpoints are a few hundred. */
export const MAX_NOTE_LENGTH = 1 << 20;
const PKCS8_ED25519 = Buffer.from("302e020100300506032b657004220420", "hex");
const SPKI_ED25519 = Buffer.from("302a300506032b6570032100", "hex");
const enc = new TextEncoder();

// ---- names, IDs, base64 ----

/** Go's unicode.IsSpace set, "+", and the C0 controls and DEL. */
const NAME_FORBIDDEN = /[\u0000-\u0020\u007f\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000+]/;

export function isValidKeyName(name: string): boolean {
  return name.length > 0 && isWellFormed(name) && !NAME_FORBIDDEN.test(name);
}

/** First 4 bytes of SHA-256(name ‖ 0x0A ‖ key), key being the type byte and the public key. */
export function keyId(name: string, typedKey: Uint8Array): number {
  const h = createHash("sha256")
    .update(name, "utf8")
    .update(new Uint8Array([0x0a]))
    .update(typedKey)
    .digest();
  return h.readUInt32BE(0);
}

/** `name+xxxxxxxx`: how a key is named in messages. */
export function keyLabel(name: string, id: number): string {
  return `${name}+${hex8(id)}`;
}

function hex8(id: number): string {
  return id.toString(16).padStart(8, "0");
}

/** Strict standard base64: the canonical spelling only (padding, no stray bits); null otherwise. */
export function decodeBase64(s: string): Uint8Array | null {
  if (s.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(s)) return null;
  const b = Buffer.from(s, "base64");
  return b.toString("base64") === s ? new Uint8Array(b) : null;
}

export function encodeBase64(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("base64");
}

// ---- keys ----

export function publicKeyObject(pub: Uint8Array): KeyObject {
  return createPublicKey({ key: Buffer.concat([SPKI_ED25519, pub]), format: "der", type: "spki" });
}

function privateKeyObject(seed: Uint8Array): KeyObject {
  return createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, seed]), format: "der", type: "pkcs8" });
}

function publicFromPrivate(priv: KeyObject): Uint8Array {
  const spki = createPublicKey(priv).export({ format: "der", type: "spki" });
  return new Uint8Array(spki.subarray(spki.length - 32));
}

/** `name+<hex key ID>+<base64(type ‖ pub)>`; the type byte is 0x01 for note signatures (tlog-cosignature uses 0x04). */
export function verifierKeyText(name: string, pub: Uint8Array, type = ED25519): string {
  const typed = Buffer.concat([new Uint8Array([type]), pub]);
  return `${name}+${hex8(keyId(name, typed))}+${encodeBase64(typed)}`;
}

/**
 * Splits `name+hex+base64` (base64 may hold "+"), checking the name, the 8
 * hex digits, the key type byte and the key's length (`keyBytes` after it).
 */
export function splitKey(
  text: string,
  type = ED25519,
  keyBytes = 32,
): { name: string; id: number; key: Uint8Array } | null {
  const a = text.indexOf("+");
  const b = a < 0 ? -1 : text.indexOf("+", a + 1);
  if (b < 0) return null;
  const name = text.slice(0, a);
  const id = text.slice(a + 1, b);
  const key = decodeBase64(text.slice(b + 1));
  if (
    !isValidKeyName(name) ||
    !/^[0-9a-f]{8}$/.test(id) ||
    key === null ||
    key.length !== keyBytes + 1 ||
    key[0] !== type
  )
    return null;
  return { name, id: parseInt(id, 16), key };
}

/** Parses a verifier key; throws NoteError("bad-key") unless it is well formed and its key ID is its own. */
export function newVerifier(text: string): Verifier {
  const k = splitKey(text);
  if (k === null || keyId(k.name, k.key) !== k.id) throw new NoteError("bad-key", "malformed verifier key");
  let pub: KeyObject;
  try {
    pub = publicKeyObject(k.key.subarray(1));
  } catch {
    throw new NoteError("bad-key", "malformed verifier key");
  }
  return {
    name: k.name,
    id: k.id,
    text,
    verify(message, signature) {
      if (signature.length !== 64) return false;
      try {
        return verify(null, message, pub, signature);
      } catch {
        return false;
      }
    },
  };
}

/** Parses a private key (`PRIVATE+KEY+…`); throws NoteError("bad-key") unless its key ID matches the key it holds. */
export function newSigner(text: string): Signer {
  const prefix = "PRIVATE+KEY+";
  const k = text.startsWith(prefix) ? splitKey(text.slice(prefix.length)) : null;
  let priv: KeyObject | null = null;
  let pub: Uint8Array | null = null;
  if (k !== null) {
    try {
      priv = privateKeyObject(k.key.subarray(1));
      pub = publicFromPrivate(priv);
    } catch {
      priv = null;
    }
  }
  if (k === null || priv === null || pub === null) throw new NoteError("bad-key", "malformed private key");
  const verifierKey = verifierKeyText(k.name, pub);
  if (newVerifier(verifierKey).id !== k.id) throw new NoteError("bad-key", "malformed private key");
  const key = priv;
  return { name: k.name, id: k.id, verifierKey, sign: (message) => new Uint8Array(sign(null, message, key)) };
}

/** A fresh key pair as texts: the private key (keep it secret) and the verifier key (publish it). */
export function generateKey(
  name: string,
  seed: Uint8Array = randomBytes(32),
): { privateKey: string; verifierKey: string } {
  if (!isValidKeyName(name))
    throw new NoteError(
      "bad-key",
      `invalid key name ${JSON.stringify(name)}: it must be non-empty, without spaces or "+"`,
    );
  if (seed.length !== 32) throw new NoteError("bad-key", "an Ed25519 seed is 32 bytes");
  const pub = publicFromPrivate(privateKeyObject(seed));
  const verifierKey = verifierKeyText(name, pub);
  const id = verifierKey.split("+")[1]!;
  const privateKey = `PRIVATE+KEY+${name}+${id}+${encodeBase64(Buffer.concat([new Uint8Array([ED25519]), seed]))}`;
  return { privateKey, verifierKey };
}

// ---- notes ----

/** Text a note can carry: non-empty, ends in "\n", well-formed, no control character but "\n". */
function isValidText(text: string): boolean {
  return text.length > 0 && text.endsWith("\n") && isWellFormed(text) && !/[\u0000-\u0009\u000b-\u001f]/.test(text);
}

/** The note: `text`, a blank line, and one signature line per signer, in order. Throws NoteError for text a note cannot carry. */
export function signNote(text: string, signers: readonly Signer[]): string {
  if (!isValidText(text)) throw new NoteError("malformed", "malformed note");
  const message = enc.encode(text);
  let out = `${text}\n`;
  for (const s of signers) {
    if (!isValidKeyName(s.name)) throw new NoteError("malformed", "malformed note");
    const id = new Uint8Array(4);
    new DataView(id.buffer).setUint32(0, s.id);
    out += `${SIG_PREFIX}${s.name} ${encodeBase64(Buffer.concat([id, s.sign(message)]))}\n`;
  }
  return out;
}

/** The note's text and its signature lines, checked for syntax only. Throws NoteError("malformed"). */
export function parseNote(message: string): { text: string; sigs: NoteSignature[] } {
  const malformed = () => new NoteError("malformed", "malformed note");
  if (message.length > MAX_NOTE_LENGTH || !isWellFormed(message) || /[\u0000-\u0009\u000b-\u001f]/.test(message))
    throw malformed();
  const split = message.lastIndexOf("\n\n");
  if (split < 0) throw malformed();
  const text = message.slice(0, split + 1);
  const block = message.slice(split + 2);
  if (block.length === 0 || !block.endsWith("\n")) throw malformed();
  const lines = block.slice(0, -1).split("\n");
  if (lines.length > MAX_SIGNATURES) throw malformed();
  const sigs = lines.map((line) => {
    if (!line.startsWith(SIG_PREFIX)) throw malformed();
    const rest = line.slice(SIG_PREFIX.length);
    const sp = rest.indexOf(" ");
    const name = rest.slice(0, sp);
    const b64 = rest.slice(sp + 1);
    const raw = sp < 0 ? null : decodeBase64(b64);
    if (!isValidKeyName(name) || raw === null || raw.length < 5) throw malformed();
    return { name, id: new DataView(raw.buffer, raw.byteOffset, 4).getUint32(0), base64: b64 };
  });
  return { text, sigs };
}

/**
 * Opens a note with the keys the caller trusts. Throws NoteError: malformed,
 * `ambiguous key N+ID` (two verifiers with one name and ID), `invalid
 * signature for key N+ID` (a known key's signature does not verify), or
 * `note has no verifiable signatures`.
 */
export function openNote(message: string, verifiers: readonly Verifier[]): OpenedNote {
  const { text, sigs } = parseNote(message);
  const bytes = enc.encode(text);
  const verified: NoteSignature[] = [];
  const unverified: NoteSignature[] = [];
  const seenKeys = new Set<string>();
  const seenLines = new Set<string>();
  for (const s of sigs) {
    const label = keyLabel(s.name, s.id);
    const known = verifiers.filter((v) => v.name === s.name && v.id === s.id);
    if (known.length === 0) {
      if (!seenLines.has(`${label} ${s.base64}`)) unverified.push(s);
      seenLines.add(`${label} ${s.base64}`);
      continue;
    }
    if (known.length > 1) throw new NoteError("ambiguous", `ambiguous key ${label}`);
    if (seenKeys.has(label)) continue;
    seenKeys.add(label);
    const raw = decodeBase64(s.base64)!;
    if (!known[0]!.verify(bytes, raw.subarray(4)))
      throw new NoteError("invalid-signature", `invalid signature for key ${label}`);
    verified.push(s);
  }
  if (verified.length === 0) throw new NoteError("unverified", "note has no verifiable signatures");
  return { text, verified, unverified };
}

/** A note that did not open, in the words of a finding (`keyLabels`: the keys it had to be signed by). */
export function noteProblem(e: unknown, keyLabels: readonly string[]): string {
  if (!(e instanceof NoteError)) return `note cannot be read: ${String(e)}`;
  if (e.kind === "unverified") return `not signed by ${keyLabels.join(" or ")}`;
  if (e.kind === "malformed") return "note is malformed";
  if (e.kind === "invalid-signature") return `has an ${e.message}`;
  return e.message;
}
