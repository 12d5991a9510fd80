/**
 * Several real processes append to one ledger at once (Bun processes over
 * file-bun and file-node, and real Node processes running the bundled
 * writer): the result must be one valid chain, no torn or interleaved line,
 * every row present, each session's seq dense.
 */
import { beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkChain } from "./ledger-check.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const WRITER = `${ROOT}test/fixtures/ledger-writer.ts`;
let nodeWriter = "";

beforeAll(async () => {
  const built = await Bun.build({ entrypoints: [WRITER], target: "node", format: "esm" });
  if (!built.success) throw new Error("cannot bundle the writer for node");
  nodeWriter = join(mkdtempSync(join(tmpdir(), "seam-mp-")), "ledger-writer.mjs");
  writeFileSync(nodeWriter, await built.outputs[0]!.text());
});

type Kind = "bun/file-bun" | "bun/file-node" | "node";

function spawnWriter(kind: Kind, path: string, session: string, n: number, fsync = "batch") {
  const argv =
    kind === "node"
      ? ["node", nodeWriter, path, session, String(n), "node", fsync]
      : [process.execPath, WRITER, path, session, String(n), kind === "bun/file-bun" ? "bun" : "node", fsync];
  return Bun.spawn(argv, { stdout: "pipe", stderr: "pipe" });
}

async function finish(p: ReturnType<typeof spawnWriter>) {
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { out: out.trim(), err, code };
}

function expectOneChain(path: string, sessions: Record<string, number>): void {
  const text = readFileSync(path, "utf8");
  expect(text.endsWith("\n")).toBe(true);
  const check = checkChain(text);
  expect(check.breaks).toEqual([]);
  const expected: Record<string, number[]> = {};
  let total = 0;
  for (const [s, n] of Object.entries(sessions)) {
    expected[s] = Array.from({ length: n + 2 }, (_, i) => i + 1); // session_begin, n rows, session_end
    total += n + 2;
  }
  expect(check.seqs).toEqual(expected);
  expect(check.rows).toBe(total);
  expect(text.split("\n").length - 1).toBe(total); // no stray or blank line
  // and the format's independent verifier agrees
  const ref = Bun.spawnSync(["python3", `${ROOT}test/reference_verify.py`, path]);
  expect(JSON.parse(ref.stdout.toString())).toMatchObject({ verdict: "ok", rows: total, breaks: 0 });
}

async function race(writers: [Kind, number, string?][]): Promise<void> {
  const path = join(mkdtempSync(join(tmpdir(), "seam-mp-")), "shared.jsonl");
  const procs = writers.map(([kind, n, fsync], i) => spawnWriter(kind, path, `s${i}`, n, fsync));
  const results = await Promise.all(procs.map(finish));
  writers.forEach(([, n], i) => {
    expect(results[i]!.err).toBe("");
    expect(JSON.parse(results[i]!.out)).toEqual({ written: n + 2, unlogged: 0, warnings: [], ended: true });
  });
  expectOneChain(path, Object.fromEntries(writers.map(([, n], i) => [`s${i}`, n])));
}

test("two processes, 3000 rows each, one chain", async () => {
  await race([
    ["bun/file-bun", 3000],
    ["bun/file-bun", 3000],
  ]);
});

test("four processes (Bun over both file sinks, real Node), 2000 rows each, one chain", async () => {
  await race([
    ["bun/file-bun", 2000],
    ["bun/file-node", 2000],
    ["node", 2000],
    ["bun/file-bun", 2000, "always"],
  ]);
});

test("a writer killed with SIGKILL mid-stream: the next writers break its lock, heal any torn line, and continue the chain", async () => {
  const path = join(mkdtempSync(join(tmpdir(), "seam-mp-")), "shared.jsonl");
  const victim = spawnWriter("bun/file-bun", path, "victim", 1_000_000);
  // kill it once it is well into writing
  for (let i = 0; i < 200; i++) {
    await Bun.sleep(10);
    if (readFileSync(path, { flag: "a+" }).length > 200_000) break;
  }
  victim.kill("SIGKILL");
  await victim.exited;
  const t0 = performance.now();
  const results = await Promise.all(
    [spawnWriter("bun/file-bun", path, "a", 500), spawnWriter("node", path, "b", 500)].map(finish),
  );
  expect(performance.now() - t0).toBeLessThan(20_000);
  for (const r of results) expect(JSON.parse(r.out)).toMatchObject({ written: 502, unlogged: 0, ended: true });
  const text = readFileSync(path, "utf8");
  const check = checkChain(text);
  // at most one torn line, and it is declared by the ledger_repair row right after it
  expect(check.breaks.length).toBeLessThanOrEqual(1);
  const lines = text.split("\n");
  for (const b of check.breaks) {
    const n = Number(/^line (\d+): unparseable$/.exec(b)![1]);
    expect(lines[n]).toContain(`"evt": "ledger_repair"`);
    expect(lines[n]).toContain(`"torn_line": ${n}, "torn_bytes": ${Buffer.byteLength(lines[n - 1]!)},`);
  }
  const victimSeqs = check.seqs.victim ?? [];
  expect(victimSeqs).toEqual(Array.from({ length: victimSeqs.length }, (_, i) => i + 1));
  expect(check.seqs.a).toEqual(Array.from({ length: 502 }, (_, i) => i + 1));
  expect(check.seqs.b).toEqual(Array.from({ length: 502 }, (_, i) => i + 1));
});
