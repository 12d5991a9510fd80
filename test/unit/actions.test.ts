/**
 * Action mapping (src/actions/recorder.ts) and its place in the observer (src/observe/observer.ts):
 * loading and validation, paths, templates, the action built for a call, the
 * POST body, and holding / refusing a call — all with literal expectations.
 */
import { describe, expect, test } from "bun:test";
import { buildAction } from "../../src/actions/build.ts";
import type { Endpoint, PostResult } from "../../src/actions/endpoint.ts";
import { type ActionMap, parseActionMap, ruleFor } from "../../src/actions/map.ts";
import { parsePath, parseTemplate, resolvePath } from "../../src/actions/paths.ts";
import { ActionRecorder, type ActionSettings } from "../../src/actions/recorder.ts";
import { UsageError } from "../../src/base/exit.ts";
import { compactForm, lineForm } from "../../src/core/canonical/index.ts";
import { digestBytes, digestJson } from "../../src/core/digest.ts";
import { type Json, parseJson } from "../../src/core/json.ts";
import { McpObserver } from "../../src/observe/observer.ts";
import type { Fields } from "../../src/observe/observer-options.ts";

const AT = new Date("2026-11-30T03:24:07.123Z");

const REFUND_JSON = `{ "agent_id": "support-bot", "workflow_id": "refunds",
  "tools": { "refund_payment": {
      "contract_id": "refund_workflow", "action_type": "refund_order",
      "subject": "arguments.order_id", "subject_kind": "order",
      "params": {"amount": "arguments.amount", "currency": "arguments.currency"},
      "action_id": "refund:{arguments.order_id}",
      "compensates": "arguments.original_action_id" } } }`;

const REFUND_YAML = `# the same mapping as REFUND_JSON
agent_id: support-bot
workflow_id: refunds
tools:
  refund_payment:
    contract_id: refund_workflow
    action_type: refund_order
    subject: arguments.order_id
    subject_kind: order
    params:
      amount: arguments.amount
      currency: arguments.currency
    action_id: "refund:{arguments.order_id}"
    compensates: arguments.original_action_id
`;

