/**
 * The line rules of the ledger format (docs/ledger-format.md, "Lines"):
 * what a physical line is to every reader, the writer looking for the chain
 * to continue and `seam verify` alike, and what chain a row passes on.
 *
 * The chain, by what each function takes:
 *   chainOf (src/core/chain.ts)  a row's value: the rule itself, the reference;
 *   chainFromLine                a line's bytes, when they are in chain form (else null: take chainOf);
 *   chainFromJsonLine            a line's bytes, any JSON object: in one pass, with no row made;
 *   expectedChain                a parsed row and, if at hand, its line (the verifier): either of the two above;
 *   chainedRow, chainedLine      an envelope and fields, or a built row (the writer): the line to append and its chain;
 *   chainClaim                   a parsed row: the chain it claims, if any;
 *   chainFromTail                the last bytes of a line too long to parse: the chain it claims.
 */
import { createHash } from "node:crypto";
import {
  canonicalBytes,
  chainFromLine,
  chainOfMembers,
  feedUtf8,
  lineForm,
  MAX_WRITE_DEPTH,
  putAscii,
  putJsonString,
} from "../core/canonical/index.ts";
import { chainOf } from "../core/chain.ts";
import { getField, isObject, type Json, JsonFloat, type JsonObject, parseJson } from "../core/json.ts";
import { buildRow, ENVELOPE_KEYS, type Envelope, type FieldsIn, isPairs, SEAM } from "./row.ts";

/**
 * A longer line is not parsed nor held whole, by the writer and the verifier
 * alike: its chain is read from its end (chainFromTail), and without one
 * there it counts as unparseable. 64 MiB: a parsed line costs a few times its
 * size, and a JS string holds it with room to spare.
 */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;

/** Bytes of the end of a line too long to parse that chainFromTail needs: enough for its `"chain": "<value>"}`. */
export const CHAIN_TAIL_BYTES = 256;

/**
 * The chain a line claims, read from its last bytes without parsing it: the
 * value of a final `"chain": "<value>"}` (seam writes `chain` last). Null
 * when the line does not end that way.
 */
export function chainFromTail(tail: Uint8Array): string | null {
  let text = "";
  for (let i = Math.max(0, tail.length - CHAIN_TAIL_BYTES); i < tail.length; i++) text += String.fromCharCode(tail[i]!);
  const m = /"chain": ?"([0-9A-Za-z:_+/=.-]{1,128})"\}[ \t\r]*$/.exec(text);
  return m ? m[1]! : null;
}

/** Nothing but ASCII whitespace (space, \t, \n, \v, \f, \r), as Python's bytes.strip() sees it. */
export function isBlank(b: Uint8Array): boolean {
  for (let i = 0; i < b.length; i++) {
    const c = b[i]!;
    if (c !== 0x20 && (c < 0x09 || c > 0x0d)) return false;
  }
  return true;
}

/**
 * The deepest nesting the format's reference verifier reads: CPython 3.11's
 * json.loads, called from the reference script, parses a row nested 993
 * levels deep and raises RecursionError at 994. Rows up to this
 * deep read as they do there; deeper ones are unparseable there too.
 */
export const REFERENCE_MAX_DEPTH = 993;

/** What a physical line (its bytes without the "\n") is. */
export type LineClass = { kind: "blank" } | { kind: "unparseable" } | { kind: "row"; row: Json };

const BLANK: LineClass = { kind: "blank" };
const UNPARSEABLE: LineClass = { kind: "unparseable" };
// ignoreBOM: a line that starts with a BOM is unparseable (as to Python's json.loads on the decoded line).
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const REFERENCE_DEPTH = { maxDepth: REFERENCE_MAX_DEPTH };

/**
 * Blank, unparseable (not strict UTF-8, not JSON by parseJson's rules, nested
 * deeper than REFERENCE_MAX_DEPTH), or a row: any JSON value, an object or
 * not; `onDuplicate` is told of each repeated key (the last value is kept).
 * A line over MAX_LINE_BYTES (or the verifier's own limit) never comes here:
 * callers see its length before they have its bytes, and read its chain
 * with chainFromTail.
 */
export function classifyLine(bytes: Uint8Array, onDuplicate?: (key: string) => void): LineClass {
  if (isBlank(bytes)) return BLANK;
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return UNPARSEABLE;
  }
  try {
    return {
      kind: "row",
      row: parseJson(text, onDuplicate ? { maxDepth: REFERENCE_MAX_DEPTH, onDuplicate } : REFERENCE_DEPTH),
    };
  } catch {
    // A JSON syntax error, a >4300-digit int, nesting too deep (the
    // parser's limit, or the stack's): all unparseable, as for the reference.
    return UNPARSEABLE;
  }
}

