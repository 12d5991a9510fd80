/**
 * What a frame means to the server, whatever the server's JSON stack.
 *
 * seam must never read a frame differently from the server it forwards it to
 * (a call the recorder cannot read is a call that leaves no row). The stacks
 * MCP servers run on disagree at the edges, so a frame is read the way each
 * of them reads it:
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
 * arguments differ, or one stack refuses what another accepts. Reading is
 * done once, cheaply, on the strict parser's output; only a frame that the
 * strict parser refuses, or that repeats or case-varies a JSON-RPC key, is
 * read again leniently (src/core/json-lenient.ts).
 */
import { isUtf8 } from "node:buffer";
import { digestBytes, digestJson, digestJsonUtf8 } from "../core/digest.ts";
import { type Entry, type LenientParse, parseLenient } from "../core/json-lenient.ts";
import { objectMembers, skipWs } from "../core/json-spans.ts";
import { type Json, JsonFloat, type JsonObject, parseJson } from "../core/json.ts";
import { DEFAULT_MAX_DEPTH } from "../core/json-scanner.ts";
import { JsonParseError } from "../core/json-error.ts";

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

export type FrameRead =
  | { kind: "blank" }
  /** No stack can read it as a JSON-RPC message (not JSON at all, or not one of ours). */
  | { kind: "unparsed"; reason: string }
  | {
      kind: "parsed";
      msg: Json;
      /** Set when the strict parser refused the frame: the lenient reading, for digests. */
      lenient?: { parse: LenientParse; text: string };
      /** Set when the stacks disagree: every distinct reading, the first being the one seam pairs by. */
      readings?: Reading[];
    };

export interface ReadOptions {
  /** Compare the stacks' readings (client frames); off for server frames. */
  readings: boolean;
  /**
   * A long answer may be read without the payload of its result (server
   * frames, when no row records results whole): see skimAnswer.
   */
  skim?: boolean;
  /** Test-only defect (selftest): refuse what the strict parser refuses, as seam once did. */
  strictOnly?: boolean;
}

/** Python's recursion gives out somewhere under 1000 levels; deeper than this is taken as refused there. */
export const PYTHON_SAFE_DEPTH = 900;
/** encoding/json's nesting limit. */
export const GO_MAX_DEPTH = 10000;

const strictDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const replacingDecoder = new TextDecoder("utf-8", { ignoreBOM: true });
const encoder = new TextEncoder();

/** JSON-RPC's member names and the tools/call params a server reads. */
const MESSAGE_KEYS = ["jsonrpc", "method", "id", "params"] as const;
const PARAMS_KEYS = ["name", "arguments"] as const;

export function readFrame(frame: Uint8Array, o: ReadOptions): FrameRead {
  // A line that cannot start a JSON value is refused without paying for a
  // decode and a parse error (a flood of short log lines must not slow the
  // relay down).
  let i = 0;
  while (i < frame.length && (frame[i] === 0x20 || frame[i] === 0x09 || frame[i] === 0x0d)) i++;
  if (i === frame.length) return { kind: "blank" };
  if (!JSON_START[frame[i]!]) return { kind: "unparsed", reason: notJsonStart(frame, i) };
  if (o.skim && !o.readings && frame.length >= SKIM_AT) {
    const msg = skimAnswer(frame);
    if (msg !== undefined) return { kind: "parsed", msg };
  }
  let strictText: string | undefined;
  let strictFailed = false;
  shallowDup = false;
  nanLiteral = false;
  try {
    strictText = strictDecoder.decode(frame);
    const msg = parseJson(strictText, DUPLICATES);
    // NaN and Infinity literals are Python's alone: such a frame is read by each stack.
    if (!o.readings || (!shallowDup && !nanLiteral && !suspect(msg))) return { kind: "parsed", msg };
  } catch (err) {
    strictFailed = true;
    if (o.strictOnly) return { kind: "unparsed", reason: reasonOf(err) };
  }
  const text = strictText ?? replacingDecoder.decode(frame);
  let parse: LenientParse;
  try {
    parse = parseLenient(text);
  } catch (err) {
    return { kind: "unparsed", reason: reasonOf(err) };
  }
  // Frames the strict parser reads keep the digests they always had; the lenient recipe is for the rest.
  const lenient = strictFailed ? { parse, text } : undefined;
  if (!o.readings) return { kind: "parsed", msg: parse.value, lenient };
  const readings = readingsOf(parse, text, strictText === undefined);
  return { kind: "parsed", msg: parse.value, lenient, readings: readings.length > 1 ? readings : undefined };
}

