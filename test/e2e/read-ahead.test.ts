/**
 * Verifying ahead on a thread (src/read/verify-ahead.ts): the reading model
 * gives the very events, operations and verdict it gives with the verifier
 * on its own thread, for ledgers of every kind of line and break, cut into
 * chunks at every kind of boundary; and `seam log` of a file big enough to
 * take the thread finds what the verifier finds, under all three builds.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { generateLedger } from "../../bench/lib.ts";
import { type ReadEvent, type ReadOptions, readLedger } from "../../src/read/stream.ts";
import { startThreadFrom } from "../../src/runtime/thread.ts";
import type { Thread } from "../../src/runtime/types.ts";
import { built, runCli, VIAS } from "../helpers/cli.ts";
import { tempDir } from "../helpers/proc.ts";
import { mainLedger } from "../helpers/read-fixtures.ts";
import { LedgerBuilder, seamRow } from "../helpers/verify-helpers.ts";

const FIXTURE = new URL("../fixtures/read-ahead-thread.ts", import.meta.url).pathname;

/** Starts the fixture thread, counting the threads started. */
function starter(count: { started: number }) {
  return (role: string, data: unknown): Thread => {
    count.started++;
    return startThreadFrom(FIXTURE, role, data);
  };
}

/** The file's bytes in fresh chunks of `size` (every boundary a line can straddle). */
function chunked(size: number) {
  return async function* (path: string): AsyncGenerator<Uint8Array> {
    const all = await Bun.file(path).bytes();
    for (let at = 0; at < all.length; at += size) yield all.slice(at, at + size);
  };
}

async function collect(path: string, opts: ReadOptions): Promise<ReadEvent[]> {
  const out: ReadEvent[] = [];
  for await (const e of readLedger(path, opts)) out.push(e);
  return out;
}

function tampered(): string[] {
  const lines = mainLedger().lines.slice();
  // Line 5: read_file's answer, "ok" made "error" without its chain recomputed.
  lines[4] = lines[4]!.replace('"ok"', '"error"');
  return lines;
}

const unterminated = (lines: string[]) => lines.join("\n");
const text = (lines: string[]) => `${lines.join("\n")}\n`;

