/**
 * MCP 2026-07-28 in the observer: the era of each request from its _meta,
 * the client identity once per change, operations across multi round-trip
 * rounds and tasks (src/observe/operation-book.ts), and legacy traffic untouched.
 */
import { describe, expect, test } from "bun:test";
import { lineForm } from "../../src/core/canonical/index.ts";
import { digestJson } from "../../src/core/digest.ts";
import { parseJson } from "../../src/core/json.ts";
import { McpObserver } from "../../src/observe/observer.ts";
import { observe as observeScript, type Script } from "../helpers/observe.ts";

const enc = new TextEncoder();

/** The observer's rows for `script`, each with the seq a ledger would give it (an operation is named by its first row's seq). */
const observe = (script: Script, raw = false) => observeScript(script, { raw, seq: true });

const V = "2026-07-28";
const META = `"_meta":{"io.modelcontextprotocol/protocolVersion":"${V}","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}`;
const call = (id: string, name: string, more = "", meta = META) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${name}","arguments":{"x":1}${more},${meta}}}`;
const answer = (id: string, result: string) => `{"jsonrpc":"2.0","id":${id},"result":${result}}`;
const taskReq = (id: string, method: string, taskId: string, more = "") =>
  `{"jsonrpc":"2.0","id":${id},"method":"${method}","params":{"taskId":"${taskId}"${more},${META}}}`;
const d = (json: string) => digestJson(parseJson(json));
const ARGS = d(`{"x":1}`);
const ASK = `{"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":{"message":"sure?"}}},"requestState":"S-1"}`;
const RETRY = `,"inputResponses":{"q":{"action":"accept"}},"requestState":"S-1"`;
const DONE = `{"resultType":"complete","content":[]}`;
const evtStatus = (rows: string[]) =>
  rows.map((r) => {
    const o = JSON.parse(r);
    return `${o.evt}:${o.status ?? ""}`;
  });

describe("the era of a request", () => {
  test("protocol_version comes from _meta; the client identity is written once, and again when it changes", () => {
    const other = META.replace(
      `clientCapabilities":{}`,
      `clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}`,
    );
    const { rows } = observe([
      [">", `{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{${META}}}`],
      [
        "<",
        answer(
          "0",
          `{"resultType":"complete","supportedVersions":["${V}"],"capabilities":{},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"2"}}}`,
        ),
      ],
      [">", call("1", "echo")],
      ["<", answer("1", DONE)],
      [">", call("2", "echo", "", other)],
      ["<", answer("2", DONE)],
    ]);
    expect(rows).toEqual([
      `{"evt": "mcp_client", "seq": 1, "rpc_id": 0, "method": "server/discover", "protocol_version": "${V}", "client_info": {"name": "c", "version": "1"}, "client_capabilities": {}}`,
      `{"evt": "mcp_discover", "seq": 2, "rpc_id": 0, "status": "ok", "server_info": {"name": "s", "version": "2"}, "protocol_version": "${V}", "result_digest": "${d(`{"resultType":"complete","supportedVersions":["${V}"],"capabilities":{},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"2"}}}`)}", "ms": 1.5}`,
      `{"evt": "tool_call", "seq": 3, "tool": "echo", "rpc_id": 1, "args_digest": "${ARGS}", "result_digest": "${d(DONE)}", "status": "ok", "ms": 1.5, "protocol_version": "${V}"}`,
      `{"evt": "mcp_client", "seq": 4, "rpc_id": 2, "method": "tools/call", "protocol_version": "${V}", "client_info": {"name": "c", "version": "1"}, "client_capabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}`,
      `{"evt": "tool_call", "seq": 5, "tool": "echo", "rpc_id": 2, "args_digest": "${ARGS}", "result_digest": "${d(DONE)}", "status": "ok", "ms": 1.5, "protocol_version": "${V}"}`,
    ]);
  });

  test("a legacy initialize session is exactly as before: no era fields, no client rows, no operations", () => {
    const { rows } = observe([
      [">", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"clientInfo":{"name":"c","version":"1"}}}`],
      ["<", answer("0", `{"protocolVersion":"2025-06-18","serverInfo":{"name":"s","version":"2"}}`)],
      [">", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"x":1}}}`],
      ["<", answer("1", `{"content":[]}`)],
    ]);
    expect(rows[1]).toBe(
      `{"evt": "tool_call", "seq": 2, "tool": "echo", "rpc_id": 1, "args_digest": "${ARGS}", "result_digest": "${d(`{"content":[]}`)}", "status": "ok", "ms": 1.5}`,
    );
    expect(rows).toHaveLength(2);
  });

  test("probe, -32601, fall back to initialize: both rows, and the calls after are legacy rows", () => {
    const { rows } = observe([
      [">", `{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{${META}}}`],
      ["<", `{"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"method not found"}}`],
      [">", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"c","version":"1"}}}`],
      ["<", answer("1", `{"protocolVersion":"2025-06-18","serverInfo":{"name":"s","version":"2"}}`)],
      [">", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"x":1}}}`],
      ["<", answer("2", `{"content":[]}`)],
    ]);
    expect(evtStatus(rows)).toEqual(["mcp_client:", "mcp_discover:error", "mcp_initialize:ok", "tool_call:ok"]);
    expect(rows[1]).toContain(`"error_code": -32601`);
    expect(rows[3]).not.toContain("protocol_version");
    expect(rows[3]).not.toContain(`"op"`);
  });

  test("the server identity in a result's _meta is written once (mcp_server), and again when it changes", () => {
    const served = (name: string) =>
      `{"resultType":"complete","content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"${name}","version":"1"}}}`;
    const { rows } = observe([
      [">", call("1", "echo")],
      ["<", answer("1", served("s"))],
      [">", call("2", "echo")],
      ["<", answer("2", served("s"))],
      [">", call("3", "echo")],
      ["<", answer("3", served("t"))],
    ]);
    expect(evtStatus(rows)).toEqual([
      "mcp_client:",
      "mcp_server:",
      "tool_call:ok",
      "tool_call:ok",
      "mcp_server:",
      "tool_call:ok",
    ]);
    expect(rows[1]).toBe(
      `{"evt": "mcp_server", "seq": 2, "rpc_id": 1, "method": "tools/call", "server_info": {"name": "s", "version": "1"}}`,
    );
    expect(rows[4]).toContain(`"rpc_id": 3, "method": "tools/call", "server_info": {"name": "t", "version": "1"}}`);
  });

  test("a resultType nobody defined is said as such, never `ok`", () => {
    const { rows } = observe([
      [">", call("1", "odd")],
      ["<", answer("1", `{"resultType":"deferred"}`)],
    ]);
    expect(rows[1]).toContain(`"status": "unknown_result_type"`);
    expect(rows[1]).toEndWith(`"protocol_version": "${V}", "result_type": "deferred"}`);
  });
});

