/**
 * Cosignatures (c2sp.org/tlog-cosignature): a witness's statement that, as
 * of `time`, the checkpoint is the largest consistent tree it has seen for
 * the log. A cosignature is a note signature line (src/checkpoint/note.ts)
 * on the checkpoint:
 *
 *   — <witness name> base64(key ID ‖ timestamp ‖ signature)
 *
 *   timestamp  POSIX seconds, u64 big-endian, at most 2^63 - 1
 *
 * of one of two types, told apart by the key's type byte:
 *
 *   Ed25519 (0x04, "cosignature/v1")
 *     key ID     first 4 bytes of SHA-256(name ‖ 0x0A ‖ 0x04 ‖ 32-byte public key)
 *     signature  64 bytes over "cosignature/v1\n" ‖ "time <decimal>\n" ‖ the checkpoint's note text
 *
 *   ML-DSA-44 (0x06, "subtree/v1"; FIPS 204, pure, empty context)
 *     key ID     first 4 bytes of SHA-256(name ‖ 0x0A ‖ 0x06 ‖ 1312-byte public key)
 *     signature  2420 bytes over the TLS-encoded struct
 *                "subtree/v1\n\0" ‖ u8 len ‖ witness name ‖ u64 timestamp ‖
 *                u8 len ‖ origin ‖ u64 start (0) ‖ u64 end (the size) ‖ 32-byte root
 *                (extension lines are not signed; name and origin 1..255 bytes)
 *
 * The witness's verifier key is `<name>+<hex key ID>+base64(type ‖ public key)`.
 * An Ed25519 cosigner's private key is a `seam keygen` file: the same key,
 * under the type byte 0x04, has a key ID of its own, so a cosignature can
 * never pass for a note signature by the same key (the spec allows one key
 * for both). An ML-DSA-44 cosigner's (`seam keygen --alg ml-dsa-44`) is
 * `PRIVATE+KEY+<name>+<cosignature key ID>+base64(0x06 ‖ 32-byte seed)`.
 * The ML-DSA-44 code is loaded only when such a key is met (./ml-dsa.ts).
 *
 * The verifier is a note Verifier: a checkpoint note with the cosignature
 * lines appended opens with openNote, whose trust rules then hold for
 * cosignatures too (unknown keys ignored, one bad signature by a known key
 * rejects the note).
 */
import { randomBytes, verify } from "node:crypto";
import { parseCheckpointText } from "./checkpoint.ts";
import {
  ML_DSA_44_PUBLIC_KEY_BYTES,
  ML_DSA_44_SEED_BYTES,
  ML_DSA_44_SIGNATURE_BYTES,
  type MlDsa44,
  mlDsa44,
} from "./ml-dsa.ts";
import {
  decodeBase64,
  encodeBase64,
  isValidKeyName,
  keyId,
  NoteError,
  type NoteSignature,
  publicKeyObject,
  type Signer,
  splitKey,
  type Verifier,
  verifierKeyText,
} from "./note.ts";

/** The signature type byte of Ed25519 cosignatures, in key IDs and verifier keys. */
export const COSIGNATURE_TYPE = 0x04;
/** The signature type byte of ML-DSA-44 cosignatures. */
export const ML_DSA_44_COSIGNATURE_TYPE = 0x06;
const MAX_TIME = 2n ** 63n - 1n;
/** key ID, timestamp, Ed25519 signature. */
const COSIGNATURE_BYTES = 4 + 8 + 64;
/** key ID, timestamp, ML-DSA-44 signature. */
const ML_DSA_44_COSIGNATURE_BYTES = 4 + 8 + ML_DSA_44_SIGNATURE_BYTES;
const SUBTREE_LABEL = new TextEncoder().encode("subtree/v1\n\0");
const enc = new TextEncoder();

/** What a v1 cosignature at `time` signs for the checkpoint note text `text` (its final "\n" included). */
export function cosignedMessage(text: Uint8Array, time: bigint): Uint8Array {
  return Buffer.concat([enc.encode(`cosignature/v1\ntime ${time}\n`), text]);
}

/**
 * What an ML-DSA-44 cosignature by `name` at `time` signs for the checkpoint
 * (origin, size, root): the tlog-cosignature `cosigned_message` of the tree
 * [0, size). null when the name or the origin is not 1..255 bytes, which the
 * struct cannot carry.
 */