// ---- long answers ----

/** Server frames at least this long are read by skimAnswer first. */
export const SKIM_AT = 1 << 16;

/**
 * The members of a result that carry an answer's payload (tools/call,
 * resources/read, prompts/get), which no row reads: only their digest,
 * which skimAnswer takes from the bytes.
 */
export const BULK_MEMBERS: ReadonlySet<string> = new Set(["content", "structuredContent", "contents", "messages"]);

/** The json-c14n digests of results read without their payload (see answerDigest). */
const skimmedDigests = new WeakMap<JsonObject, string>();

/**
 * The digest of an answer's result or error, as digestJson gives it for the
 * value the strict parser reads: for a result skimAnswer read without its
 * payload, the digest it took from the frame's bytes.
 */
export function answerDigest(v: Json): string {
  return (v instanceof Map ? skimmedDigests.get(v) : undefined) ?? digestJson(v);
}

/**
 * A long server frame read as the strict parser reads it, but without the
 * payload of its result: the message's members are parsed one by one, the
 * result's digest is taken from its bytes (src/core/canonical-bytes.ts, the
 * same digest as of its model), and of the result only the members other
 * than BULK_MEMBERS are parsed. So a 32 MiB answer costs seam its bytes, not
 * a string, a model and a form of them. Undefined when the frame is not
 * one message object of valid UTF-8 that the strict parser reads: then it
 * is read in full, as any frame.
 */
function skimAnswer(frame: Uint8Array): JsonObject | undefined {
  if (!isUtf8(frame)) return undefined;
  const start = skipWs(frame, 0);
  if (frame[start] !== 0x7b) return undefined;
  const top = objectMembers(frame, start);
  if (top === null || skipWs(frame, top.end) !== frame.length) return undefined;
  const msg: JsonObject = new Map();
  const inner = DEFAULT_MAX_DEPTH - 1; // the message itself is one level
  try {
    for (const m of top.members) {
      const key = spanValue(frame, m.keyStart, m.keyEnd, 0) as string;
      // A repeated member is set again: the last value at the first place, as the strict parser keeps it.
      msg.set(
        key,
        key === "result" && frame[m.valueStart] === 0x7b
          ? skimResult(frame, m.valueStart, m.valueEnd, inner)
          : spanValue(frame, m.valueStart, m.valueEnd, inner),
      );
    }
  } catch (err) {
    if (err instanceof JsonParseError) return undefined;
    throw err;
  }
  return msg;
}

/** A result object without its payload members, its digest (from all of it) kept aside; throws JsonParseError. */
function skimResult(frame: Uint8Array, start: number, end: number, maxDepth: number): JsonObject {
  const digest = digestJsonUtf8(frame.subarray(start, end), "json-c14n", { maxDepth });
  const spans = objectMembers(frame, start);
  if (spans === null || spans.end !== end) throw new JsonParseError("not an object", start);
  const result: JsonObject = new Map();
  for (const m of spans.members) {
    const key = spanValue(frame, m.keyStart, m.keyEnd, 0) as string;
    if (BULK_MEMBERS.has(key)) continue;
    result.set(key, spanValue(frame, m.valueStart, m.valueEnd, maxDepth - 1));
  }
  skimmedDigests.set(result, digest);
  return result;
}

