/**
 * Serializers for the lossless JSON model: the three forms of Python's
 * `json.dumps` the ledger format is defined by, and RFC 8785 (JCS).
 *
 * Shared rules (Python `json.dumps(..., ensure_ascii=False)`; JCS agrees):
 *   strings   `"` `\\` and `\n` `\r` `\t` `\b` `\f` as short escapes, other controls below U+0020
 *             as `\u00XX` in lowercase hex; everything else raw (DEL, U+2028, `/`, non-ASCII)
 *   ints      exact decimal (`-0` is `0`; a number beyond 2^53 is written as the exact integer it holds)
 *   floats    Python's repr (src/core/canonical/pyfloat.ts): `1.0`, `1e-05`, `1e+16`, `-0.0`
 *   objects   keys sorted by Unicode code point where sorted (`"\ufb00"` before `"\U0001F600"`)
 * Plain objects' undefined-valued properties are skipped, as JSON.stringify
 * skips them; every other non-JSON value (undefined elsewhere, functions,
 * symbols, class instances such as Date) is a ValueError.
 */
import { SeamError } from "../../base/error.ts";
import { type Json, JsonFloat } from "../json.ts";
import { MAX_INT_DIGITS } from "../json-scanner.ts";
import { pyFloatRepr } from "./pyfloat.ts";

/** The value has no form under the recipe; `kind` is the exception Python raises for it. */
export class CanonicalError extends SeamError {
  override readonly name = "CanonicalError";
  constructor(
    readonly kind: "ValueError" | "UnicodeEncodeError",
    message: string,
  ) {
    super("undigestible", message);
  }
}

/** The digest recipes: json-c14n (compactForm) and jcs (jcsForm, RFC 8785). */
export type Recipe = "json-c14n" | "jcs";

/** How a form writes JSON; the forms below are its four settings. */
export interface Style {
  readonly item: string;
  readonly colon: string;
  /** 0: insertion order, 1: by code point, 2: by UTF-16 code unit (JCS). */
  readonly sort: 0 | 1 | 2;
  /** Write NaN / Infinity / -Infinity (Python's allow_nan=True) instead of refusing. */
  readonly nan: boolean;
  /** ECMAScript number form (JCS) instead of Python's int / float repr. */
  readonly es: boolean;
  /** Write lone surrogates as `\udXXX` escapes (else they stay raw in the string). */
  readonly escapeLone: boolean;
}

export const COMPACT: Style = { item: ",", colon: ":", sort: 1, nan: false, es: false, escapeLone: false };
export const CHAIN: Style = { item: ", ", colon: ": ", sort: 1, nan: true, es: false, escapeLone: false };
const LINE: Style = { item: ", ", colon: ": ", sort: 0, nan: true, es: false, escapeLone: true };
export const JCS: Style = { item: ",", colon: ":", sort: 2, nan: false, es: true, escapeLone: false };

/**
 * The digest form, `json.dumps(v, sort_keys=True, separators=(",", ":"),
 * ensure_ascii=False, allow_nan=False)` as UTF-8 text, e.g. `{"a":1,"b":[1.0,"é"]}`.
 * Throws CanonicalError: ValueError for NaN/±Infinity (and ints over 4300
 * digits); UnicodeEncodeError for a lone surrogate. ValueError wins when both
 * occur, as in Python, where dumps raises before the UTF-8 encode is tried.
 * `style` is for `seam selftest` only, to get the recipe wrong on purpose.
 */
export function compactForm(v: Json, style: Style = COMPACT): string {
  const out = top(v, style);
  if (!isWellFormed(out)) throw new CanonicalError("UnicodeEncodeError", "a lone surrogate cannot be encoded as UTF-8");
  return out;
}

/**
 * The chain form, `json.dumps(v, sort_keys=True, ensure_ascii=False)`:
 * `{"a": 1, "b": [NaN, "x"]}` — `", "` and `": "` separators, NaN, Infinity
 * and -Infinity written as such, lone surrogates left raw in the returned
 * string (chainOf hashes them with utf8Surrogatepass). `style` as for compactForm.
 */
export function chainForm(v: Json, style: Style = CHAIN): string {
  return top(v, style);
}

