/**
 * Action mapping (`seam wrap --map FILE`): a mapped `tools/call` becomes a
 * business action, recorded in the ledger and, with an endpoint configured,
 * POSTed to it (src/wrap/endpoint.ts) before the call is forwarded. The mapping
 * format and the API contract are CommitLayer's, so its recorder's mapping
 * files and endpoints work unchanged.
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
 *
 * The action, in this key order (absent values omitted):
 *
 *   {"action_id": "refund:o-1", "contract_id": "refund_workflow", "subject_id": "o-1",
 *    "subject_kind": "order", "action_type": "refund_order", "agent_id": "support-bot",
 *    "workflow_id": "refunds", "requested_at": "2026-11-30T03:24:07.123Z",
 *    "params": {"amount": 180, "currency": "USD", "mcp_tool": "refund_payment", "mcp_request_id": "7"},
 *    "channel": "mcp", "compensates": "refund:o-0", "contract_version": 2}
 *
 * `params` values are copied as they came (1.0 stays a float, a 20-digit
 * integer stays exact); `subject_id`, `compensates` and placeholders are
 * text: a string as it is, a number or boolean as its JSON text, and so is
 * `mcp_request_id`, as the API's documented body has it (the rows keep the
 * exact JSON-RPC id in `rpc_id` beside it). The POST body
 * is the action's json-c14n form (src/core/canonical.ts compactForm: sorted keys,
 * no spaces), so its SHA-256 is the action's `sha256:json-c14n:v1` digest.
 */
import { CanonicalError, compactForm } from "../core/canonical.ts";
import { digestBytes } from "../core/digest.ts";
import { ALREADY_RECORDED, type Endpoint, type PostResult, postAction } from "./endpoint.ts";
import { UsageError } from "../base/exit.ts";
import {
  type Json,
  type JsonObject,
  JsonFloat,
  JsonParseError,
  entries,
  getField,
  isObject,
  parseJson,
} from "../core/json.ts";
import type { ActionHook, ActionMade, ActionPosting } from "./mcp.ts";

/** A dotted path, split. */
export interface Path {
  readonly text: string;
  readonly segments: readonly string[];
}

/** An action_id template: literal text and placeholder paths, alternating (literal first and last). */
export interface Template {
  readonly text: string;
  readonly literals: readonly string[];
  readonly paths: readonly Path[];
}

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

/** A dotted path, or why the text is not one. */
export function parsePath(text: string): Path | string {
  if (text === "") return "it is empty";
  const segments = text.split(".");
  for (const s of segments) {
    if (s === "") return "an empty segment (two dots, or a dot at an end)";
    if (/[[\]]/.test(s)) return "brackets are not path syntax (write arguments.items.0 for an array element)";
    if (/[{}]/.test(s)) return "braces belong in action_id templates, not in paths";
    if (/\s/.test(s)) return "a segment with white space";
  }
  return { text, segments };
}

/** An action_id template, or why the text is not one. */
export function parseTemplate(text: string): Template | string {
  const literals: string[] = [];
  const paths: Path[] = [];
  let lit = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "}") return `a "}" at ${i + 1} closes nothing`;
    if (c !== "{") {
      lit += c;
      continue;
    }
    const close = text.indexOf("}", i + 1);
    const open = text.indexOf("{", i + 1);
    if (close < 0) return `the "{" at ${i + 1} is never closed`;
    if (open >= 0 && open < close) return `a "{" inside the placeholder at ${i + 1}`;
    const inner = text.slice(i + 1, close);
    const p = parsePath(inner);
    if (typeof p === "string") return `placeholder {${inner}}: ${p}`;
    literals.push(lit);
    paths.push(p);
    lit = "";
    i = close;
  }
  literals.push(lit);
  return { text, literals, paths };
}

/** The value at `path` in `root`; undefined when any step is missing. */
export function resolvePath(root: Json | undefined, path: Path): Json | undefined {
  let v: Json | undefined = root;
  for (const s of path.segments) {
    if (v === undefined) return undefined;
    if (Array.isArray(v)) {
      if (!/^(0|[1-9][0-9]*)$/.test(s)) return undefined;
      const i = Number(s);
      v = i < v.length ? v[i] : undefined;
    } else {
      v = getField(v, s);
    }
  }
  return v;
}

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

