/**
 * The character-level reading of JSON text that every parser of a JS string
 * shares (src/core/json.ts builds the model with it, src/core/json-lenient.ts
 * the permissive reading): whitespace, literals, numbers and strings, by
 * Python's `json.loads` rules, and the limits that keep seam agreeing with it.
 */
import { JsonParseError } from "./json-error.ts";

/**
 * Python 3.11's `json.loads` fails with RecursionError a little under 1000
 * levels (995 from a top-level script, fewer from inside a program). 900
 * leaves a row that embeds a payload at a few levels, read by a verifier a
 * few calls deep, still readable there.
 */
export const DEFAULT_MAX_DEPTH = 900;

/**
 * Python (3.11+) refuses to turn an integer literal of more than 4300 digits
 * into an int (`sys.int_info.default_max_str_digits`), so `json.loads` raises
 * ValueError on it; refusing here keeps seam and a Python verifier agreeing
 * on what is unparseable. Float literals have no such limit.
 */
export const MAX_INT_DIGITS = 4300;

/** Character-level scanning of a JS string. (src/core/canonical/from-bytes.ts reads UTF-8 by the same rules.) */
export class JsonScanner {
  i = 0;
  depth = 0;
  readonly n: number;
  readonly maxDepth: number;
  /** Set by scanNumber. */
  numStart = 0;
  numIsFloat = false;
  /** The int's digit count (sign excluded); its value when at most 15 digits. */
  numDigits = 0;
  numSmall = 0;
  /** Longer int literals are refused (src/core/json-lenient.ts lifts the limit). */
  maxIntDigits = MAX_INT_DIGITS;

  constructor(
    readonly s: string,
    maxDepth = DEFAULT_MAX_DEPTH,
  ) {
    this.n = s.length;
    this.maxDepth = maxDepth;
  }

  fail(reason: string, at = this.i): never {
    throw new JsonParseError(reason, at, this.s);
  }

  /** Skips JSON whitespace (space, tab, LF, CR only) and returns the next code unit, NaN at the end. */
  ws(): number {
    const s = this.s;
    let i = this.i;
    let c = s.charCodeAt(i);
    while (c === 32 || c === 10 || c === 13 || c === 9) c = s.charCodeAt(++i);
    this.i = i;
    return c;
  }

  enter(): void {
    if (++this.depth > this.maxDepth) this.fail(`nesting deeper than ${this.maxDepth} levels`);
  }

  /** After the top-level value: only whitespace may follow. */
  end(): void {
    if (this.i < this.n && !Number.isNaN(this.ws())) this.fail("extra data after the value");
  }

  /** Reads the literal `word` at the cursor (its first character already matched). */
  literal(word: string): void {
    if (!this.s.startsWith(word, this.i)) this.fail("expecting value");
    this.i += word.length;
  }

  /**
   * Scans a number at the cursor (`-`, or a digit): `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?`.
   * Leaves the text in [numStart, i).
   */
  scanNumber(): void {
    const s = this.s;
    let i = this.i;
    this.numStart = i;
    let c = s.charCodeAt(i);
    if (c === 45) c = s.charCodeAt(++i);
    const digitsStart = i;
    let v = 0;
    if (c === 48) {
      c = s.charCodeAt(++i);
    } else if (c >= 49 && c <= 57) {
      do {
        v = v * 10 + (c - 48);
        c = s.charCodeAt(++i);
      } while (c >= 48 && c <= 57);
    } else {
      this.fail("expecting value", this.numStart);
    }
    this.numDigits = i - digitsStart;
    this.numSmall = v;
    let isFloat = false;
    if (c === 46) {
      c = s.charCodeAt(++i);
      if (!(c >= 48 && c <= 57)) this.fail("expecting a digit after the decimal point", i);
      do c = s.charCodeAt(++i);
      while (c >= 48 && c <= 57);
      isFloat = true;
    }
    if (c === 101 || c === 69) {
      c = s.charCodeAt(++i);
      if (c === 43 || c === 45) c = s.charCodeAt(++i);
      if (!(c >= 48 && c <= 57)) this.fail("expecting a digit in the exponent", i);
      do c = s.charCodeAt(++i);
      while (c >= 48 && c <= 57);
      isFloat = true;
    }
    this.numIsFloat = isFloat;
    if (!isFloat && this.numDigits > this.maxIntDigits) {
      this.fail(`integer literal longer than ${MAX_INT_DIGITS} digits (Python refuses it)`, this.numStart);
    }
    this.i = i;
  }

