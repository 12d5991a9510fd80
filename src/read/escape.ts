/**
 * Ledger text on a terminal. Every string a reader prints from a ledger goes
 * through `cell`: control characters (C0 with newline and tab, DEL, C1, so
 * ESC and CSI), bidi overrides and the Unicode line and paragraph separators
 * come out as `\uXXXX` escapes (report.ts's printable, plus U+2028/U+2029),
 * and a long value is cut to a width with an ellipsis before anything is
 * escaped, so a megabyte-long tool name costs no more than a short one and an
 * operation stays on one line.
 */
import { printable } from "../verify/report.ts";

const NEEDS_WORK = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff]/;

/** `s` safe for a terminal, at most `max` characters (cut with "…"); no limit when max is Infinity. */
export function cell(s: string, max = Number.POSITIVE_INFINITY): string {
  // Most values are short and plain: nothing to escape, nothing to cut.
  if (s.length <= max && !NEEDS_WORK.test(s)) return s;
  // Escaping makes a character up to six long, so a cut before escaping keeps enough to fill `max`.
  const cut = s.length > max ? s.slice(0, max + 1) : s;
  let out = printable(cut).replace(/[\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
  if (out.length > max) out = `${out.slice(0, Math.max(0, max - 1))}…`;
  // A cut can split a surrogate pair or an escape; a lone surrogate is shown escaped too.
  return out.replace(
    /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16)}`,
  );
}

/** Pads or cuts to exactly `width` columns (characters; wide East Asian characters are not measured). */
export function fit(s: string, width: number): string {
  const c = cell(s, width);
  return c.length >= width ? c : c + " ".repeat(width - c.length);
}
