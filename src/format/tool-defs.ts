/**
 * A `tools_list` row's `tool_digests` (docs/ledger-format.md, "Tool
 * definitions"): per tool of the page, its name and the json-c14n digest of
 * its whole definition, the tool object as the server sent it, as
 * `[name, digest]` pairs sorted by name (code points), then digest. Pairs,
 * not an object: a server may list one name twice, and a row must not
 * repeat a key.
 *
 * Bounded, so that a server listing thousands of tools or giant names does
 * not grow a row without end: a page of more than MAX_TOOL_DIGESTS named
 * tools gets no pairs, only `tool_digests_omitted` (how many there were);
 * its `tool_count` and `tools_digest` (the whole page) still stand. A tool
 * that is no object, has no string name, or a name longer than
 * MAX_TOOL_NAME (the spec's own limit for a name) gets no pair: the row's
 * `tool_count` still counts it. A definition's size costs nothing: only its
 * digest is written.
 */
import { compareCodePoints } from "../core/canonical/index.ts";
import { digestJson } from "../core/digest.ts";
import { getField, isObject, type Json } from "../core/json.ts";

/** The most named tools a page's row holds pairs for. */
export const MAX_TOOL_DIGESTS = 1000;
/** The longest name (UTF-16 code units) a pair is written for: MCP's tool names are 1 to 128 characters. */
export const MAX_TOOL_NAME = 128;

/** A row's tool definition fields: `tool_digests`, or `tool_digests_omitted` past the bound. */
export function toolDigestFields(tools: Json | undefined): {
  tool_digests?: Json;
  tool_digests_omitted?: number;
} {
  if (!Array.isArray(tools)) return {};
  const named: Json[] = [];
  for (const t of tools) {
    const name = isObject(t) ? getField(t, "name") : undefined;
    if (typeof name === "string" && name.length <= MAX_TOOL_NAME) named.push(t);
  }
  if (named.length > MAX_TOOL_DIGESTS) return { tool_digests_omitted: named.length };
  const pairs: [string, string][] = named.map((t) => [getField(t, "name") as string, digestJson(t)]);
  pairs.sort((a, b) => compareCodePoints(a[0], b[0]) || compareCodePoints(a[1], b[1]));
  return { tool_digests: pairs };
}

/**
 * A row's `tool_digests` as a reader takes it: the pairs, or null when the
 * field is missing or malformed (a hostile or older ledger); never throws.
 */
export function readToolDigests(v: Json | undefined): [string, string][] | null {
  if (!Array.isArray(v)) return null;
  const out: [string, string][] = [];
  for (const p of v) {
    if (!Array.isArray(p) || p.length !== 2) return null;
    const [name, digest] = p;
    if (typeof name !== "string" || typeof digest !== "string") return null;
    out.push([name, digest]);
  }
  return out;
}
