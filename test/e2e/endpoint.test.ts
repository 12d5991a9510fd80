/**
 * The recording endpoint end to end: a real HTTP server on 127.0.0.1 plays
 * the CommitLayer API; `seam wrap --map` runs (under Bun, as the Node bundle,
 * as the compiled executable when built) between a client that writes a
 * fixed script and the fixture server behind `tee`, which shows what the
 * server received and when.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { actionsUrl, chooseEndpoint, DEFAULT_API_URL, postAction } from "../../src/actions/endpoint.ts";
import { getField, type Json } from "../../src/core/json.ts";
import { built, seamArgv, VIAS, type Via } from "../helpers/cli.ts";
import { ledgerRows, run, start, tempDir } from "../helpers/proc.ts";

const KEY = "spk_test_5f3c9a1e77d2";

interface Hit {
  url: string;
  key: string | undefined;
  type: string | undefined;
  body: string;
  /** What the MCP server had received when the POST arrived, and when it was answered. */
  serverInAtArrival: string;
  serverInAtAnswer: string;
  /** What the client had received when the POST was answered. */
  clientAtAnswer: string;
}

type Mode = "ok" | "500" | "slow" | "redirect" | "409";
interface Scenario {
  mode: Mode;
  serverIn: string;
  clientSoFar: () => string;
  hits: Hit[];
}

const scenarios = new Map<string, Scenario>();
let base = "";
let closedPort = 0;
let server: http.Server;
const strayHits: string[] = [];

const readOr = (path: string) => (existsSync(path) ? readFileSync(path, "utf8") : "");

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const [, id, ...rest] = (req.url ?? "").split("/");
      const sc = scenarios.get(id ?? "");
      if (!sc || req.method !== "POST" || `/${rest.join("/")}` !== "/v1/actions") {
        strayHits.push(`${req.method} ${req.url}`);
        res.writeHead(404).end();
        return;
      }
      const hit: Hit = {
        url: req.url!,
        key: req.headers["x-api-key"] as string | undefined,
        type: req.headers["content-type"],
        body: Buffer.concat(chunks).toString("utf8"),
        serverInAtArrival: readOr(sc.serverIn),
        serverInAtAnswer: "",
        clientAtAnswer: "",
      };
      sc.hits.push(hit);
      if (sc.mode === "slow") {
        setTimeout(() => res.writeHead(201).end(), 3000).unref();
        return;
      }
      // Hold the answer until the client has had the answer to the ping sent before the call,
      // so the test sees the server→client direction flowing while the call waits.
      const deadline = Date.now() + 3000;
      while (!sc.clientSoFar().includes(`"id":1,`) && Date.now() < deadline) await Bun.sleep(20);
      await Bun.sleep(150);
      hit.serverInAtAnswer = readOr(sc.serverIn);
      hit.clientAtAnswer = sc.clientSoFar();
      if (sc.mode === "redirect") res.writeHead(307, { location: `/stray/v1/actions` }).end();
      else if (sc.mode === "500") res.writeHead(500).end("down");
      else if (sc.mode === "409") res.writeHead(409, { "content-type": "application/json" }).end(`{"error":"exists"}`);
      else res.writeHead(201, { "content-type": "application/json" }).end(`{"ok":true}`);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const closed = http.createServer();
  await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
  closedPort = (closed.address() as AddressInfo).port;
  await new Promise((r) => closed.close(r));
});

afterAll(() => {
  server.closeAllConnections();
  server.close();
});