export function subtreeMessage(
  name: string,
  time: bigint,
  origin: string,
  size: number,
  root: Uint8Array,
): Uint8Array | null {
  const n = enc.encode(name);
  const o = enc.encode(origin);
  if (n.length < 1 || n.length > 255 || o.length < 1 || o.length > 255) return null;
  const out = Buffer.alloc(SUBTREE_LABEL.length + 1 + n.length + 8 + 1 + o.length + 8 + 8 + root.length);
  let at = 0;
  out.set(SUBTREE_LABEL, at);
  at += SUBTREE_LABEL.length;
  out[at++] = n.length;
  out.set(n, at);
  at += n.length;
  out.writeBigUInt64BE(time, at);
  at += 8;
  out[at++] = o.length;
  out.set(o, at);
  at += o.length;
  out.writeBigUInt64BE(0n, at);
  at += 8;
  out.writeBigUInt64BE(BigInt(size), at);
  at += 8;
  out.set(root, at);
  return out;
}

export interface Cosigner {
  readonly name: string;
  /** The cosignature key ID (type 0x04), not the note key ID of the same key. */
  readonly id: number;
  /** `name+id+base64(0x04 ‖ public key)`: what clients and policies pin. */
  readonly verifierKey: string;
  /** The signature line (ending in "\n") cosigning checkpoint text `text` at POSIX second `time`. */
  cosign(text: string, time: number): string;
}

/** The cosigner of a note signer's key (read from a `seam keygen` key file). */
export function newCosigner(signer: Signer): Cosigner {
  const pub = splitKey(signer.verifierKey)!.key.subarray(1);
  const verifierKey = verifierKeyText(signer.name, pub, COSIGNATURE_TYPE);
  const id = splitKey(verifierKey, COSIGNATURE_TYPE)!.id;
  return {
    name: signer.name,
    id,
    verifierKey,
    cosign(text, time) {
      if (!Number.isSafeInteger(time) || time < 0) throw new RangeError(`time ${time} is not a POSIX second`);
      const head = Buffer.alloc(12);
      head.writeUInt32BE(id, 0);
      head.writeBigUInt64BE(BigInt(time), 4);
      const sig = signer.sign(cosignedMessage(enc.encode(text), BigInt(time)));
      return `— ${signer.name} ${encodeBase64(Buffer.concat([head, sig]))}\n`;
    },
  };
}

/** The 8-byte timestamp heading a cosignature's signature bytes (key ID stripped); null past 2^63 - 1. */
function timeOf(signature: Uint8Array): bigint | null {
  const time = Buffer.from(signature.buffer, signature.byteOffset, 8).readBigUInt64BE(0);
  return time > MAX_TIME ? null : time;
}

/** The ML-DSA-44 cosigner of a 32-byte seed; the module must be loaded (./ml-dsa.ts). */
export function newMlDsaCosigner(name: string, seed: Uint8Array): Cosigner {
  const dsa = loadedMlDsa();
  if (seed.length !== ML_DSA_44_SEED_BYTES) throw new NoteError("bad-key", "an ML-DSA-44 seed is 32 bytes");
  const { publicKey, secretKey } = dsa.keygen(seed);
  const verifierKey = verifierKeyText(name, publicKey, ML_DSA_44_COSIGNATURE_TYPE);
  const id = splitKey(verifierKey, ML_DSA_44_COSIGNATURE_TYPE, ML_DSA_44_PUBLIC_KEY_BYTES)!.id;
  return {
    name,
    id,
    verifierKey,
    cosign(text, time) {
      if (!Number.isSafeInteger(time) || time < 0) throw new RangeError(`time ${time} is not a POSIX second`);
      const c = parseCheckpointText(text);
      const message = subtreeMessage(name, BigInt(time), c.origin, c.size, c.root);
      if (message === null) throw new NoteError("bad-key", "the witness name or the origin is longer than 255 bytes");
      const head = Buffer.alloc(12);
      head.writeUInt32BE(id, 0);
      head.writeBigUInt64BE(BigInt(time), 4);
      return `— ${name} ${encodeBase64(Buffer.concat([head, dsa.sign(message, secretKey)]))}\n`;
    },
  };
}

const PRIVATE_PREFIX = "PRIVATE+KEY+";

/** A fresh ML-DSA-44 cosigner key (the module must be loaded): its private key text and its cosigner. */
export function generateMlDsaKey(
  name: string,
  seed: Uint8Array = randomBytes(ML_DSA_44_SEED_BYTES),
): { privateKey: string; cosigner: Cosigner } {
  const cosigner = newMlDsaCosigner(name, seed);
  const typed = Buffer.concat([new Uint8Array([ML_DSA_44_COSIGNATURE_TYPE]), seed]);
  const privateKey = `${PRIVATE_PREFIX}${name}+${cosigner.verifierKey.split("+")[1]}+${encodeBase64(typed)}`;
  return { privateKey, cosigner };
}

/** Whether `text` is an ML-DSA-44 private key (to be read by newMlDsaCosignerFromKey once the module is loaded). */
export function isMlDsaPrivateKey(text: string): boolean {
  return (
    text.startsWith(PRIVATE_PREFIX) && splitKey(text.slice(PRIVATE_PREFIX.length), ML_DSA_44_COSIGNATURE_TYPE) !== null
  );
}

