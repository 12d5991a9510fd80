/**
 * The reading model (src/read/): rows joined into operations, `vouched` as
 * the chain verifier sees it, the first break in place, the verdict at the
 * end, and stats over operations.
 */
import { describe, expect, test } from "bun:test";
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { lineForm } from "../../src/core/canonical/index.ts";
import { type Json, parseJson } from "../../src/core/json.ts";
import { isoMillis } from "../../src/read/fields.ts";
import { type FollowWatch, followChunks } from "../../src/read/follow.ts";
import { jsonText, opJson, opLine, timeText } from "../../src/read/format.ts";
import { type Operation, OperationJoiner } from "../../src/read/read-model.ts";
import { aggregate, percentile } from "../../src/read/stats.ts";
import { type ReadEvent, readLedger } from "../../src/read/stream.ts";
import { tempDir } from "../helpers/proc.ts";
import { LedgerBuilder, type Row, seamRow } from "../helpers/verify-helpers.ts";

async function collect(path: string, opts: Parameters<typeof readLedger>[1] = {}): Promise<ReadEvent[]> {
  const out: ReadEvent[] = [];
  for await (const e of readLedger(path, opts)) out.push(e);
  return out;
}

function session(b: LedgerBuilder, id: string, rows: [string, Row][]): void {
  let seq = 0;
  b.add(seamRow("session_begin", id, ++seq, "srv", { pid: 1, host: "h" }));
  for (const [evt, f] of rows) b.add(seamRow(evt, id, ++seq, "srv", f));
  const calls = rows.filter(([e]) => e === "tool_call").length;
  b.add(
    seamRow("session_end", id, ++seq, "srv", { reason: "client_eof", exit_code: 0, rows_before_end: seq - 1, calls }),
  );
}

function write(lines: string[] | string): string {
  const p = join(tempDir("seam-read-"), "l.jsonl");
  writeFileSync(p, Array.isArray(lines) ? `${lines.join("\n")}\n` : lines);
  return p;
}

const ops = (ev: ReadEvent[]) => ev.flatMap((e) => (e.type === "op" ? [e.op] : []));

