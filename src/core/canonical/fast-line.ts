/**
 * A ledger line read the quick way, when it is written in the chain form's
 * own text member by member: the layout `json.dumps` gives (", " and ": ",
 * no other white space), strings with only the escapes json.dumps writes,
 * ints as they read, floats in Python's repr, nested objects with their keys
 * in sorted order. Every row seam writes is such a line. For one:
 *   - its chain form is its top-level members sorted by key, `chain` left
 *     out, joined by ", " in braces: the verifier hashes the line it has,
 *     rearranged, instead of writing the form anew from a parsed row
 *     (chainOf in src/core/chain.ts; the suite holds the two to the same text);
 *   - a member is parsed only when it is asked for (FormRow, in
 *     src/core/canonical/fast-row.ts), so checking a row's sessions costs the few
 *     fields they read, not the whole row.
 *
 * A shortcut, never a second rule: a line it does not recognize in full
 * gives null, and the caller parses it and writes its form from the model,
 * as before. Not recognized: other white space, an escape json.dumps does
 * not write (`\/`, `\u0041`, uppercase hex), `-0`, `1E5`, a float not in
 * repr, NaN and Infinity, a repeated key, nested keys out of order, a key
 * with an escape, nesting past MAX_DEPTH, and anything that is not JSON by
 * Python's rules (syntax, raw control characters, leading zeros, over 4300
 * digits, bad UTF-8). What it recognizes, parseJson reads to the same
 * values, with no repeated key.
 */
import { createHash } from "node:crypto";
import {
  BACKSLASH,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COLON,
  COMMA,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
  SPACE,
} from "../ascii.ts";
import { MAX_INT_DIGITS } from "../json-scanner.ts";
import { sha256Hex } from "../sha256.ts";
import { pyFloatRepr } from "./pyfloat.ts";

/** Deeper rows go the long way (they are rare, and the recursion stays short). */
const MAX_DEPTH = 64;

/** 1 for the bytes a string or key holds as they are and that need no other look: ASCII from space on but `"` and `\`. */
const PLAIN_TEXT = new Uint8Array(256);
for (let c = 0x20; c < 0x80; c++) if (c !== QUOTE && c !== BACKSLASH) PLAIN_TEXT[c] = 1;

/** A member longer than this is moved with copyWithin, a shorter one byte by byte (a call costs about as much as a few dozen bytes). */
const LONG_MEMBER = 32;
/** Lines up to this long are copied whole behind the chain form they are rearranged into. */
const FAR_COPY_MAX = 1 << 16;

/** What every scanner below returns when the text is not the form. */
const NO = -1;

/** Reused from call to call: per top-level member, its start, the end of its key, and its end. */
let members = new Int32Array(3 * 64);
/** The line being scanned has a byte of 0x80 or above (then its UTF-8 is checked as a whole). */
let high = false;
/** So far the line reads under JSON.parse to parseJson's values (see FormLayout.plain). */
let plain = true;
// ignoreBOM: a BOM is text to it, so a line that starts with one is no object here (nor to Python).
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
/** Reused: prev and the chain form, assembled for one hash call. */
let scratch = new Uint8Array(1 << 16);
/**
 * A chain form longer than this is hashed piece by piece from views of the
 * line instead of assembled in scratch, which would otherwise grow to the
 * largest line a process ever saw and keep that much for good, past the
 * bound bench/memory.ts holds `seam verify` to ("verify one 48 MiB line").
 */
const ASSEMBLE_MAX = 1 << 20;

/** How large the reused form buffer has grown (for the tests: at most about twice ASSEMBLE_MAX, as it grows by doubling). */
export function formScratchBytes(): number {
  return scratch.length;
}

/**
 * chainOf(prev, row without "chain") for the row on `line` (its bytes
 * without the "\n"), or null when the line is not in chain form member by
 * member or prev is not ASCII (then the caller takes the long way).
 */
export function chainFromLine(prev: string, line: Uint8Array): string | null {
  const n = readMembers(line);
  if (n === NO) return null;
  const order = sortedMembers(line, members, n);
  return order === null ? null : chainOfMembers(prev, line, members, order);
}