describe("operations: multi round-trip calls", () => {
  test("two rounds linked by the requestState's digest are one operation, ended with its total duration", () => {
    const { rows, ops } = observe([
      [">", call("1", "confirm")],
      ["<", answer("1", ASK)],
      [">", call("2", "confirm", RETRY)],
      ["<", answer("2", DONE)],
    ]);
    const asked = d(`{"q":{"method":"elicitation/create","params":{"message":"sure?"}}}`);
    expect(rows.slice(1)).toEqual([
      `{"evt": "tool_call", "seq": 2, "tool": "confirm", "rpc_id": 1, "args_digest": "${ARGS}", "result_digest": "${d(ASK)}", "status": "input_required", "ms": 1.5, "op": 2, "round": 1, "input_requests_digest": "${asked}", "result_state_digest": "${d(`"S-1"`)}", "protocol_version": "${V}"}`,
      `{"evt": "tool_call", "seq": 3, "tool": "confirm", "rpc_id": 2, "args_digest": "${ARGS}", "result_digest": "${d(DONE)}", "status": "ok", "ms": 1.5, "op": 2, "round": 2, "request_state_digest": "${d(`"S-1"`)}", "input_responses_digest": "${d(`{"q":{"action":"accept"}}`)}", "protocol_version": "${V}"}`,
      `{"evt": "operation_end", "seq": 4, "op": 2, "tool": "confirm", "status": "ok", "rounds": 2, "result_digest": "${d(DONE)}", "ms": 4.5}`,
    ]);
    expect(ops).toEqual({ operations: 1, abandoned: 0, tasks_open: 0 });
  });

  test("the opaque requestState is never in a row, except under --raw", () => {
    const script: [">" | "<", string][] = [
      [">", call("1", "confirm")],
      ["<", answer("1", ASK.replace("S-1", "SECRET-STATE"))],
      [">", call("2", "confirm", RETRY.replace("S-1", "SECRET-STATE"))],
      ["<", answer("2", DONE)],
    ];
    const plain = observe(script).rows;
    expect(plain.filter((r) => r.includes("SECRET-STATE"))).toEqual([]);
    expect(plain[2]).toContain(`"op": 2, "round": 2`);
    const raw = observe(script, true).rows;
    expect(raw[2]).toContain(`"request_state": "SECRET-STATE"`);
  });

  test("a retry with another requestState is another call, not a round of this operation", () => {
    const { rows, ops } = observe([
      [">", call("1", "confirm")],
      ["<", answer("1", ASK)],
      [">", call("2", "confirm", RETRY.replace("S-1", "S-other"))],
      ["<", answer("2", DONE)],
    ]);
    expect(rows[2]).not.toContain(`"op"`);
    expect(ops).toEqual({ operations: 0, abandoned: 1, tasks_open: 0 });
  });

  test("without a requestState, the retry is linked by the same tool and arguments", () => {
    const { rows } = observe([
      [">", call("1", "confirm")],
      ["<", answer("1", `{"resultType":"input_required","inputRequests":{}}`)],
      [">", call("2", "confirm", `,"inputResponses":{}`)],
      ["<", answer("2", DONE)],
    ]);
    expect(rows[2]).toContain(`"op": 2, "round": 2`);
    expect(evtStatus(rows).at(-1)).toBe("operation_end:ok");
  });

  test("abandoned after round one: its row says input_required, nothing is unanswered, it is counted", () => {
    const { rows, counts, ops } = observe([
      [">", call("1", "confirm")],
      ["<", answer("1", ASK)],
    ]);
    expect(evtStatus(rows)).toEqual(["mcp_client:", "tool_call:input_required"]);
    expect(counts.unanswered).toBe(0);
    expect(ops).toEqual({ operations: 0, abandoned: 1, tasks_open: 0 });
  });

  test("a retry left unanswered ends the operation unanswered", () => {
    const { rows, ops } = observe([
      [">", call("1", "confirm")],
      ["<", answer("1", ASK)],
      [">", call("2", "confirm", RETRY)],
    ]);
    expect(evtStatus(rows).slice(1)).toEqual([
      "tool_call:input_required",
      "tool_call:unanswered",
      "operation_end:unanswered",
    ]);
    expect(rows[3]).toContain(`"reason": "client_eof"`);
    expect(ops.abandoned).toBe(0);
  });
});

