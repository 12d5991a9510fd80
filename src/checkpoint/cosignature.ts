/**
 * Ed25519 cosignatures (c2sp.org/tlog-cosignature, "cosignature/v1"): a
 * witness's statement that, as of `time`, the checkpoint is the largest
 * consistent tree it has seen for the log. A cosignature is a note
 * signature line (src/checkpoint/note.ts) on the checkpoint:
 *
 *   — <witness name> base64(key ID ‖ timestamp ‖ signature)
 *
 *   key ID     first 4 bytes of SHA-256(name ‖ 0x0A ‖ 0x04 ‖ 32-byte public key)
 *   timestamp  POSIX seconds, u64 big-endian, at most 2^63 - 1
 *   signature  Ed25519 over "cosignature/v1\n" ‖ "time <decimal>\n" ‖ the checkpoint's note text
 *
 * The witness's verifier key is `<name>+<hex key ID>+base64(0x04 ‖ public key)`.
 * Its private key is a `seam keygen` file: the same Ed25519 key, under the
 * type byte 0x04, has a key ID of its own, so a cosignature can never pass
 * for a note signature by the same key (the spec allows one key for both).
 *
 * The verifier is a note Verifier: a checkpoint note with the cosignature
 * lines appended opens with openNote, whose trust rules then hold for
 * cosignatures too (unknown keys ignored, one bad signature by a known key
 * rejects the note).
 */
import { verify } from "node:crypto";
import {
  decodeBase64,
  encodeBase64,
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
const MAX_TIME = 2n ** 63n - 1n;
/** key ID, timestamp, Ed25519 signature. */
const COSIGNATURE_BYTES = 4 + 8 + 64;
const enc = new TextEncoder();

/** What a v1 cosignature at `time` signs for the checkpoint note text `text` (its final "\n" included). */
export function cosignedMessage(text: Uint8Array, time: bigint): Uint8Array {
  return Buffer.concat([enc.encode(`cosignature/v1\ntime ${time}\n`), text]);
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

/**
 * Parses a cosigner's verifier key (`name+id+base64(0x04 ‖ key)`) into a
 * note Verifier of its cosignatures; throws NoteError("bad-key") unless it
 * is well formed and its key ID is its own.
 */
export function newCosignatureVerifier(text: string): Verifier {
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
      const time = Buffer.from(signature.buffer, signature.byteOffset, 8).readBigUInt64BE(0);
      if (time > MAX_TIME) return false;
      try {
        return verify(null, cosignedMessage(message, time), pub, signature.subarray(8));
      } catch {
        return false;
      }
    },
  };
}

/** Whether `text` is a verifier key of cosignatures (type 0x04) rather than of notes. */
export function isCosignatureKey(text: string): boolean {
  return splitKey(text, COSIGNATURE_TYPE) !== null;
}

/**
 * The timestamp of a cosignature line's signature (POSIX seconds), or null
 * when it is not the size of an Ed25519 cosignature or its time is past
 * 2^53 - 1 (no clock reaches that; the signature itself says nothing then).
 */
export function cosignatureTime(sig: NoteSignature): number | null {
  const raw = decodeBase64(sig.base64);
  if (raw === null || raw.length !== COSIGNATURE_BYTES) return null;
  const t = Buffer.from(raw.buffer, raw.byteOffset, raw.length).readBigUInt64BE(4);
  return t <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(t) : null;
}