describe("operations", () => {
  test("an intent and its call are one operation; a 2^64 id stays exact", async () => {
    const b = new LedgerBuilder();
    const big = 18446744073709551616n;
    session(b, "s1", [
      ["tool_call_intent", { tool: "echo", rpc_id: big, args_digest: "d" }],
      ["tool_call", { tool: "echo", rpc_id: big, status: "ok", ms: 2.5 }],
      ["tool_call_intent", { tool: "slow", rpc_id: "7" }],
    ]);
    const ev = await collect(write(b.lines));
    const o = ops(ev);
    expect(o.map((x) => [x.kind, x.name, x.status, x.lines])).toEqual([
      ["session_begin", "session begin", null, [1]],
      ["tool_call", "echo", "ok", [2, 3]],
      ["session_end", "session end", "client_eof", [5]],
      ["tool_call", "slow", "no_result", [4]],
    ]);
    expect(o[1]!.rpc_id).toBe(big);
    const end = ev.at(-1)!;
    expect(end.type === "end" && end.report.verdict).toBe("inconclusive");
  });

  // As `seam wrap` writes a 2026-07-28 operation: the first round's intent has no `op` (the answer says the call
  // goes on), each retry's intent and answer carry it, task rows carry it, and operation_end ends it.
  const r = (f: Row) => parseJson(JSON.stringify({ seam: "mcp-stdio", session: "s", ...f }));
  const ts = (s: number) => `2026-01-01T00:00:0${s}.000Z`;
  test.each([
    [
      "input_required, then a retry",
      [
        { evt: "tool_call_intent", tool: "t", rpc_id: 1, ts: ts(0) },
        { evt: "tool_call", op: 2, round: 1, tool: "t", rpc_id: 1, status: "input_required", ms: 5, ts: ts(0) },
        { evt: "tool_call", tool: "u", rpc_id: 9, status: "ok", ms: 1, ts: ts(1) },
        { evt: "tool_call_intent", op: 2, round: 2, tool: "t", rpc_id: 3, ts: ts(1) },
        { evt: "tool_call", op: 2, round: 2, tool: "t", rpc_id: 3, status: "ok", ms: 2, ts: ts(2) },
        { evt: "operation_end", op: 2, tool: "t", status: "ok", rounds: 2, ms: 2005, ts: ts(2) },
      ],
      [
        ["u", "ok", [3], "tool_call", 1, 9],
        ["t", "ok", [1, 2, 4, 5, 6], "operation_end", 2005, 1],
      ],
    ],
    [
      "a task polled to its end",
      [
        { evt: "tool_call_intent", tool: "job", rpc_id: 6, ts: ts(0) },
        { evt: "tool_call", op: 2, tool: "job", rpc_id: 6, status: "task", task_id: "k", ms: 1, ts: ts(0) },
        { evt: "task_get", op: 2, rpc_id: 7, status: "ok", task_id: "k", ms: 1, ts: ts(1) },
        { evt: "task_get", op: 2, rpc_id: "7b", status: "ok", task_id: "k", ms: 1, ts: ts(2) },
        { evt: "operation_end", op: 2, tool: "job", status: "completed", task_id: "k", ms: 2001, ts: ts(2) },
      ],
      [["job", "completed", [1, 2, 3, 4, 5], "operation_end", 2001, 6]],
    ],
    [
      "abandoned after input_required: it ends with the file, after what came later",
      [
        { evt: "tool_call", op: 1, tool: "t", rpc_id: 1, status: "input_required", ms: 5, ts: ts(0) },
        { evt: "tool_call", tool: "u", rpc_id: 2, status: "ok", ms: 1, ts: ts(1) },
      ],
      [
        ["u", "ok", [2], "tool_call", 1, 2],
        ["t", "input_required", [1], "tool_call", 5, 1],
      ],
    ],
  ] as [string, Row[], Json[][]][])("operations of several rounds: %s", (_name, rows, want) => {
    const j = new OperationJoiner("f");
    const got = rows.flatMap((row, i) => j.add(r(row), i + 1));
    got.push(...j.flush());
    expect(got.map((o) => [o.name, o.status, o.lines, o.evt, o.ms, o.rpc_id])).toEqual(want);
    expect(got.every((o) => o.kind === "tool_call")).toBe(true);
    // Every row of the operation is kept: the earlier ones, then the one that finished it.
    for (const o of got) expect([...o.earlier, o.row].length).toBe(o.lines.length);
    expect(j.pending).toBe(0);
  });

  test("a ts reads as Date.parse reads it, whatever its form", () => {
    const forms = [
      "2026-11-30T03:24:07.112Z",
      "2026-11-30T03:24:07.000Z",
      "2026-11-30T03:24:07.999Z",
      "2026-11-30T03:24:08.001Z",
      "1969-12-31T23:59:59.999Z",
      "2026-02-30T00:00:00.000Z",
      "2026-13-01T00:00:00.000Z",
      "2026-11-30T03:24:07.1a2Z",
      "2026-11-30T03:24:07.112+01:00",
      "2026-11-30T03:24:07Z",
      "2026-11-30",
      "yesterday",
      "",
    ];
    // Twice over, so that each is read both with and without the one before it remembered.
    for (const ts of [...forms, ...forms.toReversed()]) expect([ts, isoMillis(ts)]).toEqual([ts, Date.parse(ts)]);
    expect(isoMillis(null)).toBeNaN();
  });

  test("foreign rows, unknown evts and rows missing fields are operations, not crashes", async () => {
    const b = new LedgerBuilder();
    b.add({ kind: "arcaeon.note", text: "x" });
    b.add({ evt: "brand_new", seam: "mcp-stdio", session: 5 });
    b.add({ seam: "mcp-stdio" });
    b.add({ evt: "tool_call", seam: "mcp-stdio", tool: ["x"], status: 3, ms: "slow" });
    const o = ops(await collect(write(b.lines)));
    expect(o.map((x) => [x.kind, x.name, x.status, x.ms])).toEqual([
      ["foreign", "arcaeon.note", null, null],
      ["other", "brand_new", null, null],
      ["other", "?", null, null],
      ["tool_call", null, null, null],
    ]);
  });
});

