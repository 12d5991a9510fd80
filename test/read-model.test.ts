/**
 * The reading model (src/read/): rows joined into operations, `vouched` as
 * the chain verifier sees it, the first break in place, the verdict at the
 * end, and stats over operations.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseJson } from "../src/core/json.ts";
import { OperationJoiner } from "../src/read/operations.ts";
import { aggregate, percentile } from "../src/read/stats.ts";
import { type ReadEvent, readLedger } from "../src/read/stream.ts";
import { tempDir } from "./proc.ts";
import { LedgerBuilder, type Row, seamRow } from "./verify-helpers.ts";

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

  test("rows with an `op` field join by it, across rounds, whatever their rpc ids", () => {
    const j = new OperationJoiner("f");
    const r = (f: Row) => parseJson(JSON.stringify({ seam: "mcp-stdio", session: "s", ...f }));
    expect(
      j.add(
        r({
          evt: "tool_call",
          op: "a",
          tool: "t",
          rpc_id: 1,
          status: "input_required",
          ts: "2026-01-01T00:00:00.000Z",
          ms: 5,
        }),
        1,
      ),
    ).toEqual([]);
    expect(
      j.add(r({ evt: "tool_call", op: "b", tool: "u", rpc_id: 2, status: "ok", ms: 1 }), 2).map((o) => o.name),
    ).toEqual(["u"]);
    const done = j.add(
      r({ evt: "tool_call", op: "a", tool: "t", rpc_id: 3, status: "ok", ts: "2026-01-01T00:00:01.000Z", ms: 7 }),
      3,
    );
    expect(done.map((o) => [o.name, o.status, o.lines, o.rounds, o.ms])).toEqual([["t", "ok", [1, 3], 2, 1005]]);
    expect(j.pending).toBe(0);
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

describe("escape, globs and times", () => {
  const { cell } = require("../src/read/escape.ts") as typeof import("../src/read/escape.ts");
  const { globRegExp, parseWhen } = require("../src/read/filters.ts") as typeof import("../src/read/filters.ts");
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
  ])("glob %p on %p", (glob, name, want) => {
    expect(globRegExp(glob).test(name)).toBe(want);
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
