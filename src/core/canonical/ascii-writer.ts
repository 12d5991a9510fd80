/**
 * Forms written straight into bytes, for values made of ASCII text: what
 * a row's line (src/format/line.ts) and a small value's json-c14n digest
 * are written with, member by member, instead of building the form as a
 * string (in JavaScriptCore a form of a few dozen pieces is a rope of that
 * many strings, flattened and encoded to UTF-8 again before it is hashed).
 * Anything past ASCII, or not in the subset below, is left to the general
 * writer (src/core/canonical/reference.ts), which these must agree with byte for byte.
 */
import type { Json } from "../json.ts";

/** The bytes of a short escape (json.dumps writes these), by code unit. */
const SHORT_ESCAPE: Record<number, number> = { 8: 0x62, 9: 0x74, 10: 0x6e, 12: 0x66, 13: 0x72, 34: 0x22, 92: 0x5c };
const HEX = "0123456789abcdef";

/** From this length a string is looked over by the regexps below before it is copied. */
const LONG_STRING = 64;
const PAST_ASCII = /[^\u0000-\u007f]/;
/** ASCII that json.dumps writes as it is (no quote, backslash or control character; DEL is written raw). */
const PLAIN_ASCII = /^[\u0020\u0021\u0023-\u005b\u005d-\u007f]*$/;
const encoder = new TextEncoder();

/**
 * A JSON string literal as json.dumps writes it (ensure_ascii=False), into b
 * at o (which must have room for 6 bytes a code unit and 2); the end, or -1
 * at a code unit past ASCII.
 */
export function putJsonString(b: Uint8Array, o: number, s: string): number {
  // A long string is refused or copied by native code: a code unit at a time
  // here costs about twice what the general writer's string does for it.
  if (s.length >= LONG_STRING) {
    // Plain ASCII is the common case (a digest, a time); only text that is not looks further.
    if (PLAIN_ASCII.test(s)) {
      b[o++] = 0x22;
      o += encoder.encodeInto(s, b.subarray(o, o + s.length)).written;
      b[o++] = 0x22;
      return o;
    }
    if (PAST_ASCII.test(s)) return -1;
  }
  b[o++] = 0x22;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && c < 0x80 && c !== 0x22 && c !== 0x5c) {
      b[o++] = c; // DEL too: json.dumps writes it raw
    } else if (c >= 0x80) {
      return -1;
    } else {
      b[o++] = 0x5c;
      const short = SHORT_ESCAPE[c];
      if (short !== undefined) {
        b[o++] = short;
      } else {
        b[o++] = 0x75;
        b[o++] = 0x30;
        b[o++] = 0x30;
        b[o++] = HEX.charCodeAt(c >> 4);
        b[o++] = HEX.charCodeAt(c & 15);
      }
    }
  }
  b[o++] = 0x22;
  return o;
}

/** ASCII text into b at o; -1 at a code unit past ASCII. */
export function putAscii(b: Uint8Array, o: number, s: string): number {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) return -1;
    b[o++] = c;
  }
  return o;
}

/** The longest compact form compactAscii writes; a longer value goes the general way (streamed in pieces there). */
const COMPACT_MAX = 1 << 16;
/** Deeper values go the general way (which knows the format's depth limit). */
const COMPACT_DEPTH = 64;
/** A Map of up to this many keys is sorted in place on keyStack, with no array of its keys made. */
const SELECT_MAX = 8;

let out = new Uint8Array(1 << 10);

/**
 * compactForm(v) as UTF-8 (`json.dumps(v, sort_keys=True,
 * separators=(",", ":"), ensure_ascii=False)`), for a value made of ASCII
 * text (keys too), safe integers, booleans, null, objects (Maps or plain)
 * and arrays; null for anything else (a float, a bigint, text past ASCII,
 * a form over COMPACT_MAX bytes, nesting past COMPACT_DEPTH), which the
 * general writer then writes or refuses. The bytes are a view of a buffer
 * the next call writes over.
 */
export function compactAscii(v: Json): Uint8Array | null {
  const end = put(0, v, 0);
  return end < 0 ? null : out.subarray(0, end);
}

