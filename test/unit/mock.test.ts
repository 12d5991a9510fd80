/**
 * seam mock's answers (src/mock/): a table of recordings (rows as a ledger
 * holds them, payloads by digest) and the lines a client sends, with the
 * lines the mock writes back.
 */
import { describe, expect, test } from "bun:test";
import { digestJson, digestJsonUtf8 } from "../../src/core/digest.ts";
import { type Json, parseJson } from "../../src/core/json.ts";
import { MockAnswers, type MockOptions, runMock } from "../../src/mock/mock-server.ts";
import { Recording } from "../../src/mock/recording.ts";
import { Conversation, pointerTokens, ReplayPlan, withoutPointers } from "../../src/mock/replay.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const dig = (json: string) => digestJsonUtf8(enc(json));

/** A payload: its text, and the digest a row names it by. */
const P = {
  init: `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"rec","version":"1"}}`,
  a: `{"content":[{"type":"text","text":"A"}]}`,
  b: `{ "content" : [{"type":"text","text":"B"}] }`,
  sum: `{"content":[{"type":"text","text":"42"}]}`,
  err: `{"code":-32602,"message":"no such tool"}`,
  tools: `[{"name":"echo","inputSchema":{"type":"object"}}]`,
  res: `{"contents":[{"uri":"x://1","text":"one"}]}`,
  gone: `{"content":[]}`,
  list: `{"resources":[{"uri":"x://1","name":"one"}]}`,
};
type Name = keyof typeof P;
const D = Object.fromEntries(Object.entries(P).map(([k, v]) => [k, dig(v)])) as Record<Name, string>;
const ARGS_M1 = dig(`{"m":1}`);
const ARGS_SUM = dig(`{"a":2,"b":40}`);
const ARGS_NONE = dig("{}");

const row = (evt: string, fields: Record<string, Json>) => ({ evt, seam: "mcp-stdio", session: "s1", ...fields });
/** A recording of one session, in the order of its rows. */
const ROWS = [
  row("session_begin", {}),
  row("mcp_initialize", { rpc_id: 0, status: "ok", result_digest: D.init }),
  row("tools_list", { rpc_id: 1, status: "ok", tools_digest: D.tools, next_cursor: "p2" }),
  row("tool_call", { tool: "echo", rpc_id: 2, args_digest: ARGS_M1, result_digest: D.a, status: "ok" }),
  row("tool_call", { tool: "sum", rpc_id: 3, args_digest: ARGS_SUM, result_digest: D.sum, status: "ok" }),
  row("tool_call", { tool: "echo", rpc_id: 4, args_digest: ARGS_M1, result_digest: D.b, status: "ok" }),
  row("tool_call", {
    tool: "nope",
    rpc_id: 5,
    args_digest: ARGS_NONE,
    result_digest: D.err,
    status: "error",
    error_code: -32602,
  }),
  row("tool_call", { tool: "slow", rpc_id: 6, args_digest: ARGS_NONE, status: "unanswered" }),
  row("resource_read", { uri: "x://1", rpc_id: 7, result_digest: D.res, status: "ok" }),
  row("prompt_get", { prompt: "p", rpc_id: 8, args_digest: ARGS_NONE, result_digest: D.gone, status: "ok" }),
  row("tool_call", {
    tool: "other",
    seam: "someone-else",
    rpc_id: 9,
    args_digest: ARGS_NONE,
    result_digest: D.a,
    status: "ok",
  }),
  row("session_end", {}),
  row("client_request", {
    method: "resources/list",
    rpc_id: 10,
    params_digest: dig("null"),
    result_digest: D.list,
    status: "ok",
  }),
  // Not a method a client_request row is made for: neither served nor replayed.
  row("client_request", { method: "ping", rpc_id: 11, params_digest: dig("null"), result_digest: D.a, status: "ok" }),
];

/** Runs the mock over `lines` (each sent as one frame): what it wrote back, line by line. */
async function serve(lines: string[], opts: MockOptions = {}): Promise<string[]> {
  const rec = new Recording();
  for (const r of ROWS) rec.row(r);
  const payloads = new Map<string, Uint8Array | null>(rec.digests().map((d) => [d, null]));
  for (const name of Object.keys(P) as Name[]) if (name !== "gone") payloads.set(D[name], enc(P[name]));
  const got: Uint8Array[] = [];
  async function* input() {
    for (const l of lines) yield enc(`${l}\n`);
  }
  await runMock(
    input(),
    {
      write(c) {
        got.push(c.slice());
      },
      async end() {},
    },
    new MockAnswers(rec, payloads, opts),
  );
  return new TextDecoder().decode(Buffer.concat(got)).split("\n").slice(0, -1);
}