/** Python's bool(v) for a parsed JSON value (NaN is truthy, -0.0 is not). */
export function pyTruthy(v: Json | undefined): boolean {
  if (v === undefined || v === null || v === false) return false;
  if (v === true) return true;
  if (typeof v === "string") return v.length > 0;
  if (typeof v === "number") return v !== 0;
  if (typeof v === "bigint") return v !== 0n;
  if (v instanceof JsonFloat) return v.value !== 0;
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof Map) return v.size > 0;
  return Object.keys(v).length > 0;
}

/** What a row says about the chain. */
export type ChainClaim =
  /** Not a JSON object: no claim; the chain carries on from the row before. */
  | { kind: "not_object" }
  /** A falsy chain (missing, null, "", false, 0, [], {}): no claim; the chain carries on from the row before (as for the reference). */
  | { kind: "unchained" }
  /** A truthy chain that is no string: no claim; the chain carries on from the row before. */
  | { kind: "non_string_chain" }
  | { kind: "chained"; chain: string };

export function chainClaim(row: Json): ChainClaim {
  if (!isObject(row)) return { kind: "not_object" };
  const chain = getField(row, "chain");
  if (!pyTruthy(chain)) return { kind: "unchained" };
  if (typeof chain !== "string") return { kind: "non_string_chain" };
  return { kind: "chained", chain };
}

/**
 * The chain a row must carry after `prev`: chainOf(prev, row without its
 * "chain"), taken from the row's line itself when it is written in chain
 * form (chainFromLine), else written from the parsed row. A parsed Map is
 * ours to change.
 */
export function expectedChain(
  prev: string,
  row: JsonObject | { readonly [k: string]: Json },
  line?: Uint8Array,
): string {
  const quick = line === undefined ? null : chainFromLine(prev, line);
  // Either way a parsed Map is left without its chain: readers of a verified row get it so.
  if (row instanceof Map) {
    row.delete("chain");
    return quick ?? chainOf(prev, row);
  }
  if (quick !== null) return quick;
  const { chain: _, ...rest } = row as { [k: string]: Json };
  return chainOf(prev, rest);
}

/**
 * chainOf(prev, the line's row without its "chain") for a line holding a JSON
 * object, in any form: its chain form written from its bytes in one pass and
 * hashed as it is written, with no row made, so what it costs is about the
 * line whatever its shape (the parsed row of a line of many small values
 * costs many times its bytes). Throws JsonParseError where classifyLine finds
 * the line unparseable; `onRepeat` is told of each repeated key's later
 * occurrence (canonicalBytes, ByteFormOptions.onRepeat).
 */
export function chainFromJsonLine(
  prev: string,
  line: Uint8Array,
  onRepeat?: (at: number, valueEnd: number) => void,
): string {
  const hash = createHash("sha256");
  feedUtf8(hash, prev);
  canonicalBytes(line, "chain", (chunk) => hash.update(chunk), {
    maxDepth: REFERENCE_MAX_DEPTH,
    dropTopKey: "chain",
    onRepeat,
  });
  return hash.digest("hex").slice(0, 32);
}

/** A chain's place in a line before it is known: as long as a chain, and in chain form. */
const PLACEHOLDER = "0".repeat(32);
const encoder = new TextEncoder();

/**
 * Sets a row's chain after `prev` (as its last key) and returns it with the
 * row's line, lineForm(row) + "\n", as bytes; throws if the row cannot be
 * serialized. A row of ASCII text whose members read the same in the line
 * and in the chain form is written once, member by member, as bytes
 * (asciiLine): the chain form is the same bytes in key order. Any other row
 * (non-ASCII text, nested keys out of order) is written as a line with a
 * placeholder chain, its chain form read off it (chainFromLine) or else
 * written from the row, and the chain written over the placeholder.
 * `shared`: the bytes may be a view of a buffer the next call writes over
 * (for a caller that copies them at once: src/ledger/line-batch.ts).
 */