  /**
   * Reads the string whose opening quote is at the cursor and returns its
   * value. Control characters below U+0020 must be escaped; `\u` takes
   * exactly four hex digits; a `\udXXX` escape that pairs with no neighbour
   * stays a lone surrogate (as in Python, where an escaped high and low
   * surrogate in a row make one astral character, just as they do in a JS
   * string).
   */
  scanString(): string {
    const s = this.s;
    const start = this.i + 1;
    const n = this.n;
    let i = start;
    while (i < n) {
      const c = s.charCodeAt(i);
      if (c === 34) {
        this.i = i + 1;
        return s.slice(start, i);
      }
      if (c === 92) return this.scanEscapedString(start, i);
      if (c < 32) this.fail("invalid control character in string", i);
      i++;
    }
    return this.fail("unterminated string", start - 1);
  }

  private scanEscapedString(start: number, i: number): string {
    const plain = this.plainEscapes(i);
    if (plain >= 0) {
      // Text JSON.parse reads exactly as json.loads does: short escapes only, no
      // control character. Its flat string is cheaper than the pieces joined
      // below, there and for every reader after (an answer's text is often
      // JSON itself, a quote escaped every few characters).
      this.i = plain + 1;
      return JSON.parse(this.s.slice(start - 1, plain + 1)) as string;
    }
    const s = this.s;
    const n = this.n;
    let out = "";
    let chunk = start;
    while (i < n) {
      const c = s.charCodeAt(i);
      if (c === 34) {
        this.i = i + 1;
        return out + s.slice(chunk, i);
      }
      if (c === 92) {
        out += s.slice(chunk, i);
        const e = s.charCodeAt(i + 1);
        switch (e) {
          case 34:
            out += '"';
            break;
          case 92:
            out += "\\";
            break;
          case 47:
            out += "/";
            break;
          case 98:
            out += "\b";
            break;
          case 102:
            out += "\f";
            break;
          case 110:
            out += "\n";
            break;
          case 114:
            out += "\r";
            break;
          case 116:
            out += "\t";
            break;
          case 117: {
            const u = hex4(s, i + 2);
            if (u < 0) this.fail("invalid \\uXXXX escape", i);
            if (u >= 0xd800 && u <= 0xdfff && this.joinsRawSurrogate(u, i, chunk)) {
              this.fail("a \\uXXXX surrogate escape next to an unescaped surrogate", i);
            }
            out += String.fromCharCode(u);
            i += 4;
            break;
          }
          default:
            if (i + 1 >= n) this.fail("unterminated string", start - 1);
            this.fail("invalid escape", i);
        }
        i += 2;
        chunk = i;
        continue;
      }
      if (c < 32) this.fail("invalid control character in string", i);
      i++;
    }
    return this.fail("unterminated string", start - 1);
  }

  /**
   * Where the string whose first backslash is at `i` ends (its closing quote),
   * when every escape in it is a short one (\" \\ \/ \b \f \n \r \t) and
   * no code unit is below U+0020; -1 otherwise (a \u escape, an invalid one,
   * a control character, no end), which the general reading takes, with its errors.
   */
  private plainEscapes(i: number): number {
    const s = this.s;
    const n = this.n;
    while (i < n) {
      const c = s.charCodeAt(i);
      if (c === 34) return i;
      if (c === 92) {
        if (SHORT_ESCAPES[s.charCodeAt(i + 1)] !== 1) return -1;
        i += 2;
        continue;
      }
      if (c < 32) return -1;
      i++;
    }
    return -1;
  }

  /**
   * Python pairs an escaped high surrogate only with an escaped low one; an
   * escape beside a raw surrogate stays two code points there, but would
   * fuse into one character in a JS string. Such text cannot come from
   * UTF-8 (which has no raw surrogates), so it is refused rather than read
   * differently from Python.
   */
  private joinsRawSurrogate(u: number, i: number, chunk: number): boolean {
    if (u <= 0xdbff) {
      const next = this.s.charCodeAt(i + 6);
      return next >= 0xdc00 && next <= 0xdfff;
    }
    const prev = chunk < i ? this.s.charCodeAt(i - 1) : 0;
    return prev >= 0xd800 && prev <= 0xdbff;
  }
}

/** The code units after a backslash that make a short escape: " \\ / b f n r t. */
const SHORT_ESCAPES = new Uint8Array(128);
for (const c of '"\\/bfnrt') SHORT_ESCAPES[c.charCodeAt(0)] = 1;

function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  const l = c | 32;
  if (l >= 97 && l <= 102) return l - 87;
  return -1;
}

function hex4(s: string, i: number): number {
  const a = hexDigit(s.charCodeAt(i));
  const b = hexDigit(s.charCodeAt(i + 1));
  const c = hexDigit(s.charCodeAt(i + 2));
  const d = hexDigit(s.charCodeAt(i + 3));
  return a < 0 || b < 0 || c < 0 || d < 0 ? -1 : (a << 12) | (b << 8) | (c << 4) | d;
}
