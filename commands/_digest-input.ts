/**
 * What `seam digest` makes of one input's bytes: the digest, or a one-line
 * reason why there is none.
 */

import type { Result } from "../src/base/result.ts";
import { digestJsonUtf8, type Recipe } from "../src/core/digest.ts";
import { JsonParseError } from "../src/core/json-error.ts";

export type DigestOutcome = Result<{ digest: string }>;

const UNDIGESTIBLE: Record<string, string> = {
  ValueError: "undigestible (ValueError): NaN, Infinity or -Infinity has no canonical form",
  UnicodeEncodeError: "undigestible (UnicodeEncodeError): a lone surrogate (\\udXXX) has no UTF-8 form",
};

export function digestJsonBytes(bytes: Uint8Array, recipe: Recipe): DigestOutcome {
  let digest: string;
  try {
    digest = digestJsonUtf8(bytes, recipe);
  } catch (err) {
    if (err instanceof JsonParseError) return { ok: false, reason: `unparseable: ${err.message}` };
    throw err;
  }
  if (!digest.startsWith("undigestible:")) return { ok: true, digest };
  const kind = digest.slice("undigestible:".length);
  return { ok: false, reason: UNDIGESTIBLE[kind] ?? `undigestible (${kind})` };
}