export function chainedLine(prev: string, row: JsonObject, shared = false): { chain: string; bytes: Uint8Array } {
  row.delete("chain");
  const quick = asciiLine(prev, row, shared);
  if (quick !== null) return quick;
  row.set("chain", PLACEHOLDER);
  const bytes = encoder.encode(`${lineForm(row)}\n`);
  let chain = chainFromLine(prev, bytes.subarray(0, bytes.length - 1));
  if (chain === null) {
    row.delete("chain");
    chain = chainOf(prev, row);
  }
  row.set("chain", chain);
  // The line ends `"chain": "<32 hex>"}` and "\n".
  const at = bytes.length - 3 - PLACEHOLDER.length;
  for (let k = 0; k < PLACEHOLDER.length; k++) bytes[at + k] = chain.charCodeAt(k);
  return { chain, bytes };
}

/*
 * asciiLine writes into these, reused from row to row (JavaScriptCore builds
 * a line of a few dozen pieces as a rope, and flattening and encoding it cost
 * more than writing its bytes one by one: bench/micro.bench.ts, "chain
 * append"). A member's text is `"key": value`; spans[3m, 3m+1, 3m+2] is
 * where member m starts, where its key ends and where it ends in lineBuf (the
 * layout chainOfMembers reads).
 */
let lineBuf: Uint8Array = new Uint8Array(1 << 12);
let spans = new Int32Array(64);
/** How large the reused line buffer has grown (for the tests: it stays within LINE_BUF_MAX). */
export function lineBufferBytes(): number {
  return lineBuf.length;
}

/** The most lineBuf grows to: a longer row goes the general way (the buffers are kept from row to row). */
const LINE_BUF_MAX = 1 << 20;
/** A value whose text would be longer than this goes the general way (it is written once there). */
const NESTED_MAX = 1 << 16;
/** `"key": ` as bytes, for the keys rows use (a few dozen field names; null for a key past ASCII). */
const keyBytes = new Map<string, Uint8Array | null>();
const KEY_CACHE_MAX = 256;
/** `"chain": "`, the start of a line's last member. */
const CHAIN_MEMBER = new TextEncoder().encode('"chain": "');

/**
 * The row's line and chain, written as bytes in one pass, or null when the
 * row needs the general way: a key or string with a code unit past ASCII,
 * a nested value whose line and chain forms differ (keys out of order), or
 * one that cannot be written at all (which the general way then reports).
 * Scalars other than strings are written by lineForm (the line and chain
 * forms write them alike: same numbers, NaN and Infinity).
 */
function asciiLine(prev: string, row: JsonObject, shared: boolean): { chain: string; bytes: Uint8Array } | null {
  startLine();
  // By key, not by entry: iterating a Map's entries makes an array per member.
  for (const k of row.keys()) if (!putMember(k, row.get(k)!)) return null;
  const done = endLine(prev, shared);
  if (done !== null) row.set("chain", done.chain);
  return done;
}

/**
 * buildRow(env, fields)'s line and chain after `prev`, written from the
 * envelope and the fields as they are, with no row made (a row's Map and
 * its members cost a recorded call more than writing its line did); or
 * the general way, through the row, when asciiLine would take it (which
 * then throws as chainedLine does). The bytes are shared, as chainedLine's
 * with `shared`.
 */
export function chainedRow(prev: string, env: Envelope, fields: FieldsIn): { chain: string; bytes: Uint8Array } {
  const quick = isPairs(fields) ? null : envelopeLine(prev, env, fields);
  return quick ?? chainedLine(prev, buildRow(env, fields), true);
}

function envelopeLine(
  prev: string,
  env: Envelope,
  fields: { readonly [k: string]: Json | undefined },
): { chain: string; bytes: Uint8Array } | null {
  startLine();
  // The members in buildRow's order.
  if (!putMember("evt", env.evt) || !putMember("seam", env.seam ?? SEAM) || !putMember("seam_impl", env.impl))
    return null;
  if (!putMember("session", env.session) || (env.seq !== null && !putMember("seq", env.seq))) return null;
  if (!putMember("server", env.server)) return null;
  for (const k in fields) {
    const v = fields[k];
    if (v === undefined || ENVELOPE_KEYS.has(k)) continue;
    if (!putMember(k, v)) return null;
  }
  if (!putMember("ts", env.ts)) return null;
  return endLine(prev, true);
}

/** Where the line being written ends in lineBuf, and its members' keys so far (asciiLine, envelopeLine). */
let lineEnd = 0;
let lineKeys: string[] = [];

/** Starts a line in lineBuf (putMember grows the spans as members come). */
function startLine(): void {
  lineKeys = [];
  lineBuf[0] = 0x7b;
  lineEnd = 1;
}

