/**
 * The action mapping file of `seam wrap --map FILE` (src/actions/recorder.ts):
 * reading it and checking it before the server starts.
 *
 * Mapping file (JSON, or YAML for a .yaml/.yml name):
 *
 *   {"agent_id": "support-bot", "workflow_id": "refunds",
 *    "tools": {"refund_payment": {
 *      "contract_id": "refund_workflow", "contract_version": 2, "action_type": "refund_order",
 *      "subject": "arguments.order_id", "subject_kind": "order",
 *      "params": {"amount": "arguments.amount", "currency": "arguments.currency"},
 *      "action_id": "refund:{arguments.order_id}",
 *      "compensates": "arguments.original_action_id"}}}
 *
 * A key under `tools` matches the tool of that name; `stripe.refund_payment`
 * (a server prefix before the first dot) also matches `refund_payment` when
 * no key is exactly `refund_payment`. Paths are dotted, into the tools/call
 * `params` object (`arguments.items.0`, `name`, `_meta.progressToken`); a
 * segment of digits indexes an array. `action_id` is a template of literal
 * text and `{path}` placeholders; without it the id is `mcp:{tool}:{request id}`.
 */
import { UsageError } from "../base/exit.ts";
import { digestBytes } from "../core/digest.ts";
import { entries, getField, isObject, type Json, JsonFloat, type JsonObject, parseJson } from "../core/json.ts";
import { JsonParseError } from "../core/json-error.ts";
import { type Path, parsePath, parseTemplate, type Template } from "./paths.ts";

export interface ToolRule {
  /** The key in the mapping file. */
  readonly key: string;
  readonly contractId: string;
  readonly contractVersion?: number | bigint;
  readonly actionType?: string;
  readonly subject: Path;
  readonly subjectKind?: string;
  readonly params: readonly (readonly [string, Path])[];
  readonly actionId?: Template;
  readonly compensates?: Path;
}

export interface ActionMap {
  readonly agentId?: string;
  readonly workflowId?: string;
  /** By key, in file order. */
  readonly tools: ReadonlyMap<string, ToolRule>;
  /** Bare name → the one prefixed key that matches it. */
  readonly bare: ReadonlyMap<string, string>;
  /** sha256:raw-bytes:v1 of the file as read. */
  readonly digest: string;
}

const YAML_NAME = /\.ya?ml$/i;
const MAX_YAML_DEPTH = 100;

/**
 * Parses and validates a mapping file's text; `source` is its name (for
 * messages, and .yaml/.yml means YAML). Throws UsageError naming the tool and
 * the key for anything wrong, so seam stops with exit 2 before the server starts.
 * The YAML library is loaded only for a YAML file.
 */
export async function parseActionMap(text: string, source: string): Promise<ActionMap> {
  const where = `mapping ${source}`;
  let root: Json;
  if (YAML_NAME.test(source)) {
    root = await parseYaml(text, where);
  } else {
    try {
      root = parseJson(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, { rejectDuplicateKeys: true });
    } catch (err) {
      throw new UsageError(`${where}: not valid JSON: ${err instanceof JsonParseError ? err.message : String(err)}`);
    }
  }
  return validateMap(root, where, digestBytes(new TextEncoder().encode(text)));
}

function validateMap(root: Json, where: string, digest: string): ActionMap {
  if (!isObject(root)) throw new UsageError(`${where}: the file must hold an object with a "tools" key`);
  const str = (key: string): string | undefined => {
    const v = getField(root, key);
    if (v === undefined) return undefined;
    if (typeof v !== "string" || v === "") throw new UsageError(`${where}, key ${key}: must be a non-empty string`);
    return v;
  };
  const agentId = str("agent_id");
  const workflowId = str("workflow_id");
  const toolsField = getField(root, "tools");
  if (toolsField === undefined) throw new UsageError(`${where}: no "tools" key, so no tool is mapped`);
  if (!isObject(toolsField)) throw new UsageError(`${where}, key tools: must be an object of tool name → mapping`);
  const tools = new Map<string, ToolRule>();
  for (const [name, spec] of entries(toolsField)) {
    if (name === "") throw new UsageError(`${where}: a tool with an empty name`);
    tools.set(name, validateTool(name, spec, `${where}: tool ${JSON.stringify(name)}`));
  }
  // A prefixed key matches its bare name unless another key claims the same bare name.
  const bare = new Map<string, string>();
  const claimed = new Map<string, string[]>();
  for (const key of tools.keys()) {
    const dot = key.indexOf(".");
    if (dot <= 0 || dot === key.length - 1) continue;
    const name = key.slice(dot + 1);
    if (tools.has(name)) continue; // an exact key wins
    claimed.set(name, [...(claimed.get(name) ?? []), key]);
  }
  for (const [name, keys] of claimed) {
    if (keys.length > 1) {
      throw new UsageError(
        `${where}: tools ${keys.map((k) => JSON.stringify(k)).join(" and ")} both match a call to ${JSON.stringify(name)}`,
        `add a key ${JSON.stringify(name)} or keep one of them`,
      );
    }
    bare.set(name, keys[0]!);
  }
  return { agentId, workflowId, tools, bare, digest };
}

