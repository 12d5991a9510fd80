/**
 * The readings of a frame by the JSON stacks MCP servers run on, which
 * disagree at the edges:
 *   json-parse        JavaScript JSON.parse after Node's UTF-8 decoding (the
 *                     TypeScript SDK): invalid UTF-8 becomes U+FFFD, a byte order
 *                     mark is kept (and refused by JSON.parse), no depth limit,
 *                     numbers are doubles, the last duplicate key wins, NaN is refused;
 *   python-json       Python's json.loads on strictly decoded UTF-8 (the Python SDK,
 *                     FastMCP): invalid UTF-8 and integers of more than 4300
 *                     digits are refused, NaN and Infinity accepted, ints exact,
 *                     the last duplicate wins. Its recursion limit refuses deep
 *                     nesting somewhere under 1000 levels, depending on how deep
 *                     in its own stack the server parses; seam takes anything
 *                     deeper than 900 levels as refused there;
 *   go-encoding-json  Go's encoding/json into structs (the Go SDK, mcp-go): field
 *                     names match case-insensitively (ASCII, plus U+017F "ſ" for
 *                     s and U+212A "K" for k), the last matching key wins, a lone
 *                     surrogate escape becomes U+FFFD, NaN is refused, nesting
 *                     deeper than 10000 is refused;
 *   first-key-wins    readers that keep the first of duplicate keys (SQLite's
 *                     json_extract, some streaming parsers): only listed when a
 *                     frame repeats a key.
 * A frame is `ambiguous` when the readings of its method, id, tool name or
 * arguments differ, or one stack refuses what another accepts. The readings
 * are made from one lenient parse (src/core/json-lenient.ts), which keeps
 * each object's members in source order.
 */
import { digestBytes, digestJson } from "../core/digest.ts";
import { type Json, JsonFloat, type JsonObject } from "../core/json.ts";
import type { Entry, LenientParse } from "../core/json-lenient.ts";

export type Stack = "json-parse" | "python-json" | "go-encoding-json" | "first-key-wins";

/** One way of reading a message: what the named stacks see, or that they refuse it. */
export interface Reading {
  stacks: Stack[];
  /** Why these stacks refuse the frame (then nothing else is set). */
  refused?: string;
  method?: string;
  /** The id as these stacks hold it (null: no usable JSON-RPC id). */
  id?: Json;
  tool?: string;
  args_digest?: string;
}

/** Python's recursion gives out somewhere under 1000 levels; deeper than this is taken as refused there. */
export const PYTHON_SAFE_DEPTH = 900;
/** encoding/json's nesting limit. */
export const GO_MAX_DEPTH = 10000;

const encoder = new TextEncoder();

/**
 * A key as Go's field matching folds it, for JSON-RPC's ASCII names: ASCII
 * letters to lower case, U+017F (ſ) to s, U+212A (Kelvin sign) to k; null for
 * anything else (no JSON-RPC name can match it).
 */
export function goFold(k: string): string | null {
  let out = "";
  for (let i = 0; i < k.length; i++) {
    const c = k.charCodeAt(i);
    if (c < 128) out += String.fromCharCode(c >= 65 && c <= 90 ? c + 32 : c);
    else if (c === 0x17f) out += "s";
    else if (c === 0x212a) out += "k";
    else return null;
  }
  return out;
}

interface Model {
  stack: Stack;
  /** The member `name` of object `o` as this stack picks it. */
  pick(o: JsonObject, name: string, entries: Entry[] | undefined): Entry | undefined;
  /** The id as this stack holds it (null when it is no usable JSON-RPC id). */
  id(v: Json | undefined): Json;
  /** A string as this stack holds it. */
  str(s: string): string;
}

const last = (o: JsonObject, name: string, entries: Entry[] | undefined): Entry | undefined => {
  if (entries === undefined) {
    const value = o.get(name);
    return value === undefined ? undefined : { key: name, value, start: -1, end: -1 };
  }
  for (let i = entries.length - 1; i >= 0; i--) if (entries[i]!.key === name) return entries[i];
  return undefined;
};

const first = (o: JsonObject, name: string, entries: Entry[] | undefined): Entry | undefined => {
  if (entries === undefined) return last(o, name, entries);
  return entries.find((e) => e.key === name);
};

const goPick = (o: JsonObject, name: string, entries: Entry[] | undefined): Entry | undefined => {
  if (entries === undefined) return last(o, name, entries);
  for (let i = entries.length - 1; i >= 0; i--) {
    const k = entries[i]!.key;
    if (k === name || goFold(k) === name) return entries[i];
  }
  return undefined;
};

/** A JSON-RPC id read as a double (JavaScript, Go): 1.0 is 1, a long integer rounds. */
function doubleId(v: Json | undefined): Json {
  if (typeof v === "string") return v;
  let x: number | undefined;
  if (typeof v === "number") x = v;
  else if (typeof v === "bigint") x = Number(v);
  else if (v instanceof JsonFloat) x = v.value;
  if (x === undefined || !Number.isInteger(x)) return null;
  return Number.isSafeInteger(x) ? x + 0 : BigInt(x);
}

/** A JSON-RPC id read exactly (Python: an int is exact; 1.0 is a float, which is no id). */
function exactId(v: Json | undefined): Json {
  if (typeof v === "string" || typeof v === "bigint") return v;
  if (typeof v === "number" && Number.isInteger(v)) return v;
  return null;
}

const asIs = (s: string) => s;
const loneToReplacement = (s: string) => (s as unknown as { toWellFormed(): string }).toWellFormed();