/** Where a line in chain form keeps its top-level members, as readLayout found them. */
export interface FormLayout {
  /** Per member: its start (the key's opening quote), the end of its key (after the closing quote), its end. */
  spans: readonly number[];
  /** How many members. */
  n: number;
  /** The members but `chain`, in key order. */
  order: number[];
  /** The line is ASCII: its byte offsets are its text's offsets. */
  ascii: boolean;
  /**
   * JSON.parse reads the line to the values parseJson gives (with its
   * objects as plain objects in the same key order: parsePlainLine in
   * src/core/canonical/fast-row.ts): no float that is a whole number (`1.0`,
   * `1e+16`: parseJson keeps those apart as JsonFloat), no int of more
   * than 15 digits (beyond what a double holds exactly), no key that
   * starts with a digit (a JS object puts keys like "10" first).
   */
  plain: boolean;
}

/** The layout of a line in chain form member by member with no repeated key, or null (then parse it). */
export function readLayout(line: Uint8Array): FormLayout | null {
  const n = readMembers(line);
  if (n === NO) return null;
  const order = sortedMembers(line, members, n);
  if (order === null) return null;
  // A plain array: V8 makes a typed array (members.slice) much more slowly than a small array.
  const spans: number[] = [];
  for (let k = 0; k < 3 * n; k++) spans.push(members[k]!);
  return { spans, n, order, ascii: !high, plain };
}

/**
 * The chain after `prev` of a line whose members (start, key end, end) are
 * `spans`, in key order `order`; null when prev is not ASCII. The one
 * hashing step under chainFromLine, FormRow.chain and the writer's
 * (chainedRow in src/format/line.ts, over the line it has just written).
 */
export function chainOfMembers(
  prev: string,
  line: Uint8Array,
  spans: ArrayLike<number>,
  order: number[],
): string | null {
  let size = prev.length + 2;
  for (let k = 0; k < order.length; k++) size += spans[3 * order[k]! + 2]! - spans[3 * order[k]!]! + 2;
  if (size > ASSEMBLE_MAX) return chainOfLongForm(prev, line, spans, order);
  // A short line is copied once behind the form (one native copy), and a long member moved from
  // there; a longer line's members are copied from views of it (no second copy of the line made).
  const far = line.length <= FAR_COPY_MAX ? size : -1;
  const room = size + (far < 0 ? 0 : line.length);
  if (room > scratch.length) scratch = new Uint8Array(Math.max(room, 2 * scratch.length));
  const out = scratch;
  if (far >= 0) out.set(line, far);
  let o = 0;
  for (let k = 0; k < prev.length; k++) {
    const c = prev.charCodeAt(k);
    if (c >= 0x80) return null;
    out[o++] = c;
  }
  out[o++] = OPEN_BRACE;
  for (let k = 0; k < order.length; k++) {
    const m = order[k]!;
    if (k > 0) {
      out[o++] = COMMA;
      out[o++] = SPACE;
    }
    const start = spans[3 * m]!;
    const end = spans[3 * m + 2]!;
    if (end - start > LONG_MEMBER) {
      if (far >= 0) out.copyWithin(o, far + start, far + end);
      else out.set(line.subarray(start, end), o);
      o += end - start;
    } else for (let j = start; j < end; j++) out[o++] = line[j]!;
  }
  out[o++] = CLOSE_BRACE;
  const form = out.subarray(0, o);
  return sha256Hex(form, 16);
}

/** chainOfMembers for a form over ASSEMBLE_MAX: the same bytes, handed to the hash in pieces. */
function chainOfLongForm(prev: string, line: Uint8Array, spans: ArrayLike<number>, order: number[]): string | null {
  for (let k = 0; k < prev.length; k++) if (prev.charCodeAt(k) >= 0x80) return null;
  const h = createHash("sha256");
  h.update(`${prev}{`);
  for (let k = 0; k < order.length; k++) {
    const m = order[k]!;
    if (k > 0) h.update(", ");
    h.update(line.subarray(spans[3 * m]!, spans[3 * m + 2]!));
  }
  h.update("}");
  return h.digest("hex").slice(0, 32);
}

/** Recognizes the line and records its top-level members in `members`: their count, or NO. */
function readMembers(b: Uint8Array): number {
  high = false;
  plain = true;
  const n = topMembers(b);
  if (n === NO) return NO;
  if (high) {
    try {
      utf8.decode(b);
    } catch {
      return NO;
    }
  }
  return n;
}

