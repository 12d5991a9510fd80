import { describe, expect, test } from "bun:test";
import { lineForm } from "../../src/core/canonical/index.ts";
import { digestBytes, digestJson } from "../../src/core/digest.ts";
import { JsonFloat, parseJson } from "../../src/core/json.ts";
import { McpObserver } from "../../src/observe/observer.ts";
import { requestKey } from "../../src/observe/pairing.ts";
import { observe } from "../helpers/observe.ts";

const enc = new TextEncoder();

const call = (id: string, name = "echo", args = `{"x":1}`) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${name}","arguments":${args}}}`;
const ok = (id: string, result = `{"content":[]}`) => `{"jsonrpc":"2.0","id":${id},"result":${result}}`;
const ARGS = digestJson(parseJson(`{"x":1}`));
const RES = digestJson(parseJson(`{"content":[]}`));

describe("requestKey: one key for each id, whatever type read it", () => {
  // [id, the ids that must share its key, the ids that must not]
  const cases: [
    string,
    Parameters<typeof requestKey>[0],
    Parameters<typeof requestKey>[0][],
    Parameters<typeof requestKey>[0][],
  ][] = [
    ["an integer", 7, [7n, new JsonFloat(7)], ["7", 8, new JsonFloat(7.5)]],
    ["a string", "7", ["7"], [7, 7n, "07"]],
    ["zero and minus zero", 0, [-0, 0n], ["0", "-0"]],
    [
      "past 2^53 (a double of that value is that integer)",
      2n ** 64n,
      [2n ** 64n, 2 ** 64],
      [`${2n ** 64n}`, 2n ** 64n + 1n],
    ],
    ["a negative integer", -5, [-5n], [5, "-5"]],
  ];
  test.each(cases)("%s", (_name, id, same, other) => {
    const key = requestKey(id);
    expect(key).not.toBeNull();
    for (const s of same) expect(new Map([[key, 1]]).get(requestKey(s)!)).toBe(1);
    for (const o of other) expect(new Map([[key, 1]]).get(requestKey(o) as never)).toBeUndefined();
  });
  test("no key for what is not a JSON-RPC id", () => {
    for (const v of [1.5, new JsonFloat(1.5), null, true, undefined, new Map(), []] as Parameters<
      typeof requestKey
    >[0][])
      expect(requestKey(v)).toBeNull();
  });
});

