/**
 * A long server answer read without its payload: the frame's members are
 * parsed one by one, the result's digest taken from its bytes
 * (src/core/canonical/from-bytes.ts, the same digest as of its model), and of the
 * result only the members other than BULK_MEMBERS parsed. So a 32 MiB answer
 * costs seam its bytes, not a string, a model and a form of them.
 */
import { isUtf8 } from "node:buffer";
import { digestJson, digestJsonUtf8 } from "../core/digest.ts";
import { type Json, type JsonObject, parseJson } from "../core/json.ts";
import { JsonParseError } from "../core/json-error.ts";
import { DEFAULT_MAX_DEPTH } from "../core/json-scanner.ts";
import { objectMembers, skipWs } from "../core/json-spans.ts";

const strictDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

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
 * result's digest is taken from its bytes (src/core/canonical/from-bytes.ts, the
 * same digest as of its model), and of the result only the members other
 * than BULK_MEMBERS are parsed. So a 32 MiB answer costs seam its bytes, not
 * a string, a model and a form of them. Undefined when the frame is not
 * one message object of valid UTF-8 that the strict parser reads: then it
 * is read in full, as any frame.
 */
export function skimAnswer(frame: Uint8Array): JsonObject | undefined {
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