/** The cosigner of an ML-DSA-44 private key; throws NoteError("bad-key") unless its key ID matches the key it holds. */
export function newMlDsaCosignerFromKey(text: string): Cosigner {
  const k = text.startsWith(PRIVATE_PREFIX)
    ? splitKey(text.slice(PRIVATE_PREFIX.length), ML_DSA_44_COSIGNATURE_TYPE)
    : null;
  if (k === null || !isValidKeyName(k.name)) throw new NoteError("bad-key", "malformed private key");
  const c = newMlDsaCosigner(k.name, k.key.subarray(1));
  if (c.id !== k.id) throw new NoteError("bad-key", "malformed private key");
  return c;
}

function loadedMlDsa(): MlDsa44 {
  const dsa = mlDsa44();
  if (dsa === null) throw new Error("ML-DSA-44 is used before loadMlDsa44() has loaded it");
  return dsa;
}

/** The name, key ID and public key of an ML-DSA-44 cosignature verifier key whose ID is its own; null otherwise. */
function splitMlDsaKey(text: string): { name: string; id: number; key: Uint8Array } | null {
  const k = splitKey(text, ML_DSA_44_COSIGNATURE_TYPE, ML_DSA_44_PUBLIC_KEY_BYTES);
  return k !== null && keyId(k.name, k.key) === k.id ? k : null;
}

/** Whether `text` is an ML-DSA-44 cosignature verifier key (so loadMlDsa44() must come before newCosignatureVerifier). */
export function isMlDsaCosignatureKey(text: string): boolean {
  return splitMlDsaKey(text) !== null;
}

/**
 * Parses a cosigner's verifier key (`name+id+base64(0x04 ‖ key)`, or 0x06
 * for ML-DSA-44, whose module must be loaded first) into a note Verifier of
 * its cosignatures; throws NoteError("bad-key") unless it is well formed and
 * its key ID is its own.
 */
export function newCosignatureVerifier(text: string): Verifier {
  const ml = splitMlDsaKey(text);
  if (ml !== null) return mlDsaVerifier(text, ml);
  const k = splitKey(text, COSIGNATURE_TYPE);
  if (k === null || keyId(k.name, k.key) !== k.id) throw new NoteError("bad-key", "malformed cosignature verifier key");
  let pub: ReturnType<typeof publicKeyObject>;
  try {
    pub = publicKeyObject(k.key.subarray(1));
  } catch {
    throw new NoteError("bad-key", "malformed cosignature verifier key");
  }
  return {
    name: k.name,
    id: k.id,
    text,
    verify(message, signature) {
      if (signature.length !== COSIGNATURE_BYTES - 4) return false;
      const time = timeOf(signature);
      if (time === null) return false;
      try {
        return verify(null, cosignedMessage(message, time), pub, signature.subarray(8));
      } catch {
        return false;
      }
    },
  };
}

function mlDsaVerifier(text: string, k: { name: string; id: number; key: Uint8Array }): Verifier {
  const dsa = loadedMlDsa();
  const pub = k.key.subarray(1);
  const dec = new TextDecoder("utf-8", { fatal: true });
  return {
    name: k.name,
    id: k.id,
    text,
    verify(message, signature) {
      if (signature.length !== ML_DSA_44_COSIGNATURE_BYTES - 4) return false;
      const time = timeOf(signature);
      if (time === null) return false;
      try {
        // The note text must be a checkpoint: the signed struct holds its origin, size and root, not its bytes.
        const c = parseCheckpointText(dec.decode(message));
        const signed = subtreeMessage(k.name, time, c.origin, c.size, c.root);
        return signed !== null && dsa.verify(signature.subarray(8), signed, pub);
      } catch {
        return false;
      }
    },
  };
}

/** Whether `text` is a verifier key of cosignatures (type 0x04 or 0x06) rather than of notes. */
export function isCosignatureKey(text: string): boolean {
  return splitKey(text, COSIGNATURE_TYPE) !== null || splitMlDsaKey(text) !== null;
}

/**
 * The timestamp of a cosignature line's signature (POSIX seconds), or null
 * when it is not the size of an Ed25519 or ML-DSA-44 cosignature or its
 * time is past 2^53 - 1 (no clock reaches that; the signature itself says
 * nothing then).
 */
export function cosignatureTime(sig: NoteSignature): number | null {
  const raw = decodeBase64(sig.base64);
  if (raw === null || (raw.length !== COSIGNATURE_BYTES && raw.length !== ML_DSA_44_COSIGNATURE_BYTES)) return null;
  const t = Buffer.from(raw.buffer, raw.byteOffset, raw.length).readBigUInt64BE(4);
  return t <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(t) : null;
}
