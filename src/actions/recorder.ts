/**
 * Action mapping (`seam wrap --map FILE`): a mapped `tools/call` becomes a
 * business action, recorded in the ledger and, with an endpoint configured,
 * POSTed to it (src/actions/endpoint.ts) before the call is forwarded. The mapping
 * format and the API contract are CommitLayer's, so its recorder's mapping
 * files and endpoints work unchanged.
 *
 * The mapping file is src/actions/map.ts, the action a call makes
 * src/actions/build.ts.
 */
import { CanonicalError, compactForm } from "../core/canonical/index.ts";
import type { Json, JsonObject } from "../core/json.ts";
import type { ActionHook, ActionMade, ActionPosting } from "../observe/observer-options.ts";
import { buildAction, idText } from "./build.ts";
import { ALREADY_RECORDED, type Endpoint, type PostResult, postAction } from "./endpoint.ts";
import { type ActionMap, ruleFor } from "./map.ts";

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

/** The --map strategy the observer calls for each tools/call (see ActionHook in src/observe/observer-options.ts). */
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
