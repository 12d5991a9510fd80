/**
 * Bytes as a string that says exactly which bytes they were, for a row that
 * records bytes which may not be UTF-8 (the torn tail a ledger_repair row
 * cut off): valid UTF-8 stays as it is, a backslash is doubled, and every
 * byte that is not part of valid UTF-8 is written `\xNN` (two lowercase hex
 * digits). unescapeBytes(escapeBytes(b)) equals b.
 */

const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Length of the valid UTF-8 sequence starting at `i`, or 0. */
function utf8Run(b: Uint8Array, i: number): number {
  const c = b[i]!;
  const n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (n === 0 || i + n > b.length) return 0;
  if (n === 1) return 1;
  try {
    strict.decode(b.subarray(i, i + n));
    return n;
  } catch {
    return 0;
  }
}

export function escapeBytes(b: Uint8Array): string {
  let out = "";
  let i = 0;
  while (i < b.length) {
    const n = utf8Run(b, i);
    if (n === 0) {
      out += `\\x${b[i]!.toString(16).padStart(2, "0")}`;
      i++;
      continue;
    }
    const s = strict.decode(b.subarray(i, i + n));
    out += s === "\\" ? "\\\\" : s;
    i += n;
  }
  return out;
}

/** The bytes an escapeBytes string stands for; null when it is not one (a lone "\" or a bad escape). */
export function unescapeBytes(s: string): Uint8Array | null {
  const enc = new TextEncoder();
  const parts: number[] = [];
  for (let i = 0; i < s.length; ) {
    const ch = s[i]!;
    if (ch !== "\\") {
      const cp = s.codePointAt(i)!;
      const piece = String.fromCodePoint(cp);
      if (cp >= 0xd800 && cp <= 0xdfff) return null; // a lone surrogate is no UTF-8
      for (const x of enc.encode(piece)) parts.push(x);
      i += piece.length;
      continue;
    }
    if (s[i + 1] === "\\") {
      parts.push(0x5c);
      i += 2;
      continue;
    }
    const hex = /^x([0-9a-f]{2})/.exec(s.slice(i + 1, i + 4));
    if (!hex) return null;
    parts.push(Number.parseInt(hex[1]!, 16));
    i += 4;
  }
  return Uint8Array.from(parts);
}