/** Records the top-level members in `members`; their count, or NO. */
function topMembers(b: Uint8Array): number {
  if (b[0] !== OPEN_BRACE) return NO;
  if (b[1] === CLOSE_BRACE) return b.length === 2 ? 0 : NO;
  let i = 1;
  let n = 0;
  for (;;) {
    const keyEnd = key(b, i);
    if (keyEnd === NO) return NO;
    const end = value(b, keyEnd + 2, 1);
    if (end === NO) return NO;
    if (3 * n + 3 > members.length) {
      const grown = new Int32Array(2 * members.length);
      grown.set(members);
      members = grown;
    }
    members[3 * n] = i;
    members[3 * n + 1] = keyEnd;
    members[3 * n + 2] = end;
    n++;
    if (b[end] === CLOSE_BRACE) return end + 1 === b.length ? n : NO;
    if (b[end] !== COMMA || b[end + 1] !== SPACE) return NO;
    i = end + 2;
  }
}

/** The members' indexes in key order, `chain` left out (the last line's again when its keys were the same); null when a key repeats. */
function sortedMembers(b: Uint8Array, spans: Int32Array, n: number): number[] | null {
  if (sameKeys(b, spans, n)) return lastOrder;
  const order = sortMembers(b, spans, n);
  if (order !== null) remember(b, spans, n, order);
  return order;
}

/*
 * The last line's keys in line order (their bytes one after another) and
 * the order sortedMembers gave them: rows of one kind follow one another
 * with the same keys in the same order.
 */
let lastKeys = new Uint8Array(1024);
let lastN = -1;
let lastOrder: number[] = [];

/** The keys, quotes and all, read as the last line's did byte for byte (a key holds no quote, so their ends match too). */
function sameKeys(b: Uint8Array, spans: Int32Array, n: number): boolean {
  if (n !== lastN) return false;
  let at = 0;
  for (let m = 0; m < n; m++) {
    for (let j = spans[3 * m]!, end = spans[3 * m + 1]!; j < end; j++) if (b[j] !== lastKeys[at++]) return false;
  }
  return true;
}

function remember(b: Uint8Array, spans: Int32Array, n: number, order: number[]): void {
  let size = 0;
  for (let m = 0; m < n; m++) size += spans[3 * m + 1]! - spans[3 * m]!;
  // A row of unusual keys is not kept (the buffers stay small).
  if (size > 4096 || n > 256) {
    lastN = -1;
    return;
  }
  if (size > lastKeys.length) lastKeys = new Uint8Array(4096);
  let at = 0;
  for (let m = 0; m < n; m++) {
    for (let j = spans[3 * m]!, end = spans[3 * m + 1]!; j < end; j++) lastKeys[at++] = b[j]!;
  }
  lastN = n;
  lastOrder = order;
}

/** The members' indexes in key order, `chain` left out; null when a key repeats. */
function sortMembers(b: Uint8Array, spans: Int32Array, n: number): number[] | null {
  const order: number[] = [];
  let chains = 0;
  for (let m = 0; m < n; m++) {
    if (isChainKey(b, spans[3 * m]!, spans[3 * m + 1]!)) {
      chains++;
      continue;
    }
    // Insertion sort: a row has a dozen or two members, mostly in the same order.
    let k = order.length;
    order.push(m);
    for (; k > 0; k--) {
      const d = compareKeys(b, spans, order[k - 1]!, m);
      if (d === 0) return null;
      if (d < 0) break;
      order[k] = order[k - 1]!;
    }
    order[k] = m;
  }
  // Two chain members: the long way decides which one the row carries.
  return chains > 1 ? null : order;
}

/** The bytes of `"chain"` with its quotes. */
const CHAIN_KEY = [0x22, 0x63, 0x68, 0x61, 0x69, 0x6e, 0x22];

function isChainKey(b: Uint8Array, start: number, end: number): boolean {
  if (end - start !== CHAIN_KEY.length) return false;
  for (let k = 0; k < CHAIN_KEY.length; k++) if (b[start + k] !== CHAIN_KEY[k]) return false;
  return true;
}

/**
 * Keys hold no escape (key() refuses them), so comparing their UTF-8 bytes
 * is comparing their code points, which is how sort_keys orders them. The
 * quotes are left out: a key that goes on where another ends sorts after it
 * whatever comes next, even a byte below the quote's.
 */
function compareKeys(b: Uint8Array, spans: Int32Array, x: number, y: number): number {
  return compareSpans(b, spans[3 * x]! + 1, spans[3 * x + 1]! - 1, spans[3 * y]! + 1, spans[3 * y + 1]! - 1);
}