/** `"key": value` after the line's members so far; false when the row needs the general way. */
function putMember(k: string, v: Json): boolean {
  const m = lineKeys.length;
  if (3 * m + 3 > spans.length) spans = grownSpans(spans, 3 * m);
  let o = lineEnd;
  const key = keyOf(k);
  // Room for ", " and the key (room keeps 64 bytes spare after what it is asked for).
  valueEnd = LINE_BUF_MAX;
  if (key === null || !room(o, key.length + 2)) return false;
  if (m > 0) {
    lineBuf[o++] = 0x2c;
    lineBuf[o++] = 0x20;
  }
  spans[3 * m] = o;
  lineBuf.set(key, o);
  o += key.length;
  spans[3 * m + 1] = o;
  // A string may fill the line; a large nested value (--raw payloads) is written once, the general way.
  if (typeof v === "string") o = putText(o, k, v);
  else {
    valueEnd = Math.min(o + NESTED_MAX, LINE_BUF_MAX);
    o = putValue(o, v, 1);
  }
  if (o < 0) return false;
  spans[3 * m + 2] = o;
  lineKeys.push(k);
  lineEnd = o;
  return true;
}

/** The line's chain after `prev`, and the line with it as its last member; null when prev is not ASCII. */
function endLine(prev: string, shared: boolean): { chain: string; bytes: Uint8Array } | null {
  let o = lineEnd;
  const keys = lineKeys;
  // The line so far (not the whole reused buffer), which the chain form is rearranged from.
  const chain = chainOfMembers(prev, lineBuf.subarray(0, o), spans, keyOrder(keys));
  if (chain === null) return null;
  // room left 64 bytes spare after the last value: enough for `, "chain": "<32>"}\n`.
  const b = lineBuf;
  if (keys.length > 0) {
    b[o++] = 0x2c;
    b[o++] = 0x20;
  }
  b.set(CHAIN_MEMBER, o);
  o += CHAIN_MEMBER.length;
  for (let k = 0; k < chain.length; k++) b[o++] = chain.charCodeAt(k);
  b[o++] = 0x22;
  b[o++] = 0x7d;
  b[o++] = 0x0a;
  return { chain, bytes: shared ? b.subarray(0, o) : b.slice(0, o) };
}

function grownSpans(s: Int32Array, used: number): Int32Array<ArrayBuffer> {
  const next = new Int32Array(2 * s.length + 6);
  next.set(s.subarray(0, used));
  return next;
}

/**
 * The last short string written under each key, and its text in the line
 * (quoted, escaped): most of a row's strings are the ones the row before it
 * had under the same key (the envelope's, the tool, the status, the time
 * within a burst), and copying their text is cheaper than writing it again.
 */
const lastText = new Map<string, { v: string; text: Uint8Array }>();
/** Strings up to this long are kept in lastText. */
const LAST_TEXT_MAX = 64;

/** A member's string value into lineBuf at o, as putValue writes it (the text the key had last time, when the same); the end, or -1. */
function putText(o: number, k: string, v: string): number {
  const last = lastText.get(k);
  if (last !== undefined && last.v === v) {
    const t = last.text;
    if (!room(o, t.length)) return -1;
    for (let i = 0; i < t.length; i++) lineBuf[o + i] = t[i]!;
    return o + t.length;
  }
  const end = putValue(o, v, 1);
  if (end >= 0 && v.length <= LAST_TEXT_MAX && (last !== undefined || lastText.size < KEY_CACHE_MAX)) {
    lastText.set(k, { v, text: lineBuf.slice(o, end) });
  }
  return end;
}

/** Where the value putValue is writing must end (with 64 bytes to spare), at most LINE_BUF_MAX. */
let valueEnd = 0;

/** Makes lineBuf hold n more bytes at o (and 64 to spare), within valueEnd; false when it cannot. */
function room(o: number, n: number): boolean {
  if (o + n + 64 > valueEnd) return false;
  if (o + n + 64 > lineBuf.length) lineBuf = grown(lineBuf, o + n + 64, o);
  return true;
}

/**
 * A value into lineBuf at o, as lineForm writes it when that is also how
 * chainForm writes it: nested objects with ASCII keys already in code point
 * order (a Map, or a plain object, its undefined members left out as the
 * forms leave them), ASCII text. The end, or -1 for anything else (then the
 * general way writes the row, or says why it cannot): a nested value in no
 * other order, past MAX_WRITE_DEPTH, or past valueEnd.
 */
