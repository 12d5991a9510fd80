/**
 * ML-DSA-44 (FIPS 204) from @noble/post-quantum, loaded only when a key of
 * that type appears: the module is large, and a wrapped session, which never
 * meets one, must not load it (test/unit/wrap-footprint.test.ts). Callers
 * await loadMlDsa44() where they first see such a key; verifiers made after
 * that use it synchronously.
 */

export interface MlDsa44 {
  keygen(seed: Uint8Array): { publicKey: Uint8Array; secretKey: Uint8Array };
  sign(message: Uint8Array, secretKey: Uint8Array): Uint8Array;
  verify(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean;
}

/** Public key and signature sizes (FIPS 204, table 2). */
export const ML_DSA_44_PUBLIC_KEY_BYTES = 1312;
export const ML_DSA_44_SIGNATURE_BYTES = 2420;
export const ML_DSA_44_SEED_BYTES = 32;

let loaded: MlDsa44 | null = null;

export async function loadMlDsa44(): Promise<MlDsa44> {
  if (loaded === null) {
    const { ml_dsa44 } = await import("@noble/post-quantum/ml-dsa.js");
    // Pure ML-DSA with the empty context string, as tlog-cosignature signs.
    loaded = {
      keygen: (seed) => ml_dsa44.keygen(seed),
      sign: (message, secretKey) => ml_dsa44.sign(message, secretKey),
      verify: (signature, message, publicKey) => ml_dsa44.verify(signature, message, publicKey),
    };
  }
  return loaded;
}

/** The module once loadMlDsa44() has resolved; null before. */
export function mlDsa44(): MlDsa44 | null {
  return loaded;
}
