/**
 * What a frame means to the server, whatever the server's JSON stack.
 *
 * seam must never read a frame differently from the server it forwards it to
 * (a call the recorder cannot read is a call that leaves no row). Reading is
 * done once, cheaply, with the strict parser; only a frame that the strict
 * parser refuses, or that repeats or case-varies a JSON-RPC key, is read
 * again leniently (src/core/json-lenient.ts) and then as each stack reads it
 * (src/observe/json-stacks.ts). A long server answer is read without its
 * payload (src/observe/large-answer.ts).
 */

import { type Json, JsonFloat, type JsonObject, parseJson } from "../core/json.ts";
import { JsonParseError } from "../core/json-error.ts";
import { type LenientParse, parseLenient } from "../core/json-lenient.ts";
import { type Reading, readingsOf } from "./json-stacks.ts";
import { SKIM_AT, skimAnswer } from "./large-answer.ts";

export type FrameRead =
  | { kind: "blank" }
  /** No stack can read it as a JSON-RPC message (not JSON at all, or not one of ours). */
  | { kind: "unparsed"; reason: string }
  | {
      kind: "parsed";
      msg: Json;
      /**
       * Set when the strict parser read the frame and no key repeated in it,
       * at any depth, and no NaN or Infinity literal: a value's bytes then
       * digest, by the recipe's own reading of bytes, to what the row's digest
       * of its parse is (so a payload's bytes need no second digest).
       */
      plain?: true;
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

const strictDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const replacingDecoder = new TextDecoder("utf-8", { ignoreBOM: true });

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
  anyDup = false;
  nanLiteral = false;
  try {
    strictText = strictDecoder.decode(frame);
    const msg = parseJson(strictText, DUPLICATES);
    // NaN and Infinity literals are Python's alone: such a frame is read by each stack.
    if (!o.readings || (!shallowDup && !nanLiteral && !suspect(msg)))
      return anyDup || nanLiteral ? { kind: "parsed", msg } : { kind: "parsed", msg, plain: true };
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

function reasonOf(err: unknown): string {
  return err instanceof JsonParseError ? err.reason : err instanceof Error ? err.message : String(err);
}

/** Bytes a JSON value can start with: { [ " - 0-9 t f n, and N I (Python's NaN, Infinity). */
const JSON_START = new Uint8Array(256);
for (const c of '{["-0123456789tfnNI') JSON_START[c.charCodeAt(0)] = 1;

/** Set by the strict parse of the frame being read when a key repeats in a message or its params. */
let shallowDup = false;
/** Set by the strict parse of the frame being read when a key repeats anywhere in it. */
let anyDup = false;
/** Set by the strict parse of the frame being read on a NaN or Infinity literal. */
let nanLiteral = false;
/** One options object for every frame (no closure per frame). */
const DUPLICATES = {
  onDuplicate: (_k: string, depth: number) => {
    anyDup = true;
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
