/**
 * Whether the official SDKs read a JSON-RPC answer as an answer at all. The
 * TypeScript SDK parses every message against strict schemas (jsonrpc
 * "2.0"; an id that is a string or an integer; `result` an object, or
 * `error` an object with an integer `code` and a string `message`; no other
 * top-level key) and drops one that fails; the Python SDK's models require
 * the same values but allow other keys. (Which ids pair is src/observe/pairing.ts's.) So an answer the TypeScript SDK
 * drops and the Python SDK reads is "disputed"; one both drop is "dropped".
 */
import { entries, getField, isObject, type Json } from "../core/json.ts";

export type AnswerShape = "dropped" | "disputed" | undefined;

/** How the SDKs read answer `m` (an object with an id and no method): undefined when both read it. */
export function answerShape(m: Json): AnswerShape {
  if (getField(m, "jsonrpc") !== "2.0") return "dropped";
  const result = getField(m, "result");
  const error = getField(m, "error");
  if (result === undefined && error === undefined) return "dropped";
  if (result !== undefined && (!isObject(result) || Array.isArray(result))) return "dropped";
  if (error !== undefined) {
    const code = getField(error, "code");
    const integer = (typeof code === "number" && Number.isInteger(code)) || typeof code === "bigint";
    if (!isObject(error) || !integer || typeof getField(error, "message") !== "string") return "dropped";
  }
  if (result !== undefined && error !== undefined) return "disputed";
  if (!isObject(m)) return "dropped";
  for (const [k] of entries(m)) {
    if (k !== "jsonrpc" && k !== "id" && k !== "result" && k !== "error") return "disputed";
  }
  return undefined;
}