/** What compactAscii keeps from call to call (for the tests: no keys, at most COMPACT_MAX bytes). */
export function asciiFormScratch(): { keys: number; bytes: number } {
  return { keys: keyStack.length, bytes: out.length };
}

/** Makes `out` hold n more bytes at o; false past COMPACT_MAX. */
function room(o: number, n: number): boolean {
  if (o + n <= out.length) return true;
  if (o + n > COMPACT_MAX) return false;
  const next = new Uint8Array(Math.min(COMPACT_MAX, Math.max(2 * out.length, o + n)));
  next.set(out.subarray(0, o));
  out = next;
  return true;
}

function put(o: number, v: Json, depth: number): number {
  switch (typeof v) {
    case "string":
      return room(o, 6 * v.length + 2) ? putJsonString(out, o, v) : -1;
    case "number": {
      // As number() in canonical.ts writes a safe integer; floats go the general way (Python's repr).
      if (!Number.isSafeInteger(v)) return -1;
      const text = String(v);
      return room(o, text.length) ? putAscii(out, o, text) : -1;
    }
    case "boolean":
      return room(o, 5) ? putAscii(out, o, v ? "true" : "false") : -1;
    case "object":
      break;
    default:
      return -1;
  }
  if (v === null) return room(o, 4) ? putAscii(out, o, "null") : -1;
  if (depth >= COMPACT_DEPTH || !room(o, 2)) return -1;
  if (Array.isArray(v)) {
    out[o++] = 0x5b;
    for (let i = 0; i < v.length; i++) {
      if (i > 0) {
        if (!room(o, 1)) return -1;
        out[o++] = 0x2c;
      }
      o = put(o, v[i]!, depth + 1);
      if (o < 0) return -1;
    }
    if (!room(o, 1)) return -1;
    out[o++] = 0x5d;
    return o;
  }
  if (v instanceof Map) return v.size > SELECT_MAX ? putLargeMap(o, v, depth) : putMap(o, v, depth);
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return -1;
  return putObject(o, v as { readonly [k: string]: Json }, depth);
}

// The closures below live in functions of their own: a function whose variable a closure
// captures makes a scope object at every call, and put runs for every value.
function putObject(o: number, obj: { readonly [k: string]: Json }, depth: number): number {
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined);
  return putMembers(o, keys.sort(), (k) => obj[k]!, depth);
}

function putLargeMap(o: number, m: Map<string, Json>, depth: number): number {
  return putMembers(o, Array.from(m.keys()).sort(), (k) => m.get(k)!, depth);
}

/** Keys of the Maps being written, each Map's sorted in place above those of the Maps around it. */
const keyStack: string[] = [];

function putMap(o: number, m: Map<string, Json>, depth: number): number {
  // Insertion sort onto the stack: a small Map's keys in order with no array made for them.
  const base = keyStack.length;
  for (const k of m.keys()) {
    let i = keyStack.length;
    keyStack.push(k);
    for (; i > base && keyStack[i - 1]! > k; i--) keyStack[i] = keyStack[i - 1]!;
    keyStack[i] = k;
  }
  out[o++] = 0x7b;
  for (let n = 0; n < m.size && o >= 0; n++) {
    const k = keyStack[base + n]!;
    o = putMember(o, n, k, m.get(k)!, depth);
  }
  keyStack.length = base;
  if (o < 0 || !room(o, 1)) return -1;
  out[o++] = 0x7d;
  return o;
}

/** `{` members `}` for keys already sorted (ASCII keys: `sort()`'s order is code point order). */
function putMembers(o: number, keys: string[], get: (k: string) => Json, depth: number): number {
  out[o++] = 0x7b;
  for (let n = 0; n < keys.length; n++) {
    o = putMember(o, n, keys[n]!, get(keys[n]!), depth);
    if (o < 0) return -1;
  }
  if (!room(o, 1)) return -1;
  out[o++] = 0x7d;
  return o;
}

/** `"key":value`, after a comma unless it is the object's first member. */
function putMember(o: number, n: number, k: string, x: Json, depth: number): number {
  if (!room(o, 6 * k.length + 4)) return -1;
  if (n > 0) out[o++] = 0x2c;
  o = putJsonString(out, o, k);
  if (o < 0) return -1;
  out[o++] = 0x3a;
  return put(o, x, depth + 1);
}
