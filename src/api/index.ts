/**
 * seam as a library: verify a ledger, digest JSON by the ledger's recipes,
 * and compute a row's chain value, without spawning the CLI. Nothing here
 * prints, exits or reads the environment; verifiers return reports and never
 * throw. The format these functions implement is docs/ledger-format.md.
 *
 *   import { verifyFile } from "seam-mcp";
 *   const report = await verifyFile("seam.jsonl");
 *   if (report.verdict !== "ok") console.log(report.first_break);
 */
import { SeamError } from "../base/error.ts";
import { chainOf } from "../core/chain.ts";
import { digestBytes, digestJsonText, digestJsonUtf8, RECIPES, type Recipe } from "../core/digest.ts";
import { parseJson } from "../core/json.ts";
import { JsonParseError } from "../core/json-error.ts";
import { type VerifyOptions as CoreVerifyOptions, fileChunks, type VerifyReport } from "../verify/ledger-verifier.ts";
import { verifyBytes as coreVerifyBytes, verifyLedger } from "../verify/verify-ledger.ts";

export { SeamError } from "../base/error.ts";
export { GENESIS } from "../core/chain.ts";
export type { Recipe } from "../core/digest.ts";
export type { Break, SessionReport, Verdict, VerifiedScope, VerifyReport } from "../verify/ledger-verifier.ts";
export { RECIPES };

export interface VerifyOptions {
  /** Reject leading unchained rows as breaks instead of skipping them (`seam verify --strict`). */
  strict?: boolean;
  /**
   * Whether the writer of a session without `session_end` is still running,
   * asked with the pid and host its `session_begin` recorded. Without it,
   * every unfinished session is a finding (the verdict is then inconclusive).
   */
  isWriterAlive?: (pid: number, host: string) => boolean;
}

function coreOptions(o: VerifyOptions): CoreVerifyOptions {
  return { strict: o.strict, isWriterAlive: o.isWriterAlive };
}

/** Verifies the ledger file at `path`, streaming it; an unreadable file is a report with `unreadable: …`. */
export function verifyFile(path: string, options: VerifyOptions = {}): Promise<VerifyReport> {
  return verifyLedger(fileChunks(path), coreOptions(options));
}

/** Verifies a ledger from any byte source: a Node stream, a web ReadableStream, or an array of chunks. */
export function verifyStream(
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  options: VerifyOptions = {},
): Promise<VerifyReport> {
  return verifyLedger(source, coreOptions(options));
}

/** Verifies a ledger held in memory. */
export function verifyBytes(bytes: Uint8Array | string, options: VerifyOptions = {}): VerifyReport {
  return coreVerifyBytes(typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes, coreOptions(options));
}

/** The JSON text given to `digest` or `chain` is not JSON seam reads; `offset` is where. */
export class JsonInputError extends SeamError {
  override readonly name = "JsonInputError";
  constructor(
    message: string,
    readonly offset: number | null,
  ) {
    super("json_input", message);
  }
}

/**
 * The digest of a JSON document (text or UTF-8 bytes) by a recipe:
 * `sha256:json-c14n:v1:<hex>` (the ledger's own, Python-compatible) or
 * `sha256:jcs:v1:<hex>` (RFC 8785). JSON that has no canonical form (NaN,
 * a lone surrogate, 1e400) digests to `undigestible:<reason>`, as the
 * recipe's vectors say. Throws JsonInputError for input that is not JSON.
 */
export function digest(json: string | Uint8Array, recipe: Recipe = "json-c14n"): string {
  if (!RECIPES.includes(recipe)) throw new RangeError(`unknown recipe ${JSON.stringify(recipe)}`);
  try {
    return typeof json === "string" ? digestJsonText(json, recipe) : digestJsonUtf8(json, recipe);
  } catch (err) {
    throw inputError(err);
  }
}

/** `sha256:raw-bytes:v1:<hex>`: the digest of bytes as they are (what the ledger's stream digests use). */
export function digestRaw(bytes: Uint8Array): string {
  return digestBytes(bytes);
}

/**
 * A row's chain value given the previous row's (`GENESIS` for the first):
 * the row is JSON text, and a `chain` key in it is left out, as the format says.
 */
export function chain(prev: string, row: string): string {
  let value: ReturnType<typeof parseJson>;
  try {
    value = parseJson(row);
  } catch (err) {
    throw inputError(err);
  }
  if (!(value instanceof Map)) throw new JsonInputError("a row is a JSON object", 0);
  const without = new Map(value);
  without.delete("chain");
  return chainOf(prev, without);
}

function inputError(err: unknown): Error {
  if (err instanceof JsonParseError) return new JsonInputError(err.message, err.offset);
  return err instanceof Error ? new JsonInputError(err.message, null) : new JsonInputError(String(err), null);
}
