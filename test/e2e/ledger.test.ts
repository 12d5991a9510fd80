import { describe, expect, test } from "bun:test";
import {
  chmodSync,
  chownSync,
  linkSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { digestBytes } from "../../src/core/digest.ts";
import { JsonFloat } from "../../src/core/json.ts";
import type { FsyncPolicy } from "../../src/ledger/file-sync.ts";
import { LOCK_LINGER_MS } from "../../src/ledger/held-lock.ts";
import { type LedgerConfig, LedgerWriter } from "../../src/ledger/ledger-writer.ts";
import { lockPaths } from "../../src/ledger/open.ts";
import { sharedLock } from "../../src/ledger/shared-lock.ts";
import { delayed } from "../../src/proxy/deferred-recording.ts";
import { openAppend } from "../../src/runtime/file.ts";
import type { AppendFile } from "../../src/runtime/types.ts";
import { runAsNobody } from "../helpers/as-nobody.ts";
import { checkChain } from "../helpers/ledger-check.ts";
import { tempDir } from "../helpers/proc.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const NOW = () => Date.UTC(2026, 10, 30, 3, 24, 7, 123);

function tmp(): string {
  return tempDir("seam-ledger-");
}

interface Opened {
  w: LedgerWriter;
  warnings: string[];
}

async function openLedger(path: string, extra: Partial<LedgerConfig> = {}): Promise<Opened> {
  const warnings: string[] = [];
  const w = await LedgerWriter.open({
    path,
    session: "s-golden",
    server: "srv",
    fsync: "batch",
    openAppend,
    now: NOW,
    warn: (m) => warnings.push(m),
    ...extra,
  });
  return { w, warnings };
}

const read = (path: string) => readFileSync(path, "utf8");

// Expected lines computed independently with Python's json.dumps / hashlib (see the chain rule in src/core/chain.ts).
const OTHER_BEGIN = `{"evt": "session_begin", "seam": "mcp-stdio", "seam_impl": "seam/0.1.0", "session": "s-other", "seq": 1, "server": "other", "pid": 7, "ts": "2026-11-30T03:24:07.123Z", "chain": "95821ff431e1fc7528d1c9fa7cc4710c"}\n`;
const BEGIN_AFTER_OTHER = `{"evt": "session_begin", "seam": "mcp-stdio", "seam_impl": "seam/0.1.0", "session": "s-golden", "seq": 1, "server": "srv", "pid": 42, "ts": "2026-11-30T03:24:07.123Z", "chain": "96650e6947669ba8edce441004322d78"}\n`;

describe("LedgerWriter over the ledger file", () => {
  test("golden: a fresh ledger's exact bytes (field order, seq, omitted fields, chains, session_end counters)", async () => {
    const path = join(tmp(), "sub", "l.jsonl");
    const { w, warnings } = await openLedger(path, { openAppend });
    void w.append("session_begin", {
      command: ["npx", "-y", "pkg", "--token", "<redacted>"],
      command_redactions: 1,
      pid: 42,
      raw_payloads: false,
      max_frame: 67108864,
      write_ahead: undefined,
    });
    // add: queued as append queues, with no promise (the observer's rows).
    w.add("tool_call", {
      tool: "echo",
      rpc_id: 18446744073709551616n,
      args: { text: "héllo 🔒 \u2028", n: [1, new JsonFloat(2), new JsonFloat(-0), new JsonFloat(1e21), null, true] },
      status: "ok",
      ms: 1.5,
      // reserved names are the writer's own; a field cannot override them
      seq: 99,
      chain: "x",
    });
    expect(await w.append("tool_call", { tool: "echo", rpc_id: "1", status: "error", error_code: -32601 })).toBe(true);
    const ended = await w.end({
      reason: "child_exit",
      exit_code: 0,
      signal: undefined,
      calls: 2,
      unanswered: undefined,
      bytes: new Map([
        ["c2s", 10],
        ["s2c", 20],
      ]),
    });
    expect(ended).toBe(true);
    expect(read(path)).toBe(
      `{"evt": "session_begin", "seam": "mcp-stdio", "seam_impl": "seam/0.1.0", "session": "s-golden", "seq": 1, "server": "srv", "command": ["npx", "-y", "pkg", "--token", "<redacted>"], "command_redactions": 1, "pid": 42, "raw_payloads": false, "max_frame": 67108864, "ts": "2026-11-30T03:24:07.123Z", "chain": "128e2ea49d76818218c40a74ca4ebb81"}\n` +
        `{"evt": "tool_call", "seam": "mcp-stdio", "seam_impl": "seam/0.1.0", "session": "s-golden", "seq": 2, "server": "srv", "tool": "echo", "rpc_id": 18446744073709551616, "args": {"text": "héllo 🔒 \u2028", "n": [1, 2.0, -0.0, 1e+21, null, true]}, "status": "ok", "ms": 1.5, "ts": "2026-11-30T03:24:07.123Z", "chain": "ecc9889f39306af9b74aec2d68306453"}\n` +
        `{"evt": "tool_call", "seam": "mcp-stdio", "seam_impl": "seam/0.1.0", "session": "s-golden", "seq": 3, "server": "srv", "tool": "echo", "rpc_id": "1", "status": "error", "error_code": -32601, "ts": "2026-11-30T03:24:07.123Z", "chain": "dd7ca021281002b7daa758ea3c737d09"}\n` +
        `{"evt": "session_end", "seam": "mcp-stdio", "seam_impl": "seam/0.1.0", "session": "s-golden", "seq": 4, "server": "srv", "reason": "child_exit", "exit_code": 0, "rows_before_end": 3, "calls": 2, "bytes": {"c2s": 10, "s2c": 20}, "ts": "2026-11-30T03:24:07.123Z", "chain": "b86beff4572298bc7ab8b7cf0c754b05"}\n`,
    );
    expect([w.rowsWritten, w.rowsUnlogged, w.repairs]).toEqual([4, 0, 0]);
    expect(warnings).toEqual([]);
  });

  test("golden: a torn last line is cut off under the lock and recorded, bytes and all, in a ledger_repair row", async () => {
    const path = join(tmp(), "l.jsonl");
    // Ends with a backslash and a byte that is no UTF-8: both come back escaped.
    const torn = Buffer.concat([Buffer.from(`{"evt": "tool_call", "seam": "mcp-st\\`), Buffer.from([0xff])]);
    writeFileSync(path, Buffer.concat([Buffer.from(OTHER_BEGIN), torn]));
    const { w } = await openLedger(path, { openAppend });
    expect(await w.append("session_begin", { pid: 42 })).toBe(true);
    const text = read(path);
    expect(text.startsWith(OTHER_BEGIN)).toBe(true);
    const lines = text.slice(OTHER_BEGIN.length).split("\n");
    expect(lines[0]).toStartWith(
      `{"evt": "ledger_repair", "seam": "mcp-stdio", "seam_impl": "seam/0.1.0", "session": "s-golden", "server": "srv", "torn_line": 2, "torn_bytes": 38, "torn_digest": "${digestBytes(torn)}", "torn_text": "{\\"evt\\": \\"tool_call\\", \\"seam\\": \\"mcp-st\\\\\\\\\\\\xff", "ts": "2026-11-30T03:24:07.123Z", "chain": "`,
    );
    expect(lines[1]).toStartWith(
      `{"evt": "session_begin", "seam": "mcp-stdio", "seam_impl": "seam/0.1.0", "session": "s-golden", "seq": 1,`,
    );
    expect(lines).toHaveLength(3);
    expect(checkChain(text).breaks).toEqual([]);
    expect(w.repairs).toBe(1);
    await w.end({ reason: "done" });
  });

  test("golden: without the lock a torn last line is healed with \\n and a ledger_repair row chained from the row before it", async () => {
    const path = join(tmp(), "l.jsonl");
    const torn = `{"evt": "tool_call", "seam": "mcp-st`;
    writeFileSync(path, OTHER_BEGIN + torn);
    const { w } = await openLedger(path, { openAppend, lock: () => Promise.reject(new Error("no lock")) });
    expect(await w.append("session_begin", { pid: 42 })).toBe(true);
    expect(read(path)).toBe(
      OTHER_BEGIN +
        torn +
        "\n" +
        `{"evt": "ledger_repair", "seam": "mcp-stdio", "seam_impl": "seam/0.1.0", "session": "s-golden", "server": "srv", "torn_line": 2, "torn_bytes": 36, "torn_digest": "sha256:raw-bytes:v1:85ce959e95a8336aaaa9a20c5471e3204b41b1414b1648317abdae6de0a07ed7", "ts": "2026-11-30T03:24:07.123Z", "chain": "456755491e8add15092edf66072dc401"}\n` +
        `{"evt": "session_begin", "seam": "mcp-stdio", "seam_impl": "seam/0.1.0", "session": "s-golden", "seq": 1, "server": "srv", "pid": 42, "ts": "2026-11-30T03:24:07.123Z", "chain": "55d6dce6928374e4d71f3742bbfce385"}\n`,
    );
    expect(w.repairs).toBe(1);
    await w.end({ reason: "done" });
    // the repair row is no row of the session's sequence
    expect(read(path).split("\n").at(-2)).toContain(
      `"seq": 2, "server": "srv", "reason": "done", "rows_before_end": 1,`,
    );
  });

  test("golden: blank, unparseable (a BOM too), non-object and non-string-chain lines are passed over to the last chained row", async () => {
    const path = join(tmp(), "l.jsonl");
    // A row behind a BOM is unparseable to verify and to Python, so the writer must not chain from it either.
    const existing =
      OTHER_BEGIN +
      "\n  \t\r\nnot json\n[1, 2]\n" +
      `{"chain": 5}\n\n` +
      `\ufeff{"chain": "0123456789abcdef0123456789abcdef"}\n`;
    writeFileSync(path, existing);
    const { w } = await openLedger(path, { openAppend });
    await w.append("session_begin", { pid: 42 });
    expect(read(path)).toBe(existing + BEGIN_AFTER_OTHER);
    await w.end({});
  });

  test("golden: a row with a falsy chain is passed over: the chain continues from the last chained row (as the verifier walks it)", async () => {
    const path = join(tmp(), "l.jsonl");
    const existing = `${OTHER_BEGIN}{"x": 1, "chain": ""}\n`;
    writeFileSync(path, existing);
    const { w } = await openLedger(path, { openAppend });
    await w.append("session_begin", { pid: 42 });
    expect(read(path)).toBe(existing + BEGIN_AFTER_OTHER);
    await w.end({});
  });

  test("a complete last row without its \\n is no row either: cut off and recorded (appending one is how a row is forged)", async () => {
    const path = join(tmp(), "l.jsonl");
    writeFileSync(path, OTHER_BEGIN + OTHER_BEGIN.slice(0, -1));
    const { w } = await openLedger(path, { openAppend });
    await w.append("session_begin", { pid: 42 });
    const lines = read(path).split("\n");
    expect(lines[0]).toBe(OTHER_BEGIN.slice(0, -1));
    expect(lines[1]).toContain(`"torn_line": 2, "torn_bytes": ${OTHER_BEGIN.length - 1},`);
    expect(lines[1]).toContain(`"torn_text": ${JSON.stringify(OTHER_BEGIN.slice(0, -1))},`);
    expect(lines[2]).toContain(`"session": "s-golden", "seq": 1,`);
    expect(lines).toHaveLength(4);
    expect(checkChain(read(path)).breaks).toEqual([]);
    expect(w.repairs).toBe(1);
    await w.end({});
  });

  test("without the lock a complete last row without its \\n only gets the \\n (no repair)", async () => {
    const path = join(tmp(), "l.jsonl");
    writeFileSync(path, OTHER_BEGIN.slice(0, -1));
    const { w } = await openLedger(path, { openAppend, lock: () => Promise.reject(new Error("no lock")) });
    await w.append("session_begin", { pid: 42 });
    expect(read(path)).toBe(OTHER_BEGIN + BEGIN_AFTER_OTHER);
    expect(w.repairs).toBe(0);
    await w.end({});
  });

  test("a whitespace-only unterminated tail is cut off too", async () => {
    const path = join(tmp(), "l.jsonl");
    writeFileSync(path, `${OTHER_BEGIN}  `);
    const { w } = await openLedger(path, { openAppend });
    await w.append("session_begin", { pid: 42 });
    const lines = read(path).split("\n");
    expect(lines[1]).toContain(
      `"torn_line": 2, "torn_bytes": 2, "torn_digest": "${digestBytes(Buffer.from("  "))}", "torn_text": "  ",`,
    );
    expect(lines).toHaveLength(4);
    await w.end({});
  });
});

test("the chain continues from rows another writer appended meanwhile (one chain, two sessions)", async () => {
  const path = join(tmp(), "l.jsonl");
  const a = (await openLedger(path, { session: "a" })).w;
  const b = (await openLedger(path, { session: "b" })).w;
  for (let i = 0; i < 5; i++) {
    await a.append("tool_call", { i });
    await b.append("tool_call", { i });
  }
  await a.end({ calls: 5 });
  await b.end({ calls: 5 });
  const check = checkChain(read(path));
  expect(check).toEqual({ rows: 12, breaks: [], seqs: { a: [1, 2, 3, 4, 5, 6], b: [1, 2, 3, 4, 5, 6] } });
});

test("a torn line in front of a long row is found however many chunks back it starts", async () => {
  const path = join(tmp(), "l.jsonl");
  const w1 = (await openLedger(path, { session: "big" })).w;
  await w1.append("tool_call", { blob: "x".repeat(300_000) });
  await w1.end({});
  writeFileSync(path, `${read(path) + "\n".repeat(3)}{"torn": "${"y".repeat(200_000)}`);
  const w2 = (await openLedger(path)).w;
  await w2.append("session_begin", {});
  await w2.end({});
  const text = read(path);
  expect(checkChain(text).breaks).toEqual([]);
  expect(text.split("\n")[5]).toContain(`"torn_line": 6, "torn_bytes": 200010,`);
  expect(text.split("\n")[5]).toContain(`"torn_text_capped": true,`);
  expect(text).not.toContain("y".repeat(4097));
});

// ---- failure: never throws, counts, warns once ----

describe("an unwritable ledger", () => {
  async function useUnwritable(
    path: string,
    extra: Partial<LedgerConfig> = {},
  ): Promise<{ w: LedgerWriter; warnings: string[]; results: boolean[] }> {
    const { w, warnings } = await openLedger(path, extra);
    const results = await Promise.all([
      w.append("session_begin", {}),
      w.append("tool_call", {}),
      w.appendDurable("tool_call_intent", {}),
    ]);
    results.push(await w.end({ calls: 0 }));
    return { w, warnings, results };
  }

  test("a directory as the ledger: every row unlogged, one warning", async () => {
    const dir = tmp();
    const { w, warnings, results } = await useUnwritable(dir);
    expect(results).toEqual([false, false, false, false]);
    expect([w.rowsWritten, w.rowsUnlogged]).toEqual([0, 4]);
    expect(warnings).toEqual([`ledger ${dir} cannot be written: is a directory`]);
  });

  test("a full disk: every row unlogged, one warning", async () => {
    const path = join(tmp(), "l.jsonl");
    symlinkSync("/dev/full", path);
    const { w, warnings, results } = await useUnwritable(path, { allowForeign: true });
    expect(results).toEqual([false, false, false, false]);
    expect([w.rowsWritten, w.rowsUnlogged]).toEqual([0, 4]);
    expect(warnings).toEqual([`ledger ${path} cannot be written: no space left on device`]);
  });

  test("a read-only directory: every row unlogged, one warning (run as nobody when root)", () => {
    const dir = tmp();
    const ro = join(dir, "ro");
    mkdirSync(ro);
    chmodSync(ro, 0o555);
    chmodSync(dir, 0o755);
    const path = join(ro, "l.jsonl");
    const writer = `${ROOT}test/fixtures/ledger-writer.ts`;
    const p =
      process.getuid?.() === 0
        ? // Imported for its effect: a bare import would be dropped by the bundler (package.json says sideEffects: false).
          runAsNobody(`await import(${JSON.stringify(writer)});`, [path, "s", "3"])
        : (({ stdout, stderr }) => ({ stdout: stdout.toString(), stderr: stderr.toString() }))(
            Bun.spawnSync([process.execPath, writer, path, "s", "3"]),
          );
    expect(p.stderr).toBe("");
    expect(JSON.parse(p.stdout)).toEqual({
      written: 0,
      unlogged: 5,
      warnings: [`ledger ${path} cannot be written: permission denied`],
      ended: false,
    });
  });

  test("a write that fails for a while: rows lost are counted, seq has a gap, session_end says rows_unlogged", async () => {
    const path = join(tmp(), "l.jsonl");
    let failing = false;
    const inner = await openAppend(path);
    const flaky: AppendFile = {
      ...inner,
      write: (b) =>
        failing
          ? Promise.reject(Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" }))
          : inner.write(b),
    };
    const { w, warnings } = await openLedger(path, { openAppend: async () => flaky });
    expect(await w.append("session_begin", {})).toBe(true);
    failing = true;
    expect(await w.append("tool_call", { n: 1 })).toBe(false);
    expect(await w.append("tool_call", { n: 2 })).toBe(false);
    failing = false;
    expect(await w.append("tool_call", { n: 3 })).toBe(true);
    await w.end({ reason: "r", calls: 1, bytes: new Map([["c2s", 0]]) });
    const rows = read(path).trimEnd().split("\n");
    expect(rows.map((l) => /"seq": (\d+)/.exec(l)![1])).toEqual(["1", "4", "5"]);
    expect(rows[2]).toContain(
      `"reason": "r", "rows_before_end": 2, "calls": 1, "rows_unlogged": 2, "bytes": {"c2s": 0},`,
    );
    expect(warnings).toEqual([`ledger ${path} cannot be written: no space left on device`]);
    expect(checkChain(read(path)).breaks).toEqual([]);
  });

  test("a short write: whole lines that landed count as written, the torn rest is cut off by the next flush", async () => {
    const path = join(tmp(), "l.jsonl");
    const inner = await openAppend(path);
    let cut = -1; // write only this many bytes of the next write, then fail
    const short: AppendFile = {
      ...inner,
      async write(b) {
        if (cut < 0) return inner.write(b);
        await inner.write(b.subarray(0, cut));
        cut = -1;
        throw Object.assign(new Error("EFBIG: file too large, write"), { code: "EFBIG" });
      },
    };
    const { w } = await openLedger(path, { openAppend: async () => short });
    await w.append("session_begin", {});
    const line = `{"evt": "tool_call", "seam": "mcp-stdio", "seam_impl": "seam/0.1.0", "session": "s-golden", "seq": 2, "server": "srv", "n": 1, "ts": "2026-11-30T03:24:07.123Z", "chain": "................................"}\n`;
    cut = line.length + 10; // row 2 whole, 10 bytes of row 3
    const r = await Promise.all([w.append("tool_call", { n: 1 }), w.append("tool_call", { n: 2 })]);
    expect(r).toEqual([true, false]);
    expect([w.rowsWritten, w.rowsUnlogged]).toEqual([2, 1]);
    expect(await w.append("tool_call", { n: 3 })).toBe(true);
    await w.end({ calls: 2 });
    expect(w.repairs).toBe(1);
    const text = read(path);
    expect(checkChain(text).breaks).toEqual([]);
    expect(text.split("\n")[2]).toContain(
      `"evt": "ledger_repair", "seam": "mcp-stdio", "seam_impl": "seam/0.1.0", "session": "s-golden", "server": "srv", "torn_line": 3, "torn_bytes": 10,`,
    );
    expect(text.split("\n")[4]).toContain(
      `"seq": 5, "server": "srv", "rows_before_end": 3, "calls": 2, "rows_unlogged": 1,`,
    );
  });

  test("a lock that cannot be taken: rows are still written, one warning", async () => {
    const path = join(tmp(), "l.jsonl");
    const { w, warnings } = await openLedger(path, {
      lock: () => Promise.reject(Object.assign(new Error("EROFS: read-only file system, open"), { code: "EROFS" })),
    });
    expect(await w.append("a", {})).toBe(true);
    expect(await w.append("b", {})).toBe(true);
    await w.end({});
    expect(w.rowsWritten).toBe(3);
    expect(warnings).toEqual([
      `ledger lock ${path}.lock cannot be taken (read-only file system): appending without it, so another process writing the same ledger could fork its chain`,
    ]);
  });
});

// ---- durability: fsync policies ----

interface Probe {
  file: AppendFile;
  log: string[];
  /** When set, sync waits for this promise. */
  gate: Promise<void> | null;
}

async function probe(path: string): Promise<Probe> {
  const inner = await openAppend(path);
  const p: Probe = {
    log: [],
    gate: null,
    file: {
      ...inner,
      async write(b) {
        await inner.write(b);
        p.log.push("write");
      },
      async sync() {
        p.log.push("sync-start");
        if (p.gate) await p.gate;
        await inner.sync();
        p.log.push("sync");
      },
    },
  };
  return p;
}

async function policyRun(
  fsync: FsyncPolicy,
  batchMs = 40,
): Promise<{ afterEach: number[]; afterWait: number; afterEnd: number }> {
  const path = join(tmp(), "l.jsonl");
  const p = await probe(path);
  const { w } = await openLedger(path, { fsync, batchMs, openAppend: async () => p.file });
  const syncs = () => p.log.filter((e) => e === "sync").length;
  const afterEach: number[] = [];
  for (let i = 0; i < 3; i++) {
    await w.append("tool_call", { i });
    afterEach.push(syncs());
  }
  await Bun.sleep(batchMs * 3);
  const afterWait = syncs();
  await w.end({});
  return { afterEach, afterWait, afterEnd: syncs() };
}

test("fsync always: each row is fsynced before its append resolves", async () => {
  expect(await policyRun("always")).toEqual({ afterEach: [1, 2, 3], afterWait: 3, afterEnd: 4 });
});

test("fsync batch: rows resolve once written; one fsync within batchMs; one more at end", async () => {
  expect(await policyRun("batch")).toEqual({ afterEach: [0, 0, 0], afterWait: 1, afterEnd: 2 });
});

test("fsync never: no fsync at all, not even at end", async () => {
  expect(await policyRun("never")).toEqual({ afterEach: [0, 0, 0], afterWait: 0, afterEnd: 0 });
});

test.each(["never", "batch", "always"] as const)(
  "appendDurable (fsync %s) resolves only after the fsync completes",
  async (fsync) => {
    const path = join(tmp(), "l.jsonl");
    const p = await probe(path);
    let open!: () => void;
    p.gate = new Promise((r) => (open = r));
    const { w } = await openLedger(path, { fsync, openAppend: async () => p.file });
    const state: { settled: boolean | null } = { settled: null };
    const durable = w.appendDurable("tool_call_intent", { tool: "t" }).then((v) => (state.settled = v));
    for (let i = 0; i < 20 && !p.log.includes("sync-start"); i++) await Bun.sleep(5);
    expect(p.log).toEqual(["write", "sync-start"]);
    await Bun.sleep(20);
    expect(state.settled).toBe(null);
    open();
    await durable;
    expect(state.settled).toBe(true);
    expect(p.log).toEqual(["write", "sync-start", "sync"]);
    await w.end({});
  },
);

test("appendDurable whose fsync fails resolves false (the row is in the file and counted written)", async () => {
  const path = join(tmp(), "l.jsonl");
  const inner = await openAppend(path);
  const file: AppendFile = {
    ...inner,
    sync: () => Promise.reject(Object.assign(new Error("EIO: i/o error, fsync"), { code: "EIO" })),
  };
  const { w, warnings } = await openLedger(path, { fsync: "never", openAppend: async () => file });
  expect(await w.appendDurable("tool_call_intent", {})).toBe(false);
  expect(await w.append("tool_call", {})).toBe(true);
  expect([w.rowsWritten, w.rowsUnlogged]).toEqual([2, 0]);
  expect(warnings).toEqual([`ledger ${path} cannot be written: input/output error`]);
  await w.end({});
});

// ---- never blocks; batches under load ----

test("append returns at once while a slow write is in flight, and rows queued meanwhile go in one write", async () => {
  const path = join(tmp(), "l.jsonl");
  const inner = await openAppend(path);
  const sizes: number[] = [];
  const slow: AppendFile = {
    ...inner,
    async write(b) {
      sizes.push(b.length);
      await Bun.sleep(50);
      await inner.write(b);
    },
  };
  const { w } = await openLedger(path, { openAppend: async () => slow });
  const first = w.append("tool_call", { i: 0 });
  await Bun.sleep(10); // the first write is now in flight
  const t0 = performance.now();
  const rest = Array.from({ length: 500 }, (_, i) => w.append("tool_call", { i: i + 1 }));
  expect(performance.now() - t0).toBeLessThan(40);
  expect(await first).toBe(true);
  expect((await Promise.all(rest)).every((v) => v)).toBe(true);
  expect(sizes.length).toBe(2);
  await w.end({});
  expect(checkChain(read(path)).rows).toBe(502);
});

test("append after end resolves false and counts as unlogged; add after end is counted too", async () => {
  const path = join(tmp(), "l.jsonl");
  const { w } = await openLedger(path);
  await w.end({});
  expect(await w.append("late", {})).toBe(false);
  expect(await w.end({})).toBe(false);
  expect(w.rowsUnlogged).toBe(1);
  w.add("later", {});
  expect(w.rowsUnlogged).toBe(2);
  expect(read(path)).not.toContain("later");
});

test("rows appended in one turn of the event loop go in one write", async () => {
  const path = join(tmp(), "l.jsonl");
  const p = await probe(path);
  const { w } = await openLedger(path, { openAppend: async () => p.file });
  await Promise.all([w.append("a", {}), w.append("b", {}), w.append("c", {})]);
  expect(p.log.filter((e) => e === "write").length).toBe(1);
  await w.end({});
});

test.each([
  ["the end of the turn", (go: () => void) => setImmediate(go), 1],
  ["none", undefined, 2],
] as const)(
  "batchWhen %s: rows appended five promise steps apart in one turn go in %p write(s)",
  async (_, batchWhen, writes) => {
    const path = join(tmp(), "l.jsonl");
    const p = await probe(path);
    const { w } = await openLedger(path, { openAppend: async () => p.file, batchWhen });
    const written: Promise<boolean>[] = [w.append("a", {})];
    for (let i = 0; i < 5; i++) await Promise.resolve();
    written.push(w.append("b", {}));
    await Promise.all(written);
    expect(p.log.filter((e) => e === "write").length).toBe(writes);
    await w.end({});
  },
);

test("batchWhen, seam proxy's recording queue: rows a batch appends some promise steps apart go in one write", async () => {
  const path = join(tmp(), "l.jsonl");
  const p = await probe(path);
  const later = delayed(1);
  const { w } = await openLedger(path, { openAppend: async () => p.file, batchWhen: later });
  const written: Promise<boolean>[] = [];
  // An exchange's batch: the call's row at once, its http_exchange row after the promise steps that follow.
  await new Promise<void>((done) =>
    later(async () => {
      written.push(w.append("tool_call", {}));
      for (let i = 0; i < 5; i++) await Promise.resolve();
      written.push(w.append("http_exchange", {}));
      done();
    }),
  );
  await Promise.all(written);
  expect(p.log.filter((e) => e === "write").length).toBe(1);
  await w.end({});
});

test("the lock is kept across back-to-back flushes, let go when idle, and gone after end", async () => {
  const dir = tempDir("seam-ledger-linger-");
  const path = join(dir, "l.jsonl");
  const events: string[] = [];
  // Two lock files, the name's then the file's (src/ledger/open.ts), let go the other way round.
  const lock = async (lockPath: string) => {
    const which = lockPath === `${path}.lock` ? "name" : "file";
    events.push(`take ${which}`);
    return async () => {
      events.push(`release ${which}`);
    };
  };
  const once = ["take name", "take file"];
  const gone = ["release file", "release name"];
  const { w } = await openLedger(path, { lock });
  for (let i = 0; i < 50; i++) await w.append("tool_call", { rpc_id: i });
  // 50 flushes one after another: one lock, still held.
  expect(events).toEqual(once);
  await new Promise((r) => setTimeout(r, LOCK_LINGER_MS + 30));
  expect(events).toEqual([...once, ...gone]);
  await w.append("tool_call", { rpc_id: 50 });
  await w.end({});
  expect(events).toEqual([...once, ...gone, ...once, ...gone]);
  expect(checkChain(read(path)).breaks).toEqual([]);
});

test("another writer of the process waiting for the lock gets it at once, not after the holder's linger", async () => {
  const path = join(tempDir("seam-ledger-linger-"), "l.jsonl");
  const lock = sharedLock({ pid: process.pid });
  // seam proxy's linger: long enough that waiting it out would show.
  const linger = 20;
  const a = await openLedger(path, { session: "a", lock, lockLingerMs: linger });
  const b = await openLedger(path, { session: "b", lock, lockLingerMs: linger });
  const waits: number[] = [];
  for (let round = 0; round < 5; round++) {
    expect(await a.w.append("tool_call", { rpc_id: round })).toBe(true); // a keeps the lock a moment
    const t0 = performance.now();
    expect(await b.w.append("tool_call", { rpc_id: round })).toBe(true);
    waits.push(performance.now() - t0);
  }
  // Waiting out a's linger would take `linger` every round (the least of them: a loaded machine slows some).
  expect(Math.min(...waits)).toBeLessThan(linger / 2);
  await a.w.end({});
  await b.w.end({});
  expect(checkChain(read(path)).breaks).toEqual([]);
});

test("the lock is let go after a long run of flushes, so other writers get their turn", async () => {
  const dir = tempDir("seam-ledger-linger-");
  let takes = 0;
  const lock = async () => {
    takes++;
    return async () => {};
  };
  const { w } = await openLedger(join(dir, "l.jsonl"), { lock });
  const t0 = performance.now();
  let i = 0;
  while (performance.now() - t0 < 160) await w.append("tool_call", { rpc_id: i++ });
  await w.end({});
  // held at most 50 ms at a time: at least 3 takes in 160 ms of back-to-back flushes
  expect(takes).toBeGreaterThanOrEqual(3);
});

describe("the locks every name of one ledger shares", () => {
  /** Runs `f` with the temporary directory (where the lock named by the file lives) at a fresh place. */
  async function withTemp<T>(f: (temp: string) => Promise<T>): Promise<T> {
    const temp = tempDir("seam-tmpdir-");
    // HOME and XDG_RUNTIME_DIR too: the lock directory's fallbacks, kept out of the real ones.
    const before = { TMPDIR: process.env.TMPDIR, HOME: process.env.HOME, XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR };
    process.env.TMPDIR = temp;
    process.env.HOME = join(temp, "home");
    delete process.env.XDG_RUNTIME_DIR;
    try {
      return await f(temp);
    } finally {
      for (const [k, v] of Object.entries(before)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  }
  const uid = process.getuid!();

  test("a hard link in the same or another directory, and a symlink: one lock named by the file, in a directory of the user's own", async () => {
    await withTemp(async (temp) => {
      const dir = tempDir("seam-names-");
      mkdirSync(join(dir, "a"));
      mkdirSync(join(dir, "b"));
      const real = join(dir, "a", "l.jsonl");
      writeFileSync(real, "", { mode: 0o600 });
      linkSync(real, join(dir, "a", "hard.jsonl"));
      linkSync(real, join(dir, "b", "hard.jsonl"));
      symlinkSync(real, join(dir, "b", "sym.jsonl"));
      const other = join(dir, "a", "other.jsonl");
      writeFileSync(other, "");
      const names = [real, join(dir, "a", "hard.jsonl"), join(dir, "b", "hard.jsonl"), join(dir, "b", "sym.jsonl")];
      const locks = await Promise.all(names.map(lockPaths));
      const st = statSync(real, { bigint: true });
      const byFile = join(temp, `seam-${uid}`, `${st.dev}-${st.ino}.lock`);
      expect(locks.map((l) => l.paths)).toEqual([
        [`${real}.lock`, byFile],
        [`${names[1]}.lock`, byFile],
        [`${names[2]}.lock`, byFile],
        [`${real}.lock`, byFile],
      ]);
      expect(locks.every((l) => l.problem === undefined)).toBe(true);
      expect((await lockPaths(other)).paths[1]).not.toBe(byFile);
      expect(statSync(join(temp, `seam-${uid}`)).mode & 0o777).toBe(0o700);
    });
  });

  const unsafe: [string, (at: string) => void, RegExp][] = [
    ["a symlink to a directory of ours", (at) => symlinkSync(tempDir("seam-elsewhere-"), at), /is not a directory/],
    ["a regular file", (at) => writeFileSync(at, ""), /is not a directory/],
    ["a directory others may write to", (at) => (mkdirSync(at), chmodSync(at, 0o777)), /is writable by other users/],
    [
      "another user's directory",
      (at) => (mkdirSync(at, { mode: 0o700 }), chownSync(at, 65534, 65534)),
      /belongs to uid 65534/,
    ],
  ];
  test.each(unsafe)(
    "what is already there is %s: not used; the one in the home directory is, and with that one planted too the writer says so",
    async (_, plant, problem) => {
      if (uid !== 0 && problem.source.includes("65534")) return; // only root can plant another user's directory
      await withTemp(async (temp) => {
        plant(join(temp, `seam-${uid}`));
        const path = join(tempDir("seam-names-"), "l.jsonl");
        const { w, warnings } = await openLedger(path);
        await w.append("tool_call", { tool: "t" });
        await w.end({ reason: "client_eof" });
        expect(warnings).toEqual([]);
        const st = statSync(path, { bigint: true });
        const home = join(temp, "home", ".cache", "seam", "locks");
        expect((await lockPaths(path)).paths).toEqual([`${path}.lock`, join(home, `${st.dev}-${st.ino}.lock`)]);
        expect(statSync(home).mode & 0o777).toBe(0o700);
        expect(checkChain(read(path)).breaks).toEqual([]);
        // The fallback planted as well: no lock named by the file, said so.
        rmSync(home, { recursive: true });
        plant(home);
        const again = await openLedger(path);
        await again.w.append("tool_call", { tool: "t" });
        await again.w.end({ reason: "client_eof" });
        expect(again.warnings).toHaveLength(1);
        expect(again.warnings[0]).toMatch(problem);
        expect(again.warnings[0]).toContain("ledger lock directory");
        expect((await lockPaths(path)).paths).toEqual([`${path}.lock`]);
      });
    },
  );
});

test("each write gets bytes of its own: a file that keeps what it is given still holds every row as written", async () => {
  const path = join(tmp(), "l.jsonl");
  const inner = await openAppend(path);
  const kept: Uint8Array[] = [];
  const keeping: AppendFile = {
    ...inner,
    async write(b) {
      kept.push(b);
      await inner.write(b);
    },
  };
  const { w } = await openLedger(path, { openAppend: async () => keeping });
  for (let batch = 0; batch < 4; batch++) {
    await Promise.all(Array.from({ length: 3 }, (_, i) => w.append("tool_call", { batch, i })));
  }
  await w.end({});
  expect(kept.length).toBe(5);
  expect(Buffer.concat(kept).toString()).toBe(read(path));
  const check = checkChain(read(path));
  expect(check.breaks).toEqual([]);
  expect(check.seqs).toEqual({ "s-golden": Array.from({ length: 13 }, (_, i) => i + 1) });
  const rows = read(path)
    .trimEnd()
    .split("\n")
    .slice(0, 12)
    .map((l) => JSON.parse(l) as { batch: number; i: number });
  expect(rows.map((r) => `${r.batch}.${r.i}`)).toEqual(
    Array.from({ length: 12 }, (_, k) => `${Math.floor(k / 3)}.${k % 3}`),
  );
});

test("ts: each row's is its own millisecond's, rows of one millisecond sharing it", async () => {
  const path = join(tmp(), "l.jsonl");
  const base = Date.UTC(2026, 10, 30, 3, 24, 7, 123);
  const times = [base, base, base + 1, base, base + 86_400_000, Number.NaN];
  let at = 0;
  const { w } = await openLedger(path, { now: () => times[Math.min(at++, times.length - 1)]! });
  const before = Date.now();
  for (let i = 0; i < times.length - 1; i++) void w.append("tick", { i });
  await w.append("tick", { i: times.length - 1 });
  const ts = read(path)
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l).ts as string);
  expect(ts.slice(0, 5)).toEqual([
    "2026-11-30T03:24:07.123Z",
    "2026-11-30T03:24:07.123Z",
    "2026-11-30T03:24:07.124Z",
    "2026-11-30T03:24:07.123Z",
    "2026-12-01T03:24:07.123Z",
  ]);
  // A clock that gives no time: the row is dated now, as before.
  expect(Date.parse(ts[5]!)).toBeGreaterThanOrEqual(before - 1);
  await w.end({});
});

test("lockedOnly (--fail-closed): with no lock to take nothing is appended, a call's rows say so, one warning", async () => {
  const noLock = () => Promise.reject(new Error("no lock"));
  const path = join(tmp(), "l.jsonl");
  writeFileSync(path, OTHER_BEGIN);
  const { w, warnings } = await openLedger(path, { lock: noLock, lockedOnly: true });
  const durable = await w.appendDurable("tool_call_intent", {});
  await w.append("tool_call", {});
  await w.end({});
  expect([durable, w.rowsWritten, w.rowsUnlogged]).toEqual([false, 0, 3]);
  expect(read(path)).toBe(OTHER_BEGIN);
  expect(warnings.filter((m) => m.includes("--fail-closed appends only under one"))).toHaveLength(1);
  // Without it, the same writer appends unlocked (and says so): the control.
  const other = join(tmp(), "l.jsonl");
  const open = await openLedger(other, { lock: noLock });
  expect(await open.w.appendDurable("tool_call_intent", {})).toBe(true);
  await open.w.end({});
  expect(open.w.rowsWritten).toBe(2);
});