describe("operations: tasks", () => {
  const TASK = (status: string, more = "") =>
    `{"resultType":"complete","taskId":"t1","status":"${status}","createdAt":"2026-07-28T00:00:00Z","lastUpdatedAt":"2026-07-28T00:00:00Z","ttlMs":null${more}}`;
  const START = `{"resultType":"task","taskId":"t1","status":"working","createdAt":"2026-07-28T00:00:00Z","lastUpdatedAt":"2026-07-28T00:00:00Z","ttlMs":null}`;

  test("a task polled three times: its rows name the operation; completed ends it with the result's digest", () => {
    const result = `{"content":[{"type":"text","text":"done"}],"isError":false}`;
    const { rows, ops } = observe([
      [">", call("1", "job")],
      ["<", answer("1", START)],
      [">", taskReq("2", "tasks/get", "t1")],
      ["<", answer("2", TASK("working"))],
      [">", taskReq("3", "tasks/get", "t1")],
      ["<", answer("3", TASK("input_required", `,"inputRequests":{"n":{"method":"elicitation/create"}}`))],
      [">", taskReq("4", "tasks/update", "t1", `,"inputResponses":{"n":{"action":"accept"}}`)],
      ["<", answer("4", `{"resultType":"complete"}`)],
      [">", taskReq("5", "tasks/get", "t1")],
      ["<", answer("5", TASK("completed", `,"result":${result}`))],
    ]);
    expect(evtStatus(rows).slice(1)).toEqual([
      "tool_call:task",
      "task_get:ok",
      "task_get:ok",
      "task_update:ok",
      "task_get:ok",
      "operation_end:completed",
    ]);
    expect(rows[1]).toContain(
      `"status": "task", "ms": 1.5, "op": 2, "round": 1, "task_id": "t1", "task_status": "working"`,
    );
    expect(rows[2]).toStartWith(
      `{"evt": "task_get", "seq": 3, "rpc_id": 2, "status": "ok", "task_id": "t1", "op": 2, "task_status": "working"`,
    );
    expect(rows[3]).toContain(
      `"task_status": "input_required", "input_requests_digest": "${d(`{"n":{"method":"elicitation/create"}}`)}"`,
    );
    expect(rows[4]).toContain(`"op": 2, "input_responses_digest": "${d(`{"n":{"action":"accept"}}`)}"`);
    expect(rows[6]).toBe(
      `{"evt": "operation_end", "seq": 7, "op": 2, "tool": "job", "status": "completed", "rounds": 1, "task_id": "t1", "result_digest": "${d(result)}", "ms": 13.5}`,
    );
    expect(ops).toEqual({ operations: 1, abandoned: 0, tasks_open: 0 });
  });

  test("a cancelled task ends cancelled (here by the server's notifications/tasks)", () => {
    const { rows } = observe([
      [">", call("1", "job")],
      ["<", answer("1", START)],
      [">", taskReq("2", "tasks/cancel", "t1")],
      ["<", answer("2", `{"resultType":"complete"}`)],
      ["<", `{"jsonrpc":"2.0","method":"notifications/tasks","params":${TASK("cancelled")}}`],
    ]);
    expect(evtStatus(rows).slice(1)).toEqual(["tool_call:task", "task_cancel:ok", "operation_end:cancelled"]);
    expect(rows[3]).toContain(`"reason": "notification"`);
  });

  test("a task still open at EOF: operation_end unanswered, reason task_open (and the cancel asked for is said)", () => {
    const { rows, ops } = observe([
      [">", call("1", "job")],
      ["<", answer("1", START)],
      [">", taskReq("2", "tasks/cancel", "t1")],
      ["<", answer("2", `{"resultType":"complete"}`)],
    ]);
    expect(rows.at(-1)).toBe(
      `{"evt": "operation_end", "seq": 4, "op": 2, "tool": "job", "status": "unanswered", "rounds": 1, "task_id": "t1", "ms": 6.0, "reason": "task_open", "cancel_requested": true}`,
    );
    expect(ops).toEqual({ operations: 1, abandoned: 0, tasks_open: 1 });
  });

  test("a poll of a task this session never saw is rowed without an operation", () => {
    const { rows } = observe([
      [">", taskReq("1", "tasks/get", "elsewhere")],
      ["<", `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Task not found"}}`],
    ]);
    expect(rows[1]).toStartWith(
      `{"evt": "task_get", "seq": 2, "rpc_id": 1, "status": "error", "task_id": "elsewhere", "result_digest"`,
    );
    expect(rows[1]).not.toContain(`"op"`);
  });

  test("a multi round-trip call that ends in a task is one operation", () => {
    const { rows } = observe([
      [">", call("1", "job")],
      ["<", answer("1", ASK)],
      [">", call("2", "job", RETRY)],
      ["<", answer("2", START)],
      [">", taskReq("3", "tasks/get", "t1")],
      ["<", answer("3", TASK("failed", `,"error":{"code":-32603,"message":"x"}`))],
    ]);
    expect(evtStatus(rows).slice(1)).toEqual([
      "tool_call:input_required",
      "tool_call:task",
      "task_get:ok",
      "operation_end:failed",
    ]);
    expect(rows.at(-1)).toContain(
      `"op": 2, "tool": "job", "status": "failed", "rounds": 2, "task_id": "t1", "result_digest": "${d(`{"code":-32603,"message":"x"}`)}"`,
    );
  });
});

