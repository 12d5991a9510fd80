/**
 * Text from a ledger, a client config or a server, made safe to print: one
 * policy for every command. The characters that can drive a terminal or
 * disguise what is shown come out as `\uXXXX` escapes (four lowercase hex
 * digits):
 *   - C0 controls (newline and tab among them), DEL and C1 controls: ESC,
 *     BEL and the one-character CSI (U+009B) start terminal sequences (OSC 8
 *     links, OSC 0 titles, cursor moves);
 *   - the bidi controls (U+061C, U+200E/F, U+202A–U+202E, U+2066–U+2069),
 *     which reorder what a reader sees;
 *   - U+2028 and U+2029, which some terminals and editors break a line on;
 *   - lone surrogates, which are no character at all and which a terminal's
 *     UTF-8 encoder turns into something else.
 * JSON output escapes the same code points (the C0 ones JSON escapes already),
 * which keeps it the same JSON value.
 */

/** The unsafe characters as a regular-expression source (no flags needed); the report page's script embeds it too. */
export const UNSAFE_TEXT_SOURCE =
  "[\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069\\u2028\\u2029]" +
  "|[\\ud800-\\udbff](?![\\udc00-\\udfff])|(?<![\\ud800-\\udbff])[\\udc00-\\udfff]";

const UNSAFE = new RegExp(UNSAFE_TEXT_SOURCE, "g");
const UNSAFE_ONE = new RegExp(UNSAFE_TEXT_SOURCE);
// In JSON text a raw C0 character can only be whitespace between tokens (JSON escapes it inside a string), so it stays.
const UNSAFE_IN_JSON = new RegExp(UNSAFE_TEXT_SOURCE.replace("\\u0000-\\u001f", ""), "g");

function escapeOne(c: string): string {
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

/** True when `s` holds a character terminalText would escape. */
export function hasUnsafeText(s: string): boolean {
  return UNSAFE_ONE.test(s);
}

/** `s` with every unsafe character as a `\uXXXX` escape; everything else as it is. */
export function terminalText(s: string): string {
  return s.replace(UNSAFE, escapeOne);
}

/**
 * `s` safe for a terminal and at most `max` characters (cut with "…"). The cut
 * comes before the escaping, so a huge value costs no more than a short one,
 * and a cut that splits a surrogate pair leaves a lone surrogate, which is
 * escaped too.
 */
export function terminalCell(s: string, max = Number.POSITIVE_INFINITY): string {
  if (s.length <= max && !UNSAFE_ONE.test(s)) return s;
  // Escaping makes a character up to six long, so a cut before escaping keeps enough to fill `max`.
  let out = terminalText(s.length > max ? s.slice(0, max + 1) : s);
  if (out.length > max) out = terminalText(`${out.slice(0, Math.max(0, max - 1))}…`);
  return out;
}

/** JSON text (from JSON.stringify or the ledger's line form) with the unsafe code points escaped inside its strings: the same value. */
export function terminalJson(json: string): string {
  return json.replace(UNSAFE_IN_JSON, escapeOne);
}

/** JSON.stringify, made safe for a terminal by terminalJson. */
export function safeStringify(value: unknown, space?: number): string {
  return terminalJson(JSON.stringify(value, null, space));
}
