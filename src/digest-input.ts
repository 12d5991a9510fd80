/**
 * What `seam digest` does with one input's bytes, apart from reading them:
 * strict UTF-8 (as Python's decode refuses invalid bytes), then the digest
 * straight from the text, or a one-line reason why there is none.
 */
import { type Recipe, digestJsonText } from "./digest.ts";
import { JsonParseError } from "./json.ts";

export type DigestOutcome = { ok: true; digest: string } | { ok: false; reason: string };

const UNDIGESTIBLE: Record<string, string> = {
  ValueError: "undigestible (ValueError): NaN, Infinity or -Infinity has no canonical form",
  UnicodeEncodeError: "undigestible (UnicodeEncodeError): a lone surrogate (\\udXXX) has no UTF-8 form",
};

export function digestJsonBytes(bytes: Uint8Array, recipe: Recipe): DigestOutcome {
  let text: string;
  try {
    // ignoreBOM keeps a byte order mark in the text, where the parser refuses it (as Python's json.loads does).
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch (err) {
    if (err instanceof TypeError) return { ok: false, reason: `unparseable: not UTF-8 (invalid byte at offset ${firstInvalidUtf8(bytes)})` };
    return { ok: false, reason: `unreadable: too large to hold as text (${bytes.length} bytes)` };
  }
  let digest: string;
  try {
    digest = digestJsonText(text, recipe);
  } catch (err) {
    if (err instanceof JsonParseError) return { ok: false, reason: `unparseable: ${err.message}` };
    throw err;
  }
  const kind = digest.startsWith("undigestible:") ? digest.slice("undigestible:".length) : undefined;
  return kind === undefined ? { ok: true, digest } : { ok: false, reason: UNDIGESTIBLE[kind] ?? `undigestible (${kind})` };
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