/** Ledgers with every kind of line: rows in and out of chain form, breaks, repairs, torn ends. */
const LEDGERS: [string, string][] = [
  ["a ledger that verifies", text(mainLedger().lines)],
  ["a row edited in place", text(tampered())],
  [
    "blank lines, a line that is no JSON, a JSON array",
    text(["", ...mainLedger().lines.slice(0, 4), "  ", "{not json", "[1, 2]", ...mainLedger().lines.slice(4)]),
  ],
  ["a torn final line", unterminated([...mainLedger().lines, '{"evt": "tool_call", "ses'])],
  ["a last row with no newline", unterminated(mainLedger().lines)],
  [
    "a repeated key and rows not in chain form",
    text(['{"evt":"x","evt":"y"}', ...mainLedger().lines.map((l, i) => (i === 2 ? l.replace(/": /g, '":') : l))]),
  ],
  [
    "prechain rows, then a null chain after the chain began",
    text([
      '{"evt": "note", "n": 1}',
      '{"evt": "note", "n": 2.0}',
      ...mainLedger().lines,
      '{"evt": "note", "chain": null}',
    ]),
  ],
  [
    "non-ASCII text and escapes",
    (() => {
      const b = new LedgerBuilder();
      b.add(seamRow("session_begin", "s-é", 1, "sérveur ✓", { pid: 1, host: "h" }));
      b.add(
        seamRow("tool_call", "s-é", 2, "sérveur ✓", { tool: "naïve\ttool\u0001", rpc_id: 1, status: "ok", ms: 1.5 }),
      );
      return text(b.lines);
    })(),
  ],
];

describe("verifying ahead gives what verifying here gives", () => {
  for (const [name, content] of LEDGERS)
    for (const size of [7, 100, 1 << 20])
      for (const strict of [false, true])
        test(`${name}, chunks of ${size}${strict ? ", strict" : ""}`, async () => {
          const path = join(tempDir("seam-ahead-"), "l.jsonl");
          writeFileSync(path, content);
          const count = { started: 0 };
          const here = await collect(path, { chunks: chunked(size), strict, verifier: "here" });
          const ahead = await collect(path, { chunks: chunked(size), strict, verifier: starter(count) });
          expect(count.started).toBe(1);
          expect(ahead).toEqual(here);
        });

  test("a source that fails part way: the same operations, and `unreadable` as the verdict, either way", async () => {
    const path = join(tempDir("seam-ahead-"), "l.jsonl");
    writeFileSync(path, text(mainLedger().lines));
    const failing = async function* (p: string): AsyncGenerator<Uint8Array> {
      let n = 0;
      for await (const c of chunked(300)(p)) {
        if (++n === 4) throw Object.assign(new Error("input/output error"), { code: "EIO" });
        yield c;
      }
    };
    const here = await collect(path, { chunks: failing, verifier: "here" });
    const ahead = await collect(path, { chunks: failing, verifier: starter({ started: 0 }) });
    expect(ahead).toEqual(here);
    const end = ahead.at(-1)!;
    expect(end.type === "end" && end.report.first_break?.kind).toBe("unreadable");
  });

  test("the thread finds the edit: its break, in place, greys out what follows", async () => {
    const path = join(tempDir("seam-ahead-"), "l.jsonl");
    writeFileSync(path, text(tampered()));
    const ev = await collect(path, { verifier: starter({ started: 0 }) });
    const end = ev.at(-1)!;
    expect(end.type === "end" && end.report.verdict).toBe("broken");
    expect(end.type === "end" && end.report.first_break?.kind).toBe("chain_mismatch");
    const at = ev.findIndex((e) => e.type === "break");
    expect(ev[at]).toMatchObject({ type: "break", line: 5 });
    expect(ev.slice(at + 1).some((e) => e.type === "op" && e.op.vouched)).toBe(false);
    expect(ev.slice(0, at).some((e) => e.type === "op" && e.op.vouched)).toBe(true);
  });

  test("a thread that dies is an error, not a verdict", async () => {
    const path = join(tempDir("seam-ahead-"), "l.jsonl");
    writeFileSync(path, text(mainLedger().lines));
    const dies = (role: string, data: unknown) => startThreadFrom(FIXTURE, `${role}-unknown`, data);
    await expect(collect(path, { verifier: dies })).rejects.toThrow(/the verifier thread ended/);
  });

  test("a reader that stops early ends the thread", async () => {
    const path = join(tempDir("seam-ahead-"), "l.jsonl");
    writeFileSync(path, text(mainLedger().lines));
    let ended = false;
    const watched = (role: string, data: unknown): Thread => {
      const t = startThreadFrom(FIXTURE, role, data);
      t.onExit(() => {
        ended = true;
      });
      return t;
    };
    for await (const e of readLedger(path, { verifier: watched, chunks: chunked(7) })) if (e.type === "op") break;
    for (let i = 0; i < 100 && !ended; i++) await Bun.sleep(20);
    expect(ended).toBe(true);
  });
});

describe("seam log of a big file verifies on a thread in every build", () => {
  const dir = tempDir("seam-ahead-big-");
  const good = join(dir, "good.jsonl");
  const bad = join(dir, "bad.jsonl");
  // Over the 16 MiB from which the reader starts the thread.
  generateLedger(good, 40_000);
  const lines = readFileSync(good, "utf8").split("\n");
  lines[30_000] = lines[30_000]!.replace('"seam": "mcp-stdio"', '"seam": "mcp-stdiO"');
  writeFileSync(bad, lines.join("\n"));
  /** The verdict line of `seam log --json` (no operation passes the filter: the break marker, if any, and it). */
  const verdict = async (via: (typeof VIAS)[number], path: string) => {
    const r = await runCli(via, ["log", "--json", "--tool", "no-such-tool", path]);
    expect(r.stderr).toBe("");
    return JSON.parse(r.stdout.toString().trim().split("\n").at(-1)!);
  };
  for (const via of VIAS)
    test.skipIf(!built(via))(`${via}`, async () => {
      expect(statSync(good).size).toBeGreaterThan(16 << 20);
      const ok = await verdict(via, good);
      expect([ok.verdict, ok.rows, ok.unvouched]).toEqual(["ok", 40_000, 0]);
      const out = join(dir, `${via}.html`);
      const made = await runCli(via, ["report", "--out", out, bad]);
      expect(made.code).toBe(1);
      const html = readFileSync(out, "utf8");
      // Every row shown is the line as the file holds it, none written again from its parsed form.
      const written = [...html.matchAll(/"rb":\[([^\]]*)\]/g)].map((m) => m[1]);
      expect(written.length).toBe(Math.ceil(40_000 / 8192));
      expect(written.every((x) => x === "")).toBe(true);
      expect(html).toContain('"first_break":{"line":30001,"kind":"chain_mismatch"');
      const broken = await verdict(via, bad);
      expect([broken.verdict, broken.first_break]).toEqual([
        "broken",
        { line: 30_001, message: "line 30001: chain mismatch" },
      ]);
    });
});