describe("operations: other requests and write-ahead", () => {
  test("prompts/get and resources/read take rounds too; operation_end names their prompt or resource", () => {
    const prompt = (id: string, more = "") =>
      `{"jsonrpc":"2.0","id":${id},"method":"prompts/get","params":{"name":"p","arguments":{"x":1}${more},${META}}}`;
    const read = (id: string, more = "") =>
      `{"jsonrpc":"2.0","id":${id},"method":"resources/read","params":{"uri":"file:///a"${more},${META}}}`;
    const { rows } = observe([
      [">", prompt("1")],
      ["<", answer("1", ASK)],
      [">", prompt("2", RETRY)],
      ["<", answer("2", DONE)],
      [">", read("3")],
      ["<", answer("3", ASK.replace("S-1", "S-2"))],
      [">", read("4", RETRY.replace("S-1", "S-2"))],
      ["<", answer("4", DONE)],
    ]);
    expect(evtStatus(rows).slice(1)).toEqual([
      "prompt_get:input_required",
      "prompt_get:ok",
      "operation_end:ok",
      "resource_read:input_required",
      "resource_read:ok",
      "operation_end:ok",
    ]);
    expect(rows[2]).toContain(`"op": 2, "round": 2`);
    expect(rows[3]).toContain(`"op": 2, "prompt": "p", "status": "ok", "rounds": 2`);
    expect(rows[5]).toContain(`"op": 5, "round": 2`);
    expect(rows[6]).toContain(`"op": 5, "uri": "file:///a", "status": "ok", "rounds": 2`);
  });

  test("under --write-ahead a retry's intent row already names its operation and round", () => {
    const rows: string[] = [];
    const o = new McpObserver({
      rows: {
        row: (evt, fields) => rows.push(lineForm({ evt, ...fields } as never)),
        durable: async (evt, fields) => {
          rows.push(lineForm({ evt, ...fields } as never));
          return true;
        },
      },
      raw: false,
      writeAhead: true,
      now: () => 0,
      nextSeq: () => rows.length + 1,
    });
    o.fromClient(enc.encode(call("1", "confirm")));
    o.fromServer(enc.encode(answer("1", ASK)));
    o.fromClient(enc.encode(call("2", "confirm", RETRY)));
    const intents = rows.filter((r) => r.startsWith(`{"evt": "tool_call_intent"`));
    expect(intents).toHaveLength(2);
    expect(intents[0]).not.toContain(`"op"`);
    expect(intents[1]).toEndWith(`"rpc_id": 2, "args_digest": "${ARGS}", "op": 3, "round": 2}`);
  });
});
