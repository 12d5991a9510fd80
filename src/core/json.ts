/**
 * The lossless JSON model and its one parser, which accepts exactly what
 * Python's `json.loads` accepts (the reference the ledger format is defined
 * by) and keeps what `JSON.parse` loses:
 *   - int vs float: `1` is a number, `1.0` a JsonFloat; `-0` is the int 0, `-0.0` a float;
 *   - ints of any size exactly (bigint beyond ±(2^53-1));
 *   - duplicate keys as a Python dict holds them: the last value, at the first key's position;
 *   - lone surrogates from `\udXXX` escapes;
 *   - the `NaN`, `Infinity`, `-Infinity` literals.
 */

/** A Python float whose JS number alone would read as an int: 1.0, -0.0, 1e300, and NaN/±Infinity (incl. overflow like 1e400). */
export class JsonFloat {
  constructor(readonly value: number) {}
}

/** Parser output for objects: insertion order, duplicate key = last value at the first position (as Python's dict). */
export type JsonObject = Map<string, Json>;

/**
 * number: a Python int when Number.isInteger(n) (written as its exact decimal), else a Python float.
 * bigint: an int beyond ±(2^53-1). Plain objects (rows built in code) are accepted wherever a JsonObject is.
 */
export type Json =
  | null
  | boolean
  | number
  | bigint
  | string
  | JsonFloat
  | Json[]
  | JsonObject
  | { readonly [k: string]: Json };

/**
 * The input is not JSON as Python's `json.loads` reads it. `offset` is in
 * the input's own units (UTF-16 code units of a string, bytes of UTF-8);
 * `line` and `column` count from 1, the column in characters.
 */
export class JsonParseError extends Error {
  override readonly name = "JsonParseError";
  readonly line: number;
  readonly column: number;
  constructor(
    readonly reason: string,
    readonly offset: number,
    input?: string | Uint8Array,
  ) {
    const { line, column } = input === undefined ? { line: 0, column: 0 } : lineColumn(input, offset);
    super(line ? `${reason} at line ${line} column ${column}` : `${reason} at offset ${offset}`);
    this.line = line;
    this.column = column;
  }
}

function lineColumn(input: string | Uint8Array, offset: number): { line: number; column: number } {
  const text = typeof input === "string";
  let line = 1;
  let column = 1;
  const end = Math.min(offset, input.length);
  for (let i = 0; i < end; i++) {
    const c = text ? input.charCodeAt(i) : input[i]!;
    if (c === 10) {
      line++;
      column = 1;
    } else if (text ? c < 0xdc00 || c > 0xdfff || i === 0 || !isHigh(input.charCodeAt(i - 1)) : (c & 0xc0) !== 0x80) {
      column++; // one per character: not the low half of a pair, not a UTF-8 continuation byte
    }
  }
  return { line, column };
}