/** The rule for a called tool: the exact key, else the one prefixed key with that bare name. */
export function ruleFor(map: ActionMap, tool: string): ToolRule | undefined {
  const exact = map.tools.get(tool);
  if (exact !== undefined) return exact;
  const key = map.bare.get(tool);
  return key === undefined ? undefined : map.tools.get(key);
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

export interface ActionSettings {
  map: ActionMap;
  /** --agent-id / --workflow-id: override the file's. */
  agentId?: string;
  workflowId?: string;
  /** Where to post; absent: actions go to the ledger only. A missing key means nothing is posted. */
  endpoint?: { url: string; key?: string; timeoutMs: number };
  /** false (--no-fail-open): a call whose action could not be posted is refused. */
  failOpen: boolean;
  /** --warn-unmapped: one line per unmapped tool name, the first time it is called. */
  warnUnmapped: boolean;
}

export interface ActionDeps {
  warn: (message: string) => void;
  /** Said once at start: where actions are posted. */
  info?: (message: string) => void;
  now?: () => Date;
  post?: (ep: Endpoint, body: string) => Promise<PostResult>;
}

/** The --map strategy the observer calls for each tools/call (see ActionHook in src/wrap/mcp.ts). */
export class ActionRecorder implements ActionHook {
  private readonly endpoint: Endpoint | undefined;
  private readonly warnedUnmapped = new Set<string>();
  private readonly now: () => Date;
  private readonly post: (ep: Endpoint, body: string) => Promise<PostResult>;

  constructor(
    private readonly s: ActionSettings,
    private readonly deps: ActionDeps,
  ) {
    this.now = deps.now ?? (() => new Date());
    this.post = deps.post ?? postAction;
    const ep = s.endpoint;
    if (ep === undefined || !ep.key) {
      deps.warn(
        `COMMITLAYER_API_KEY is not set: actions are recorded in the ledger only, nothing is posted${ep ? ` to ${ep.url}` : ""}`,
      );
    } else {
      (deps.info ?? deps.warn)(`actions are posted to ${ep.url} before each mapped call is forwarded`);
    }
    this.endpoint = ep?.key ? { url: ep.url, key: ep.key, timeoutMs: ep.timeoutMs } : undefined;
  }

  /** Fields for session_begin: which mapping, and where actions are posted. */
  beginFields(): Record<string, Json | undefined> {
    return {
      action_map_digest: this.s.map.digest,
      action_endpoint: this.endpoint?.url,
      action_fail_open: this.endpoint && !this.s.failOpen ? false : undefined,
    };
  }

  make(tool: string | undefined, id: Json, params: Json | undefined): ActionMade | undefined {
    try {
      return this.makeUnsafe(tool, id, params);
    } catch (err) {
      // Not expected; the relay must never see it.
      return { skipped: `internal error: ${err instanceof Error ? err.message : String(err)}` };
    }
  }

  private makeUnsafe(tool: string | undefined, id: Json, params: Json | undefined): ActionMade | undefined {
    const at = this.now();
    if (tool === undefined) return undefined;
    const rule = ruleFor(this.s.map, tool);
    if (rule === undefined) {
      if (this.s.warnUnmapped && !this.warnedUnmapped.has(tool)) {
        this.warnedUnmapped.add(tool);
        this.deps.warn(`tool ${JSON.stringify(tool)} is not in the mapping: its calls make no action`);
      }
      return undefined;
    }
    const built = buildAction(
      rule,
      { tool, id, params, at },
      {
        agentId: this.s.agentId ?? this.s.map.agentId,
        workflowId: this.s.workflowId ?? this.s.map.workflowId,
      },
    );
    if ("skipped" in built) {
      this.deps.warn(
        `tools/call ${idText(id)} to ${JSON.stringify(tool)} makes no action: ${built.skipped}; the call is forwarded`,
      );
      return built;
    }
    return { action: built.action, posting: this.send(built.action, tool, id) };
  }

  private async send(action: JsonObject, tool: string, id: Json): Promise<ActionPosting> {
    const ep = this.endpoint;
    if (ep === undefined) return {};
    let outcome: PostResult;
    try {
      outcome = await this.post(ep, compactForm(action));
    } catch (err) {
      const why = err instanceof CanonicalError ? err.message : String(err);
      outcome = { ok: false, reason: `the action has no JSON form to send (${why})` };
    }
    if (outcome.ok)
      return outcome.status === ALREADY_RECORDED ? { posted: true, existing: outcome.status } : { posted: true };
    const refuse = !this.s.failOpen;
    this.deps.warn(
      `action ${JSON.stringify(action.get("action_id"))} for tools/call ${idText(id)} to ${JSON.stringify(tool)} was not posted: ${outcome.reason}; ${refuse ? "the call is refused" : "the call is forwarded"}`,
    );
    return { posted: false, error: outcome.reason, refuse };
  }
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