/** The value in frame[start, end) as the strict parser reads it (the frame is valid UTF-8). */
function spanValue(frame: Uint8Array, start: number, end: number, maxDepth: number): Json {
  return parseJson(strictDecoder.decode(frame.subarray(start, end)), { maxDepth });
}

/** Whether a frame the strict parser read may still read differently elsewhere (so it is read again, fully). */
function suspect(msg: Json): boolean {
  if (!Array.isArray(msg)) return suspectMessage(msg);
  for (const m of msg) if (suspectMessage(m)) return true;
  return false;
}

function suspectMessage(m: Json): boolean {
  if (!(m instanceof Map)) return false;
  if (hasVariant(m, MESSAGE_KEYS)) return true;
  const id = m.get("id");
  if (id instanceof JsonFloat || typeof id === "bigint" || lone(id) || lone(m.get("method"))) return true;
  const params = m.get("params");
  return params instanceof Map && (hasVariant(params, PARAMS_KEYS) || lone(params.get("name")));
}

/** A string with a lone surrogate (Go reads it with U+FFFD in its place). */
function lone(v: Json | undefined): boolean {
  return typeof v === "string" && !(v as unknown as { isWellFormed(): boolean }).isWellFormed();
}

/** A key that matches one of `names` only the way Go matches it (case-insensitively). No allocation: this runs on every client frame. */
function hasVariant(m: JsonObject, names: readonly string[]): boolean {
  for (const k of m.keys()) {
    for (let j = 0; j < names.length; j++) {
      const name = names[j]!;
      if (k.length === name.length && k !== name && foldsTo(k, name)) return true;
    }
  }
  return false;
}

/** goFold(k) === name, for a lower-case ASCII name of k's length. */
function foldsTo(k: string, name: string): boolean {
  for (let i = 0; i < k.length; i++) {
    let c = k.charCodeAt(i);
    if (c >= 65 && c <= 90) c += 32;
    else if (c === 0x17f) c = 115;
    else if (c === 0x212a) c = 107;
    if (c !== name.charCodeAt(i)) return false;
  }
  return true;
}

/**
 * A key as Go's field matching folds it, for the ASCII names above: ASCII
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

function reasonOf(err: unknown): string {
  return err instanceof JsonParseError ? err.reason : err instanceof Error ? err.message : String(err);
}

/** Bytes a JSON value can start with: { [ " - 0-9 t f n, and N I (Python's NaN, Infinity). */
const JSON_START = new Uint8Array(256);
for (const c of '{["-0123456789tfnNI') JSON_START[c.charCodeAt(0)] = 1;

/** Set by the strict parse of the frame being read when a key repeats in a message or its params. */
let shallowDup = false;
/** Set by the strict parse of the frame being read on a NaN or Infinity literal. */
let nanLiteral = false;
/** One options object for every frame (no closure per frame). */
const DUPLICATES = {
  onDuplicate: (_k: string, depth: number) => {
    if (depth <= 3) shallowDup = true;
  },
  onNanLiteral: () => {
    nanLiteral = true;
  },
};

function notJsonStart(frame: Uint8Array, i: number): string {
  if (frame[i] === 0xef && frame[i + 1] === 0xbb && frame[i + 2] === 0xbf) return "unexpected byte order mark";
  return "expecting value";
}

// ---- the stacks' readings ----

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
function readingsOf(p: LenientParse, text: string, invalidUtf8: boolean): Reading[] {
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

/** The first bytes of a frame as printable ASCII: `\\`, `\xHH` for the rest; at most `cap` bytes shown. */
export function frameHead(frame: Uint8Array, cap = 64): string {
  let out = "";
  const n = Math.min(frame.length, cap);
  for (let i = 0; i < n; i++) {
    const b = frame[i]!;
    if (b === 0x5c) out += "\\\\";
    else if (b >= 0x20 && b < 0x7f) out += String.fromCharCode(b);
    else out += `\\x${b.toString(16).padStart(2, "0")}`;
  }
  return out;
}
