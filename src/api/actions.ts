/**
 * seam's action mapping (`seam wrap --map`) as a library: load and validate a
 * mapping, build the action a `tools/call` makes, and decide whether a call
 * goes on after its posting. The mapping format and the action body are
 * CommitLayer's; see docs/wrap.md, "Record business actions". Nothing here posts,
 * prints or reads the environment.
 *
 *   import { loadActionMap, actionFor } from "seam-mcp/actions";
 *   const map = await loadActionMap(text, "mapping.json");
 *   const a = actionFor(map, { name: "refund_payment", id: 7, params: '{"name":"refund_payment","arguments":{…}}' });
 *   if (a.kind === "action") await fetch(url, { method: "POST", body: a.body, … });
 */

import { buildAction } from "../actions/build.ts";
import { type ActionMap, parseActionMap, ruleFor } from "../actions/map.ts";
import { SeamError } from "../base/error.ts";
import { UsageError } from "../base/exit.ts";
import { compactForm } from "../core/canonical/index.ts";
import { digestJson } from "../core/digest.ts";
import { type Json, parseJson } from "../core/json.ts";
import { JsonParseError } from "../core/json-error.ts";

export { DEFAULT_API_URL, isRecordedStatus } from "../actions/endpoint.ts";
export type { ActionMap } from "../actions/map.ts";

/** A mapping that cannot be used; the message names the file, the tool and the key, as `seam wrap` says it. */
export class ActionMapError extends SeamError {
  override readonly name = "ActionMapError";
  constructor(message: string) {
    super("action_map", message);
  }
}

/** Parses and validates a mapping (JSON, or YAML when `source` ends in .yaml/.yml). */
export async function loadActionMap(text: string, source = "mapping.json"): Promise<ActionMap> {
  try {
    return await parseActionMap(text, source);
  } catch (err) {
    if (err instanceof UsageError) throw new ActionMapError(err.message);
    throw err;
  }
}

export interface ToolCall {
  /** The tool's name (`params.name`). */
  name: string;
  /** The JSON-RPC id: a number, a bigint for large integers, or a string. */
  id: string | number | bigint;
  /** The `params` object of the tools/call request, as JSON text (numbers stay exact). */
  params: string;
  /** When the call was seen (default: now): the action's `requested_at`. */
  at?: Date;
}

export type ActionOutcome =
  | { kind: "unmapped" }
  | { kind: "skipped"; reason: string }
  | {
      kind: "action";
      /** The POST body: the action's json-c14n form (sorted keys, exact numbers). */
      body: string;
      /** `sha256:json-c14n:v1:…` of the action: the SHA-256 of `body`. */
      digest: string;
      /** The action as plain JSON (integers beyond 2^53 lose precision here; `body` keeps them). */
      action: Record<string, unknown>;
    };

/**
 * The action a tools/call makes under `map`: none for an unmapped tool, a
 * reason when a mapped call lacks what its rule needs (the call then goes on
 * without one), else the action.
 */
export function actionFor(
  map: ActionMap,
  call: ToolCall,
  ids: { agentId?: string; workflowId?: string } = {},
): ActionOutcome {
  const rule = ruleFor(map, call.name);
  if (rule === undefined) return { kind: "unmapped" };
  let params: Json;
  try {
    params = parseJson(call.params);
  } catch (err) {
    return { kind: "skipped", reason: err instanceof JsonParseError ? `params: ${err.message}` : String(err) };
  }
  const built = buildAction(
    rule,
    { tool: call.name, id: call.id, params, at: call.at ?? new Date() },
    { agentId: ids.agentId ?? map.agentId, workflowId: ids.workflowId ?? map.workflowId },
  );
  if ("skipped" in built) return { kind: "skipped", reason: built.skipped };
  const body = compactForm(built.action);
  return { kind: "action", body, digest: digestJson(built.action), action: JSON.parse(body) };
}

/**
 * Whether a mapped call goes on, given how posting its action went: always
 * when posted (a 409 for a retried action counts as posted); otherwise only
 * when failing open (the default; `--no-fail-open` refuses it).
 */
export function shouldForward(posted: boolean, options: { failOpen?: boolean } = {}): boolean {
  return posted || options.failOpen !== false;
}
