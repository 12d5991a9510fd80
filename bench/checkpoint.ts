/**
 * What signed checkpoints cost, as ratios against the same runs without them:
 *   write   a LedgerWriter appending rows in bursts (fsync never, this
 *           runtime's file sink), plain vs --sign with a checkpoint every
 *           `--every` rows (the Merkle tree kept per line, a signature per
 *           checkpoint);
 *   verify  the same ledger (checkpoints included) checked in process:
 *           the chain alone vs the chain + Merkle root + signature checks
 *           (`verify --key`), and the floor of reading + SHA-256;
 *   cli     `seam verify --quiet` vs `seam verify --quiet --key` on that ledger,
 *           as processes: from source under Bun, the Node bundle and the
 *           compiled executable (those two when dist/ is built);
 *   sign    one checkpoint: root of the compact range, signNote, openNote.
 * Each pair runs alternately, best of `--runs`. No figure here is a test.
 *
 *   bun bench/checkpoint.ts [--rows 100000] [--verify-rows 300000] [--every 1000] [--runs 3] [--smoke] [--json FILE]
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkpointText } from "../src/checkpoint/checkpoint.ts";
import { verifyCheckpointed } from "../src/checkpoint/checkpoint-verifier.ts";
import { CompactRange, leafHash } from "../src/checkpoint/merkle.ts";
import { generateKey, newSigner, newVerifier, openNote, signNote } from "../src/checkpoint/note.ts";
import { LedgerWriter } from "../src/ledger/ledger-writer.ts";
import { runtime } from "../src/runtime/index.ts";
import { fileChunks } from "../src/verify/ledger-verifier.ts";
import { verifyLedger } from "../src/verify/verify-ledger.ts";
import { Flags, ROOT, type Row, TOOL_CALL_FIELDS, writeResult } from "./lib.ts";

const flags = new Flags();
const rows = flags.number("--rows", 100_000, 3_000);
const verifyRows = flags.number("--verify-rows", 300_000, 5_000);
const every = flags.number("--every", 1000, 100);
const runs = flags.number("--runs", 3, 1);
const dir = mkdtempSync(join(tmpdir(), "seam-bench-checkpoint-"));
const key = generateKey("bench");
const signer = newSigner(key.privateKey);
const verifier = newVerifier(key.verifierKey);
const fields = TOOL_CALL_FIELDS;

/** Appends n rows in bursts of 1000 a turn; seconds taken. */
async function write(path: string, n: number, sign: boolean): Promise<number> {
  rmSync(path, { force: true });
  const w = await LedgerWriter.open({
    path,
    session: "bench",
    server: "bench",
    fsync: "never",
    openAppend: runtime.openAppend,
    checkpoints: sign ? { signer, every, intervalMs: 0 } : undefined,
  });
  const t0 = performance.now();
  void w.append("session_begin", { pid: process.pid });
  for (let i = 0; i < n; i++) {
    void w.append("tool_call", fields);
    if (i % 1000 === 999) await new Promise((r) => setImmediate(r));
  }
  await w.end({ reason: "bench", calls: n });
  const s = (performance.now() - t0) / 1000;
  if (w.rowsWritten !== n + 2) throw new Error(`wrote ${w.rowsWritten} of ${n + 2}`);
  return s;
}

async function best(f: () => Promise<number>): Promise<number> {
  let b = Infinity;
  for (let i = 0; i < runs; i++) b = Math.min(b, await f());
  return b;
}

async function timed(f: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await f();
  return (performance.now() - t0) / 1000;
}

function perCall(n: number, f: () => void): number {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) f();
  return ((performance.now() - t0) * 1000) / n;
}

const rt = runtime.name;
console.log(`checkpoint cost (${rt}; ${dir})`);

// write path
const writePath = join(dir, "write.jsonl");
let plainW = Infinity;
let signW = Infinity;
for (let i = 0; i < runs; i++) {
  plainW = Math.min(plainW, await write(writePath, rows, false));
  signW = Math.min(signW, await write(writePath, rows, true));
}

// verify path, on one sealed ledger
const ledger = join(dir, "verify.jsonl");
await write(ledger, verifyRows, true);
const bytes = statSync(ledger).size;
const lines = verifyRows + 2 + Math.ceil((verifyRows + 2) / every);
const floor = await best(() =>
  timed(async () => {
    const h = createHash("sha256");
    for await (const c of fileChunks(ledger)) h.update(c);
    h.digest();
  }),
);
let chainV = Infinity;
let checkpointV = Infinity;
for (let i = 0; i < runs; i++) {
  chainV = Math.min(
    chainV,
    await timed(async () => {
      const r = await verifyLedger(fileChunks(ledger));
      if (r.verdict !== "ok") throw new Error(`chain: ${r.verdict}`);
    }),
  );
  checkpointV = Math.min(
    checkpointV,
    await timed(async () => {
      const { report, checkpointReport: cr } = await verifyCheckpointed(fileChunks(ledger), {}, { keys: [verifier] });
      if (report.verdict !== "ok" || cr.valid < 1) throw new Error(`sealed: ${report.verdict}`);
    }),
  );
}