/**
 * The form a ledger line is written in, `json.dumps(v, ensure_ascii=False)`:
 * insertion order, `{"evt": "x", "n": 1.0}`; a lone surrogate is written as
 * a `\udXXX` escape (lowercase hex) so the line stays valid UTF-8 and reads
 * back as the same string.
 */
export function lineForm(v: Json): string {
  return top(v, LINE);
}

/**
 * RFC 8785 (JCS): `{"a":1,"b":[1e+30,4.5]}` — keys sorted by UTF-16 code
 * unit, numbers as ECMAScript writes them (ints and floats alike, so `1.0`
 * is `1`; a bigint becomes the nearest double, as a JCS tool reading the
 * same text would hold it). Throws CanonicalError for what I-JSON forbids:
 * non-finite numbers (ValueError) and lone surrogates (UnicodeEncodeError).
 */
export function jcsForm(v: Json): string {
  const out = top(v, JCS);
  if (!isWellFormed(out)) throw new CanonicalError("UnicodeEncodeError", "a lone surrogate is not allowed in I-JSON");
  return out;
}

/** UTF-8 with each lone surrogate as its 3-byte form (Python's "surrogatepass"); a pair is one 4-byte character. */
export function utf8Surrogatepass(s: string): Uint8Array {
  if (isWellFormed(s)) return encoder.encode(s);
  const out = new Uint8Array(s.length * 3);
  let o = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) {
      out[o++] = c;
    } else if (c < 0x800) {
      out[o++] = 0xc0 | (c >> 6);
      out[o++] = 0x80 | (c & 63);
    } else {
      const d = c >= 0xd800 && c <= 0xdbff ? s.charCodeAt(i + 1) : 0;
      if (d >= 0xdc00 && d <= 0xdfff) {
        const cp = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        out[o++] = 0xf0 | (cp >> 18);
        out[o++] = 0x80 | ((cp >> 12) & 63);
        out[o++] = 0x80 | ((cp >> 6) & 63);
        out[o++] = 0x80 | (cp & 63);
        i++;
      } else {
        out[o++] = 0xe0 | (c >> 12);
        out[o++] = 0x80 | ((c >> 6) & 63);
        out[o++] = 0x80 | (c & 63);
      }
    }
  }
  return out.slice(0, o);
}

const encoder = new TextEncoder();

/** What feedUtf8 feeds: node:crypto's Hash (named by shape, so the shipped types need no Node types). */
export interface Utf8Sink {
  update(data: string | Uint8Array, encoding?: "utf8"): unknown;
}

/** Where feedUtf8 encodes a piece of a form that is long but not too long (reused: no garbage per piece). */
const scratch = new Uint8Array(1 << 18);

/**
 * Feeds a piece of a form (streamForm) to a hash as UTF-8, a lone surrogate
 * as its 3-byte form (utf8Surrogatepass). A piece of a long form goes
 * through one reused buffer, so hashing it leaves nothing behind.
 */
export function feedUtf8(hash: Utf8Sink, piece: string): void {
  if (!isWellFormed(piece)) hash.update(utf8Surrogatepass(piece));
  else if (piece.length < 1024 || piece.length * 3 > scratch.length) hash.update(piece, "utf8");
  else hash.update(scratch.subarray(0, encoder.encodeInto(piece, scratch).written));
}

/** Whether the string has no lone surrogate (String#isWellFormed, ES2024; in Node 20 and Bun). */
export function isWellFormed(s: string): boolean {
  return (s as unknown as { isWellFormed(): boolean }).isWellFormed();
}