describe("vouched", () => {
  const base = () => {
    const b = new LedgerBuilder();
    session(b, "s1", [
      ["tool_call", { tool: "a", rpc_id: 1, status: "ok", ms: 1 }],
      ["tool_call", { tool: "b", rpc_id: 2, status: "ok", ms: 1 }],
      ["tool_call", { tool: "c", rpc_id: 3, status: "error", ms: 1 }],
    ]);
    return b;
  };

  test("an intact ledger: every operation vouched, verdict ok", async () => {
    const ev = await collect(write(base().lines));
    expect(ops(ev).every((o) => o.vouched)).toBe(true);
    expect(ev.filter((e) => e.type === "break")).toEqual([]);
    const end = ev.at(-1)!;
    expect(end.type === "end" && end.report.verdict).toBe("ok");
  });

  test("an edited row: the marker stands at its line, it and everything after are not vouched", async () => {
    const lines = base().lines;
    lines[2] = lines[2]!.replace('"tool": "b"', '"tool": "B"');
    const ev = await collect(write(lines));
    const seq = ev.map((e) =>
      e.type === "op" ? `${e.op.line}:${e.op.vouched}` : e.type === "break" ? `break@${e.line}` : e.type,
    );
    // Line 2 is the row just before the broken link: it too may be the one changed.
    expect(seq).toEqual(["1:true", "2:false", "break@3", "3:false", "4:false", "5:false", "end"]);
    const brk = ev.find((e) => e.type === "break")!;
    expect(brk.type === "break" && brk.message).toBe("line 3: chain mismatch");
    const end = ev.at(-1)!;
    expect(end.type === "end" && end.report.verdict).toBe("broken");
  });

  test("prechain rows are not vouched", async () => {
    const b = new LedgerBuilder();
    b.raw('{"evt": "note"}');
    for (const l of base().lines) b.raw(l);
    const o = ops(await collect(write(b.lines)));
    expect(o.map((x) => x.vouched)).toEqual([false, true, true, true, true, true]);
  });

  test("--last keeps the last N operations and the marker above them", async () => {
    const lines = base().lines;
    lines[1] = lines[1]!.replace('"tool": "a"', '"tool": "A"');
    const ev = await collect(write(lines), { last: 2 });
    expect(ev.map((e) => (e.type === "op" ? e.op.line : e.type))).toEqual(["break", 4, 5, "end"]);
  });
});

describe("follow", () => {
  test.each([
    ["an append is seen when the file system tells (the poll alone would take a minute)", { pollMs: 60_000 }],
    ["polling alone, as where the file system tells nothing", { watch: false, pollMs: 50 }],
  ] as [string, FollowWatch][])(
    "%s; a line not yet ended is held back; abort ends it",
    async (_name, how) => {
      const p = write("");
      const ac = new AbortController();
      const tail = { bytes: 0 };
      const it = followChunks(p, ac.signal, tail, how);
      const next = async () => {
        const r = await it.next();
        return r.done ? null : Buffer.from(r.value).toString();
      };
      // Caught up with an empty file, then one append to a quiet file: with notifications, no poll comes before it.
      expect(await next()).toBe("");
      appendFileSync(p, '{"a": 1}\n{"b"');
      const t0 = performance.now();
      expect(await next()).toBe('{"a": 1}\n');
      expect(performance.now() - t0).toBeLessThan(5000);
      expect(tail.bytes).toBe(4);
      expect(await next()).toBe("");
      appendFileSync(p, ": 2}\n");
      expect(await next()).toBe('{"b": 2}\n');
      expect(tail.bytes).toBe(0);
      expect(await next()).toBe("");
      const waiting = next();
      ac.abort();
      expect(await waiting).toBeNull();
    },
    10_000,
  );
});