// the CLI, three ways
const vias: [string, string[]][] = [["bun", [process.execPath, `${ROOT}commands/seam.ts`]]];
if (existsSync(`${ROOT}dist/seam.mjs`)) vias.push(["node", ["node", `${ROOT}dist/seam.mjs`]]);
if (existsSync(`${ROOT}dist/seam`)) vias.push(["exe", [`${ROOT}dist/seam`]]);
const cli: { via: string; chain: number; sealed: number }[] = [];
const wall = (argv: string[]) => {
  const t0 = performance.now();
  const r = spawnSync(argv[0]!, argv.slice(1), { stdio: ["ignore", "pipe", "pipe"] });
  if (r.status !== 0) throw new Error(`${argv.join(" ")}: exit ${r.status}`);
  return (performance.now() - t0) / 1000;
};
for (const [via, argv] of vias) {
  let chain = Infinity;
  let sealed = Infinity;
  for (let i = 0; i < runs; i++) {
    chain = Math.min(chain, wall([...argv, "verify", "--quiet", ledger]));
    sealed = Math.min(sealed, wall([...argv, "verify", "--quiet", "--key", key.verifierKey, ledger]));
  }
  cli.push({ via, chain, sealed });
}

// one checkpoint
const range = new CompactRange();
for (let i = 0; i < 1_000_003; i++) range.append(leafHash(new Uint8Array([i & 255, i >> 8])));
const rootUs = perCall(2000, () => range.root());
const text = checkpointText({
  origin: "seam-ledger/0123456789abcdef0123456789abcdef",
  size: range.size,
  root: range.root(),
});
const signUs = perCall(2000, () => signNote(text, [signer]));
const note = signNote(text, [signer]);
const openUs = perCall(2000, () => openNote(note, [verifier]));
const leafUs = perCall(200_000, () => leafHash(new Uint8Array(300)));

const rate = (n: number, s: number) => Math.round(n / s).toLocaleString("en-US");
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;
const perRowUs = (a: number, b: number, n: number) => (((a - b) / n) * 1e6).toFixed(2);
console.log(`\nwrite ${rows} rows (checkpoint every ${every})`);
console.log(`  plain   ${rate(rows, plainW)} rows/s`);
console.log(
  `  --sign  ${rate(rows, signW)} rows/s   ${ratio(signW, plainW)} the time, +${perRowUs(signW, plainW, rows)} µs a row`,
);
console.log(
  `\nverify ${lines} lines, ${(bytes / 1e6).toFixed(1)} MB, ${Math.ceil((verifyRows + 2) / every)} checkpoints`,
);
console.log(`  read + SHA-256  ${rate(lines, floor)} lines/s`);
console.log(`  chain           ${rate(lines, chainV)} lines/s   ${ratio(chainV, floor)} the floor`);
console.log(
  `  chain + --key   ${rate(lines, checkpointV)} lines/s   ${ratio(checkpointV, chainV)} the chain alone, +${perRowUs(checkpointV, chainV, lines)} µs a line`,
);
console.log(`\nseam verify --quiet, as a process (wall time, best of ${runs})`);
for (const c of cli)
  console.log(
    `  ${c.via.padEnd(4)}  chain ${c.chain.toFixed(2)} s   --key ${c.sealed.toFixed(2)} s   ${ratio(c.sealed, c.chain)}`,
  );
console.log(`\none checkpoint (tree of ${range.size} leaves)`);
console.log(`  root of the compact range  ${rootUs.toFixed(1)} µs`);
console.log(`  signNote (Ed25519)         ${signUs.toFixed(1)} µs`);
console.log(`  openNote (verify)          ${openUs.toFixed(1)} µs`);
console.log(`  one leaf hash (300 bytes)  ${leafUs.toFixed(2)} µs`);

const out: Row[] = [
  {
    section: "checkpoints",
    name: `write --sign (${rt})`,
    value: `${rate(rows, signW)} rows/s`,
    ratio: `${ratio(signW, plainW)} plain`,
  },
  {
    section: "checkpoints",
    name: `verify --key (${rt})`,
    value: `${rate(lines, checkpointV)} lines/s`,
    ratio: `${ratio(checkpointV, chainV)} chain only`,
  },
  ...cli.map((c) => ({
    section: "checkpoints",
    name: `seam verify --key (${c.via})`,
    value: `${rate(lines, c.sealed)} lines/s`,
    ratio: `${ratio(c.sealed, c.chain)} without --key`,
  })),
  { section: "checkpoints", name: `sign one checkpoint (${rt})`, value: `${(rootUs + signUs).toFixed(0)} µs` },
];
writeResult(flags, {
  script: "checkpoint",
  rows: out,
  details: {
    runtime: rt,
    rows,
    verifyRows,
    lines,
    bytes,
    every,
    runs,
    seconds: { plainW, signW, floor, chainV, checkpointV },
    cli,
    us: { root: rootUs, sign: signUs, open: openUs, leaf: leafUs },
  },
});
rmSync(dir, { recursive: true, force: true });