/**
 * Order of keys under Python's `sort_keys`: by code point. JS's `<` compares
 * UTF-16 code units, which agrees except where a surrogate meets a unit in
 * U+E000..U+FFFF: then compare whole code points from the start of the
 * character that differs.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if ((x < 0xd800 || x > 0xdfff) && (y < 0xd800 || y > 0xdfff)) return x - y;
    const h = i > 0 ? a.charCodeAt(i - 1) : 0;
    return compareFrom(a, b, h >= 0xd800 && h <= 0xdbff ? i - 1 : i);
  }
  return a.length - b.length;
}

function compareFrom(a: string, b: string, i: number): number {
  let j = i;
  while (i < a.length && j < b.length) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(j)!;
    if (x !== y) return x - y;
    i += x > 0xffff ? 2 : 1;
    j += y > 0xffff ? 2 : 1;
  }
  return i < a.length ? 1 : j < b.length ? -1 : 0;
}

const SURROGATE = /[\ud800-\udfff]/;

function sortKeys(keys: string[], sort: 1 | 2): string[] {
  keys.sort();
  if (sort === 1) {
    for (const k of keys) {
      if (SURROGATE.test(k)) return keys.sort(compareCodePoints);
    }
  }
  return keys;
}

/**
 * Python's json.dumps gives up (RecursionError) a little under 1000 levels;
 * this is deeper than parseJson's default and well within Node's stack. A
 * cycle in a value built in code ends here too (Python: ValueError).
 */
export const MAX_WRITE_DEPTH = 1000;

function top(v: Json, st: Style): string {
  return writeTop(v, st, undefined, "");
}

/**
 * Writes the form of `v` under `style` (the forms above), handing it to
 * `spill` in pieces as it grows, so that no string of the whole is ever
 * made: a row holding a long string or a large array costs its model and a
 * piece, not its model and two copies more (one string, one UTF-8). The
 * pieces, then the text returned (the last piece, the whole form of a
 * small value), are the form `prefix + form`; no piece ends inside a
 * surrogate pair. Throws CanonicalError as the forms do (before or after
 * some pieces went out); a lone surrogate is left to the caller (see
 * isWellFormed), which is how compactForm and jcsForm refuse it.
 */
export function streamForm(v: Json, style: Style, spill: (piece: string) => void, prefix = ""): string {
  return writeTop(v, style, spill, prefix);
}

/** Text is handed on once this long, and a longer string goes out in slices of about this length. */
const SPILL_AT = 1 << 16;

function writeTop(v: Json, st: Style, spill: ((piece: string) => void) | undefined, prefix: string): string {
  try {
    return write(v, st, spill, 0, prefix);
  } catch (err) {
    if (err instanceof RangeError) throw new CanonicalError("ValueError", `cannot serialize: ${err.message}`);
    throw err;
  }
}

/**
 * `out` with the form of `v` after it. With `spill`, what has been written
 * is handed to it once it is SPILL_AT long (then what is returned is only
 * what came after); the text goes through arguments and results, not through
 * a shared object, which keeps the common small row as cheap as plain concatenation.
 */
function write(v: Json, st: Style, spill: ((piece: string) => void) | undefined, depth: number, out: string): string {
  switch (typeof v) {
    case "string":
      if (spill !== undefined && v.length > SPILL_AT) return longString(v, st, spill, out);
      return out + quote(v, st.escapeLone);
    case "number":
      return out + number(v, st);
    case "boolean":
      return out + (v ? "true" : "false");
    case "bigint":
      return out + bigint(v, st);
    case "object": {
      if (v === null) return `${out}null`;
      if (v instanceof JsonFloat) return out + float(v.value, st);
      if (depth >= MAX_WRITE_DEPTH) throw new CanonicalError("ValueError", "nesting too deep (or circular)");
      if (Array.isArray(v)) {
        if (v.length === 0) return `${out}[]`;
        out = write(v[0]!, st, spill, depth + 1, `${out}[`);
        for (let i = 1; i < v.length; i++) {
          out = write(v[i]!, st, spill, depth + 1, out + st.item);
          if (spill !== undefined && out.length >= SPILL_AT) out = handOn(spill, out);
        }
        return `${out}]`;
      }
      if (v instanceof Map) {
        if (v.size === 0) return `${out}{}`;
        const keys = Array.from(v.keys());
        if (st.sort) sortKeys(keys, st.sort);
        out = write(v.get(keys[0]!)!, st, spill, depth + 1, `${out}{${quote(keys[0]!, st.escapeLone)}${st.colon}`);
        for (let i = 1; i < keys.length; i++) {
          const k = keys[i]!;
          out = write(v.get(k)!, st, spill, depth + 1, out + st.item + quote(k, st.escapeLone) + st.colon);
          if (spill !== undefined && out.length >= SPILL_AT) out = handOn(spill, out);
        }
        return `${out}}`;
      }
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) {
        throw new CanonicalError("ValueError", `a ${proto?.constructor?.name ?? "class"} instance is not a JSON value`);
      }
      const o = v as { readonly [k: string]: Json };
      const keys = Object.keys(o);
      if (st.sort) sortKeys(keys, st.sort);
      out += "{";
      let first = true;
      for (const k of keys) {
        const x = o[k];
        if (x === undefined) continue;
        out = write(x, st, spill, depth + 1, out + (first ? "" : st.item) + quote(k, st.escapeLone) + st.colon);
        first = false;
        if (spill !== undefined && out.length >= SPILL_AT) out = handOn(spill, out);
      }
      return `${out}}`;
    }
  }
  throw new CanonicalError("ValueError", `a JS ${typeof v} is not a JSON value`);
}