const MODELS: Model[] = [
  { stack: "json-parse", pick: last, id: doubleId, str: asIs },
  { stack: "python-json", pick: last, id: exactId, str: asIs },
  { stack: "go-encoding-json", pick: goPick, id: doubleId, str: loneToReplacement },
  { stack: "first-key-wins", pick: first, id: exactId, str: asIs },
];

/** Why `stack` refuses the whole frame, or undefined. */
function refusal(stack: Stack, p: LenientParse, invalidUtf8: boolean): string | undefined {
  switch (stack) {
    case "json-parse":
      return p.nanLiteral ? "NaN or Infinity is not JSON" : undefined;
    case "python-json":
      if (invalidUtf8) return "invalid UTF-8";
      if (p.longInt) return "an integer literal longer than 4300 digits";
      if (p.depth > PYTHON_SAFE_DEPTH) return `nesting deeper than ${PYTHON_SAFE_DEPTH} levels`;
      return undefined;
    case "go-encoding-json":
      if (p.nanLiteral) return "NaN or Infinity is not JSON";
      if (p.depth > GO_MAX_DEPTH) return `nesting deeper than ${GO_MAX_DEPTH} levels`;
      return undefined;
    default:
      return undefined;
  }
}

/**
 * Every distinct reading of the frame's message(s), grouped by stack; the
 * json-parse reading (or, when JSON.parse refuses the frame, the next
 * stack's) first. A batch is read element by element, joined.
 */
export function readingsOf(p: LenientParse, text: string, invalidUtf8: boolean): Reading[] {
  const dup = hasDuplicates(p);
  const groups = new Map<string, Reading>();
  for (const m of MODELS) {
    if (m.stack === "first-key-wins" && !dup) continue;
    const refused = refusal(m.stack, p, invalidUtf8);
    const r: Reading = refused !== undefined ? { stacks: [m.stack], refused } : readWith(m, p, text);
    const key = JSON.stringify(r, (_k, v) => (typeof v === "bigint" ? `${v}n` : v === undefined ? null : v)).replace(
      /"stacks":\[[^\]]*\],?/,
      "",
    );
    const g = groups.get(key);
    if (g) g.stacks.push(m.stack);
    else groups.set(key, r);
  }
  const out = [...groups.values()];
  // The reading seam pairs by comes first: the first that is not a refusal.
  const at = out.findIndex((r) => r.refused === undefined);
  if (at > 0) out.unshift(...out.splice(at, 1));
  return out;
}

function hasDuplicates(p: LenientParse): boolean {
  for (const [obj, ents] of p.entries) if (ents.length !== obj.size) return true;
  return false;
}

function readWith(m: Model, p: LenientParse, text: string): Reading {
  const one = (msg: Json): Omit<Reading, "stacks"> => {
    if (!(msg instanceof Map)) return {};
    const ents = p.entries.get(msg);
    const method = m.pick(msg, "method", ents)?.value;
    const r: Omit<Reading, "stacks"> = { method: typeof method === "string" ? m.str(method) : undefined };
    const idv = m.pick(msg, "id", ents)?.value;
    if (idv !== undefined) {
      const id = m.id(idv);
      r.id = typeof id === "string" ? m.str(id) : id;
    }
    const params = m.pick(msg, "params", ents)?.value;
    if (params instanceof Map) {
      const pents = p.entries.get(params);
      const name = m.pick(params, "name", pents)?.value;
      if (typeof name === "string") r.tool = m.str(name);
      const args = m.pick(params, "arguments", pents);
      if (r.method === "tools/call" || args !== undefined) r.args_digest = argsDigestOf(args, text);
    }
    return r;
  };
  const v = p.value;
  if (!Array.isArray(v)) return { stacks: [m.stack], ...one(v) };
  // A batch: its elements' readings side by side (rare; kept simple).
  const parts = v.map(one);
  return {
    stacks: [m.stack],
    method: parts.map((x) => x.method ?? "").join(","),
    tool: parts.some((x) => x.tool !== undefined) ? parts.map((x) => x.tool ?? "").join(",") : undefined,
    args_digest: parts.some((x) => x.args_digest !== undefined)
      ? digestJson(parts.map((x) => x.args_digest ?? null))
      : undefined,
  };
}

/**
 * The digest of a call's arguments for input the strict parser refuses:
 * json-c14n of the value as read (invalid UTF-8 as U+FFFD) when it has a
 * canonical form; otherwise (nesting beyond 1000 levels, an integer over 4300
 * digits, NaN, a lone surrogate) sha256:raw-bytes:v1 of the UTF-8 encoding of
 * the arguments' own text in the frame, from its first to its last character,
 * after that same decoding. No arguments digest as `{}`.
 */
export function argsDigestOf(args: Entry | undefined, text: string): string {
  if (args === undefined) return digestJson(new Map());
  const d = digestJson(args.value);
  if (!d.startsWith("undigestible:") || args.start < 0) return d;
  return digestBytes(encoder.encode(text.slice(args.start, args.end)));
}

/** argsDigestOf for a params object from a lenient parse (its entries were kept), or undefined when not found. */
export function lenientArgsDigest(
  params: Json | undefined,
  l: { parse: LenientParse; text: string },
): string | undefined {
  if (!(params instanceof Map)) return undefined;
  const ents = l.parse.entries.get(params);
  if (ents === undefined) return undefined;
  return argsDigestOf(last(params, "arguments", ents), l.text);
}
