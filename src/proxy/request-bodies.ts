/**
 * The JSON-RPC messages of a request body, as the proxy reads them for
 * itself (the observer reads them for the ledger): whether it opens a
 * session, what a sessionless request says of its client, and seam's own
 * error answers to its requests when the upstream cannot be reached.
 */
import { getField, isObject, type Json, parseJson } from "../core/json.ts";
import type { Fields } from "../observe/observer-options.ts";
import { idJson } from "../observe/own-answers.ts";
import { requestKey } from "../observe/pairing.ts";

/** The JSON-RPC error code of seam's answer when the upstream cannot be reached. */
export const UPSTREAM_ERROR_CODE = -32000;

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** Whether a request body holds an `initialize` request (alone or in a batch). */
export function holdsInitialize(frame: Uint8Array): boolean {
  const msgs = messages(frame);
  return msgs.some((m) => isObject(m) && getField(m, "method") === "initialize");
}

/** The JSON-RPC messages of a body (one, or a batch's elements); [] when it is not JSON. */
function messages(frame: Uint8Array | null): Json[] {
  if (frame === null) return [];
  let v: Json;
  try {
    v = parseJson(decoder.decode(frame));
  } catch {
    return [];
  }
  return Array.isArray(v) ? v : [v];
}

/**
 * What a request of the sessionless 2026-07-28 revision says of its client
 * in `params._meta` (https://modelcontextprotocol.io/specification/2026-07-28/basic/index):
 * the protocol version and client info of its first request that has them.
 */
export function requestMeta(frame: Uint8Array | null): Fields {
  if (
    frame === null ||
    !Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength).includes("io.modelcontextprotocol/")
  )
    return {};
  for (const m of messages(frame)) {
    const meta = getField(
      getField(getField(m, "params") ?? null, "_meta") ?? null,
      "io.modelcontextprotocol/protocolVersion",
    );
    if (meta === undefined) continue;
    const params = getField(m, "params") ?? null;
    const metaObj = getField(params, "_meta") ?? null;
    return {
      meta_protocol_version: meta,
      meta_client_info: getField(metaObj, "io.modelcontextprotocol/clientInfo"),
    };
  }
  return {};
}

/** The ids of the requests of a body (those with a valid id), in order. */
export function requestIds(frame: Uint8Array | null): Json[] {
  const ids: Json[] = [];
  for (const m of messages(frame)) {
    if (!isObject(m) || typeof getField(m, "method") !== "string") continue;
    const id = getField(m, "id");
    if (id !== undefined && requestKey(id) !== null) ids.push(id);
  }
  return ids;
}

/** seam's own error answers for the requests of a body (those with a valid id); null when it holds none. */
export function errorAnswers(frame: Uint8Array | null, message: string): Uint8Array | null {
  const answers: string[] = [];
  let batch = false;
  if (frame !== null) batch = firstByte(frame) === 0x5b;
  for (const id of requestIds(frame)) {
    answers.push(
      `{"jsonrpc":"2.0","id":${idJson(id)},"error":{"code":${UPSTREAM_ERROR_CODE},"message":${JSON.stringify(message)}}}`,
    );
  }
  if (answers.length === 0) return null;
  return encoder.encode(batch ? `[${answers.join(",")}]` : answers[0]!);
}

export function firstByte(b: Uint8Array): number | undefined {
  let i = 0;
  while (i < b.length && (b[i] === 0x20 || b[i] === 0x09 || b[i] === 0x0a || b[i] === 0x0d)) i++;
  return b[i];
}