function compareSpans(b: Uint8Array, s1: number, e1: number, s2: number, e2: number): number {
  const len = Math.min(e1 - s1, e2 - s2);
  for (let k = 0; k < len; k++) {
    const d = b[s1 + k]! - b[s2 + k]!;
    if (d !== 0) return d;
  }
  return e1 - s1 - (e2 - s2);
}

/** `"key": ` at i with no escape in the key: the end of the key's closing quote, else NO. */
function key(b: Uint8Array, i: number): number {
  if (b[i] !== QUOTE) return NO;
  const first = b[i + 1]!;
  if (first >= 0x30 && first <= 0x39) plain = false;
  for (let j = i + 1; j < b.length; j++) {
    const c = b[j]!;
    if (PLAIN_TEXT[c] === 1) continue;
    if (c === QUOTE) return b[j + 1] === COLON && b[j + 2] === SPACE ? j + 1 : NO;
    if (c === BACKSLASH || c < 0x20) return NO;
    high = true;
  }
  return NO;
}

/** The end of the value at i when it is written in chain form, else NO. */
function value(b: Uint8Array, i: number, depth: number): number {
  const c = b[i];
  if (c === QUOTE) return string(b, i);
  if (c === OPEN_BRACE) return depth >= MAX_DEPTH ? NO : object(b, i, depth + 1);
  if (c === OPEN_BRACKET) return depth >= MAX_DEPTH ? NO : array(b, i, depth + 1);
  if (c === 0x74) return literal(b, i, TRUE);
  if (c === 0x66) return literal(b, i, FALSE);
  if (c === 0x6e) return literal(b, i, NULL);
  if (c === 0x2d || (c !== undefined && c >= 0x30 && c <= 0x39)) return number(b, i);
  // NaN, Infinity, white space: the long way.
  return NO;
}

const TRUE = [0x74, 0x72, 0x75, 0x65];
const FALSE = [0x66, 0x61, 0x6c, 0x73, 0x65];
const NULL = [0x6e, 0x75, 0x6c, 0x6c];

function literal(b: Uint8Array, i: number, word: number[]): number {
  for (let k = 0; k < word.length; k++) if (b[i + k] !== word[k]) return NO;
  return i + word.length;
}

/**
 * A string whose escapes are exactly those json.dumps writes with
 * ensure_ascii=False: `\"` `\\` `\b` `\f` `\n` `\r` `\t`, and `\u00xx` in
 * lowercase hex for the other controls. Any other escape stands for text
 * that the form writes raw.
 */
function string(b: Uint8Array, i: number): number {
  for (let j = i + 1; j < b.length; j++) {
    const c = b[j]!;
    if (PLAIN_TEXT[c] === 1) continue;
    if (c === QUOTE) return j + 1;
    if (c < 0x20) return NO;
    if (c >= 0x80) {
      high = true;
      continue;
    }
    const e = b[j + 1];
    if (e === QUOTE || e === BACKSLASH || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) {
      j++;
      continue;
    }
    if (e !== 0x75 || lowControl(b, j + 2) === NO) return NO;
    j += 5;
  }
  return NO;
}

/** The code of a `\u00xx` escape's hex digits at `at` when json.dumps writes it so (a control with no short form), else NO. */
function lowControl(b: Uint8Array, at: number): number {
  if (b[at] !== 0x30 || b[at + 1] !== 0x30) return NO;
  const hi = b[at + 2]!;
  const lo = b[at + 3]!;
  if (hi !== 0x30 && hi !== 0x31) return NO;
  let low: number;
  if (lo >= 0x30 && lo <= 0x39) low = lo - 0x30;
  else if (lo >= 0x61 && lo <= 0x66) low = lo - 0x57;
  else return NO;
  const code = (hi - 0x30) * 16 + low;
  return code === 8 || code === 9 || code === 10 || code === 12 || code === 13 ? NO : code;
}

function object(b: Uint8Array, i: number, depth: number): number {
  if (b[i + 1] === CLOSE_BRACE) return i + 2;
  let j = i + 1;
  let prev = NO;
  let prevEnd = NO;
  for (;;) {
    const keyEnd = key(b, j);
    if (keyEnd === NO) return NO;
    // Nested keys are not sorted here, so they must already stand in order (and so not repeat).
    if (prev !== NO && compareSpans(b, prev + 1, prevEnd - 1, j + 1, keyEnd - 1) >= 0) return NO;
    prev = j;
    prevEnd = keyEnd;
    const end = value(b, keyEnd + 2, depth);
    if (end === NO) return NO;
    if (b[end] === CLOSE_BRACE) return end + 1;
    if (b[end] !== COMMA || b[end + 1] !== SPACE) return NO;
    j = end + 2;
  }
}

