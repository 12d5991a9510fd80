/**
 * The line rules of the ledger format (docs/ledger-format.md, "Lines"):
 * what a physical line is to every reader, the writer looking for the chain
 * to continue and `seam verify` alike, and what chain a row passes on.
 */
import { lineForm } from "../core/canonical.ts";
import { chainOf } from "../core/chain.ts";
import { chainFromLine } from "../core/form-line.ts";
import { type Json, type JsonObject, JsonFloat, getField, isObject, parseJson } from "../core/json.ts";

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
 * levels deep and raises RecursionError at 994 (measured). Rows up to this
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

/** The `prev` a claim hands the next row; null: none, the one before stays. */
export function passedOn(claim: ChainClaim): string | null {
  return claim.kind === "chained" ? claim.chain : null;
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

/** A chain's place in a line before it is known: as long as a chain, and in chain form. */
const PLACEHOLDER = "0".repeat(32);
const encoder = new TextEncoder();

/**
 * Sets a row's chain after `prev` (as its last key) and returns it with the
 * row's line, lineForm(row) + "\n", as bytes; throws if the row cannot be
 * serialized. The line is written once, with a placeholder chain: its chain
 * form is read off it (chainFromLine leaves the chain member out), and the
 * chain is then written over the placeholder. A row whose line is not in
 * chain form (nested keys out of order, a lone surrogate) has its chain form
 * written from the row.
 */
export function chainedLine(prev: string, row: JsonObject): { chain: string; bytes: Uint8Array } {
  row.delete("chain");
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