function validateTool(key: string, spec: Json, where: string): ToolRule {
  if (!isObject(spec)) throw new UsageError(`${where}: its mapping must be an object`);
  const bad = (field: string, problem: string, hint?: string): never => {
    throw new UsageError(`${where}, key ${field}: ${problem}`, hint);
  };
  const text = (field: string, required: boolean): string | undefined => {
    const v = getField(spec, field);
    if (v === undefined) return required ? bad(field, "missing (every mapped tool needs one)") : undefined;
    if (typeof v !== "string" || v === "") return bad(field, "must be a non-empty string");
    return v;
  };
  const path = (field: string, required: boolean): Path | undefined => {
    const t = text(field, required);
    if (t === undefined) return undefined;
    const p = parsePath(t);
    return typeof p === "string" ? bad(field, `${JSON.stringify(t)} is not a dotted path: ${p}`, PATH_HINT) : p;
  };
  const contractId = text("contract_id", true)!;
  const subject = path("subject", true)!;
  const version = getField(spec, "contract_version");
  if (
    version !== undefined &&
    !((typeof version === "number" && Number.isInteger(version)) || typeof version === "bigint")
  ) {
    bad("contract_version", "must be an integer");
  }
  const paramsField = getField(spec, "params");
  const params: [string, Path][] = [];
  if (paramsField !== undefined) {
    if (!isObject(paramsField)) bad("params", "must be an object of name → path");
    for (const [name, v] of entries(paramsField as JsonObject)) {
      const field = `params.${name}`;
      if (name === "") bad("params", "a parameter with an empty name");
      if (typeof v !== "string" || v === "") bad(field, "must be a path (a non-empty string)");
      const p = parsePath(v as string);
      if (typeof p === "string") bad(field, `${JSON.stringify(v)} is not a dotted path: ${p}`, PATH_HINT);
      params.push([name, p as Path]);
    }
  }
  const idText = text("action_id", false);
  let actionId: Template | undefined;
  if (idText !== undefined) {
    const t = parseTemplate(idText);
    if (typeof t === "string")
      bad(
        "action_id",
        `${JSON.stringify(idText)} is not a template: ${t}`,
        "write literal text with {path} placeholders, e.g. refund:{arguments.order_id}",
      );
    actionId = t as Template;
  }
  return {
    key,
    contractId,
    contractVersion: version as number | bigint | undefined,
    actionType: text("action_type", false),
    subject,
    subjectKind: text("subject_kind", false),
    params,
    actionId,
    compensates: path("compensates", false),
  };
}

const PATH_HINT =
  "a path is keys joined by dots into the tools/call params, e.g. arguments.order_id or arguments.items.0";

/** The rule for a called tool: the exact key, else the one prefixed key with that bare name. */
export function ruleFor(map: ActionMap, tool: string): ToolRule | undefined {
  const exact = map.tools.get(tool);
  if (exact !== undefined) return exact;
  const key = map.bare.get(tool);
  return key === undefined ? undefined : map.tools.get(key);
}

// ---- YAML ----

async function parseYaml(text: string, where: string): Promise<Json> {
  const YAML = await import("yaml");
  const doc = YAML.parseDocument(text, { intAsBigInt: true, uniqueKeys: true, prettyErrors: true });
  if (doc.errors.length > 0) {
    throw new UsageError(`${where}: not valid YAML: ${doc.errors[0]!.message.split("\n")[0]}`);
  }
  let js: unknown;
  try {
    js = doc.toJS({ mapAsMap: true, maxAliasCount: 100 });
  } catch (err) {
    throw new UsageError(
      `${where}: not usable YAML: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`,
    );
  }
  return fromYaml(js, where, 0);
}

/**
 * YAML's values in the lossless JSON model. With intAsBigInt every YAML int
 * arrives as a bigint, so a JS number is always a YAML float (`1.0` stays a
 * float, as it does in a JSON map).
 */
function fromYaml(v: unknown, where: string, depth: number): Json {
  if (depth > MAX_YAML_DEPTH) throw new UsageError(`${where}: nested too deep`);
  if (v === null || typeof v === "string" || typeof v === "boolean") return v;
  if (typeof v === "bigint")
    return v >= -BigInt(Number.MAX_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
  if (typeof v === "number") return Number.isInteger(v) || !Number.isFinite(v) ? new JsonFloat(v) : v;
  if (Array.isArray(v)) return v.map((x) => fromYaml(x, where, depth + 1));
  if (v instanceof Map) {
    const out: JsonObject = new Map();
    for (const [k, x] of v) {
      if (typeof k !== "string" && typeof k !== "number" && typeof k !== "bigint" && typeof k !== "boolean") {
        throw new UsageError(`${where}: a key that is not text`);
      }
      out.set(String(k), fromYaml(x, where, depth + 1));
    }
    return out;
  }
  throw new UsageError(`${where}: a YAML value of a kind JSON does not have`);
}
