/**
 * What `seam mock` answers from: each answered request of a ledger that a
 * payload can stand in for, keyed by what the request asked. A row names
 * the request by the fields it keeps (docs/ledger-format.md, "Rows"):
 *
 *   initialize, server/discover   any params: the answer recorded
 *   tools/list                    params.cursor (none for the first page)
 *   tools/call, prompts/get       the tool or prompt name and the digest of params.arguments
 *   resources/read                params.uri
 *   resources/list, prompts/list, the digest of params (client_request rows)
 *   resources/templates/list,
 *   completion/complete
 *
 * and the answer by the digest of its result or error (`result_digest`;
 * for tools/list, `tools_digest`, the digest of result.tools), whose bytes
 * the payload store keeps.
 */
import { digestJsonUtf8, digestParts, type Recipe } from "../core/digest.ts";
import { getField, type Json, type JsonObject } from "../core/json.ts";
import { isSeamsOwn } from "../format/row.ts";
import { PARAMS_ROWED_METHODS } from "../observe/request-rows.ts";

/** One recorded answer. */
export interface Recorded {
  method: string;
  /** What the request asked, as lookups compare it (requestKey). */
  key: string;
  /** The request, as an error message names it: `tools/call "echo"`. */
  label: string;
  session: string;
  /** The digest of the payload the answer is spliced from. */
  digest: string;
  /** The payload is a JSON-RPC error object, not a result. */
  error: boolean;
  /** tools/list: the next page's cursor the answer named. */
  nextCursor?: string;
}

/** Rows whose status means the request was never answered: nothing to serve. */
const UNANSWERED = new Set(["unanswered", "cancelled", "refused", "invalid_id"]);

/** The methods a mock answers, by the evt of their rows. */
const METHOD_OF_EVT: Record<string, string> = {
  mcp_initialize: "initialize",
  mcp_discover: "server/discover",
  tools_list: "tools/list",
  tool_call: "tools/call",
  prompt_get: "prompts/get",
  resource_read: "resources/read",
};

export const MOCKED_METHODS: readonly string[] = [...Object.values(METHOD_OF_EVT), ...PARAMS_ROWED_METHODS];

type Row = JsonObject | { readonly [k: string]: Json };

const str = (v: Json | undefined) => (typeof v === "string" ? v : undefined);

/** The answers of a ledger, in the order their rows were written. */
export class Recording {
  readonly answers: Recorded[] = [];
  /** The recipes of the argument digests the rows hold (json-c14n unless a ledger used jcs). */
  readonly recipes = new Set<Recipe>();

  /** `session`: only that session's rows (an id prefix will do). */
  constructor(private readonly session?: string) {}

  /** A row of the ledger, as the verifier hands it over (VerifyOptions' onRow). */
  row(row: Row): void {
    if (!isSeamsOwn(getField(row, "seam"))) return;
    const evt = str(getField(row, "evt")) ?? "";
    const method = evt === "client_request" ? str(getField(row, "method")) : METHOD_OF_EVT[evt];
    if (method === undefined || (evt === "client_request" && !PARAMS_ROWED_METHODS.has(method))) return;
    const session = str(getField(row, "session")) ?? "";
    if (this.session !== undefined && !session.startsWith(this.session)) return;
    const status = str(getField(row, "status"));
    if (status === undefined || UNANSWERED.has(status)) return;
    const digest = str(getField(row, method === "tools/list" ? "tools_digest" : "result_digest"));
    if (digest === undefined || digestParts(digest) === null) return;
    let asked: { key: string; label: string } | null;
    switch (method) {
      case "initialize":
      case "server/discover":
        asked = { key: "", label: method };
        break;
      case "tools/list": {
        const cursor = str(getField(row, "cursor"));
        asked = { key: cursor ?? "", label: cursor === undefined ? method : `${method} (cursor ${cursor})` };
        break;
      }
      case "resources/read": {
        const uri = str(getField(row, "uri"));
        asked = uri === undefined ? null : { key: uri, label: `${method} ${JSON.stringify(uri)}` };
        break;
      }
      case "resources/list":
      case "resources/templates/list":
      case "prompts/list":
      case "completion/complete": {
        const params = str(getField(row, "params_digest"));
        asked = params === undefined ? null : { key: params, label: method };
        break;
      }
      default: {
        const name = str(getField(row, method === "tools/call" ? "tool" : "prompt"));
        const args = str(getField(row, "args_digest"));
        const parts = args === undefined ? null : digestParts(args);
        if (name === undefined || parts === null) asked = null;
        else {
          this.recipes.add(parts.recipe);
          asked = { key: `${name}\u0000${args}`, label: `${method} ${JSON.stringify(name)}` };
        }
      }
    }
    if (asked === null) return;
    this.answers.push({
      method,
      ...asked,
      session,
      digest,
      error: getField(row, "error_code") !== undefined,
      nextCursor: method === "tools/list" ? str(getField(row, "next_cursor")) : undefined,
    });
  }

  /** The distinct digests of the payloads the answers are spliced from. */
  digests(): string[] {
    return [...new Set(this.answers.map((a) => a.digest))];
  }
}

/**
 * The keys a request may be recorded under (one per recipe the ledger's
 * argument digests use), or null when it is none a row could name.
 * `argumentBytes`: the bytes of params.arguments as they came (undefined
 * when absent, digested as `{}`, as rows do); for a method a client_request
 * row records, the bytes of params (absent: digested as null).
 */
export function requestKeys(
  method: string,
  params: Json | undefined,
  argumentBytes: Uint8Array | undefined,
  recipes: Iterable<Recipe>,
): string[] | null {
  switch (method) {
    case "initialize":
    case "server/discover":
      return [""];
    case "tools/list": {
      const cursor = getField(params ?? null, "cursor");
      return [typeof cursor === "string" ? cursor : ""];
    }
    case "resources/read": {
      const uri = getField(params ?? null, "uri");
      return typeof uri === "string" ? [uri] : null;
    }
    case "resources/list":
    case "resources/templates/list":
    case "prompts/list":
    case "completion/complete":
      return [argumentsDigest(argumentBytes ?? NO_PARAMS, "json-c14n")];
    case "tools/call":
    case "prompts/get": {
      const name = getField(params ?? null, "name");
      if (typeof name !== "string") return null;
      const bytes = argumentBytes ?? NO_ARGUMENTS;
      return [...recipes].map((r) => `${name}\u0000${argumentsDigest(bytes, r)}`);
    }
    default:
      return null;
  }
}

const NO_ARGUMENTS = new TextEncoder().encode("{}");
const NO_PARAMS = new TextEncoder().encode("null");

/** The digest of arguments as they came; none a row holds when they have no canonical form (jcs: a repeated key). */
function argumentsDigest(bytes: Uint8Array, recipe: Recipe): string {
  try {
    return digestJsonUtf8(bytes, recipe);
  } catch {
    return "undigestible";
  }
}
