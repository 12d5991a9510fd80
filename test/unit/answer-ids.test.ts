/**
 * Answers whose id an SDK client pairs by its own rule, not seam's exact one
 * (src/observe/pairing.ts), and second answers to one request: each has its
 * own row, the request's row says `ambiguous` with the digest of the result
 * the official SDKs deliver, and `seam verify` finds the session inconclusive.
 */
import { describe, expect, test } from "bun:test";
import { digestJson } from "../../src/core/digest.ts";
import { parseJson } from "../../src/core/json.ts";
import { coercedKeys } from "../../src/observe/pairing.ts";
import { observe } from "../helpers/observe.ts";

const call = (id: string) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{}}}`;
const answer = (id: string, text: string) =>
  `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"${text}"}]}}`;
const digestOf = (text: string) => digestJson(parseJson(`{"content":[{"type":"text","text":"${text}"}]}`));
const REAL = digestOf("real");
const DECOY = digestOf("decoy");

/** [name, the answer ids in order (real first), what each row of the script says: evt, status, result_digest, first_result_digest]. */
const cases: [string, string[], [string, string, string, string?][]][] = [
  [
    `"7" then 7`,
    [`"7"`, "7"],
    [
      ["tool_call", "ambiguous", REAL],
      ["answer_ambiguous", "ok", REAL],
      ["answer_duplicate", "ok", DECOY, REAL],
    ],
  ],
  [
    "7.0 then 7 (7.0 is 7 to every SDK: the second is the duplicate)",
    ["7.0", "7"],
    [
      ["tool_call", "ok", REAL],
      ["answer_duplicate", "ok", DECOY, REAL],
    ],
  ],
  [
    `" 7 " alone`,
    [`" 7 "`],
    [
      ["tool_call", "ambiguous", REAL],
      ["answer_ambiguous", "ok", REAL],
    ],
  ],
  [
    `7 then "7"`,
    ["7", `"7"`],
    [
      ["tool_call", "ok", REAL],
      ["answer_duplicate", "ok", DECOY, REAL],
    ],
  ],
  [
    "7 then 7",
    ["7", "7"],
    [
      ["tool_call", "ok", REAL],
      ["answer_duplicate", "ok", DECOY, REAL],
    ],
  ],
  [
    `"0x7" then "+7" (JavaScript's Number, then Python's int)`,
    [`"0x7"`, `"+7"`],
    [
      ["tool_call", "ambiguous", REAL],
      ["answer_ambiguous", "ok", REAL],
      ["answer_duplicate", "ok", DECOY, REAL],
    ],
  ],
];

describe("answers an SDK client pairs by its own id rule", () => {
  test.each(cases)("%s", (_name, ids, want) => {
    const script: [">" | "<", string][] = [[">", call("7")]];
    ids.forEach((id, i) => script.push(["<", answer(id, i === 0 ? "real" : "decoy")]));
    const { rows } = observe(script);
    const got = rows.map((r) => {
      const o = JSON.parse(r);
      return [o.evt, o.status, o.result_digest, o.first_result_digest].filter((v) => v !== undefined);
    });
    expect(got).toEqual(want);
    for (const r of rows.filter((r) => JSON.parse(r).evt !== "tool_call")) expect(JSON.parse(r).rpc_id).toBe(7);
  });

  test("an id no SDK rule gives to the open request leaves it unanswered", () => {
    for (const id of [`"7a"`, `"seven"`, "7.5", `"07.5"`, "8"]) {
      const { rows, counts } = observe([
        [">", call("7")],
        ["<", answer(id, "decoy")],
      ]);
      expect(rows.map((r) => JSON.parse(r).status)).toEqual(["unanswered"]);
      expect(counts.unmatched_responses).toBe(1);
    }
  });

  test("coercedKeys: the keys each SDK's rule reaches", () => {
    const table: [string, number[]][] = [
      [`"7"`, [7]],
      [`" 7 "`, [7]],
      [`"0x7"`, [7]],
      [`"7_0"`, [70]],
      [`""`, [0]],
      [`"-0"`, [0]],
      ["7.0", []],
      ["7", []],
      [`"abc"`, []],
      ["7.5", []],
    ];
    for (const [id, keys] of table) expect([id, coercedKeys(parseJson(id))]).toEqual([id, keys]);
  });
});

describe("answers the SDKs do not read as answers (src/observe/answer-shape.ts)", () => {
  const ROW = (evt: string, status?: string, digest?: string, reason?: string) =>
    [evt, status, digest, reason].filter((v) => v !== undefined);
  /** [name, server frames, the rows: evt, status, result_digest, reason]. */
  const cases: [string, string[], (string | undefined)[][]][] = [
    [
      "no jsonrpc: no SDK reads it; the call stays open",
      [`{"id":7,"result":{"content":[{"type":"text","text":"decoy"}]}}`],
      [ROW("answer_ambiguous", undefined, DECOY, "dropped"), ROW("tool_call", "unanswered")],
    ],
    [
      "no jsonrpc, then the real answer",
      [`{"id":7,"result":{"content":[{"type":"text","text":"decoy"}]}}`, answer("7", "real")],
      [ROW("answer_ambiguous", undefined, DECOY, "dropped"), ROW("tool_call", "ok", REAL)],
    ],
    [
      "a result that is no object",
      [`{"jsonrpc":"2.0","id":7,"result":[1]}`],
      [ROW("answer_ambiguous", undefined, digestJson(parseJson("[1]")), "dropped"), ROW("tool_call", "unanswered")],
    ],
    [
      "an error whose code is no integer",
      [`{"jsonrpc":"2.0","id":7,"error":{"code":"x","message":"m"}}`],
      [
        ROW("answer_ambiguous", undefined, digestJson(parseJson(`{"code":"x","message":"m"}`)), "dropped"),
        ROW("tool_call", "unanswered"),
      ],
    ],
    [
      "another top-level key: TypeScript drops it, Python reads it",
      [`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"decoy"}]},"x":1}`, answer("7", "real")],
      [
        ROW("tool_call", "ambiguous", DECOY),
        ROW("answer_ambiguous", "ok", DECOY, "disputed"),
        ROW("answer_duplicate", "ok", REAL),
      ],
    ],
  ];
  test.each(cases)("%s", (_name, frames, want) => {
    const { rows } = observe([[">", call("7")], ...frames.map((f): ["<", string] => ["<", f])]);
    expect(
      rows.map((r) => {
        const o = JSON.parse(r);
        return [o.evt, o.status, o.result_digest, o.reason].filter((v) => v !== undefined);
      }),
    ).toEqual(want.map((w) => (w[0] === "tool_call" && w[1] === "unanswered" ? [...w, "client_eof"] : w)));
  });
});