describe("stats", () => {
  test("percentiles are nearest-rank", () => {
    const xs = Float64Array.from({ length: 100 }, (_, i) => i + 1);
    expect([percentile(xs, 50), percentile(xs, 95), percentile(xs, 99), percentile([], 50)]).toEqual([
      50,
      95,
      99,
      null,
    ]);
  });

  test("per tool and per session", async () => {
    const b = new LedgerBuilder();
    session(b, "s1", [
      ["tool_call", { tool: "a", rpc_id: 1, status: "ok", ms: 10 }],
      ["tool_call", { tool: "a", rpc_id: 2, status: "error", ms: 30 }],
      ["tool_call", { tool: "b", rpc_id: 3, status: "unanswered", ms: 5 }],
    ]);
    const s = aggregate(ops(await collect(write(b.lines))), "tool");
    expect(
      s.groups.map((g) => [g.key, g.calls, g.ok, g.error, g.unanswered, g.error_rate, g.p50_ms, g.max_ms]),
    ).toEqual([
      ["srv a", 2, 1, 1, 0, 0.5, 10, 30],
      ["srv b", 1, 0, 0, 1, 0, 5, 5],
    ]);
    expect(s.sessions.map((x) => [x.session, x.calls, x.ended, x.exit_code])).toEqual([["s1", 3, "client_eof", 0]]);
  });
});

describe("seam's own rows, by how the traffic was reached", () => {
  // `seam wrap` writes "mcp-stdio", `seam proxy` "mcp-http": both are read as seam's sessions and calls;
  // any other producer's rows are shown as foreign.
  test.each([
    ["mcp-stdio", ["session_begin", "tool_call", "session_end"], 1, "client_delete"],
    ["mcp-http", ["session_begin", "tool_call", "session_end"], 1, "client_delete"],
    ["another-producer", ["foreign", "foreign", "foreign"], 0, null],
  ])("seam %p", async (seam, kinds, calls, ended) => {
    const b = new LedgerBuilder();
    b.add({ ...seamRow("session_begin", "s1", 1, "srv", {}), seam });
    b.add({ ...seamRow("tool_call", "s1", 2, "srv", { tool: "a", rpc_id: 1, status: "ok", ms: 2 }), seam });
    b.add({ ...seamRow("session_end", "s1", 3, "srv", { reason: "client_delete", calls: 1 }), seam });
    const o = ops(await collect(write(b.lines)));
    expect(o.map((x): string => x.kind)).toEqual(kinds);
    const s = aggregate(o, "tool");
    expect(s.groups.reduce((n, g) => n + g.calls, 0)).toBe(calls);
    // Another producer's session is listed, but nothing of seam's says it ended.
    expect(s.sessions.map((x) => x.ended)).toEqual([ended]);
  });
});

describe("an HTTP exchange's status", () => {
  // seam proxy's http_exchange rows carry the HTTP status; STATUS shows it, --status can pick it.
  test.each([
    [{ method: "POST", target: "/mcp", http_status: 200 }, "200"],
    [{ method: "POST", target: "/mcp", http_status: 404 }, "404"],
    [{ method: "POST", target: "/mcp", http_status: null, http_error: "upstream unreachable" }, null],
  ])("%p", async (fields, status) => {
    const b = new LedgerBuilder();
    b.add({ ...seamRow("http_exchange", "s1", 1, "srv", fields), seam: "mcp-http" });
    const [op] = ops(await collect(write(b.lines)));
    expect(op!.status).toBe(status);
  });
});

