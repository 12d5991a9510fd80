/**
 * The action a mapped tools/call makes (src/actions/map.ts says which
 * tools are mapped, and how).
 *
 * The action, in this key order (absent values omitted):
 *
 *   {"action_id": "refund:o-1", "contract_id": "refund_workflow", "subject_id": "o-1",
 *    "subject_kind": "order", "action_type": "refund_order", "agent_id": "support-bot",
 *    "workflow_id": "refunds", "requested_at": "YYYY-MM-DDT03:24:07.123Z",
 *    "params": {"amount": 180, "currency": "USD", "mcp_tool": "refund_payment", "mcp_request_id": "7"},
 *    "channel": "mcp", "compensates": "refund:o-0", "contract_version": 2}
 *
 * `params` values are copied as they came (1.0 stays a float, a 20-digit
 * integer stays exact); `subject_id`, `compensates` and placeholders are
 * text: a string as it is, a number or boolean as its JSON text, and so is
 * `mcp_request_id`, as the API's documented body has it (the rows keep the
 * exact JSON-RPC id in `rpc_id` beside it). The POST body
 * is the action's json-c14n form (src/core/canonical/reference.ts compactForm: sorted keys,
 * no spaces), so its SHA-256 is the action's `sha256:json-c14n:v1` digest.
 */
import { compactForm } from "../core/canonical/index.ts";
import { type Json, JsonFloat, type JsonObject } from "../core/json.ts";
import type { ToolRule } from "./map.ts";
import { resolvePath } from "./paths.ts";

/** A value as identifier text: a string as it is, a number or boolean as its JSON text; else undefined. */
export function idText(v: Json | undefined): string | undefined {
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "bigint" || typeof v === "boolean" || v instanceof JsonFloat) {
    try {
      return compactForm(v);
    } catch {
      return undefined; // NaN and ±Infinity name nothing
    }
  }
  return undefined;
}

export interface CallSeen {
  tool: string;
  id: Json;
  params: Json | undefined;
  /** When the call was seen. */
  at: Date;
}

/** The action for a call under `rule` (in the documented key order), or why none can be made. */
export function buildAction(
  rule: ToolRule,
  call: CallSeen,
  ids: { agentId?: string; workflowId?: string } = {},
): { action: JsonObject } | { skipped: string } {
  const params = call.params;
  const subjectValue = resolvePath(params, rule.subject);
  const subjectId = idText(subjectValue);
  if (subjectId === undefined) return { skipped: `subject ${rule.subject.text} is ${describeMissing(subjectValue)}` };
  let actionId: string;
  if (rule.actionId !== undefined) {
    const t = rule.actionId;
    actionId = t.literals[0]!;
    for (let i = 0; i < t.paths.length; i++) {
      const v = resolvePath(params, t.paths[i]!);
      const s = idText(v);
      if (s === undefined) return { skipped: `action_id placeholder {${t.paths[i]!.text}} is ${describeMissing(v)}` };
      actionId += s + t.literals[i + 1]!;
    }
  } else {
    actionId = `mcp:${call.tool}:${idText(call.id) ?? ""}`;
  }
  const mapped = new Map<string, Json>();
  for (const [name, path] of rule.params) {
    const v = resolvePath(params, path);
    if (v !== undefined) mapped.set(name, v);
  }
  mapped.set("mcp_tool", call.tool);
  mapped.set("mcp_request_id", idText(call.id) ?? "");
  const action: JsonObject = new Map<string, Json>();
  const put = (k: string, v: Json | undefined) => {
    if (v !== undefined) action.set(k, v);
  };
  put("action_id", actionId);
  put("contract_id", rule.contractId);
  put("subject_id", subjectId);
  put("subject_kind", rule.subjectKind);
  put("action_type", rule.actionType);
  put("agent_id", ids.agentId);
  put("workflow_id", ids.workflowId);
  put("requested_at", call.at.toISOString());
  put("params", mapped);
  put("channel", "mcp");
  if (rule.compensates !== undefined) put("compensates", idText(resolvePath(params, rule.compensates)));
  put("contract_version", rule.contractVersion);
  return { action };
}

function describeMissing(v: Json | undefined): string {
  if (v === undefined) return "absent";
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array, not a string or number";
  if (v instanceof JsonFloat || typeof v === "number") return "not a finite number";
  return "an object, not a string or number";
}
