/**
 * Ledger text on a terminal. Every string a reader prints from a ledger goes
 * through `cell`: the one terminal-safe policy (src/base/terminal-text.ts:
 * controls, bidi controls, line and paragraph separators and lone surrogates
 * as `\uXXXX` escapes), and a long value is cut to a width with an ellipsis
 * before anything is escaped, so a megabyte-long tool name costs no more than a short
 * one and an operation stays on one line.
 */
import { terminalCell } from "../base/terminal-text.ts";

/** `s` safe for a terminal, at most `max` characters (cut with "…"); no limit when max is Infinity. */
export function cell(s: string, max = Number.POSITIVE_INFINITY): string {
  return terminalCell(s, max);
}

/** Pads or cuts to exactly `width` columns (characters; wide East Asian characters are not measured). */
export function fit(s: string, width: number): string {
  const c = cell(s, width);
  return c.length >= width ? c : c + " ".repeat(width - c.length);
}