const call = (id: string, name: string, args?: string) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${name}"${args === undefined ? "" : `,"arguments":${args}`}}}`;
const ok = (id: string, payload: string) => `{"jsonrpc":"2.0","id":${id},"result":${payload}}`;
const fail = (id: string, code: number, message: string) =>
  `{"jsonrpc":"2.0","id":${id},"error":{"code":${code},"message":${JSON.stringify(`seam mock: ${message}`)}}}`;

describe("seam mock answers", () => {
  const CASES: [string, string[], string[], MockOptions?][] = [
    [
      "a listing by the digest of its params (none: null)",
      [
        `{"jsonrpc":"2.0","id":1,"method":"resources/list"}`,
        `{"jsonrpc":"2.0","id":2,"method":"resources/list","params":{"cursor":"c"}}`,
        `{"jsonrpc":"2.0","id":3,"method":"prompts/list"}`,
      ],
      [
        ok("1", P.list),
        fail("2", -32602, "resources/list was never recorded with these params"),
        fail("3", -32601, "prompts/list was never recorded"),
      ],
    ],
    [
      "initialize and tools/list: the recorded bytes, the request's own id as written",
      [
        `{"jsonrpc":"2.0","id":"x-1","method":"initialize","params":{"protocolVersion":"2099-01-01"}}`,
        `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
        `{"jsonrpc":"2.0","id":1.0,"method":"tools/list"}`,
      ],
      [ok(`"x-1"`, P.init), ok("1.0", `{"tools":${P.tools},"nextCursor":"p2"}`)],
    ],
    [
      "a call asked again gets the next recorded answer, then the last again",
      [call("1", "echo", `{"m":1}`), call("2", "echo", ` { "m" : 1 } `), call("3", "echo", `{"m":1}`)],
      [ok("1", P.a), ok("2", P.b), ok("3", P.b)],
    ],
    [
      "arguments are matched by digest (key order and whitespace do not count); none digest as {}",
      [call("7", "sum", `{"b":40,"a":2}`), call("8", "nope")],
      [ok("7", P.sum), `{"jsonrpc":"2.0","id":8,"error":${P.err}}`],
    ],
    [
      "never recorded: the method, the params, a call never answered",
      [
        `{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"x://1"}}`,
        call("2", "echo", `{"m":2}`),
        call("3", "slow"),
        call("4", "other"),
        `{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"x://2"}}`,
      ],
      [
        fail("1", -32601, "resources/subscribe was never recorded"),
        fail("2", -32602, 'tools/call "echo" was never recorded with these params'),
        fail("3", -32602, 'tools/call "slow" was never recorded with these params'),
        fail("4", -32602, 'tools/call "other" was never recorded with these params'),
        fail("5", -32602, 'resources/read "x://2" was never recorded with these params'),
      ],
    ],
    [
      "a resource; a prompt whose payload is not in the store; ping, logging/setLevel; a batch; a frame that is not JSON",
      [
        `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"x://1"}}`,
        `{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"p"}}`,
        `{"jsonrpc":"2.0","id":3,"method":"ping"}`,
        `{"jsonrpc":"2.0","id":7,"method":"logging/setLevel","params":{"level":"debug"}}`,
        `[${call("4", "sum", `{"a":2,"b":40}`)},{"jsonrpc":"2.0","method":"notifications/x"},${call("5", "nope")}]`,
        "{not json",
        `{"jsonrpc":"2.0","id":6,"result":{}}`,
      ],
      [
        ok("1", P.res),
        fail("2", -32001, `the recorded answer to prompts/get "p" is not in the payload store (${D.gone})`),
        ok("3", "{}"),
        ok("7", "{}"),
        `[${ok("4", P.sum)},{"jsonrpc":"2.0","id":5,"error":${P.err}}]`,
        `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"seam mock: the frame is not JSON"}}`,
      ],
    ],
    [
      "--strict-order: the recorded order, and nothing after the last",
      [
        `{"jsonrpc":"2.0","id":0,"method":"initialize"}`,
        call("1", "echo", `{"m":1}`),
        `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
        call("3", "echo", `{"m":1}`),
        call("4", "sum", `{"a":2,"b":40}`),
        call("5", "echo", `{"m":1}`),
        call("6", "nope"),
        `{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"x://1"}}`,
        `{"jsonrpc":"2.0","id":8,"method":"prompts/get","params":{"name":"p"}}`,
        `{"jsonrpc":"2.0","id":10,"method":"resources/list"}`,
        call("9", "echo", `{"m":1}`),
      ],
      [
        ok("0", P.init),
        fail("1", -32000, 'tools/call "echo" is out of the recorded order: tools/list comes next'),
        ok("2", `{"tools":${P.tools},"nextCursor":"p2"}`),
        ok("3", P.a),
        ok("4", P.sum),
        ok("5", P.b),
        `{"jsonrpc":"2.0","id":6,"error":${P.err}}`,
        ok("7", P.res),
        fail("8", -32001, `the recorded answer to prompts/get "p" is not in the payload store (${D.gone})`),
        ok("10", P.list),
        fail("9", -32000, 'tools/call "echo" comes after the last recorded request'),
      ],
      { strictOrder: true },
    ],
  ];
  test.each(CASES)("%s", async (_, lines, want, opts) => {
    expect(await serve(lines, opts)).toEqual(want);
  });

  test("--session: only that session's answers", () => {
    const rec = new Recording("s2");
    for (const r of ROWS) rec.row(r);
    rec.row({ ...ROWS[3]!, session: "s2-long-id" });
    expect(rec.answers.map((a) => [a.session, a.label])).toEqual([["s2-long-id", 'tools/call "echo"']]);
  });
});

