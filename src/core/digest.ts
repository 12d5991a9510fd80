/**
 * Content digests as the ledger format names them:
 *   sha256:json-c14n:v1:<64 hex>  SHA-256 of compactForm(v) as UTF-8
 *   sha256:jcs:v1:<64 hex>        SHA-256 of jcsForm(v) (RFC 8785) as UTF-8
 *   sha256:raw-bytes:v1:<64 hex>  SHA-256 of the bytes themselves
 *   undigestible:ValueError | undigestible:UnicodeEncodeError
 *                                 the value has no canonical form; the words are the Python exception's name
 */
import { createHash, type Hash } from "node:crypto";
import {
  CanonicalError,
  COMPACT,
  canonicalBytes,
  compactAscii,
  feedUtf8,
  isWellFormed,
  JCS,
  type Recipe,
  type Style,
  streamForm,
} from "./canonical/index.ts";
import { type Json, parseJson } from "./json.ts";
import { sha256Hex, sha256Prefixed } from "./sha256.ts";

export type { Recipe } from "./canonical/reference.ts";
export const RECIPES: readonly Recipe[] = ["json-c14n", "jcs"];

/** The digest of a value under `recipe` (default json-c14n). Never throws. `style`: see compactForm. */
export function digestJson(v: Json, recipe: Recipe = "json-c14n", style?: Style): string {
  // Most digests (a call's arguments, its result) are of small ASCII values: their form written as bytes.
  if (recipe === "json-c14n" && (style === undefined || style === COMPACT)) {
    const form = compactAscii(v);
    if (form !== null) return sha256Prefixed("sha256:json-c14n:v1:", form);
  }
  return digestForm(v, recipe, style);
}

/** digestJson by the general writer, its form hashed in pieces. */
function digestForm(v: Json, recipe: Recipe, style: Style | undefined): string {
  // The form goes to the hash in pieces (as compactForm and jcsForm write it, never a whole string of
  // it); a small value's form is one piece, hashed in one call with no Hash object.
  let hash: Hash | null = null;
  let lone = false;
  const feed = (piece: string) => {
    if (!isWellFormed(piece)) lone = true;
    else if (!lone) feedUtf8((hash ??= createHash("sha256")), piece);
  };
  let last: string;
  try {
    last = streamForm(v, recipe === "jcs" ? JCS : (style ?? COMPACT), feed);
  } catch (err) {
    return `undigestible:${err instanceof CanonicalError ? err.kind : "ValueError"}`;
  }
  // A lone surrogate has no UTF-8: Python's encode fails (once dumps has not, as above).
  if (lone || !isWellFormed(last)) return "undigestible:UnicodeEncodeError";
  if (hash === null) return `sha256:${recipe}:v1:${sha256Hex(last)}`;
  feedUtf8(hash, last);
  return `sha256:${recipe}:v1:${(hash as Hash).digest("hex")}`;
}

/** `sha256:<recipe>:v1:<hex>` of text that is already the recipe's canonical form (well-formed UTF-16). */
export function digestOfCanonical(text: string, recipe: Recipe = "json-c14n"): string {
  return sha256Prefixed(`sha256:${recipe}:v1:`, text);
}

/** A `sha256:<recipe>:v1:<hex>` digest of a JSON value. */
const JSON_DIGEST = /^sha256:(json-c14n|jcs):v1:([0-9a-f]{64})$/;

/** The recipe and hex of a `sha256:<recipe>:v1:<hex>` digest of a JSON value, or null for any other string. */
export function digestParts(digest: string): { recipe: Recipe; hex: string } | null {
  const m = JSON_DIGEST.exec(digest);
  return m === null ? null : { recipe: m[1] as Recipe, hex: m[2]! };
}

/** Whether `digest` is one digestParts takes apart, without taking it apart (nothing allocated). */
export function isJsonDigest(digest: string): boolean {
  return JSON_DIGEST.test(digest);
}

export function digestBytes(bytes: Uint8Array): string {
  return sha256Prefixed("sha256:raw-bytes:v1:", bytes);
}

/**
 * The raw-bytes digest of a stream fed in chunks; digest() ends it. Its hash
 * is made at the first chunk: seam proxy makes two for every exchange as it
 * arrives, and createHash costs enough there to be worth keeping off that path.
 * `heldChunks`: the caller keeps each chunk unchanged until digest() (seam
 * proxy's chunks are its own buffers, held until they are recorded), so a
 * stream of one chunk, as most bodies are, is hashed in one shot with no
 * hash object; a reader of a reused buffer (a ring) must not say so.
 */
export class StreamDigest {
  private hash: Hash | null = null;
  private first: Uint8Array | null = null;
  constructor(private readonly heldChunks = false) {}
  update(chunk: Uint8Array): void {
    if (this.hash === null) {
      if (this.heldChunks && this.first === null) {
        this.first = chunk;
        return;
      }
      this.hash = createHash("sha256");
      if (this.first !== null) this.hash.update(this.first);
      this.first = null;
    }
    this.hash.update(chunk);
  }
  digest(): string {
    if (this.hash === null) return digestBytes(this.first ?? EMPTY);
    return `sha256:raw-bytes:v1:${this.hash.digest("hex")}`;
  }
}

const EMPTY = new Uint8Array(0);

/**
 * The digest of UTF-8 JSON under `recipe`, straight from the bytes (see
 * src/core/canonical/from-bytes.ts): equal to digestJson(parseJson(text), recipe) but
 * with no model and no string, streaming a top-level array. Throws
 * JsonParseError for input that is not UTF-8 or not JSON (for jcs, also for
 * a repeated key).
 */
export function digestJsonUtf8(bytes: Uint8Array, recipe: Recipe = "json-c14n", opts?: { maxDepth?: number }): string {
  // A small value's form comes in one chunk: hashed in one call, with no Hash object (as digestForm).
  let first: Uint8Array | null = null;
  let hash: Hash | null = null;
  const outcome = canonicalBytes(
    bytes,
    recipe,
    (chunk) => {
      if (hash !== null) hash.update(chunk);
      else if (first === null)
        first = chunk.slice(); // a chunk is only valid during the call
      else {
        hash = createHash("sha256");
        hash.update(first);
        hash.update(chunk);
      }
    },
    opts,
  );
  if (outcome !== "ok") return `undigestible:${outcome}`;
  if (hash === null) return sha256Prefixed(`sha256:${recipe}:v1:`, first ?? EMPTY);
  return `sha256:${recipe}:v1:${(hash as Hash).digest("hex")}`;
}

/** digestJsonUtf8 for text already in a string (one with raw lone surrogates goes through the model). */
export function digestJsonText(text: string, recipe: Recipe = "json-c14n", opts?: { maxDepth?: number }): string {
  if (isWellFormed(text)) return digestJsonUtf8(new TextEncoder().encode(text), recipe, opts);
  return digestJson(parseJson(text, { maxDepth: opts?.maxDepth, rejectDuplicateKeys: recipe === "jcs" }), recipe);
}
