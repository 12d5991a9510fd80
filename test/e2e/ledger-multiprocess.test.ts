/**
 * Several real processes append to one ledger at once (Bun processes and
 * real Node processes running the bundled writer): the result must be one valid chain, no torn or interleaved line,
 * every row present, each session's seq dense.
 */
import { beforeAll, expect, test } from "bun:test";
import { linkSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { checkChain } from "../helpers/ledger-check.ts";
import { tempDir } from "../helpers/proc.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const WRITER = `${ROOT}test/fixtures/ledger-writer.ts`;
let nodeWriter = "";

beforeAll(async () => {
  const built = await Bun.build({ entrypoints: [WRITER], target: "node", format: "esm" });
  if (!built.success) throw new Error("cannot bundle the writer for node");
  nodeWriter = join(tempDir("seam-mp-"), "ledger-writer.mjs");
  writeFileSync(nodeWriter, await built.outputs[0]!.text());
});

type Kind = "bun" | "node";

function spawnWriter(kind: Kind, path: string, session: string, n: number, fsync = "batch", foreign = false) {
  const extra = foreign ? ["foreign"] : [];
  const argv =
    kind === "node"
      ? ["node", nodeWriter, path, session, String(n), fsync, ...extra]
      : [process.execPath, WRITER, path, session, String(n), fsync, ...extra];
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
  const ref = Bun.spawnSync(["python3", `${ROOT}test/helpers/reference_verify.py`, path]);
  expect(JSON.parse(ref.stdout.toString())).toMatchObject({ verdict: "ok", rows: total, breaks: 0 });
}

async function race(writers: [Kind, number, string?][]): Promise<void> {
  const path = join(tempDir("seam-mp-"), "shared.jsonl");
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
    ["bun", 3000],
    ["bun", 3000],
  ]);
});

test("four processes (Bun and real Node), 2000 rows each, one chain", async () => {
  await race([
    ["bun", 2000],
    ["node", 2000],
    ["node", 2000],
    ["bun", 2000, "always"],
  ]);
});

test("two names of one ledger (a symlink, taken with allowForeign, and the real name), three writers on each: one lock, one chain", async () => {
  const dir = tempDir("seam-mp-");
  const names = [join(dir, "l.jsonl"), join(dir, "alias.jsonl")];
  writeFileSync(names[0]!, "", { mode: 0o600 });
  symlinkSync(names[0]!, names[1]!);
  const kinds: Kind[] = ["bun", "node", "bun"];
  const procs = Array.from({ length: 6 }, (_, i) =>
    spawnWriter(kinds[i % 3]!, names[i % 2]!, `s${i}`, 1500, "batch", true),
  );
  const results = await Promise.all(procs.map(finish));
  for (const r of results) expect(JSON.parse(r.out)).toMatchObject({ written: 1502, unlogged: 0, warnings: [] });
  expectOneChain(names[0]!, Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`s${i}`, 1500])));
});

test("three hard-linked names of one ledger (one in the same directory, one in another), two writers on each: one lock, one chain", async () => {
  const dir = tempDir("seam-mp-");
  mkdirSync(join(dir, "a"));
  mkdirSync(join(dir, "b"));
  const names = [join(dir, "a", "l.jsonl"), join(dir, "a", "same-dir.jsonl"), join(dir, "b", "other-dir.jsonl")];
  writeFileSync(names[0]!, "", { mode: 0o600 });
  linkSync(names[0]!, names[1]!);
  linkSync(names[0]!, names[2]!);
  const kinds: Kind[] = ["bun", "node", "bun"];
  const procs = Array.from({ length: 6 }, (_, i) => spawnWriter(kinds[i % 3]!, names[i % 3]!, `s${i}`, 1500));
  const results = await Promise.all(procs.map(finish));
  for (const r of results) expect(JSON.parse(r.out)).toMatchObject({ written: 1502, unlogged: 0, warnings: [] });
  expectOneChain(names[0]!, Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`s${i}`, 1500])));
});

test("a writer killed with SIGKILL mid-stream: the next writers break its lock, heal any torn line, and continue the chain", async () => {
  const path = join(tempDir("seam-mp-"), "shared.jsonl");
  const victim = spawnWriter("bun", path, "victim", 1_000_000);
  // kill it once it is well into writing
  for (let i = 0; i < 200; i++) {
    await Bun.sleep(10);
    if (readFileSync(path, { flag: "a+" }).length > 200_000) break;
  }
  victim.kill("SIGKILL");
  await victim.exited;
  const t0 = performance.now();
  const results = await Promise.all(
    [spawnWriter("bun", path, "a", 500), spawnWriter("node", path, "b", 500)].map(finish),
  );
  expect(performance.now() - t0).toBeLessThan(20_000);
  for (const r of results) expect(JSON.parse(r.out)).toMatchObject({ written: 502, unlogged: 0, ended: true });
  const text = readFileSync(path, "utf8");
  const check = checkChain(text);
  // a line it tore was cut off (recorded by a ledger_repair row in its place): nothing is left to break the chain
  expect(check.breaks).toEqual([]);
  const lines = text.split("\n");
  lines.forEach((l, i) => {
    if (l.includes(`"evt": "ledger_repair"`)) expect(l).toContain(`"torn_line": ${i + 1}, `);
  });
  const victimSeqs = check.seqs.victim ?? [];
  expect(victimSeqs).toEqual(Array.from({ length: victimSeqs.length }, (_, i) => i + 1));
  expect(check.seqs.a).toEqual(Array.from({ length: 502 }, (_, i) => i + 1));
  expect(check.seqs.b).toEqual(Array.from({ length: 502 }, (_, i) => i + 1));
});