function array(b: Uint8Array, i: number, depth: number): number {
  if (b[i + 1] === CLOSE_BRACKET) return i + 2;
  let j = i + 1;
  for (;;) {
    const end = value(b, j, depth);
    if (end === NO) return NO;
    if (b[end] === CLOSE_BRACKET) return end + 1;
    if (b[end] !== COMMA || b[end + 1] !== SPACE) return NO;
    j = end + 2;
  }
}

/**
 * An int as JSON writes it (no leading zero, at most MAX_INT_DIGITS digits,
 * which is all Python reads) and not `-0`, which Python reads as the int 0.
 * A float must already be Python's repr of the double it reads as (Number()
 * and float() both round correctly, so that is the double chainForm writes;
 * and a repr is a valid JSON number).
 */
function number(b: Uint8Array, i: number): number {
  let j = b[i] === 0x2d ? i + 1 : i;
  const digits = j;
  while (j < b.length && b[j]! >= 0x30 && b[j]! <= 0x39) j++;
  if (j === digits) return NO;
  const c = b[j];
  if (c !== 0x2e && c !== 0x65 && c !== 0x45) {
    if (b[digits] === 0x30 && (j - digits > 1 || digits > i)) return NO;
    if (j - digits > 15) plain = false;
    return j - digits > MAX_INT_DIGITS ? NO : j;
  }
  for (; j < b.length; j++) {
    const d = b[j]!;
    if (!((d >= 0x30 && d <= 0x39) || d === 0x2e || d === 0x65 || d === 0x45 || d === 0x2b || d === 0x2d)) break;
  }
  const repr = plainRepr(b, i, j);
  if (repr !== UNSURE) {
    if (repr === WHOLE) plain = false;
    return j;
  }
  let text = "";
  for (let k = i; k < j; k++) text += String.fromCharCode(b[k]!);
  const x = Number(text);
  if (Number.isInteger(x)) plain = false;
  return Number.isFinite(x) && pyFloatRepr(x) === text ? j : NO;
}

/** What plainRepr sees in a float's text: no verdict, or surely its repr, of a fraction or of a whole number (`.0`). */
const UNSURE = 0;
const FRACTION = 1;
const WHOLE = 2;

/**
 * Whether [i, j) is surely Python's repr of the float it reads as, seen
 * from its digits alone: `-?(0|[1-9]\d*)\.\d+` with at most 15 significant
 * digits, no trailing zero but in `.0`, and a decimal exponent from -4 to
 * 15 (repr writes those without one). A decimal of 15 digits or fewer comes
 * back from its double unchanged (DBL_DIG), so no shorter one reads as the
 * same double, and these are the digits repr writes; and with so few
 * digits it is a whole number exactly when its fraction is `0`. Anything
 * else is left to pyFloatRepr (UNSURE).
 */
function plainRepr(b: Uint8Array, i: number, j: number): number {
  let k = b[i] === 0x2d ? i + 1 : i;
  const int = k;
  while (b[k]! >= 0x30 && b[k]! <= 0x39) k++;
  const intDigits = k - int;
  if (intDigits === 0 || b[k] !== 0x2e || (intDigits > 1 && b[int] === 0x30)) return UNSURE;
  const frac = k + 1;
  const fracDigits = j - frac;
  if (fracDigits === 0) return UNSURE;
  for (let m = frac; m < j; m++) if (b[m]! < 0x30 || b[m]! > 0x39) return UNSURE;
  if (b[j - 1] === 0x30) return fracDigits === 1 && intDigits <= 15 ? WHOLE : UNSURE;
  if (b[int] !== 0x30) return intDigits + fracDigits <= 15 ? FRACTION : UNSURE;
  // 0.xxx: the zeros after the point are no digits of it, and more than 3 of them make repr write an exponent.
  let zeros = 0;
  while (b[frac + zeros] === 0x30) zeros++;
  return zeros <= 3 && fracDigits - zeros <= 15 ? FRACTION : UNSURE;
}
