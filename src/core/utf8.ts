/** UTF-8 at the byte level: writing a code point, and finding where bytes stop being well-formed. */

/** Appends the UTF-8 of a code point (a lone surrogate as its 3-byte form) to buf at o; returns the new end. */
export function writeUtf8(buf: Uint8Array, o: number, cp: number): number {
  if (cp < 0x80) {
    buf[o++] = cp;
  } else if (cp < 0x800) {
    buf[o++] = 0xc0 | (cp >> 6);
    buf[o++] = 0x80 | (cp & 63);
  } else if (cp < 0x10000) {
    buf[o++] = 0xe0 | (cp >> 12);
    buf[o++] = 0x80 | ((cp >> 6) & 63);
    buf[o++] = 0x80 | (cp & 63);
  } else {
    buf[o++] = 0xf0 | (cp >> 18);
    buf[o++] = 0x80 | ((cp >> 12) & 63);
    buf[o++] = 0x80 | ((cp >> 6) & 63);
    buf[o++] = 0x80 | (cp & 63);
  }
  return o;
}

/**
 * Offset of the first byte that does not start a well-formed UTF-8
 * sequence (no overlongs, no surrogates, nothing above U+10FFFF, no
 * truncation), or -1.
 */
export function firstInvalidUtf8(b: Uint8Array): number {
  const n = b.length;
  let i = 0;
  while (i < n) {
    const c = b[i]!;
    if (c < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) need = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      need = 2;
      if (c === 0xe0) lo = 0xa0;
      if (c === 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3;
      if (c === 0xf0) lo = 0x90;
      if (c === 0xf4) hi = 0x8f;
    } else return i;
    for (let k = 1; k <= need; k++) {
      const d = b[i + k];
      if (d === undefined || d < (k === 1 ? lo : 0x80) || d > (k === 1 ? hi : 0xbf)) return i;
    }
    i += need + 1;
  }
  return -1;
}