describe("McpObserver pairing", () => {
  test("an answered call is one ok row with digests and ms", () => {
    const { rows, counts } = observe([
      [">", call("1")],
      ["<", ok("1")],
    ]);
    expect(rows).toEqual([
      `{"evt": "tool_call", "tool": "echo", "rpc_id": 1, "args_digest": "${ARGS}", "result_digest": "${RES}", "status": "ok", "ms": 1.5}`,
    ]);
    expect(counts.calls).toBe(1);
  });

  test('1 and "1" are different ids; the answer to "1" does not close 1', () => {
    const { rows } = observe([
      [">", call("1")],
      [">", call(`"1"`)],
      ["<", ok(`"1"`)],
    ]);
    expect(rows[0]).toContain(`"rpc_id": "1", "args_digest"`);
    expect(rows[0]).toContain(`"status": "ok"`);
    expect(rows[1]).toContain(`"rpc_id": 1, "args_digest"`);
    expect(rows[1]).toContain(`"status": "unanswered", "ms": 4.5, "reason": "client_eof"`);
  });

  test("ids beyond 2^53 pair exactly and are written exactly", () => {
    let { rows } = observe([
      [">", call("18446744073709551617")],
      [">", call("18446744073709551616")],
      ["<", ok("18446744073709551616")],
    ]);
    // JSON.parse reads 2^64 + 1 as the double 2^64, Python exactly: that frame is also an ambiguous_frame row.
    expect(rows.filter((r) => r.startsWith(`{"evt": "ambiguous_frame"`))).toHaveLength(1);
    rows = rows.filter((r) => !r.startsWith(`{"evt": "ambiguous_frame"`));
    expect(rows[0]).toContain(`"rpc_id": 18446744073709551616, "args_digest"`);
    expect(rows[0]).toContain(`"status": "ok"`);
    expect(rows[1]).toContain(`"rpc_id": 18446744073709551617, "args_digest"`);
    expect(rows[1]).toContain(`"status": "unanswered"`);
  });

  test("a server request with the id of an open client call does not complete it", () => {
    const script: [">" | "<", string][] = [
      [">", call("8", "ask")],
      ["<", `{"jsonrpc":"2.0","id":8,"method":"sampling/createMessage","params":{}}`],
      [">", ok("8", `{"role":"assistant"}`)],
      ["<", ok("8")],
    ];
    const { rows } = observe(script);
    expect(rows.map((r) => `${JSON.parse(r).evt}:${JSON.parse(r).status}`)).toEqual([
      "server_request:ok",
      "tool_call:ok",
    ]);
    expect(rows[1]).toContain(`"result_digest": "${RES}"`);
    // RED: one id table for both directions lets the client's answer to the server close the call.
    const red = observe(script, { faults: { sharedIdTable: true } });
    expect(red.rows.map((r) => `${JSON.parse(r).evt}:${JSON.parse(r).status}`)).not.toEqual([
      "server_request:ok",
      "tool_call:ok",
    ]);
    expect(red.rows[0]).toContain(`"evt": "tool_call"`);
    expect(red.rows[0]).toContain(`"result_digest": "${digestJson(parseJson(`{"role":"assistant"}`))}"`);
  });

  test("duplicate open ids pair first in, first out", () => {
    const { rows } = observe([
      [">", call("9", "a")],
      [">", call("9", "b")],
      ["<", ok("9")],
      ["<", `{"jsonrpc":"2.0","id":9,"error":{"code":-1,"message":"x"}}`],
    ]);
    expect(rows[0]).toContain(`"tool": "a"`);
    expect(rows[0]).toContain(`"status": "ok"`);
    expect(rows[1]).toContain(`"tool": "b"`);
    expect(rows[1]).toContain(`"status": "error", "ms": 3.0, "error_code": -1`);
  });

  test("batches are taken element by element", () => {
    const { rows } = observe([
      [">", `[${call("10")},${call("11")}]`],
      ["<", `[${ok("11")},${ok("10")}]`],
    ]);
    expect(rows.map((r) => JSON.parse(r).rpc_id)).toEqual([11, 10]);
  });

  test("statuses: error, isError, input_required", () => {
    const { rows } = observe([
      [">", call("1")],
      ["<", `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}`],
      [">", call("2")],
      ["<", ok("2", `{"content":[],"isError":true}`)],
      [">", call("3")],
      ["<", ok("3", `{"resultType":"input_required"}`)],
    ]);
    expect(rows.map((r) => JSON.parse(r).status)).toEqual(["error", "error", "input_required"]);
    expect(rows[0]).toContain(`"error_code": -32602`);
    expect(rows[0]).toContain(`"result_digest": "${digestJson(parseJson(`{"code":-32602,"message":"bad"}`))}"`);
  });

  test("a cancelled call is rowed once; its late answer is counted, not re-rowed", () => {
    const { rows, counts } = observe([
      [">", call("13", "wait")],
      [">", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":13,"reason":"gave up"}}`],
      ["<", ok("13")],
    ]);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toContain(`"status": "cancelled", "ms": 1.5, "reason": "gave up"`);
    expect(counts).toMatchObject({ cancelled: 1, late_responses: 1, unmatched_responses: 0 });
  });

  test("invalid ids still leave a row, written when seen", () => {
    const { rows } = observe([
      [">", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo"}}`],
      [">", call("1.5")],
      [">", call("null")],
      [">", call("{}")],
    ]);
    expect(rows.map((r) => [JSON.parse(r).status, r.match(/"rpc_id": ([^,]*),/)?.[1] ?? "-"])).toEqual([
      ["invalid_id", "-"],
      ["invalid_id", "1.5"],
      ["invalid_id", "null"],
      ["invalid_id", "{}"],
    ]);
    expect(rows[0]).toContain(`"args_digest": "${digestJson(new Map())}"`);
  });

  test("unanswered calls are rowed at the end; RED without the flush", () => {
    const script: [">" | "<", string][] = [[">", call("16", "never")]];
    expect(observe(script).rows).toEqual([
      `{"evt": "tool_call", "tool": "never", "rpc_id": 16, "args_digest": "${ARGS}", "status": "unanswered", "ms": 1.5, "reason": "client_eof"}`,
    ]);
    expect(observe(script, { faults: { noUnansweredFlush: true } }).rows).toEqual([]);
  });

  test("one row per call; RED with the double-row fault", () => {
    const script: [">" | "<", string][] = [
      [">", call("1")],
      ["<", ok("1")],
    ];
    expect(observe(script).rows).toHaveLength(1);
    expect(observe(script, { faults: { doubleRow: true } }).rows).toHaveLength(2);
  });

  test("initialize, tools/list, resources/read, prompts/get and server requests", () => {
    const { rows } = observe([
      [">", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"clientInfo":{"name":"c","version":"1"}}}`],
      ["<", ok("0", `{"protocolVersion":"2025-06-18","serverInfo":{"name":"s","version":"2"}}`)],
      [">", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"p2"}}`],
      ["<", ok("1", `{"tools":[{"name":"\u{1F600}"},{"name":"\uFB00"},{"name":"b"}],"nextCursor":"p3"}`)],
      [">", `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///x"}}`],
      ["<", ok("2")],
      [">", `{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"p"}}`],
      ["<", ok("3")],
      ["<", `{"jsonrpc":"2.0","id":0,"method":"roots/list"}`],
      [">", `{"jsonrpc":"2.0","id":4,"method":"server/discover","params":{}}`],
      ["<", ok("4", `{"resultType":"complete","serverInfo":{"name":"d","version":"3"}}`)],
    ]);
    expect(rows[0]).toBe(
      `{"evt": "mcp_initialize", "rpc_id": 0, "status": "ok", "client_info": {"name": "c", "version": "1"}, "server_info": {"name": "s", "version": "2"}, "protocol_version": "2025-06-18", "result_digest": "${digestJson(parseJson(`{"protocolVersion":"2025-06-18","serverInfo":{"name":"s","version":"2"}}`))}", "ms": 1.5}`,
    );
    expect(rows[1]).toContain(
      `"tools": ["b", "\uFB00", "\u{1F600}"], "tool_count": 3, "tools_digest": "sha256:json-c14n:v1:`,
    );
    expect(rows[1]).toContain(`"cursor": "p2", "next_cursor": "p3"`);
    expect(rows[2]).toStartWith(`{"evt": "resource_read", "uri": "file:///x", "rpc_id": 2,`);
    expect(rows[3]).toStartWith(
      `{"evt": "prompt_get", "prompt": "p", "rpc_id": 3, "args_digest": "${digestJson(new Map())}"`,
    );
    expect(rows[4]).toStartWith(
      `{"evt": "mcp_discover", "rpc_id": 4, "status": "ok", "server_info": {"name": "d", "version": "3"}, "result_digest": "sha256:json-c14n:v1:`,
    );
    expect(rows[5]).toStartWith(
      `{"evt": "server_request", "method": "roots/list", "rpc_id": 0, "params_digest": "${digestJson(null)}", "status": "unanswered"`,
    );
  });

  test("listings and completions: a client_request row of their method and params digest; other requests none", () => {
    const complete = `{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"x"}}`;
    const { rows } = observe([
      [">", `{"jsonrpc":"2.0","id":1,"method":"resources/list"}`],
      ["<", ok("1", `{"resources":[]}`)],
      [">", `{"jsonrpc":"2.0","id":2,"method":"prompts/list","params":{"cursor":"c"}}`],
      ["<", `{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"bad cursor"}}`],
      [">", `{"jsonrpc":"2.0","id":3,"method":"completion/complete","params":${complete}}`],
      [">", `{"jsonrpc":"2.0","id":4,"method":"resources/templates/list","params":{}}`],
      ["<", ok("4", `{"resourceTemplates":[]}`)],
      [">", `{"jsonrpc":"2.0","id":5,"method":"logging/setLevel","params":{"level":"info"}}`],
      ["<", ok("5")],
      [">", `{"jsonrpc":"2.0","id":6,"method":"ping"}`],
      ["<", ok("6")],
    ]);
    const row = (method: string, id: number, params: string, end: string) =>
      `{"evt": "client_request", "method": "${method}", "rpc_id": ${id}, "params_digest": "${digestJson(parseJson(params))}", ${end}`;
    expect(rows.map((r) => r.replace(/"ms": [0-9.]+/, `"ms": 1`))).toEqual([
      row(
        "resources/list",
        1,
        "null",
        `"result_digest": "${digestJson(parseJson(`{"resources":[]}`))}", "status": "ok", "ms": 1}`,
      ),
      row(
        "prompts/list",
        2,
        `{"cursor":"c"}`,
        `"result_digest": "${digestJson(parseJson(`{"code":-32602,"message":"bad cursor"}`))}", "status": "error", "ms": 1, "error_code": -32602}`,
      ),
      row(
        "resources/templates/list",
        4,
        "{}",
        `"result_digest": "${digestJson(parseJson(`{"resourceTemplates":[]}`))}", "status": "ok", "ms": 1}`,
      ),
      // Never answered: rowed when the stream ends.
      row("completion/complete", 3, complete, `"status": "unanswered", "ms": 1, "reason": "client_eof"}`),
    ]);
  });

  test("frames that are not JSON-RPC are counted and rowed with their head; blank ones are not", () => {
    const { counts, rows } = observe([
      [">", ""],
      [">", " \t\r"],
      [">", "hello"],
      [">", `{"jsonrpc":`],
      [">", "42"],
      [">", "\xff"],
    ]);
    const row = (bytes: number, digest: string, head: string, reason: string) =>
      `{"evt": "unparsed_frame", "dir": "c2s", "bytes": ${bytes}, "frame_digest": "sha256:raw-bytes:v1:${digest}", "head": ${JSON.stringify(head)}, "reason": "${reason}"}`;
    expect(rows).toEqual([
      row(5, "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824", "hello", "expecting value"),
      row(11, "0a48d5dd2ae12552ee0e677f3fe264d12f958b1f72dfa77fc0e13b5153eea638", `{"jsonrpc":`, "expecting value"),
      row(2, "73475cb40a568e8da8a045ced110137e159f890ac4da883b6b17dc651b3a8049", "42", "not a JSON-RPC message"),
      row(2, "ea47fa96cf6d727d3068913da9193fef44aec4ee2c5972e9ac50cf7d637a56cf", "\\xc3\\xbf", "expecting value"),
    ]);
    expect(counts.unparsed_frames).toBe(4);
  });

  test("--raw: arguments with no line form (read leniently) leave the row, saying so, with the raw-bytes digest", () => {
    const args = `{"d":${"[".repeat(1200)}${"]".repeat(1200)}}`;
    const { rows } = observe(
      [
        [">", call("1", "deep", args)],
        ["<", ok("1")],
      ],
      { raw: true },
    );
    const row = rows.find((r) => r.startsWith(`{"evt": "tool_call"`))!;
    expect(row).toContain(`"args_digest": "${digestBytes(enc.encode(args))}"`);
    expect(row).toContain(
      `"args": "no JSON line form (nested beyond 1000 levels or an integer over 4300 digits); see the digest"`,
    );
    expect(row).toContain(`"status": "ok"`);
  });

  test("--raw records arguments and results as they were", () => {
    const { rows } = observe(
      [
        [">", call("1", "echo", `{"n":1.0,"big":123456789012345678901}`)],
        ["<", ok("1")],
      ],
      { raw: true },
    );
    expect(rows[0]).toContain(`"args": {"n": 1.0, "big": 123456789012345678901}, "result": {"content": []}}`);
  });
});

