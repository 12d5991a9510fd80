/**
 * JSON as UTF-8 bytes straight to its canonical UTF-8 bytes, with no model
 * and no JS string: what `seam digest` runs on files of any size. It must
 * equal compactForm(parseJson(text)) (json-c14n) and
 * jcsForm(parseJson(text, {rejectDuplicateKeys: true})) (jcs) byte for byte,
 * and accept exactly what parseJson accepts; test/canonical-bytes.test.ts
 * checks that on random and hostile input.
 *
 * Output goes into one buffer. An object's members are written as they come;
 * when the object closes they are put in key order (dropping all but the last
 * of a repeated key) by rewriting the object's own region. Only bytes outside
 * every open object are final, so the buffer is handed to the sink whenever
 * no object is open: a top-level array streams; a top-level object is held
 * whole (the value itself, nothing more).
 *
 * Keys sort by their decoded UTF-8 bytes, which is code point order (Python's
 * sort_keys); a lone surrogate from a `\udXXX` escape is kept as its 3-byte
 * form, which sorts where its code point does.
 */
import { isUtf8 } from "node:buffer";
import { ByteCanonicalizer } from "./byte-canonicalizer.ts";
import { ByteOut } from "./byte-out.ts";
import type { Recipe } from "./canonical.ts";
import { DEFAULT_MAX_DEPTH, JsonParseError, guardStack } from "./json.ts";
import { firstInvalidUtf8 } from "./utf8.ts";

/** Whether the input had a canonical form, or the Python exception that says why not. */
export type Outcome = "ok" | "ValueError" | "UnicodeEncodeError";

/**
 * Feeds the canonical form of UTF-8 JSON under `recipe` to `sink`, in chunks
 * valid only during each call, and says whether it was canonical after all:
 * on "ValueError" (NaN/±Infinity) or "UnicodeEncodeError" (a lone surrogate
 * escape) the bytes fed are meaningless. ValueError wins over
 * UnicodeEncodeError, as in Python. Throws JsonParseError for input that is
 * not UTF-8 or not JSON (for jcs, also for a repeated key, which I-JSON forbids).
 */
export function canonicalBytes(
  input: Uint8Array,
  recipe: Recipe,
  sink: (bytes: Uint8Array) => void,
  opts?: { maxDepth?: number },
): Outcome {
  if (!isUtf8(input)) throw new JsonParseError("not UTF-8", firstInvalidUtf8(input));
  const out = new ByteOut(sink);
  const p = new ByteCanonicalizer(input, opts?.maxDepth ?? DEFAULT_MAX_DEPTH, out, recipe === "jcs");
  guardStack(
    input,
    () => p.i,
    () => p.document(),
  );
  out.flush();
  return p.valueErrors ? "ValueError" : p.lone ? "UnicodeEncodeError" : "ok";
}
