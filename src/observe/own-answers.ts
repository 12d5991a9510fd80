/**
 * seam's own JSON-RPC answers: what the client gets, in place of the
 * server's answer, for a call or a frame seam does not forward.
 */
import type { Json } from "../core/json.ts";

/** The JSON-RPC error code of seam's own answer to a call it refuses. */
export const REFUSED_CODE = -32000;
/** The message when --fail-closed refuses a call whose intent row could not be made durable. */
export const NOT_DURABLE =
  "seam: recording failed: the call was not forwarded because its record could not be made durable";
/** JSON-RPC's code for a frame that is not JSON: seam's answer, under --write-ahead, to a client frame it cannot read. */
export const PARSE_ERROR_CODE = -32700;
/** JSON-RPC's Invalid Request: seam's answer to a client frame too long for it to read, under --write-ahead. */
export const INVALID_REQUEST_CODE = -32600;
/** The message when --fail-closed refuses a frame that JSON parsers read differently. */
export const AMBIGUOUS =
  "seam: ambiguous request: JSON parsers read this frame differently (see its ambiguous_frame row); it was not forwarded";

const encoder = new TextEncoder();

/**
 * A JSON-RPC id as JSON text, for writing it back in an answer: integers of
 * any size exactly, strings quoted; anything else is no id (undefined).
 */
export function idJson(id: Json | undefined): string | undefined {
  if (typeof id === "bigint") return id.toString();
  if (typeof id === "number") return String(id);
  if (typeof id === "string") return JSON.stringify(id);
  return undefined;
}

/** seam's own JSON-RPC error answer, as one line. */
export function errorLine(id: Json | null, code: number, message: string): Uint8Array {
  return encoder.encode(
    `{"jsonrpc":"2.0","id":${idJson(id ?? undefined) ?? "null"},"error":{"code":${code},"message":${JSON.stringify(message)}}}\n`,
  );
}