test("JsonFloat ms keeps integral milliseconds a float", () => {
  expect(lineForm(new JsonFloat(6))).toBe("6.0");
});

test("an open request keeps only what its row needs, never the whole params (raw keeps the arguments)", () => {
  for (const raw of [false, true]) {
    const o = new McpObserver({
      rows: { row: () => {}, durable: async () => true },
      raw,
      writeAhead: false,
      now: () => 0,
    });
    o.fromClient(enc.encode(call("1", "echo", `{"big":"${"x".repeat(100_000)}"}`)));
    o.fromServer(
      enc.encode(
        `{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{"big":"${"y".repeat(100_000)}"}}`,
      ),
    );
    // White-box: the queued requests, as the observer holds them until answered.
    type Open = Record<"c2s" | "s2c", Map<string | number, { params: unknown; digest?: string }[]>>;
    const open = (o as unknown as { table: { open: Open } }).table.open;
    const c = open.c2s.get(1)![0]!;
    const s = open.s2c.get(7)![0]!;
    expect([...(c.params as Map<string, unknown>).keys()]).toEqual(raw ? ["name", "arguments"] : ["name"]);
    expect(c.digest).toBe(digestJson(parseJson(`{"big":"${"x".repeat(100_000)}"}`)));
    expect(s.params === undefined).toBe(!raw);
    expect(s.digest).toBe(digestJson(parseJson(`{"big":"${"y".repeat(100_000)}"}`)));
  }
});

test("a long answer: its row's digest is of the whole result, its status read from what is kept; --raw records it whole", () => {
  const payload = `[{"type":"text","text":"${"n".repeat(1 << 17)}"}]`;
  const result = `{"content":${payload},"structuredContent":{"v":[0.5,1.0]},"isError":true}`;
  const want = digestJson(parseJson(result));
  for (const raw of [false, true]) {
    const { rows } = observe(
      [
        [">", call("1")],
        ["<", ok("1", result)],
      ],
      { raw },
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toContain(`"result_digest": "${want}", "status": "error"`);
    if (raw) expect(rows[0]).toContain(`"result": ${lineForm(parseJson(result))}}`);
  }
});