function isHigh(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

export interface ParseOptions {
  /** Deepest nesting of arrays and objects accepted (default DEFAULT_MAX_DEPTH). */
  maxDepth?: number;
  /** Reject an object with a repeated key instead of keeping the last value (RFC 8785 / I-JSON input). */
  rejectDuplicateKeys?: boolean;
  /** Told of each repeated key (then kept as usual: last value, first position), with the depth of its object (1 = top). */
  onDuplicate?: (key: string, depth: number) => void;
  /** Told of each NaN, Infinity or -Infinity literal (Python's, refused by JSON.parse). */
  onNanLiteral?: () => void;
}

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

/** Character-level scanning of a JS string. (src/core/canonical-bytes.ts reads UTF-8 by the same rules.) */
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

class ModelParser extends JsonScanner {
  constructor(
    s: string,
    maxDepth: number | undefined,
    readonly rejectDuplicateKeys: boolean,
    readonly onDuplicate?: (key: string, depth: number) => void,
    readonly onNanLiteral?: () => void,
  ) {
    super(s, maxDepth);
  }

  value(): Json {
    const c = this.ws();
    switch (c) {
      case 123:
        return this.object();
      case 91:
        return this.array();
      case 34:
        return this.scanString();
      case 116:
        this.literal("true");
        return true;
      case 102:
        this.literal("false");
        return false;
      case 110:
        this.literal("null");
        return null;
      case 78:
        this.literal("NaN");
        this.onNanLiteral?.();
        return new JsonFloat(NaN);
      case 73:
        this.literal("Infinity");
        this.onNanLiteral?.();
        return new JsonFloat(Infinity);
      case 45:
        if (this.s.charCodeAt(this.i + 1) === 73) {
          this.literal("-Infinity");
          this.onNanLiteral?.();
          return new JsonFloat(-Infinity);
        }
        return this.number();
      default:
        if (c >= 48 && c <= 57) return this.number();
        return this.fail("expecting value");
    }
  }

  number(): number | bigint | JsonFloat {
    this.scanNumber();
    if (this.numIsFloat) {
      const x = Number(this.s.slice(this.numStart, this.i));
      return Number.isInteger(x) || !Number.isFinite(x) ? new JsonFloat(x) : x;
    }
    if (this.numDigits <= 15) return this.s.charCodeAt(this.numStart) === 45 ? 0 - this.numSmall : this.numSmall;
    const t = this.s.slice(this.numStart, this.i);
    const x = Number(t);
    return Number.isSafeInteger(x) ? x : BigInt(t);
  }

  array(): Json[] {
    this.enter();
    this.i++;
    const out: Json[] = [];
    if (this.ws() === 93) {
      this.i++;
      this.depth--;
      return out;
    }
    for (;;) {
      out.push(this.value());
      const c = this.ws();
      this.i++;
      if (c === 44) continue;
      if (c === 93) break;
      this.fail("expecting ',' or ']'", this.i - 1);
    }
    this.depth--;
    return out;
  }

  object(): JsonObject {
    this.enter();
    this.i++;
    const out: JsonObject = new Map();
    let c = this.ws();
    if (c === 125) {
      this.i++;
      this.depth--;
      return out;
    }
    for (;;) {
      if (c !== 34) this.fail("expecting property name enclosed in double quotes");
      const keyAt = this.i;
      const key = this.scanString();
      if (this.ws() !== 58) this.fail("expecting ':' delimiter");
      this.i++;
      const v = this.value();
      if (this.rejectDuplicateKeys && out.has(key)) this.fail("duplicate key", keyAt);
      const size = out.size;
      out.set(key, v);
      if (out.size === size) this.onDuplicate?.(key, this.depth);
      c = this.ws();
      this.i++;
      if (c === 44) {
        c = this.ws();
        continue;
      }
      if (c === 125) break;
      this.fail("expecting ',' or '}'", this.i - 1);
    }
    this.depth--;
    return out;
  }
}

/**
 * Parses JSON text as Python's `json.loads` does (strict JSON plus the
 * `NaN`, `Infinity` and `-Infinity` literals; whitespace around the value).
 * A leading byte order mark is refused, as Python refuses it in a str.
 * Throws JsonParseError and nothing else, however hostile or deep the text.
 */
export function parseJson(text: string, opts?: ParseOptions): Json {
  const p = new ModelParser(
    text,
    opts?.maxDepth,
    opts?.rejectDuplicateKeys === true,
    opts?.onDuplicate,
    opts?.onNanLiteral,
  );
  return guardStack(
    text,
    () => p.i,
    () => {
      if (text.charCodeAt(0) === 0xfeff) p.fail("unexpected byte order mark", 0);
      const v = p.value();
      p.end();
      return v;
    },
  );
}

/**
 * A maxDepth set beyond what the stack holds must still end in a
 * JsonParseError, not a RangeError from the engine.
 */
export function guardStack<T>(input: string | Uint8Array, at: () => number, run: () => T): T {
  try {
    return run();
  } catch (err) {
    if (err instanceof JsonParseError) throw err;
    if (err instanceof RangeError) throw new JsonParseError("nesting too deep for the stack", at(), input);
    throw err;
  }
}

export function isObject(v: Json): v is JsonObject | { readonly [k: string]: Json } {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof JsonFloat);
}

export function getField(v: Json, key: string): Json | undefined {
  if (v instanceof Map) return v.get(key);
  if (isObject(v)) return Object.hasOwn(v, key) ? (v as { readonly [k: string]: Json })[key] : undefined;
  return undefined;
}

export function entries(v: JsonObject | { readonly [k: string]: Json }): Iterable<[string, Json]> {
  return v instanceof Map ? v.entries() : Object.entries(v);
}