describe("postAction and actionsUrl", () => {
  test("actionsUrl extends the base path; credentials, queries and other schemes are refused", () => {
    const cases: [string, string][] = [
      ["https://api.example.com", "https://api.example.com/v1/actions"],
      ["https://api.example.com/", "https://api.example.com/v1/actions"],
      ["http://127.0.0.1:8080/tenant//", "http://127.0.0.1:8080/tenant/v1/actions"],
      ["ftp://api.example.com", `error: "ftp:" is not http: or https:`],
      [
        "https://user:pw@api.example.com",
        "error: a URL with credentials in it is refused; the key goes in COMMITLAYER_API_KEY",
      ],
      ["https://api.example.com/?key=1", "error: a URL with a query or a fragment is refused"],
      ["https://api.example.com/#x", "error: a URL with a query or a fragment is refused"],
      ["api.example.com", `error: "api.example.com" is not a URL`],
    ];
    for (const [input, expected] of cases) {
      const u = actionsUrl(input);
      expect("url" in u ? u.url : `error: ${u.error}`).toBe(expected);
    }
  });

  test("the key is the switch: with one, --api-url, else COMMITLAYER_API_URL, else the default; without one, nothing", () => {
    const cases: [string | undefined, string | undefined, string | undefined, unknown][] = [
      [undefined, undefined, "k", { url: "https://api.commitlayer.ai/v1/actions", key: "k", from: "default" }],
      [undefined, "", "k", { url: "https://api.commitlayer.ai/v1/actions", key: "k", from: "default" }],
      [
        undefined,
        "https://e.example/t",
        "k",
        { url: "https://e.example/t/v1/actions", key: "k", from: "COMMITLAYER_API_URL" },
      ],
      [
        "https://f.example",
        "https://e.example",
        "k",
        { url: "https://f.example/v1/actions", key: "k", from: "--api-url" },
      ],
      [undefined, undefined, undefined, {}],
      [undefined, undefined, "", {}],
      [
        "https://f.example",
        undefined,
        undefined,
        { url: "https://f.example/v1/actions", key: undefined, from: "--api-url" },
      ],
      ["ftp://f", undefined, "k", { error: `--api-url: "ftp:" is not http: or https:` }],
    ];
    for (const [flag, env, key, expected] of cases) expect(chooseEndpoint(flag, env, key)).toEqual(expected as never);
  });

  test("2xx and 409 are posted; 500, a redirect, a slow and an unreachable endpoint are not, with the reason", async () => {
    const sc = (mode: Mode): string => {
      const id = `unit-${mode}-${scenarios.size}`;
      scenarios.set(id, { mode, serverIn: "/nonexistent", clientSoFar: () => `"id":1,`, hits: [] });
      return id;
    };
    const post = (url: string, timeoutMs = 2000) => postAction({ url, key: KEY, timeoutMs }, `{"a":1}`);
    const ok = sc("ok");
    expect(await post(`${base}/${ok}/v1/actions`)).toEqual({ ok: true, status: 201 });
    const hit = scenarios.get(ok)!.hits[0]!;
    expect([hit.key, hit.type, hit.body]).toEqual([KEY, "application/json", `{"a":1}`]);
    expect(await post(`${base}/${sc("500")}/v1/actions`)).toEqual({ ok: false, reason: "endpoint answered 500" });
    expect(await post(`${base}/${sc("409")}/v1/actions`)).toEqual({ ok: true, status: 409 });
    const strays = strayHits.length;
    expect(await post(`${base}/${sc("redirect")}/v1/actions`)).toEqual({ ok: false, reason: "endpoint answered 307" });
    expect(strayHits.length).toBe(strays);
    const t0 = performance.now();
    expect(await post(`${base}/${sc("slow")}/v1/actions`, 200)).toEqual({
      ok: false,
      reason: "no answer within 0.2 s",
    });
    expect(performance.now() - t0).toBeLessThan(1500);
    // A key fetch cannot send: said so, and nothing of the key in the reason (fetch's own message quotes it).
    for (const key of ["sk-LEAKME1\nabc", "sk-LEAKME1\r", "\u0000sk-LEAKME1"]) {
      const bad = await postAction({ url: `http://127.0.0.1:${closedPort}/v1/actions`, key, timeoutMs: 2000 }, "{}");
      expect(bad.ok).toBe(false);
      expect(!bad.ok && bad.reason).not.toContain("LEAKME");
    }
    const gone = await post(`http://127.0.0.1:${closedPort}/v1/actions`);
    expect(gone.ok).toBe(false);
    expect(!gone.ok && gone.reason).toMatch(/^endpoint unreachable \(.+\)$/);
  });
});