describe("seam replay --ignore: JSON pointers taken out of an answer", () => {
  const V = `{"content":[{"type":"text","text":"t"},{"a/b":1,"m~n":2}],"_meta":{"at":"now"},"isError":false}`;
  const CASES: [string, string | null][] = [
    ["/content/0/text", `{"content":[{"type":"text"},{"a/b":1,"m~n":2}],"_meta":{"at":"now"},"isError":false}`],
    ["/content/0", `{"content":[null,{"a/b":1,"m~n":2}],"_meta":{"at":"now"},"isError":false}`],
    ["/content/1/a~1b", `{"content":[{"type":"text","text":"t"},{"m~n":2}],"_meta":{"at":"now"},"isError":false}`],
    ["/content/1/m~0n", `{"content":[{"type":"text","text":"t"},{"a/b":1}],"_meta":{"at":"now"},"isError":false}`],
    ["/_meta", `{"content":[{"type":"text","text":"t"},{"a/b":1,"m~n":2}],"isError":false}`],
    ["/content/7", V],
    ["/content/01", V],
    ["/nothing/here", V],
    ["", "null"],
    ["content", null],
  ];
  test.each(CASES)("%p", (pointer, want) => {
    if (want === null) {
      expect(pointerTokens(pointer)).toBeNull();
      return;
    }
    expect(digestJson(withoutPointers(parseJson(V), [pointer]))).toBe(dig(want));
  });
});