describe("escape, globs and times", () => {
  const { cell } = require("../../src/read/cells.ts") as typeof import("../../src/read/cells.ts");
  const { globMatcher, parseWhen } = require("../../src/read/filters.ts") as typeof import("../../src/read/filters.ts");
  test.each([
    ["plain", "plain"],
    ["\x1b[31mred\x1b[0m", "\\u001b[31mred\\u001b[0m"],
    ["a\nb\rc\td", "a\\u000ab\\u000dc\\u0009d"],
    ["c1\u009b2J", "c1\\u009b2J"],
    ["sep\u2028x\u2029", "sep\\u2028x\\u2029"],
    ["bidi\u202e\u2066", "bidi\\u202e\\u2066"],
    ["del\u007f", "del\\u007f"],
    ["lone\ud800", "lone\\ud800"],
  ])("cell(%p)", (input, want) => {
    expect(cell(input)).toBe(want);
  });

  test("a long value is cut before it is escaped, and the cut never leaves a raw escape", () => {
    expect(cell("A".repeat(1 << 20), 10)).toBe("AAAAAAAAA…");
    const cut = cell("\x1b".repeat(1000), 10);
    expect(cut).toBe("\\u001b\\u0…");
    expect(cell("😀😀", 2)).toBe("\\ud83d…");
  });

  test.each([
    ["read_*", "read_file", true],
    ["read_*", "xread_file", false],
    ["?x", "ax", true],
    ["[ab]c", "bc", true],
    ["[!ab]c", "bc", false],
    ["a.b", "axb", false],
    ["git/*", "git/log", true],
    // A hyphen is an ordinary character outside a class (escaping it is an error in a Unicode pattern).
    ["no-such-tool", "no-such-tool", true],
    ["web-*", "web-fetch", true],
    ["a-c", "b", false],
    ["[a-c]x", "bx", true],
    ["*delete*all*", "bulk_delete_all_rows", true],
    ["*delete*all*", "delete_all", true],
    ["*delete*all*", "all_delete", false],
    ["*delete*all*", "deleteall", true],
    ["*", "", true],
    ["**", "x", true],
    ["", "", true],
    ["", "x", false],
    ["a*a", "a", false],
    ["a*a", "aa", true],
    ["*ab*ab*", "abab", true],
    ["*ab*ab*", "aab", false],
    ["*a?c*", "xxabcxx", true],
    ["?", "😀", true],
    ["??", "😀", false],
    ["x*[!0-9]", "x12a", true],
    ["x*[!0-9]", "x12", false],
    ["*.[ch]", "main.c", true],
    ["*\u0000*", "a\u0000b", true],
    ["[", "[", true],
  ])("glob %p on %p", (glob, name, want) => {
    expect(globMatcher(glob).test(name)).toBe(want);
  });

  test("a glob matches a long name in time linear in its length", () => {
    // A backtracking match of `*delete*all*` tries every "delete" against every later place: quadratic.
    const time = (n: number) => {
      const name = "delete_".repeat(n);
      const t0 = performance.now();
      for (const g of ["*delete*all*", "*[a-z]*all*", "delete*?all"]) expect(globMatcher(g).test(name)).toBe(false);
      return performance.now() - t0;
    };
    time(500);
    const small = Math.max(time(3000), 1);
    const big = time(12_000);
    // Four times the name: about four times the time (linear), not sixteen (quadratic); the bound leaves room for noise.
    expect(big).toBeLessThan(small * 10 + 50);
    expect(big).toBeLessThan(2000);
  });

  test("the time column reads as timeText, in UTC and in a zone half an hour off, across seconds", () => {
    const tz = process.env.TZ;
    process.env.TZ = "Asia/Kolkata";
    try {
      const times = [
        "2026-11-30T03:24:07.112Z",
        "2026-11-30T03:24:07.005Z",
        "2026-11-30T03:24:07.999Z",
        "2026-11-30T03:24:08.000Z",
        "2026-11-30T03:24:08.050Z",
        "2026-11-29T18:29:59.999Z",
        "not a time",
        "1969-12-31T23:59:59.001Z",
      ];
      for (const utc of [false, true]) {
        const style = { utc };
        const j = new OperationJoiner("f");
        for (const ts of times) {
          const [op] = j.add(parseJson(JSON.stringify({ seam: "mcp-stdio", evt: "x", ts })), 1);
          expect(opLine(op!, style).slice(2, 2 + (utc ? 24 : 23))).toBe(timeText(ts, utc));
        }
      }
      expect(timeText("2026-11-29T18:29:59.999Z", false)).toBe("2026-11-29 23:59:59.999");
    } finally {
      process.env.TZ = tz;
    }
  });

  test("--json's object: the documented fields in order, each value as jsonText writes it, whatever the row holds", () => {
    const rows: Row[] = [
      {
        evt: "tool_call",
        tool: "\u001b[31mred\u2028\u202e",
        rpc_id: 18446744073709551616n as unknown as number,
        status: "ok",
        ms: 0.1 + 0.2,
      },
      { evt: "tool_call", tool: "t", rpc_id: -0, status: "error", error_code: { code: -32602 }, ms: -0 },
      { evt: "session_end", reason: "client_eof", exit_code: 1.5, bytes: { c2s: 10, s2c: 2 ** 60 } },
      { evt: "x", args: { a: [1, "\u0085"] }, result: "r", op: "o-1", server: "s\u009b" },
    ];
    const j = new OperationJoiner("f\u0007.jsonl");
    const ops: Operation[] = [];
    for (const [i, row] of rows.entries()) {
      const text = lineForm({ seam: "mcp-stdio", session: "s\u00ad", ts: "2026-11-30T03:24:07.112Z", ...row } as Json);
      ops.push(...j.add(parseJson(text), i + 1));
    }
    ops.push(...j.flush());
    expect(ops.length).toBe(rows.length);
    for (const op of ops) {
      const m = new Map<string, Json>([
        ["type", "operation"],
        ["file", op.file],
        ["line", op.line],
        ["lines", op.lines],
        ["ts", op.ts],
        ["session", op.session],
        ["server", op.server],
        ["kind", op.kind],
        ["evt", op.evt],
        ["name", op.name],
        ["status", op.status],
        ["ms", op.ms],
        ["rpc_id", op.rpc_id ?? null],
        ["op", op.op ?? null],
        ["rounds", op.rounds],
        ["error_code", op.error_code ?? null],
        ["reason", op.reason],
        ["exit_code", op.exit_code ?? null],
        ["bytes_in", op.bytes_in],
        ["bytes_out", op.bytes_out],
        ["vouched", op.vouched],
        ["sealed", op.sealed],
      ]);
      if (op.args !== undefined) m.set("args", op.args);
      if (op.result !== undefined) m.set("result", op.result);
      expect(opJson(op)).toBe(jsonText(m));
      expect(opJson(op)).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u202e]/);
    }
  });

  test("--since and --until: ISO times and durations back from now", () => {
    const now = Date.UTC(2026, 10, 30, 12, 0, 0);
    expect(parseWhen("2h", now)).toBe(now - 7_200_000);
    expect(parseWhen("1h30m", now)).toBe(now - 5_400_000);
    expect(parseWhen("90s", now)).toBe(now - 90_000);
    expect(parseWhen("2026-11-30T03:24:07Z", now)).toBe(Date.UTC(2026, 10, 30, 3, 24, 7));
    expect(parseWhen("2026-11-30", now)).toBe(Date.UTC(2026, 10, 30));
    expect(parseWhen("yesterday", now)).toBe(null);
    expect(parseWhen("2h ago", now)).toBe(null);
  });
});