// ---- seam wrap --map, end to end ----

const fixture = [...seamArgv("bun"), "fixture"];

const MAP_JSON = `{"agent_id": "support-bot", "workflow_id": "refunds",
  "tools": {"fixture.echo": {
    "contract_id": "refund_workflow", "action_type": "refund_order",
    "subject": "arguments.order_id", "subject_kind": "order",
    "params": {"amount": "arguments.amount", "currency": "arguments.currency", "big": "arguments.big"},
    "action_id": "refund:{arguments.order_id}"}}}`;
const MAP_YAML = `agent_id: support-bot
workflow_id: refunds
tools:
  fixture.echo:
    contract_id: refund_workflow
    action_type: refund_order
    subject: arguments.order_id
    subject_kind: order
    params: {amount: arguments.amount, currency: arguments.currency, big: arguments.big}
    action_id: "refund:{arguments.order_id}"
`;

const CALL = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"order_id":"o-1","amount":180.0,"currency":"USD","big":18446744073709551616}}}\n`;
const SCRIPT = [
  `{"jsonrpc":"2.0","id":1,"method":"ping"}\n`,
  CALL,
  `{"jsonrpc":"2.0","method":"notifications/initialized"}\n`,
  `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fail","arguments":{"order_id":"o-9"}}}\n`,
  `{"jsonrpc":"2.0","id":4,"method":"tools/list"}\n`,
  `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{"order_id":"o-2"}}}\n`,
  `{"jsonrpc":"2.0","id":5,"method":"ping"}\n`,
].join("");

/** The body seam must send for CALL (requested_at aside): sorted keys, 180.0 and the 20-digit int exact. */
const BODY = (at: string) =>
  `{"action_id":"refund:o-1","action_type":"refund_order","agent_id":"support-bot","channel":"mcp","contract_id":"refund_workflow","params":{"amount":180.0,"big":18446744073709551616,"currency":"USD","mcp_request_id":"2","mcp_tool":"echo"},"requested_at":"${at}","subject_id":"o-1","subject_kind":"order","workflow_id":"refunds"}`;
/** The one line seam says at start when it posts actions. */
const POSTS_TO = (r: { apiBase: string }) =>
  `seam: info: actions are posted to ${r.apiBase}/v1/actions before each mapped call is forwarded\n`;
/** What seam wrap says of a key given in its environment (test/e2e/secret-fd.test.ts holds its why). */
const KEY_IN_ENV =
  "seam: warning: COMMITLAYER_API_KEY is in seam's environment, where the wrapped server can read it: pass the key with --api-key-fd FD instead\n";

/** stderr without the one KEY_IN_ENV line a key in the environment gives (checked there when `keyGiven`). */
function withoutKeyWarning(stderr: string, keyGiven: boolean): string {
  expect(stderr.split(KEY_IN_ENV).length - 1).toBe(keyGiven ? 1 : 0);
  return stderr.replace(KEY_IN_ENV, "");
}
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

const f = (r: Json, k: string) => getField(r, k);

interface WrapRun {
  code: number | null;
  stdout: string;
  stderr: string;
  serverIn: string;
  ledger: string;
  ledgerText: string;
  rows: Json[];
  hits: Hit[];
  apiBase: string;
}

