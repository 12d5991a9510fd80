/**
 * What a request says about its protocol era, and what a result's
 * `resultType` means.
 *
 * MCP 2026-07-28 has no `initialize`: every request carries, in
 * `params._meta`, the protocol version it is made under and the client's
 * capabilities for it (and usually the client's identity); see
 * https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning.
 * A request of an earlier revision has none of this: its era is the one its
 * session's `initialize` agreed, already recorded in the mcp_initialize row,
 * so such rows stay exactly as they were.
 */
import { digestJson } from "../core/digest.ts";
import { getField, isObject, type Json } from "../core/json.ts";

export const META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion";
export const META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";
export const META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo";
export const META_SERVER_INFO = "io.modelcontextprotocol/serverInfo";

/** What a request's `_meta` declares (any part may be missing). */
export interface RequestMeta {
  protocolVersion?: string;
  clientInfo?: Json;
  clientCapabilities?: Json;
}

/** The era keys of a request's `params._meta`, or undefined when it has none of them. */
export function requestMeta(params: Json | undefined): RequestMeta | undefined {
  const meta = params === undefined ? undefined : getField(params, "_meta");
  if (meta === undefined || !isObject(meta)) return undefined;
  const pv = getField(meta, META_PROTOCOL_VERSION);
  const info = getField(meta, META_CLIENT_INFO);
  const caps = getField(meta, META_CLIENT_CAPABILITIES);
  if (pv === undefined && info === undefined && caps === undefined) return undefined;
  return {
    protocolVersion: typeof pv === "string" ? pv : undefined,
    clientInfo: info,
    clientCapabilities: caps,
  };
}

/**
 * Remembers the client identity a session last declared in `_meta`, so that
 * it is written once (an `mcp_client` row) and again only when it changes:
 * the same client repeats it on every request.
 */
export class ClientMetaTracker {
  private last: string | undefined;

  /** The fields of an `mcp_client` row when `meta` differs from what was last declared, else undefined. */
  declared(meta: RequestMeta | undefined): Record<string, Json | undefined> | undefined {
    if (meta === undefined) return undefined;
    const seen = new Map<string, Json>();
    if (meta.protocolVersion !== undefined) seen.set("v", meta.protocolVersion);
    if (meta.clientInfo !== undefined) seen.set("i", meta.clientInfo);
    if (meta.clientCapabilities !== undefined) seen.set("c", meta.clientCapabilities);
    const key = digestJson(seen);
    if (key === this.last) return undefined;
    this.last = key;
    return {
      protocol_version: meta.protocolVersion,
      client_info: meta.clientInfo,
      client_capabilities: meta.clientCapabilities,
    };
  }
}

/** Remembers the server identity last seen in a result's `_meta` (the server repeats it on every answer). */
export class ServerMetaTracker {
  private last: string | undefined;

  /** Whether `info` differs from the identity last seen (and remembers it). */
  changed(info: Json): boolean {
    const key = digestJson(info);
    if (key === this.last) return false;
    this.last = key;
    return true;
  }
}

/** The server identity a 2026-07-28 result carries in its `_meta`, if any. */
export function resultServerInfo(result: Json): Json | undefined {
  const meta = getField(result, "_meta");
  return meta === undefined ? undefined : getField(meta, META_SERVER_INFO);
}

/** resultType values this revision and its tasks extension define. */
const KNOWN_RESULT_TYPES = new Set(["complete", "input_required", "task"]);

/**
 * The row status a result's `resultType` gives, or undefined when it gives
 * none (absent, or `complete`: the result is final). `input_required` is a
 * multi round-trip request's interim answer, `task` the handle of a task; any
 * other value is one this recorder cannot read, said as such rather than `ok`.
 */
export function resultTypeStatus(result: Json): string | undefined {
  const t = getField(result, "resultType");
  if (t === undefined || t === "complete") return undefined;
  if (t === "input_required" || t === "task") return t;
  return "unknown_result_type";
}

/** The raw resultType of a result the recorder could not read (for its row), else undefined. */
export function unknownResultType(result: Json | undefined): Json | undefined {
  if (result === undefined || !isObject(result)) return undefined;
  const t = getField(result, "resultType");
  if (t === undefined || (typeof t === "string" && KNOWN_RESULT_TYPES.has(t))) return undefined;
  return t;
}