async function usageError(text: string, source: string): Promise<string> {
  try {
    await parseActionMap(text, source);
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error("expected a UsageError");
}

const tool = (spec: string) => `{"tools": {"pay": ${spec}}}`;

describe("loading and validating a mapping", () => {
  const bad: [string, string, string][] = [
    [
      "missing contract_id",
      tool(`{"subject": "arguments.id"}`),
      `mapping m.json: tool "pay", key contract_id: missing (every mapped tool needs one)`,
    ],
    [
      "missing subject",
      tool(`{"contract_id": "c"}`),
      `mapping m.json: tool "pay", key subject: missing (every mapped tool needs one)`,
    ],
    [
      "empty contract_id",
      tool(`{"contract_id": "", "subject": "a"}`),
      `mapping m.json: tool "pay", key contract_id: must be a non-empty string`,
    ],
    [
      "contract_id not a string",
      tool(`{"contract_id": 7, "subject": "a"}`),
      `mapping m.json: tool "pay", key contract_id: must be a non-empty string`,
    ],
    [
      "float contract_version",
      tool(`{"contract_id": "c", "subject": "a", "contract_version": 1.0}`),
      `mapping m.json: tool "pay", key contract_version: must be an integer`,
    ],
    [
      "string contract_version",
      tool(`{"contract_id": "c", "subject": "a", "contract_version": "2"}`),
      `mapping m.json: tool "pay", key contract_version: must be an integer`,
    ],
    [
      "double dot in subject",
      tool(`{"contract_id": "c", "subject": "arguments..id"}`),
      `mapping m.json: tool "pay", key subject: "arguments..id" is not a dotted path: an empty segment (two dots, or a dot at an end)`,
    ],
    [
      "brackets in a param",
      tool(`{"contract_id": "c", "subject": "a", "params": {"x": "arguments.items[0]"}}`),
      `mapping m.json: tool "pay", key params.x: "arguments.items[0]" is not a dotted path: brackets are not path syntax (write arguments.items.0 for an array element)`,
    ],
    [
      "param not a string",
      tool(`{"contract_id": "c", "subject": "a", "params": {"x": 3}}`),
      `mapping m.json: tool "pay", key params.x: must be a path (a non-empty string)`,
    ],
    [
      "params not an object",
      tool(`{"contract_id": "c", "subject": "a", "params": ["a"]}`),
      `mapping m.json: tool "pay", key params: must be an object of name → path`,
    ],
    [
      "unclosed placeholder",
      tool(`{"contract_id": "c", "subject": "a", "action_id": "refund:{arguments.id"}`),
      `mapping m.json: tool "pay", key action_id: "refund:{arguments.id" is not a template: the "{" at 8 is never closed`,
    ],
    [
      "stray close",
      tool(`{"contract_id": "c", "subject": "a", "action_id": "r}"}`),
      `mapping m.json: tool "pay", key action_id: "r}" is not a template: a "}" at 2 closes nothing`,
    ],
    [
      "empty placeholder",
      tool(`{"contract_id": "c", "subject": "a", "action_id": "r:{}"}`),
      `mapping m.json: tool "pay", key action_id: "r:{}" is not a template: placeholder {}: it is empty`,
    ],
    [
      "bad path in placeholder",
      tool(`{"contract_id": "c", "subject": "a", "action_id": "r:{a.}"}`),
      `mapping m.json: tool "pay", key action_id: "r:{a.}" is not a template: placeholder {a.}: an empty segment (two dots, or a dot at an end)`,
    ],
    [
      "nested placeholder",
      tool(`{"contract_id": "c", "subject": "a", "action_id": "{a{b}}"}`),
      `mapping m.json: tool "pay", key action_id: "{a{b}}" is not a template: a "{" inside the placeholder at 1`,
    ],
    [
      "compensates with space",
      tool(`{"contract_id": "c", "subject": "a", "compensates": "arguments.original id"}`),
      `mapping m.json: tool "pay", key compensates: "arguments.original id" is not a dotted path: a segment with white space`,
    ],
    ["tool spec not an object", tool(`"refund"`), `mapping m.json: tool "pay": its mapping must be an object`],
    ["no tools", `{"agent_id": "a"}`, `mapping m.json: no "tools" key, so no tool is mapped`],
    ["tools not an object", `{"tools": []}`, `mapping m.json, key tools: must be an object of tool name → mapping`],
    ["root not an object", `[]`, `mapping m.json: the file must hold an object with a "tools" key`],
    [
      "agent_id not a string",
      `{"agent_id": 1, "tools": {}}`,
      `mapping m.json, key agent_id: must be a non-empty string`,
    ],
    ["not JSON", `{"tools": }`, `mapping m.json: not valid JSON: `],
    ["a repeated key", `{"tools": {}, "tools": {}}`, `mapping m.json: not valid JSON: `],
    [
      "two prefixed keys claim one bare name",
      `{"tools": {"stripe.refund": {"contract_id": "c", "subject": "a"}, "paypal.refund": {"contract_id": "c", "subject": "a"}}}`,
      `mapping m.json: tools "stripe.refund" and "paypal.refund" both match a call to "refund"`,
    ],
  ];
  test.each(bad)("%s", async (_name, text, message) => {
    expect(await usageError(text, "m.json")).toStartWith(message);
  });

  test("invalid JSON says where", async () => {
    expect(await usageError(`{"tools": }`, "m.json")).toMatch(
      /^mapping m\.json: not valid JSON: .* at line 1 column 11$/,
    );
  });

  test("invalid YAML names the file and the problem", async () => {
    expect(await usageError("tools:\n  pay: [unclosed\n", "m.yaml")).toStartWith("mapping m.yaml: not valid YAML: ");
    expect(await usageError("tools: {}\ntools: {}\n", "m.yml")).toStartWith(
      "mapping m.yml: not valid YAML: Map keys must be unique",
    );
    expect(await usageError("tools:\n  pay:\n    subject: a\n", "m.yaml")).toBe(
      `mapping m.yaml: tool "pay", key contract_id: missing (every mapped tool needs one)`,
    );
    expect(await usageError("tools:\n  pay: {contract_id: c, subject: a, contract_version: 1.0}\n", "m.yaml")).toBe(
      `mapping m.yaml: tool "pay", key contract_version: must be an integer`,
    );
    expect(await usageError("", "m.yaml")).toBe(`mapping m.yaml: the file must hold an object with a "tools" key`);
  });

  test("unknown keys are allowed and ignored; the digest is of the file's bytes", async () => {
    const text = `{"tools": {"pay": {"contract_id": "c", "subject": "arguments.id", "colour": "blue"}}, "version": 3}`;
    const map = await parseActionMap(text, "m.json");
    expect([...map.tools.keys()]).toEqual(["pay"]);
    expect(map.digest).toBe(digestBytes(new TextEncoder().encode(text)));
  });

  test("an exact key wins; a server-prefixed key also matches the bare name", async () => {
    const map = await parseActionMap(
      `{"tools": {"stripe.refund": {"contract_id": "prefixed", "subject": "a"}, "refund": {"contract_id": "exact", "subject": "a"},
                  "zendesk.close_ticket": {"contract_id": "zendesk", "subject": "a"}, "github.pr.merge": {"contract_id": "gh", "subject": "a"}}}`,
      "m.json",
    );
    const contract = (t: string) => ruleFor(map, t)?.contractId;
    expect(contract("refund")).toBe("exact");
    expect(contract("stripe.refund")).toBe("prefixed");
    expect(contract("close_ticket")).toBe("zendesk");
    expect(contract("zendesk.close_ticket")).toBe("zendesk");
    expect(contract("pr.merge")).toBe("gh");
    expect(contract("merge")).toBeUndefined();
    expect(contract("ticket")).toBeUndefined();
    expect(contract("echo")).toBeUndefined();
  });
});

describe("paths and templates", () => {
  const params = parseJson(
    `{"name": "pay", "arguments": {"order_id": "o-1", "items": ["a", {"sku": 7}], "0": "zero-key", "n": 18446744073709551616, "f": 1.0, "t": true, "z": null},
      "_meta": {"progressToken": "tok"}}`,
  );
  const at = (p: string) => {
    const path = parsePath(p);
    if (typeof path === "string") throw new Error(path);
    const v = resolvePath(params, path);
    return v === undefined ? "(absent)" : compactForm(v);
  };
  const cases: [string, string][] = [
    ["arguments.order_id", `"o-1"`],
    ["name", `"pay"`],
    ["_meta.progressToken", `"tok"`],
    ["arguments.items.0", `"a"`],
    ["arguments.items.1.sku", `7`],
    ["arguments.items.2", "(absent)"],
    ["arguments.items.01", "(absent)"],
    ["arguments.items.-1", "(absent)"],
    ["arguments.0", `"zero-key"`],
    ["arguments.n", `18446744073709551616`],
    ["arguments.f", `1.0`],
    ["arguments.z", `null`],
    ["arguments.order_id.length", "(absent)"],
    ["arguments.missing.deeper", "(absent)"],
    [
      "arguments",
      `{"0":"zero-key","f":1.0,"items":["a",{"sku":7}],"n":18446744073709551616,"order_id":"o-1","t":true,"z":null}`,
    ],
  ];
  test.each(cases)("%s → %s", (path, expected) => {
    expect(at(path)).toBe(expected);
  });

  test("a template splits into literals and paths", () => {
    const t = parseTemplate("refund:{arguments.order_id}/{name}!");
    expect(typeof t).toBe("object");
    if (typeof t === "string") return;
    expect(t.literals).toEqual(["refund:", "/", "!"]);
    expect(t.paths.map((p) => p.text)).toEqual(["arguments.order_id", "name"]);
    const plain = parseTemplate("constant");
    expect(typeof plain === "object" && plain.literals).toEqual(["constant"]);
  });
});

describe("the action built for a call", () => {
  const build = async (
    mapText: string,
    source: string,
    call: string,
    id: Json = 7,
    over: { agentId?: string; workflowId?: string } = {},
  ) => {
    const map = await parseActionMap(mapText, source);
    const params = parseJson(call);
    const name = (params as Map<string, Json>).get("name") as string;
    const r = buildAction(
      ruleFor(map, name)!,
      { tool: name, id, params, at: AT },
      { agentId: over.agentId ?? map.agentId, workflowId: over.workflowId ?? map.workflowId },
    );
    return "action" in r ? lineForm(r.action) : `skipped: ${r.skipped}`;
  };
  const refund = `{"name": "refund_payment", "arguments": {"order_id": "o-10231", "amount": 180, "currency": "USD", "original_action_id": "pay:o-10231"}}`;

  const cases: [string, string, string, Json, string][] = [
    [
      "the issue's example, every field",
      REFUND_JSON,
      refund,
      7,
      `{"action_id": "refund:o-10231", "contract_id": "refund_workflow", "subject_id": "o-10231", "subject_kind": "order", "action_type": "refund_order", "agent_id": "support-bot", "workflow_id": "refunds", "requested_at": "2026-11-30T03:24:07.123Z", "params": {"amount": 180, "currency": "USD", "mcp_tool": "refund_payment", "mcp_request_id": "7"}, "channel": "mcp", "compensates": "pay:o-10231"}`,
    ],
    [
      "numbers keep their exact form; absent params and compensates are left out",
      REFUND_JSON,
      `{"name": "refund_payment", "arguments": {"order_id": 10231, "amount": 180.0}}`,
      18446744073709551616n,
      `{"action_id": "refund:10231", "contract_id": "refund_workflow", "subject_id": "10231", "subject_kind": "order", "action_type": "refund_order", "agent_id": "support-bot", "workflow_id": "refunds", "requested_at": "2026-11-30T03:24:07.123Z", "params": {"amount": 180.0, "mcp_tool": "refund_payment", "mcp_request_id": "18446744073709551616"}, "channel": "mcp"}`,
    ],
    [
      "an exchange's orders_create (YAML-free JSON, nested order configuration, a client order id as the action id)",
      `{"agent_id": "trader-1", "tools": {"coinbase.orders_create": {
        "contract_id": "trading_limits", "action_type": "place_order",
        "subject": "arguments.product_id", "subject_kind": "product",
        "params": {"side": "arguments.side", "quote_size": "arguments.order_configuration.market_market_ioc.quote_size",
                   "client_order_id": "arguments.client_order_id"},
        "action_id": "order:{arguments.client_order_id}"}}}`,
      `{"name": "orders_create", "arguments": {"client_order_id": "c-0001", "product_id": "BTC-USD", "side": "BUY", "order_configuration": {"market_market_ioc": {"quote_size": "25.00"}}}}`,
      42,
      `{"action_id": "order:c-0001", "contract_id": "trading_limits", "subject_id": "BTC-USD", "subject_kind": "product", "action_type": "place_order", "agent_id": "trader-1", "requested_at": "2026-11-30T03:24:07.123Z", "params": {"side": "BUY", "quote_size": "25.00", "client_order_id": "c-0001", "mcp_tool": "orders_create", "mcp_request_id": "42"}, "channel": "mcp"}`,
    ],
    [
      "default action_id, a string request id, contract_version, a prefixed key",
      `{"tools": {"stripe.pay": {"contract_id": "c", "contract_version": 3, "subject": "arguments.items.0", "params": {"all": "arguments.items", "tok": "_meta.progressToken"}}}}`,
      `{"name": "pay", "arguments": {"items": ["i-1", "i-2"]}, "_meta": {"progressToken": 5}}`,
      "req-9",
      `{"action_id": "mcp:pay:req-9", "contract_id": "c", "subject_id": "i-1", "requested_at": "2026-11-30T03:24:07.123Z", "params": {"all": ["i-1", "i-2"], "tok": 5, "mcp_tool": "pay", "mcp_request_id": "req-9"}, "channel": "mcp", "contract_version": 3}`,
    ],
    [
      "a mapped param named like seam's own keeps its place and gets seam's value",
      `{"tools": {"pay": {"contract_id": "c", "subject": "name", "params": {"mcp_tool": "arguments.x", "x": "arguments.x"}}}}`,
      `{"name": "pay", "arguments": {"x": "spoof"}}`,
      1,
      `{"action_id": "mcp:pay:1", "contract_id": "c", "subject_id": "pay", "requested_at": "2026-11-30T03:24:07.123Z", "params": {"mcp_tool": "pay", "x": "spoof", "mcp_request_id": "1"}, "channel": "mcp"}`,
    ],
    [
      "an absent subject makes no action",
      REFUND_JSON,
      `{"name": "refund_payment", "arguments": {"amount": 1}}`,
      1,
      "skipped: subject arguments.order_id is absent",
    ],
    [
      "a null subject makes no action",
      REFUND_JSON,
      `{"name": "refund_payment", "arguments": {"order_id": null}}`,
      1,
      "skipped: subject arguments.order_id is null",
    ],
    [
      "an object subject makes no action",
      REFUND_JSON,
      `{"name": "refund_payment", "arguments": {"order_id": {"a": 1}}}`,
      1,
      "skipped: subject arguments.order_id is an object, not a string or number",
    ],
    [
      "an absent placeholder makes no action",
      `{"tools": {"pay": {"contract_id": "c", "subject": "name", "action_id": "x:{arguments.a}:{arguments.b}"}}}`,
      `{"name": "pay", "arguments": {"a": true}}`,
      1,
      "skipped: action_id placeholder {arguments.b} is absent",
    ],
    [
      "booleans and floats in placeholders are their JSON text",
      `{"tools": {"pay": {"contract_id": "c", "subject": "arguments.f", "action_id": "x:{arguments.a}:{arguments.f}"}}}`,
      `{"name": "pay", "arguments": {"a": true, "f": 2.50}}`,
      1,
      `{"action_id": "x:true:2.5", "contract_id": "c", "subject_id": "2.5", "requested_at": "2026-11-30T03:24:07.123Z", "params": {"mcp_tool": "pay", "mcp_request_id": "1"}, "channel": "mcp"}`,
    ],
  ];
  test.each(cases)("%s", async (_name, mapText, call, id, expected) => {
    expect(await build(mapText, "m.json", call, id)).toBe(expected);
  });

  test("--agent-id and --workflow-id override the file", async () => {
    const line = await build(REFUND_JSON, "m.json", refund, 7, { agentId: "bot-2", workflowId: "wf-2" });
    expect(line).toContain(`"agent_id": "bot-2", "workflow_id": "wf-2"`);
  });

  test("YAML and JSON maps give the same actions", async () => {
    const calls = [
      refund,
      `{"name": "refund_payment", "arguments": {"order_id": 10231, "amount": 180.0}}`,
      `{"name": "refund_payment", "arguments": {}}`,
    ];
    for (const c of calls) expect(await build(REFUND_YAML, "m.yaml", c)).toBe(await build(REFUND_JSON, "m.json", c));
    const j = await parseActionMap(REFUND_JSON, "m.json");
    const y = await parseActionMap(REFUND_YAML, "m.YML");
    expect([...y.tools.values()]).toEqual([...j.tools.values()]);
    // YAML ints of any size are exact, as in JSON.
    const big = await parseActionMap(
      "tools:\n  pay: {contract_id: c, subject: a, contract_version: 18446744073709551616}\n",
      "m.yaml",
    );
    expect(big.tools.get("pay")!.contractVersion).toBe(18446744073709551616n);
  });
});

// ---- the recorder: body, posting, warnings ----

function recorder(
  settings: Partial<ActionSettings> & { map: ActionMap },
  answer: (body: string) => Promise<PostResult> | PostResult = () => ({ ok: true, status: 201 }),
) {
  const warnings: string[] = [];
  const infos: string[] = [];
  const posts: { ep: Endpoint; body: string }[] = [];
  const r = new ActionRecorder(
    { failOpen: true, warnUnmapped: false, ...settings },
    {
      warn: (m) => warnings.push(m),
      info: (m) => infos.push(m),
      now: () => AT,
      post: async (ep, body) => {
        posts.push({ ep, body });
        return answer(body);
      },
    },
  );
  return { r, warnings, infos, posts };
}
const EP = { url: "http://127.0.0.1:9/api/v1/actions", key: "sk-test-key", timeoutMs: 5000 };
const refundParams = parseJson(
  `{"name": "refund_payment", "arguments": {"order_id": "o-1", "amount": 180.0, "currency": "USD"}}`,
);

describe("ActionRecorder", () => {
  test("the POST body is the action's json-c14n form: sorted keys, exact numbers", async () => {
    const map = await parseActionMap(REFUND_JSON, "m.json");
    const { r, posts, warnings, infos } = recorder({ map, endpoint: EP });
    expect(infos).toEqual([`actions are posted to ${EP.url} before each mapped call is forwarded`]);
    const made = r.make("refund_payment", 18446744073709551616n, refundParams);
    if (made === undefined || !("action" in made)) throw new Error("no action");
    expect(await made.posting).toEqual({ posted: true });
    expect(posts).toHaveLength(1);
    expect(posts[0]!.ep).toEqual(EP);
    expect(posts[0]!.body).toBe(
      `{"action_id":"refund:o-1","action_type":"refund_order","agent_id":"support-bot","channel":"mcp","contract_id":"refund_workflow","params":{"amount":180.0,"currency":"USD","mcp_request_id":"18446744073709551616","mcp_tool":"refund_payment"},"requested_at":"2026-11-30T03:24:07.123Z","subject_id":"o-1","subject_kind":"order","workflow_id":"refunds"}`,
    );
    expect(`sha256:json-c14n:v1:${new Bun.CryptoHasher("sha256").update(posts[0]!.body).digest("hex")}`).toBe(
      digestJson(made.action),
    );
    expect(warnings).toEqual([]);
  });

  test("no endpoint at all (no key, no URL): the same note without a URL", () => {
    return parseActionMap(REFUND_JSON, "m.json").then((map) => {
      const { warnings, infos } = recorder({ map });
      expect(warnings).toEqual([
        "COMMITLAYER_API_KEY is not set: actions are recorded in the ledger only, nothing is posted",
      ]);
      expect(infos).toEqual([]);
    });
  });

  test("no key: one note, nothing posted, the action still made", async () => {
    const map = await parseActionMap(REFUND_JSON, "m.json");
    const { r, posts, warnings } = recorder({ map, endpoint: { url: EP.url, timeoutMs: 5000 } });
    for (const id of [1, 2]) {
      const made = r.make("refund_payment", id, refundParams);
      expect(made !== undefined && "action" in made && (await made.posting)).toEqual({});
    }
    expect(posts).toHaveLength(0);
    expect(warnings).toEqual([
      `COMMITLAYER_API_KEY is not set: actions are recorded in the ledger only, nothing is posted to ${EP.url}`,
    ]);
    expect(r.beginFields()).toEqual({
      action_map_digest: map.digest,
      action_endpoint: undefined,
      action_fail_open: undefined,
    });
  });

  test("a failed post: fail-open forwards, --no-fail-open refuses; one warning each; the key is never in it", async () => {
    const map = await parseActionMap(REFUND_JSON, "m.json");
    for (const failOpen of [true, false]) {
      const { r, warnings } = recorder({ map, endpoint: EP, failOpen }, () => ({
        ok: false,
        reason: "endpoint answered 500",
      }));
      const made = r.make("refund_payment", 3, refundParams);
      expect(made !== undefined && "action" in made && (await made.posting)).toEqual({
        posted: false,
        error: "endpoint answered 500",
        refuse: !failOpen,
      });
      expect(warnings).toEqual([
        `action "refund:o-1" for tools/call 3 to "refund_payment" was not posted: endpoint answered 500; ${failOpen ? "the call is forwarded" : "the call is refused"}`,
      ]);
      expect(warnings.join("")).not.toContain(EP.key);
    }
  });

  test("an action with no JSON form (NaN) is not posted, and says why", async () => {
    const map = await parseActionMap(REFUND_JSON, "m.json");
    const { r, posts } = recorder({ map, endpoint: EP });
    const made = r.make(
      "refund_payment",
      1,
      parseJson(`{"name": "refund_payment", "arguments": {"order_id": "o", "amount": NaN}}`),
    );
    expect(made !== undefined && "action" in made && (await made.posting)).toEqual({
      posted: false,
      error: "the action has no JSON form to send (out of range float value NaN is not JSON compliant)",
      refuse: false,
    });
    expect(posts).toHaveLength(0);
  });

  test("unmapped tools make nothing; --warn-unmapped says so once per name; a skipped action warns per call", async () => {
    const map = await parseActionMap(REFUND_JSON, "m.json");
    const { r, warnings, posts } = recorder({ map, endpoint: EP, warnUnmapped: true });
    expect(r.make("echo", 1, parseJson(`{"name": "echo"}`))).toBeUndefined();
    expect(r.make("echo", 2, parseJson(`{"name": "echo"}`))).toBeUndefined();
    expect(r.make("fail", 3, parseJson(`{"name": "fail"}`))).toBeUndefined();
    expect(r.make(undefined, 4, parseJson(`{}`))).toBeUndefined();
    expect(r.make("refund_payment", 5, parseJson(`{"name": "refund_payment"}`))).toEqual({
      skipped: "subject arguments.order_id is absent",
    });
    expect(warnings).toEqual([
      `tool "echo" is not in the mapping: its calls make no action`,
      `tool "fail" is not in the mapping: its calls make no action`,
      `tools/call 5 to "refund_payment" makes no action: subject arguments.order_id is absent; the call is forwarded`,
    ]);
    expect(posts).toHaveLength(0);
    const quiet = recorder({ map, endpoint: EP });
    quiet.r.make("echo", 1, parseJson(`{"name": "echo"}`));
    expect(quiet.warnings).toEqual([]);
  });
});

// ---- in the observer: hold, intent rows, refusal ----

const enc = new TextEncoder();
const dec = new TextDecoder();

function observer(o: { actions: ActionRecorder; writeAhead?: boolean; failClosed?: boolean; durable?: boolean }) {
  const rows: string[] = [];
  /** The events that went through the durable path (fsynced before the call may go on). */
  const durables: string[] = [];
  const keep = (evt: string, fields: Fields) => {
    const kept = new Map<string, Json>([["evt", evt]]);
    for (const [k, v] of Object.entries(fields)) if (v !== undefined) kept.set(k, v);
    rows.push(lineForm(kept));
  };
  let t = 0;
  const obs = new McpObserver({
    rows: {
      row: keep,
      durable: async (evt, fields) => {
        keep(evt, fields);
        durables.push(evt);
        return o.durable ?? true;
      },
    },
    raw: false,
    writeAhead: o.writeAhead ?? false,
    failClosed: o.failClosed,
    actions: o.actions,
    now: () => (t += 1.5),
  });
  return { obs, rows, durables };
}

const refundCall = (id: number) =>
  enc.encode(
    `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"refund_payment","arguments":{"order_id":"o-1","amount":180.0,"currency":"USD"}}}`,
  );
const ARGS = digestJson(parseJson(`{"order_id":"o-1","amount":180.0,"currency":"USD"}`));
const ACTION = (id: number) =>
  `{"action_id": "refund:o-1", "contract_id": "refund_workflow", "subject_id": "o-1", "subject_kind": "order", "action_type": "refund_order", "agent_id": "support-bot", "workflow_id": "refunds", "requested_at": "2026-11-30T03:24:07.123Z", "params": {"amount": 180.0, "currency": "USD", "mcp_tool": "refund_payment", "mcp_request_id": "${id}"}, "channel": "mcp"}`;

describe("McpObserver with --map", () => {
  test("a posted action's intent row is made durable before forwarding, without --write-ahead; an unposted one is not", async () => {
    const map = await parseActionMap(REFUND_JSON, "m.json");
    const posted = observer({ actions: recorder({ map, endpoint: EP }).r });
    expect(await posted.obs.fromClient(refundCall(1))).toBe(true);
    expect(posted.durables).toEqual(["tool_call_intent"]);
    const failed = observer({ actions: recorder({ map, endpoint: EP }, () => ({ ok: false, reason: "x" })).r });
    expect(await failed.obs.fromClient(refundCall(2))).toBe(true);
    expect(failed.durables).toEqual(["tool_call_intent"]);
    const ledgerOnly = observer({ actions: recorder({ map }).r });
    expect(await ledgerOnly.obs.fromClient(refundCall(3))).toBe(true);
    expect(ledgerOnly.durables).toEqual([]);
    expect(ledgerOnly.rows).toHaveLength(1);
  });

  test("a mapped call is held until posted; the intent and the call rows carry the action", async () => {
    const map = await parseActionMap(REFUND_JSON, "m.json");
    let release!: (r: PostResult) => void;
    const { r } = recorder({ map, endpoint: EP }, () => new Promise<PostResult>((res) => (release = res)));
    const { obs, rows } = observer({ actions: r });
    const hold = obs.fromClient(refundCall(1));
    expect(hold).toBeInstanceOf(Promise);
    let settled: boolean | undefined;
    void hold!.then((v) => (settled = v));
    await Bun.sleep(5);
    expect(settled).toBeUndefined();
    expect(rows).toEqual([]);
    release({ ok: true, status: 201 });
    expect(await hold!).toBe(true);
    obs.fromServer(enc.encode(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`));
    expect(rows).toEqual([
      `{"evt": "tool_call_intent", "tool": "refund_payment", "rpc_id": 1, "args_digest": "${ARGS}", "action": ${ACTION(1)}, "action_posted": true}`,
      `{"evt": "tool_call", "tool": "refund_payment", "rpc_id": 1, "args_digest": "${ARGS}", "result_digest": "${digestJson(parseJson(`{"content":[]}`))}", "status": "ok", "ms": 1.5, "action": ${ACTION(1)}, "action_posted": true}`,
    ]);
    // Unmapped calls and other methods are not held (no --write-ahead).
    expect(
      obs.fromClient(enc.encode(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}`)),
    ).toBeUndefined();
    expect(obs.fromClient(enc.encode(`{"jsonrpc":"2.0","id":3,"method":"ping"}`))).toBeUndefined();
  });

  test("fail-open: a failed post is recorded and the call forwarded", async () => {
    const map = await parseActionMap(REFUND_JSON, "m.json");
    const { r } = recorder({ map, endpoint: EP }, () => ({ ok: false, reason: "no answer within 5 s" }));
    const { obs, rows } = observer({ actions: r });
    expect(await obs.fromClient(refundCall(4))).toBe(true);
    expect(rows).toEqual([
      `{"evt": "tool_call_intent", "tool": "refund_payment", "rpc_id": 4, "args_digest": "${ARGS}", "action": ${ACTION(4)}, "action_posted": false, "action_post_error": "no answer within 5 s"}`,
    ]);
  });

  test("--no-fail-open: the call is refused with seam's own JSON-RPC error and a refused row", async () => {
    const map = await parseActionMap(REFUND_JSON, "m.json");
    const { r } = recorder({ map, endpoint: EP, failOpen: false }, () => ({
      ok: false,
      reason: "endpoint answered 500",
    }));
    const { obs, rows } = observer({ actions: r, writeAhead: true });
    expect(await obs.fromClient(refundCall(5))).toBe(false);
    const lines = obs.refuse().map((l) => dec.decode(l));
    const message = "recording failed: endpoint answered 500; the call was not forwarded";
    expect(lines).toEqual([`{"jsonrpc":"2.0","id":5,"error":{"code":-32000,"message":"${message}"}}\n`]);
    obs.finish("client_eof");
    expect(rows).toEqual([
      `{"evt": "tool_call_intent", "tool": "refund_payment", "rpc_id": 5, "args_digest": "${ARGS}", "action": ${ACTION(5)}, "action_posted": false, "action_post_error": "endpoint answered 500"}`,
      `{"evt": "tool_call", "tool": "refund_payment", "rpc_id": 5, "args_digest": "${ARGS}", "result_digest": "${digestJson(parseJson(`{"code":-32000,"message":"${message}"}`))}", "status": "refused", "ms": 1.5, "reason": "${message}", "error_code": -32000, "action": ${ACTION(5)}, "action_posted": false, "action_post_error": "endpoint answered 500"}`,
    ]);
    expect(obs.counts.calls).toBe(1);
    expect(obs.counts.unanswered).toBe(0);
  });

  test("--write-ahead: a skipped action is noted in the intent; a durability failure refuses only under --fail-closed", async () => {
    const map = await parseActionMap(REFUND_JSON, "m.json");
    const { r } = recorder({ map });
    const call = enc.encode(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"refund_payment"}}`);
    const a = observer({ actions: r, writeAhead: true, durable: false });
    expect(await a.obs.fromClient(call)).toBe(true);
    expect(a.rows).toEqual([
      `{"evt": "tool_call_intent", "tool": "refund_payment", "rpc_id": 6, "args_digest": "${digestJson(new Map())}", "action_skipped": "subject arguments.order_id is absent"}`,
    ]);
    const b = observer({ actions: r, writeAhead: true, failClosed: true, durable: false });
    expect(await b.obs.fromClient(call)).toBe(false);
    expect(b.obs.refuse().map((l) => dec.decode(l))).toEqual([
      `{"jsonrpc":"2.0","id":6,"error":{"code":-32000,"message":"seam: recording failed: the call was not forwarded because its record could not be made durable"}}\n`,
    ]);
  });
});