async function wrapRun(
  via: Via,
  o: { mode?: Mode; flags?: string[]; key?: string; yaml?: boolean; unreachable?: boolean; noEndpoint?: boolean } = {},
): Promise<WrapRun> {
  const dir = tempDir("seam-endpoint-");
  const serverIn = join(dir, "server.in");
  const ledger = join(dir, "ledger.jsonl");
  const map = join(dir, o.yaml ? "map.yaml" : "map.json");
  writeFileSync(map, o.yaml ? MAP_YAML : MAP_JSON);
  const id = `run${scenarios.size}`;
  const apiBase = o.unreachable ? `http://127.0.0.1:${closedPort}/${id}` : `${base}/${id}`;
  const hits: Hit[] = [];
  let out: () => Buffer = () => Buffer.alloc(0);
  scenarios.set(id, { mode: o.mode ?? "ok", serverIn, clientSoFar: () => out().toString("utf8"), hits });
  const argv = [
    ...seamArgv(via),
    "wrap",
    "--ledger",
    ledger,
    "--map",
    map,
    ...(o.noEndpoint ? [] : ["--api-url", apiBase]),
    ...(o.flags ?? []),
    "--",
    "sh",
    "-c",
    'f=$1; shift; tee "$f" | "$@"',
    "sh",
    serverIn,
    ...fixture,
    "server",
  ];
  const p = start(argv, {
    input: SCRIPT,
    env: { COMMITLAYER_API_KEY: o.key ?? KEY, COMMITLAYER_API_URL: "", COMMITLAYER_RECORDER_MAP: "" },
  });
  out = p.stdoutSoFar;
  const r = await p.done;
  const ledgerText = readOr(ledger);
  return {
    code: r.code,
    stdout: r.stdout.toString("utf8"),
    stderr: withoutKeyWarning(r.stderr, (o.key ?? KEY) !== ""),
    serverIn: readOr(serverIn),
    ledger,
    ledgerText,
    rows: ledgerRows(ledger),
    hits,
    apiBase,
  };
}

const answered = (stdout: string) =>
  stdout
    .split("\n")
    .filter((l) => l.startsWith("{") && l.includes(`"id"`))
    .map((l) => JSON.parse(l) as { id: number; result?: unknown; error?: { code: number; message: string } });

async function verifies(via: Via, ledger: string): Promise<void> {
  const v = await run([...seamArgv(via), "verify", ledger]);
  expect(v.stderr).toBe("");
  expect(v.code).toBe(0);
}

/** The checks every run shares: one row pair for call 2 with the action, nothing else mapped, the key nowhere. */
function checkRows(r: WrapRun, posted: boolean | undefined, error?: string | RegExp): string {
  const intents = r.rows.filter((row) => f(row, "evt") === "tool_call_intent");
  expect(intents.map((i) => f(i, "rpc_id"))).toEqual([2]);
  const intent = intents[0]!;
  const action = f(intent, "action")!;
  const at = f(action, "requested_at") as string;
  expect(at).toMatch(ISO);
  expect(f(intent, "action_posted")).toBe(posted);
  if (error instanceof RegExp) expect(f(intent, "action_post_error") as string).toMatch(error);
  else expect(f(intent, "action_post_error")).toBe(error);
  const call = r.rows.find((row) => f(row, "evt") === "tool_call" && f(row, "rpc_id") === 2)!;
  expect(f(call, "action")).toEqual(action);
  expect(f(call, "action_posted")).toBe(posted);
  const others = r.rows.filter((row) => f(row, "evt") === "tool_call" && f(row, "rpc_id") !== 2);
  for (const o of others) expect(f(o, "action")).toBeUndefined();
  expect(r.ledgerText).not.toContain(KEY);
  expect(r.stderr).not.toContain(KEY);
  return at;
}

const vias = VIAS.filter((v) => built(v));