function putValue(o: number, v: Json, depth: number): number {
  if (typeof v === "string") return room(o, 6 * v.length + 2) ? putJsonString(lineBuf, o, v) : -1;
  if (v === null || typeof v !== "object" || v instanceof JsonFloat) {
    let text: string;
    try {
      text = lineForm(v);
    } catch {
      return -1;
    }
    return room(o, text.length) ? putAscii(lineBuf, o, text) : -1;
  }
  if (depth >= MAX_WRITE_DEPTH || !room(o, 2)) return -1;
  if (Array.isArray(v)) {
    lineBuf[o++] = 0x5b;
    for (let i = 0; i < v.length; i++) {
      if (i > 0) {
        if (!room(o, 2)) return -1;
        lineBuf[o++] = 0x2c;
        lineBuf[o++] = 0x20;
      }
      o = putValue(o, v[i]!, depth + 1);
      if (o < 0) return -1;
    }
    lineBuf[o++] = 0x5d;
    return o;
  }
  lineBuf[o++] = 0x7b;
  let last: string | null = null;
  if (v instanceof Map) {
    for (const [k, x] of v) {
      o = putNestedMember(o, last, k, x, depth);
      if (o < 0) return -1;
      last = k;
    }
  } else {
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) return -1;
    const obj = v as { readonly [k: string]: Json };
    for (const k of Object.keys(obj)) {
      const x = obj[k];
      if (x === undefined) continue;
      o = putNestedMember(o, last, k, x, depth);
      if (o < 0) return -1;
      last = k;
    }
  }
  // The 64 bytes to spare hold the brace.
  lineBuf[o++] = 0x7d;
  return o;
}

/** `"key": value` of a nested object, after the member whose key is `last`; -1 when the keys are not in order. */
function putNestedMember(o: number, last: string | null, k: string, x: Json, depth: number): number {
  // ASCII keys (keyOf refuses others): `<` is code point order, the chain form's.
  if (last !== null && !(last < k)) return -1;
  const key = keyOf(k);
  if (key === null || !room(o, key.length + 2)) return -1;
  if (last !== null) {
    lineBuf[o++] = 0x2c;
    lineBuf[o++] = 0x20;
  }
  lineBuf.set(key, o);
  return putValue(o + key.length, x, depth + 1);
}

/**
 * The key lists of recent rows, and their orders: a recorder writes rows of a
 * few kinds (seam proxy a `tool_call` and an `http_exchange` a call, in turn),
 * each kind with the same keys from row to row. A new list takes the place
 * of the oldest.
 */
const recentKeys: string[][] = [];
const recentOrders: number[][] = [];
const RECENT_KEY_LISTS = 8;
let nextRecent = 0;

/** The members' indexes by key: a recent row's order again when the keys are the same, else sorted. */
function keyOrder(keys: string[]): number[] {
  for (let r = 0; r < recentKeys.length; r++) {
    const known = recentKeys[r]!;
    let same = keys.length === known.length;
    for (let m = 0; same && m < keys.length; m++) same = keys[m] === known[m];
    if (same) return recentOrders[r]!;
  }
  const order = sortedOrder(keys);
  recentKeys[nextRecent] = keys;
  recentOrders[nextRecent] = order;
  nextRecent = (nextRecent + 1) % RECENT_KEY_LISTS;
  return order;
}

/** Insertion sort (a row has a dozen or two members; ASCII keys, so `<` is code point order). */
function sortedOrder(keys: string[]): number[] {
  const order: number[] = [];
  for (let m = 0; m < keys.length; m++) {
    let k = order.length;
    order.push(m);
    for (; k > 0 && keys[order[k - 1]!]! > keys[m]!; k--) order[k] = order[k - 1]!;
    order[k] = m;
  }
  return order;
}

/** `"key": ` as bytes (cached), or null for a key with a code unit past ASCII. */
function keyOf(k: string): Uint8Array | null {
  const known = keyBytes.get(k);
  if (known !== undefined) return known;
  const b = new Uint8Array(6 * k.length + 4);
  let o = putJsonString(b, 0, k);
  const bytes = o < 0 ? null : b.slice(0, o + 2);
  if (bytes !== null) {
    bytes[o++] = 0x3a;
    bytes[o++] = 0x20;
  }
  if (keyBytes.size < KEY_CACHE_MAX && k.length <= 64) keyBytes.set(k, bytes);
  return bytes;
}

function grown(buf: Uint8Array, need: number, used: number): Uint8Array {
  const next = new Uint8Array(Math.max(need, 2 * buf.length));
  next.set(buf.subarray(0, used));
  return next;
}