function handOn(spill: (piece: string) => void, out: string): string {
  spill(out);
  return "";
}

/** `out`, then a string longer than SPILL_AT quoted, all handed on but the closing quote (in slices, never cut inside a surrogate pair). */
function longString(s: string, st: Style, spill: (piece: string) => void, out: string): string {
  spill(`${out}"`);
  for (let i = 0; i < s.length; ) {
    let j = Math.min(s.length, i + SPILL_AT);
    const c = s.charCodeAt(j - 1);
    if (j < s.length && c >= 0xd800 && c <= 0xdbff) j--;
    const slice = s.slice(i, j);
    spill(
      (st.escapeLone && !isWellFormed(slice)) || NEEDS_ESCAPE.test(slice) ? escapeBody(slice, st.escapeLone) : slice,
    );
    i = j;
  }
  return '"';
}

function number(x: number, st: Style): string {
  if (Number.isInteger(x)) {
    if (st.es || (x <= Number.MAX_SAFE_INTEGER && x >= -Number.MAX_SAFE_INTEGER)) return String(x);
    return BigInt(x).toString();
  }
  return float(x, st);
}

function float(x: number, st: Style): string {
  if (Number.isFinite(x)) return st.es ? String(x) : pyFloatRepr(x);
  if (st.nan) return x > 0 ? "Infinity" : x < 0 ? "-Infinity" : "NaN";
  throw new CanonicalError("ValueError", `out of range float value ${x} is not JSON compliant`);
}

function bigint(x: bigint, st: Style): string {
  if (st.es) return float(Number(x), st);
  const t = x.toString();
  if (t.length - (x < 0n ? 1 : 0) > MAX_INT_DIGITS) {
    throw new CanonicalError("ValueError", `an int of more than ${MAX_INT_DIGITS} digits has no str in Python`);
  }
  return t;
}

const NEEDS_ESCAPE = /["\\\u0000-\u001f]/;
const SHORT: Record<number, string> = { 34: '\\"', 92: "\\\\", 10: "\\n", 13: "\\r", 9: "\\t", 8: "\\b", 12: "\\f" };

/** A JSON string literal under the shared rules above. */
export function quote(s: string, escapeLone = false): string {
  if (escapeLone && !isWellFormed(s)) return `"${escapeBody(s, true)}"`;
  return NEEDS_ESCAPE.test(s) ? `"${escapeBody(s, false)}"` : `"${s}"`;
}

/** A string's text as it stands between the quotes of its literal. */
function escapeBody(s: string, escapeLone: boolean): string {
  let out = "";
  let chunk = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    let esc: string | undefined;
    if (c < 32 || c === 34 || c === 92) {
      esc = SHORT[c] ?? `\\u00${c < 16 ? "0" : ""}${c.toString(16)}`;
    } else if (escapeLone && c >= 0xd800 && c <= 0xdfff) {
      const d = c <= 0xdbff ? s.charCodeAt(i + 1) : 0;
      if (d >= 0xdc00 && d <= 0xdfff) {
        i++; // a pair: one astral character, written raw
        continue;
      }
      esc = `\\u${c.toString(16)}`;
    }
    if (esc !== undefined) {
      out += s.slice(chunk, i) + esc;
      chunk = i + 1;
    }
  }
  return out + s.slice(chunk);
}
