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
import { stackGuarded } from "./json-error.ts";
import { JsonScanner } from "./json-scanner.ts";

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
 * The scalars of the model (strings, literals, numbers) as both parsers of a
 * JS string read them: this one's ModelParser and the permissive reading of
 * src/core/json-lenient.ts, which overrides what it notes of a NaN literal,
 * a string or a number.
 */
export class ScalarReader extends JsonScanner {
  /** A NaN, Infinity or -Infinity literal was read. */
  nanLiteralRead(): void {}

  /** The value at the cursor when it is no container (`c`, its first code unit, is the one ws() returned). */
  scalar(c: number): Json {
    switch (c) {
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
        this.nanLiteralRead();
        return new JsonFloat(NaN);
      case 73:
        this.literal("Infinity");
        this.nanLiteralRead();
        return new JsonFloat(Infinity);
      case 45:
        if (this.s.charCodeAt(this.i + 1) === 73) {
          this.literal("-Infinity");
          this.nanLiteralRead();
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
}

/** Keys seen lately, by a hash of their length and ends: a repeated key is the same string (hashed once as a Map key). */
const KEYS: string[] = new Array(512).fill("");

class ModelParser extends ScalarReader {
  key(): string {
    const s = this.s;
    const start = this.i + 1;
    const c0 = s.charCodeAt(start);
    // The key ends at the next quote unless it holds an escape; a cached key of that length, text
    // for text, is this one (it holds no quote nor backslash).
    const q = s.indexOf('"', start);
    if (q > start) {
      const len = q - start;
      const slot = (len * 31 + c0 * 7 + s.charCodeAt(q - 1)) & 511;
      const cand = KEYS[slot]!;
      if (cand.length === len && s.startsWith(cand, start)) {
        this.i = q + 1;
        return cand;
      }
      const k = this.scanString();
      // Only a key with no escape (its text is its value) may stand for a later key's text.
      if (this.i === q + 1 && k.length === len) KEYS[slot] = k;
      return k;
    }
    return this.scanString();
  }

  constructor(
    s: string,
    maxDepth: number | undefined,
    readonly rejectDuplicateKeys: boolean,
    readonly onDuplicate?: (key: string, depth: number) => void,
    readonly onNanLiteral?: () => void,
  ) {
    super(s, maxDepth);
  }

  override nanLiteralRead(): void {
    this.onNanLiteral?.();
  }

  value(): Json {
    const c = this.ws();
    if (c === 123) return this.object();
    if (c === 91) return this.array();
    return this.scalar(c);
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
      const key = this.key();
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
  // As guardStack, without its two closures: every frame seam reads is parsed here.
  try {
    if (text.charCodeAt(0) === 0xfeff) p.fail("unexpected byte order mark", 0);
    const v = p.value();
    p.end();
    return v;
  } catch (err) {
    throw stackGuarded(err, p.i, text);
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
