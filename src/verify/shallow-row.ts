/**
 * A long line that is not in chain form, read for `seam verify` without
 * parsing it whole. Its parsed row would cost many times its bytes for some
 * shapes (a million small objects or keys: a Map and its entries each),
 * where the verifier holds to about three times the longest line. The chain
 * is computed from the bytes in one pass (chainFromJsonLine), which also
 * refuses what classifyLine would find unparseable and reports repeated keys
 * as classifyLine does; the row the session checks read keeps the members
 * they read: the small ones (SHALLOW_VALUE_MAX), of the first
 * SHALLOW_MEMBERS_MAX, and the envelope's wherever they are; and the chain it
 * claims, whatever its size. What it leaves out is said in a note.
 */
import { type Json, type JsonObject, parseJson } from "../core/json.ts";
import { JsonParseError } from "../core/json-error.ts";
import { eachMember, skipWs, stringEnd } from "../core/json-spans.ts";
import { chainFromJsonLine, REFERENCE_MAX_DEPTH } from "../format/line.ts";
import { ENVELOPE_KEYS } from "../format/row.ts";

/** Lines longer than this, and not in chain form, are read here rather than parsed whole. */
export const SHALLOW_FROM = 1 << 20;
/** A member whose value is longer than this is left out of the row. */
export const SHALLOW_VALUE_MAX = 1 << 16;
/** Members after this many are left out, but for the envelope's. */
export const SHALLOW_MEMBERS_MAX = 1024;

export type ShallowLine =
  | { kind: "unparseable" }
  | {
      kind: "row";
      /** The row (null for a value that is no object: only its kind matters then). */
      row: Json;
      /** chainOf(prev, the row without "chain"), for an object. */
      chain: string | null;
      /** The first repeated key a reader in document order meets. */
      dupKey: string | undefined;
      /** How many members were left out, and the first few of their keys. */
      left: number;
      leftKeys: string[];
    };

const utf8 = new TextDecoder("utf-8", { ignoreBOM: true });
/** The envelope's keys as they are written unescaped, quotes included. */
const ENVELOPE_QUOTED = [...ENVELOPE_KEYS, "chain"].map((k) => new TextEncoder().encode(`"${k}"`));

/**
 * Whether the key at [a, b) may be one of the envelope's: it is written as
 * one, or has an escape (then decoded to tell). Past SHALLOW_MEMBERS_MAX,
 * keys are looked at this way, with no string made of each.
 */
function mayBeEnvelope(line: Uint8Array, a: number, b: number): boolean {
  for (let k = a; k < b; k++) if (line[k] === 0x5c) return true;
  for (const q of ENVELOPE_QUOTED) {
    if (q.length !== b - a) continue;
    let k = 0;
    while (k < q.length && line[a + k] === q[k]) k++;
    if (k === q.length) return true;
  }
  return false;
}

/** The JSON text at [a, b) of `line`, parsed (it is known to be JSON). */
function parseSpan(line: Uint8Array, a: number, b: number): Json {
  return parseJson(utf8.decode(line.subarray(a, b)), { maxDepth: REFERENCE_MAX_DEPTH });
}

export function readShallow(line: Uint8Array, prev: string): ShallowLine {
  let dupAt = -1;
  let dupEnd = -1;
  const onRepeat = (at: number, end: number) => {
    if (dupAt < 0 || end < dupEnd) [dupAt, dupEnd] = [at, end];
  };
  const start = skipWs(line, 0);
  const object = line[start] === 0x7b;
  let chain: string | null = null;
  try {
    chain = chainFromJsonLine(prev, line, onRepeat);
  } catch (e) {
    if (!(e instanceof JsonParseError)) throw e;
    return { kind: "unparseable" };
  }
  const dupKey = dupAt < 0 ? undefined : (parseSpan(line, dupAt, stringEnd(line, dupAt)) as string);
  if (!object) return { kind: "row", row: null, chain: null, dupKey, left: 0, leftKeys: [] };

  // The line is JSON: the spans below are a parser's.
  const row: JsonObject = new Map();
  const leftKeys: string[] = [];
  let left = 0;
  let members = 0;
  eachMember(line, start, (keyStart, keyEnd, valueStart, end) => {
    members++;
    // Of a key repeated past the first members, the row keeps the value seen last among them: the
    // repeat is a duplicate_key break all the same.
    const key =
      members <= SHALLOW_MEMBERS_MAX || mayBeEnvelope(line, keyStart, keyEnd)
        ? (parseSpan(line, keyStart, keyEnd) as string)
        : null;
    // The chain it claims is always read: what the chain check compares.
    if (
      key !== null &&
      (key === "chain" ||
        (end - valueStart <= SHALLOW_VALUE_MAX && (members <= SHALLOW_MEMBERS_MAX || ENVELOPE_KEYS.has(key))))
    )
      row.set(key, parseSpan(line, valueStart, end));
    else {
      // Of a repeated key the last value counts: one kept before no longer stands.
      if (key !== null) row.delete(key);
      left++;
      if (leftKeys.length < 3) leftKeys.push(key ?? (parseSpan(line, keyStart, keyEnd) as string));
    }
  });
  return { kind: "row", row, chain, dupKey, left, leftKeys };
}
