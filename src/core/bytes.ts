/**
 * Byte arrays joined into one. One part comes back as it is (no copy), so a
 * caller that keeps the result must not reuse that part's buffer.
 */
export function concatBytes(parts: readonly Uint8Array[], total?: number): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(total ?? parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Whether two byte arrays hold the same bytes. */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && startsWithBytes(a, b);
}

/** Whether `data` begins with the bytes of `prefix`. */
export function startsWithBytes(data: Uint8Array, prefix: Uint8Array): boolean {
  if (data.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (data[i] !== prefix[i]) return false;
  return true;
}