describe.each(vias)("seam wrap --map via %s", (via: Via) => {
  test("a mapped call: exactly one POST, before the server sees the call, with the issue's body; nothing else posts", async () => {
    const r = await wrapRun(via);
    expect(r.stderr).toBe(POSTS_TO(r));
    expect(r.code).toBe(0);
    expect(r.hits).toHaveLength(1);
    const hit = r.hits[0]!;
    expect(hit.url).toBe(`/${r.apiBase.split("/").pop()}/v1/actions`);
    expect(hit.key).toBe(KEY);
    expect(hit.type).toBe("application/json");
    const at = checkRows(r, true);
    expect(hit.body).toBe(BODY(at));
    // Before: the server had not seen the call when the POST came, nor when it was answered
    // (by then it had the ping sent before the call, and later frames waited behind the call).
    expect(hit.serverInAtArrival).not.toContain(`"id":2,`);
    expect(hit.serverInAtAnswer).toBe(`{"jsonrpc":"2.0","id":1,"method":"ping"}\n`);
    // Meanwhile the other direction flowed: the ping's answer reached the client.
    expect(answered(hit.clientAtAnswer).map((a) => a.id)).toEqual([1]);
    // Then everything, byte for byte and in order.
    expect(r.serverIn).toBe(SCRIPT);
    expect(answered(r.stdout).map((a) => a.id)).toEqual([1, 2, 3, 4, 5]);
    const begin = r.rows[0]!;
    expect(f(begin, "action_endpoint")).toBe(`${r.apiBase}/v1/actions`);
    expect(f(begin, "action_map_digest")).toMatch(/^sha256:raw-bytes:v1:[0-9a-f]{64}$/);
    await verifies(via, r.ledger);
  });

  test("a YAML map gives the same action and body; --agent-id and --workflow-id override the file", async () => {
    const r = await wrapRun(via, { yaml: true });
    expect(r.code).toBe(0);
    expect(r.hits).toHaveLength(1);
    expect(r.hits[0]!.body).toBe(BODY(checkRows(r, true)));
    const o = await wrapRun(via, { yaml: true, flags: ["--agent-id", "bot-2", "--workflow-id", "wf-2"] });
    expect(o.hits[0]!.body).toBe(
      BODY(checkRows(o, true))
        .replace(`"agent_id":"support-bot"`, `"agent_id":"bot-2"`)
        .replace(`"workflow_id":"refunds"`, `"workflow_id":"wf-2"`),
    );
  });

  test("no key: nothing posted, one note; no endpoint: actions in the ledger only, silently", async () => {
    const r = await wrapRun(via, { key: "" });
    expect(r.code).toBe(0);
    expect(r.hits).toHaveLength(0);
    expect(r.stderr).toBe(
      `seam: warning: COMMITLAYER_API_KEY is not set: actions are recorded in the ledger only, nothing is posted to ${r.apiBase}/v1/actions\n`,
    );
    checkRows(r, undefined);
    expect(r.serverIn).toBe(SCRIPT);
    expect(f(r.rows[0]!, "action_endpoint")).toBeUndefined();
    const n = await wrapRun(via, { noEndpoint: true, key: "", flags: ["--warn-unmapped"] });
    expect(n.hits).toHaveLength(0);
    expect(n.stderr).toBe(
      "seam: warning: COMMITLAYER_API_KEY is not set: actions are recorded in the ledger only, nothing is posted\n" +
        `seam: warning: tool "fail" is not in the mapping: its calls make no action\n`,
    );
    checkRows(n, undefined);
    await verifies(via, n.ledger);
  });

  const failures: [string, { mode?: Mode; unreachable?: boolean; flags?: string[] }, RegExp][] = [
    ["an endpoint answering 500", { mode: "500" }, /^endpoint answered 500$/],
    ["a slow endpoint (beyond --timeout)", { mode: "slow", flags: ["--timeout", "0.5"] }, /^no answer within 0\.5 s$/],
    ["an unreachable endpoint", { unreachable: true }, /^endpoint unreachable \(.+\)$/],
  ];
  test.each(failures)(
    "fail-open, %s: one warning, the call forwarded, action_posted false with the reason",
    async (_n, o, reason) => {
      const r = await wrapRun(via, o);
      expect(r.code).toBe(0);
      expect(r.hits).toHaveLength(o.unreachable ? 0 : 1);
      const lines = r.stderr.split("\n").filter(Boolean);
      expect(`${lines.shift()}\n`).toBe(POSTS_TO(r));
      expect(lines).toHaveLength(1);
      const m =
        /^seam: warning: action "refund:o-1" for tools\/call 2 to "echo" was not posted: (.*); the call is forwarded$/.exec(
          lines[0]!,
        );
      expect(m?.[1]).toMatch(reason);
      checkRows(r, false, reason);
      expect(r.serverIn).toBe(SCRIPT);
      expect(answered(r.stdout).map((a) => [a.id, a.error?.code])).toEqual([
        [1, undefined],
        [2, undefined],
        [3, -32602],
        [4, undefined],
        [5, undefined],
      ]);
      await verifies(via, r.ledger);
    },
  );

  test.each(failures)(
    "--no-fail-open, %s: the call refused with -32000, other traffic unaffected",
    async (_n, o, reason) => {
      const r = await wrapRun(via, { ...o, flags: [...(o.flags ?? []), "--no-fail-open"] });
      expect(r.code).toBe(0);
      const lines = r.stderr.split("\n").filter(Boolean);
      expect(`${lines.shift()}\n`).toBe(POSTS_TO(r));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^seam: warning: action "refund:o-1" for tools\/call 2 to "echo" was not posted: .*; the call is refused$/,
      );
      checkRows(r, false, reason);
      expect(r.serverIn).toBe(SCRIPT.replace(CALL, ""));
      const answers = answered(r.stdout);
      expect(answers.map((a) => a.id).sort()).toEqual([1, 2, 3, 4, 5]);
      const refusal = answers.find((a) => a.id === 2)!;
      expect(refusal.error!.code).toBe(-32000);
      expect(refusal.error!.message).toStartWith("recording failed: ");
      expect(refusal.error!.message).toMatch(
        new RegExp(`^recording failed: ${reason.source.slice(1, -1)}; the call was not forwarded$`),
      );
      const call = r.rows.find((row) => f(row, "evt") === "tool_call" && f(row, "rpc_id") === 2)!;
      expect([f(call, "status"), f(call, "error_code"), f(call, "reason")]).toEqual([
        "refused",
        -32000,
        refusal.error!.message,
      ]);
      await verifies(via, r.ledger);
    },
  );

  test.each([
    ["a line break", "sk-LEAKME1\nabc", "sk-LEAKME1"],
    ["a carriage return", "sk-LEAKME2\r\nabc", "sk-LEAKME2"],
    ["a tab and a line break", "sk-LEAKME3\t\n\ttail", "sk-LEAKME3"],
    ["a character past U+00FF", "sk-LEAKME4\u2028tail", "sk-LEAKME4"],
  ])("a key with %s: no piece of it in the rows, the reason or stderr", async (_n, key, piece) => {
    const r = await wrapRun(via, { key, unreachable: true });
    expect(r.code).toBe(0);
    for (const out of [r.ledgerText, r.stderr, r.stdout]) expect(out).not.toContain(piece);
    checkRows(r, false, /^COMMITLAYER_API_KEY cannot be sent in a header/);
    expect(r.serverIn).toBe(SCRIPT);
  });

  test("409 (the action exists: a retried call) is recorded, not a failure, also under --no-fail-open", async () => {
    const r = await wrapRun(via, { mode: "409", flags: ["--no-fail-open"] });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(POSTS_TO(r));
    expect(r.hits).toHaveLength(1);
    checkRows(r, true);
    const intent = r.rows.find((row) => f(row, "evt") === "tool_call_intent")!;
    expect(f(intent, "action_post_status")).toBe(409);
    expect(r.serverIn).toBe(SCRIPT);
    await verifies(via, r.ledger);
  });

  test("a key and no URL: the documented default endpoint, said once; nothing posted while no mapped call comes", async () => {
    const dir = tempDir("seam-endpoint-default-");
    const ledger = join(dir, "l.jsonl");
    const map = join(dir, "map.json");
    writeFileSync(map, MAP_JSON);
    const r = await run([...seamArgv(via), "wrap", "--ledger", ledger, "--map", map, "--", ...fixture, "server"], {
      input: `{"jsonrpc":"2.0","id":1,"method":"ping"}\n`,
      env: { COMMITLAYER_API_KEY: KEY, COMMITLAYER_API_URL: "", COMMITLAYER_RECORDER_MAP: "" },
    });
    expect(r.code).toBe(0);
    expect(withoutKeyWarning(r.stderr, true)).toBe(POSTS_TO({ apiBase: DEFAULT_API_URL }));
    expect(f(ledgerRows(ledger)[0]!, "action_endpoint")).toBe(`${DEFAULT_API_URL}/v1/actions`);
    expect(readFileSync(ledger, "utf8")).not.toContain(KEY);
  });

  test("invalid maps and flags stop seam with exit 2 before the server starts", async () => {
    const dir = tempDir("seam-endpoint-bad-");
    const ledger = join(dir, "l.jsonl");
    const marker = join(dir, "spawned");
    const write = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    const noContract = write("no-contract.json", `{"tools": {"pay": {"subject": "arguments.id"}}}`);
    const badPath = write("bad-path.yaml", `tools:\n  pay:\n    contract_id: c\n    subject: arguments..id\n`);
    const badTemplate = write(
      "bad-template.json",
      `{"tools": {"pay": {"contract_id": "c", "subject": "a", "action_id": "pay:{arguments.id"}}}`,
    );
    const good = write("good.json", MAP_JSON);
    const cases: [string[], Record<string, string>, string][] = [
      [
        ["--map", noContract],
        {},
        `seam: error: mapping ${noContract}: tool "pay", key contract_id: missing (every mapped tool needs one)\n`,
      ],
      [
        ["--map", badPath],
        {},
        `seam: error: mapping ${badPath}: tool "pay", key subject: "arguments..id" is not a dotted path: an empty segment (two dots, or a dot at an end)\n`,
      ],
      [
        ["--map", badTemplate],
        {},
        `seam: error: mapping ${badTemplate}: tool "pay", key action_id: "pay:{arguments.id" is not a template: the "{" at 5 is never closed\n`,
      ],
      [
        [],
        { COMMITLAYER_RECORDER_MAP: noContract },
        `seam: error: mapping ${noContract}: tool "pay", key contract_id: missing`,
      ],
      [
        ["--map", join(dir, "absent.json")],
        {},
        `seam: error: cannot read mapping ${join(dir, "absent.json")}: no such file or directory\n`,
      ],
      [["--api-url", base], {}, "seam: error: --api-url needs an action mapping\n"],
      [["--no-fail-open"], {}, "seam: error: --no-fail-open needs an action mapping\n"],
      [["--map", good, "--api-url", "ftp://x"], {}, `seam: error: --api-url: "ftp:" is not http: or https:\n`],
      [
        ["--map", good],
        { COMMITLAYER_API_URL: "https://u:p@x" },
        "seam: error: COMMITLAYER_API_URL: a URL with credentials in it is refused",
      ],
      [
        ["--map", good, "--timeout", "0"],
        {},
        `seam: error: --timeout takes a number of seconds above 0 and at most 3600, not "0"\n`,
      ],
      [
        ["--map", good, "--timeout", "soon"],
        {},
        `seam: error: --timeout takes a number of seconds above 0 and at most 3600, not "soon"\n`,
      ],
      [["--map", ""], {}, "seam: error: --map must not be empty\n"],
    ];
    for (const [flags, env, err] of cases) {
      const r = await run([...seamArgv(via), "wrap", "--ledger", ledger, ...flags, "--", "touch", marker], {
        input: "",
        env: { COMMITLAYER_API_KEY: KEY, COMMITLAYER_API_URL: "", COMMITLAYER_RECORDER_MAP: "", ...env },
      });
      expect(r.stderr).toStartWith(err);
      expect(r.code).toBe(2);
      expect(r.stdout.length).toBe(0);
      expect(r.stderr).not.toContain(KEY);
    }
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(ledger)).toBe(false);
  });
});

test("the test endpoint saw no stray request", () => {
  expect(strayHits).toEqual([]);
});