describe("seam replay: the requests a recording replays", () => {
  test("each answered request a row can rebuild, in ledger order; the server's requests kept apart", () => {
    const plan = new ReplayPlan();
    const rows = [
      ...ROWS,
      row("tools_list", { rpc_id: 10, status: "ok", cursor: "p2", tools_digest: D.tools }),
      row("tools_list", { rpc_id: 11, status: "error", error_code: -32603, result_digest: D.err }),
      // Refused by seam (--fail-closed): its answer is seam's own, not the server's.
      row("tool_call", { tool: "rm", rpc_id: 12, args_digest: ARGS_NONE, result_digest: D.err, status: "refused" }),
      row("server_request", {
        method: "sampling/createMessage",
        rpc_id: 0,
        params_digest: ARGS_M1,
        result_digest: D.a,
        status: "ok",
      }),
      row("server_request", { method: "roots/list", rpc_id: 1, params_digest: ARGS_NONE, status: "unanswered" }),
    ];
    rows.forEach((r, i) => plan.row(r, i + 1));
    const [s] = plan.replayable();
    expect(s!.requests.map((r) => [r.line, r.method, r.name, r.argsDigest ?? null, r.resultDigest])).toEqual([
      [3, "tools/list", "", null, D.tools],
      [4, "tools/call", "echo", ARGS_M1, D.a],
      [5, "tools/call", "sum", ARGS_SUM, D.sum],
      [6, "tools/call", "echo", ARGS_M1, D.b],
      [7, "tools/call", "nope", ARGS_NONE, D.err],
      [9, "resources/read", "x://1", null, D.res],
      [10, "prompts/get", "p", ARGS_NONE, D.gone],
      [13, "resources/list", "", dig("null"), D.list],
      [15, "tools/list", "p2", null, D.tools],
    ]);
    expect(s!.serverRequests).toEqual([
      { method: "sampling/createMessage", paramsDigest: ARGS_M1, resultDigest: D.a, error: false },
    ]);
  });
});

describe("seam replay: the server's own requests answered from the recording", () => {
  const plan = new ReplayPlan();
  [
    row("server_request", {
      method: "sampling/createMessage",
      params_digest: dig(`{"m":1}`),
      result_digest: D.a,
      status: "ok",
    }),
    row("server_request", {
      method: "sampling/createMessage",
      params_digest: dig(`{"m":1}`),
      result_digest: D.b,
      status: "ok",
    }),
    row("server_request", {
      method: "elicitation/create",
      params_digest: dig("null"),
      result_digest: D.err,
      status: "error",
      error_code: -32602,
    }),
    row("server_request", { method: "roots/list", params_digest: dig("{}"), result_digest: D.gone, status: "ok" }),
    row("tool_call", { tool: "echo", args_digest: ARGS_M1, result_digest: D.a, status: "ok" }),
  ].forEach((r, i) => plan.row(r, i + 1));
  const payloads = new Map<string, Uint8Array>([
    [D.a, enc(P.a)],
    [D.b, enc(P.b)],
    [D.err, enc(P.err)],
  ]);
  const noAnswer = (id: number, why: string) =>
    `{"jsonrpc":"2.0","id":${id},"error":{"code":-32601,"message":"seam replay: ${why}"}}`;
  /** Frames the server sends, one after the other, and the lines the replay answers with. */
  const CASES: [string, string[], string[]][] = [
    [
      "the recorded sequence, then the last answer again; key order and whitespace do not matter",
      [
        `{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"m":1}}`,
        `{"jsonrpc":"2.0","id":"two","method":"sampling/createMessage","params":{ "m" : 1 }}`,
        `{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{"m":1}}`,
      ],
      [
        `{"jsonrpc":"2.0","id":1,"result":${P.a}}`,
        `{"jsonrpc":"2.0","id":"two","result":${P.b}}`,
        `{"jsonrpc":"2.0","id":3,"result":${P.b}}`,
      ],
    ],
    [
      "other params, or a method never recorded: an error naming it",
      [
        `{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"m":2}}`,
        `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
      ],
      [
        noAnswer(1, "sampling/createMessage was never recorded with these params"),
        noAnswer(2, "tools/list was never recorded with these params"),
      ],
    ],
    [
      "a recorded error is answered as an error; no params are params null",
      [`{"jsonrpc":"2.0","id":1,"method":"elicitation/create"}`],
      [`{"jsonrpc":"2.0","id":1,"error":${P.err}}`],
    ],
    [
      "a recorded answer whose payload is not in the store",
      [`{"jsonrpc":"2.0","id":1,"method":"roots/list","params":{}}`],
      [noAnswer(1, "the recorded answer to roots/list is not in the payload store")],
    ],
    [
      "ping gets {}; a batch's requests are each answered; notifications and answers get nothing",
      [
        `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/message"},{"jsonrpc":"2.0","id":5,"result":{}}]`,
      ],
      [`{"jsonrpc":"2.0","id":1,"result":{}}`],
    ],
  ];
  test.each(CASES)("%s", (_, frames, want) => {
    const conv = new Conversation(plan.sessions[0]!, (d) => payloads.get(d) ?? null);
    for (const f of frames) conv.frame(enc(f));
    expect(conv.pending).toEqual(want);
  });
});
