/**
 * Content digests as the ledger format names them:
 *   sha256:json-c14n:v1:<64 hex>  SHA-256 of compactForm(v) as UTF-8
 *   sha256:jcs:v1:<64 hex>        SHA-256 of jcsForm(v) (RFC 8785) as UTF-8
 *   sha256:raw-bytes:v1:<64 hex>  SHA-256 of the bytes themselves
 *   undigestible:ValueError | undigestible:UnicodeEncodeError
 *                                 the value has no canonical form; the words are the Python exception's name
 */
import { createHash, type Hash } from "node:crypto";
import { CanonicalError, compactForm, jcsForm } from "./canonical.ts";
import { canonicalText } from "./canonical-text.ts";
import type { Json } from "./json.ts";

export type Recipe = "json-c14n" | "jcs";
export const RECIPES: readonly Recipe[] = ["json-c14n", "jcs"];

/** The digest of a value under `recipe` (default json-c14n). Never throws. */
export function digestJson(v: Json, recipe: Recipe = "json-c14n"): string {
  let text: string;
  try {
    text = recipe === "jcs" ? jcsForm(v) : compactForm(v);
  } catch (err) {
    return `undigestible:${err instanceof CanonicalError ? err.kind : "ValueError"}`;
  }
  return digestOfCanonical(text, recipe);
}

/** `sha256:<recipe>:v1:<hex>` of text that is already the recipe's canonical form (well-formed UTF-16). */
export function digestOfCanonical(text: string, recipe: Recipe = "json-c14n"): string {
  return `sha256:${recipe}:v1:${createHash("sha256").update(text, "utf8").digest("hex")}`;
}

export function digestBytes(bytes: Uint8Array): string {
  return `sha256:raw-bytes:v1:${createHash("sha256").update(bytes).digest("hex")}`;
}

/** The raw-bytes digest of a stream fed in chunks; digest() ends it. */
export class StreamDigest {
  private readonly hash: Hash = createHash("sha256");
  update(chunk: Uint8Array): void {
    this.hash.update(chunk);
  }
  digest(): string {
    return `sha256:raw-bytes:v1:${this.hash.digest("hex")}`;
  }
}

/**
 * The digest of JSON text under `recipe`, straight from the text (see
 * src/canonical-text.ts): equal to digestJson(parseJson(text), recipe) but
 * without the model, streaming a top-level array. Throws JsonParseError for
 * text that is not JSON (for jcs, also for a repeated key).
 */
export function digestJsonText(text: string, recipe: Recipe = "json-c14n", opts?: { maxDepth?: number }): string {
  const hash = createHash("sha256");
  const outcome = canonicalText(text, recipe, (bytes) => hash.update(bytes), opts);
  return outcome === "ok" ? `sha256:${recipe}:v1:${hash.digest("hex")}` : `undigestible:${outcome}`;
}
