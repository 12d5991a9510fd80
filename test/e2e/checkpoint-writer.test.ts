/**
 * The writer's checkpoints: where they land, what they commit to (every
 * line before them, whoever wrote it), golden bytes, the witness file,
 * the timer, reading only new bytes, and rewinding after a failed write.
 */
import { describe, expect, test } from "bun:test";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  checkpointText,
  ledgerOrigin,
  parseCheckpointText,
  parseWitnessLine,
} from "../../src/checkpoint/checkpoint.ts";
import { verifyCheckpointed } from "../../src/checkpoint/checkpoint-verifier.ts";
import type { CheckpointSeeds } from "../../src/checkpoint/checkpoint-writer.ts";
import { leafHash } from "../../src/checkpoint/merkle.ts";
import { openNote } from "../../src/checkpoint/note.ts";
import { getField, parseJson } from "../../src/core/json.ts";
import { type LedgerConfig, LedgerWriter } from "../../src/ledger/ledger-writer.ts";
import { openAppend } from "../../src/runtime/file.ts";
import type { AppendFile } from "../../src/runtime/types.ts";
import { fileChunks } from "../../src/verify/ledger-verifier.ts";
import { verifyBytes } from "../../src/verify/verify-ledger.ts";
import { checkpointLines, KEY, linesOf, signer, verifier, writeCheckpointed } from "../helpers/checkpoint-helpers.ts";
import { rootOf } from "../helpers/merkle-proofs.ts";
import { tempDir } from "../helpers/proc.ts";

const enc = new TextEncoder();
const rootOfLines = (ls: readonly string[]) =>
  Buffer.from(rootOf(ls.map((l) => leafHash(enc.encode(l))))).toString("base64");

/** A writer of `path` that signs a checkpoint every `every` rows. */
function openSigning(path: string, session: string, every: number, more: Partial<LedgerConfig> = {}) {
  return LedgerWriter.open({
    path,
    session,
    server: "x",
    fsync: "never",
    openAppend,
    checkpoints: { signer, every, intervalMs: 0 },
    ...more,
  });
}

/** Opens the ledger as the writer does, telling `seen` of each read (it may hold the read up). */
function watchingReads(seen: (pos: number, len: number, bytes: Uint8Array) => Promise<void>) {
  return async (p: string): Promise<AppendFile> => {
    const f = await openAppend(p);
    return {
      ...f,
      readAt: async (pos, len) => {
        const b = await f.readAt(pos, len);
        await seen(pos, len, b);
        return b;
      },
    };
  };
}

describe("checkpoint rows", () => {
  test("every 3 rows and after session_end; each commits to exactly the lines before it, outside the session's seq", async () => {
    const path = join(tempDir(), "l.jsonl");
    const s = await writeCheckpointed(path, { calls: 5, every: 3 });
    const ls = linesOf(path);
    const evts = ls.map((l) => getField(parseJson(l), "evt"));
    expect(evts).toEqual([
      "session_begin",
      "tool_call",
      "tool_call",
      "checkpoint",
      "tool_call",
      "tool_call",
      "tool_call",
      "checkpoint",
      "session_end",
      "checkpoint",
    ]);
    expect(s.writer.checkpoints).toBe(3);
    expect(s.warnings).toEqual([]);
    const origin = ledgerOrigin(leafHash(enc.encode(ls[0]!)));
    for (const i of checkpointLines(ls)) {
      const row = parseJson(ls[i]!);
      expect(getField(row, "seq")).toBeUndefined();
      expect(getField(row, "size")).toBe(i);
      expect(getField(row, "root")).toBe(rootOfLines(ls.slice(0, i)));
      const opened = openNote(getField(row, "note") as string, [verifier]);
      expect(parseCheckpointText(opened.text)).toEqual({
        origin,
        size: i,
        root: Buffer.from(getField(row, "root") as string, "base64"),
      });
    }
    const end = parseJson(ls[8]!);
    expect([getField(end, "seq"), getField(end, "rows_before_end")]).toEqual([7, 6]);
    // The chain verifier sees a complete session: checkpoint rows are exempt from its seq.
    const plain = verifyBytes(new Uint8Array(readFileSync(path)));
    expect([plain.verdict, plain.findings]).toEqual(["ok", []]);
    const sealed = await verifyCheckpointed(
      fileChunks(path),
      {},
      { keys: [verifier], witness: { name: "w", text: readFileSync(s.witness, "utf8") } },
    );
    expect([
      sealed.report.verdict,
      sealed.checkpointReport.sealed_through,
      sealed.checkpointReport.unsealed_rows,
      sealed.checkpointReport.valid,
    ]).toEqual(["ok", 9, 0, 3]);
  });

  test("golden bytes: a checkpoint row and its witness line, with a fixed key and clock", async () => {
    const path = join(tempDir(), "l.jsonl");
    const s = await writeCheckpointed(path, { calls: 1, every: 1000, session: "golden", fixedTime: true });
    const ls = linesOf(path);
    expect(ls.length).toBe(4);
    expect(ls[0]).toBe(
      `{"evt": "session_begin", "seam": "mcp-stdio", "seam_impl": "seam/0.1.0", "session": "golden", "seq": 1, "server": "fixture", "pid": 1, "ts": "2026-11-30T03:24:07.123Z", "chain": "cb18ff95ee5956eea9be3ddfb49745bd"}`,
    );
    const origin = ledgerOrigin(leafHash(enc.encode(ls[0]!)));
    expect(origin).toBe("seam-ledger/411cce59e81a07a3ad2d09ff18b89b1f");
    // Cross-checked with Python's hashlib and the cryptography package's Ed25519.
    expect(ls[3]).toBe(
      `{"evt": "checkpoint", "seam": "mcp-stdio", "seam_impl": "seam/0.1.0", "session": "golden", "server": "fixture", "size": 3, "root": "munEq8lKF9kSVj8dMWDTr9cQrm0/vUav7yigQTvqWgA=", "note": "seam-ledger/411cce59e81a07a3ad2d09ff18b89b1f\\n3\\nmunEq8lKF9kSVj8dMWDTr9cQrm0/vUav7yigQTvqWgA=\\n\\n— seam-test 37avk1ae30/kKm47OXOHhS62ktBSbpCnxLT7eLURJnC25RvamtmrMBp7zglZN+N0t1weEGPzwXyzcRr4BQZLWj+vSg4=\\n", "ts": "2026-11-30T03:24:07.123Z", "chain": "67d5a25364593d2ddec17b9662f891da"}`,
    );
    expect(KEY.verifierKey).toBe("seam-test+dfb6af93+AepKbGPinFIKvvVQexMuxfmVR3auvr57kkIe6mkURtIs");
    expect(readFileSync(s.witness, "utf8")).toBe(
      `{"origin": "seam-ledger/411cce59e81a07a3ad2d09ff18b89b1f", "size": 3, "root": "munEq8lKF9kSVj8dMWDTr9cQrm0/vUav7yigQTvqWgA=", "note": "seam-ledger/411cce59e81a07a3ad2d09ff18b89b1f\\n3\\nmunEq8lKF9kSVj8dMWDTr9cQrm0/vUav7yigQTvqWgA=\\n\\n— seam-test 37avk1ae30/kKm47OXOHhS62ktBSbpCnxLT7eLURJnC25RvamtmrMBp7zglZN+N0t1weEGPzwXyzcRr4BQZLWj+vSg4=\\n"}\n`,
    );
  });

  test("the witness file holds every checkpoint, in the ledger's order, each one verifying", async () => {
    const path = join(tempDir(), "l.jsonl");
    const s = await writeCheckpointed(path, { calls: 9, every: 2 });
    const ls = linesOf(path);
    const w = readFileSync(s.witness, "utf8").trimEnd().split("\n").map(parseWitnessLine);
    expect(w.map((e) => e.checkpoint.size)).toEqual(checkpointLines(ls));
    expect(w.map((e) => e.note)).toEqual(checkpointLines(ls).map((i) => getField(parseJson(ls[i]!), "note") as string));
  });

  test("lines another process appended are in the next checkpoint's tree, and a torn line it left is not", async () => {
    const path = join(tempDir(), "l.jsonl");
    const w = await LedgerWriter.open({
      path,
      session: "s",
      server: "x",
      fsync: "never",
      openAppend,
      checkpoints: { signer, every: 2, intervalMs: 0 },
    });
    await w.append("session_begin", {});
    appendFileSync(path, `{"foreign": 1}\n\nnot json\n{"torn`);
    await w.append("tool_call", { tool: "a" });
    await w.append("tool_call", { tool: "b" });
    await w.end({ calls: 2 });
    const ls = linesOf(path);
    expect(ls).not.toContain(`{"torn`);
    expect(getField(parseJson(ls[4]!), "evt")).toBe("ledger_repair");
    expect(getField(parseJson(ls[4]!), "torn_text")).toBe(`{"torn`);
    for (const i of checkpointLines(ls)) expect(getField(parseJson(ls[i]!), "root")).toBe(rootOfLines(ls.slice(0, i)));
    expect(checkpointLines(ls).length).toBe(2);
  });

  test("the file is read once at open, then only the bytes others appended: never reread per checkpoint", async () => {
    const path = join(tempDir(), "l.jsonl");
    const existing = `${'{"old": "row"}\n'.repeat(2000)}`;
    writeFileSync(path, existing);
    let read = 0;
    const counting = watchingReads(async (_pos, _len, b) => {
      read += b.length;
    });
    const w = await LedgerWriter.open({
      path,
      session: "s",
      server: "x",
      fsync: "never",
      openAppend: counting,
      checkpoints: { signer, every: 5, intervalMs: 0 },
    });
    for (let i = 0; i < 50; i++) await w.append("tool_call", { tool: "t" });
    const foreign = '{"foreign": "row"}\n';
    appendFileSync(path, foreign);
    await w.append("tool_call", { tool: "t" });
    await w.end({ calls: 51 });
    expect(w.checkpoints).toBe(11); // after rows 5, 10, …, 50 and after session_end
    // The whole file once (the first read), the foreign line once, and the tail reads the chain needs.
    expect(read).toBeGreaterThanOrEqual(existing.length + foreign.length);
    expect(read).toBeLessThan(existing.length + 4 * 64 * 1024);
    const ls = linesOf(path);
    for (const i of checkpointLines(ls)) expect(getField(parseJson(ls[i]!), "root")).toBe(rootOfLines(ls.slice(0, i)));
  });

  // seam proxy opens a writer per MCP session on one file: with `checkpointSeeds` each starts from the tree another
  // writer of the process keeps, or waits for the one reading it, instead of reading the whole file itself.
  test.each([
    ["writers that share their trees read the file once between them", true, false, 1],
    ["writers that do not each read all of it", false, false, 3],
    // The first flush cuts the torn line off; a tree that had hashed its bytes (each writer's, here) reads
    // what now stands there again instead of going on from where it was.
    ["a file that ends in a torn line, with shared trees", true, true, 1],
    ["a file that ends in a torn line, each writer with its own tree", false, true, 3],
  ])("%s, and every checkpoint holds", async (_name, shared, torn, readings) => {
    const path = join(tempDir(), "l.jsonl");
    const existing = `${'{"old": "row"}\n'.repeat(20000)}${torn ? '{"torn' : ""}`;
    writeFileSync(path, existing);
    // Readings of the whole file from its first byte (a look back for the chain reads it in smaller pieces).
    let fromStart = 0;
    const counting = watchingReads(async (pos, len) => {
      if (pos !== 0 || len < existing.length) return;
      fromStart++;
      await Bun.sleep(100); // long enough for the second writer to begin while the first reads
    });
    const seeds: CheckpointSeeds | undefined = shared ? new Map() : undefined;
    const open = (session: string) => openSigning(path, session, 2, { openAppend: counting, checkpointSeeds: seeds });
    // Two begin together (one waits for the other's reading), a third once they have written.
    const [a, b] = await Promise.all([open("a"), open("b")]);
    for (const w of [a, b]) for (let i = 0; i < 3; i++) await w.append("tool_call", { tool: "t" });
    const c = await open("c");
    for (const w of [a, b, c]) await w.append("tool_call", { tool: "u" });
    for (const w of [c, b, a]) await w.end({ calls: 4 });
    const ls = linesOf(path);
    const sealed = checkpointLines(ls);
    expect(sealed.length).toBe(7); // after every 2 rows of each writer (a, b: 2 each; c: none), and after each session_end
    for (const i of sealed) expect(getField(parseJson(ls[i]!), "root")).toBe(rootOfLines(ls.slice(0, i)));
    expect(fromStart).toBe(readings);
  });

  test("a write that fails part way rewinds the tree; the next checkpoint reads back what landed", async () => {
    const path = join(tempDir(), "l.jsonl");
    let failNext = false;
    const flaky = async (p: string): Promise<AppendFile> => {
      const f = await openAppend(p);
      return {
        ...f,
        write: async (bytes) => {
          if (!failNext) return f.write(bytes);
          failNext = false;
          const cut = bytes.indexOf(0x0a) + 1; // one whole line lands, then the disk is full
          await f.write(bytes.subarray(0, cut));
          throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
        },
      };
    };
    const warnings: string[] = [];
    const w = await LedgerWriter.open({
      path,
      session: "s",
      server: "x",
      fsync: "never",
      openAppend: flaky,
      warn: (m) => warnings.push(m),
      checkpoints: { signer, every: 1000, intervalMs: 0 },
    });
    await w.append("session_begin", {});
    failNext = true;
    const a = w.append("tool_call", { tool: "lands" });
    const b = w.append("tool_call", { tool: "lost" });
    expect([await a, await b]).toEqual([true, false]);
    await w.append("tool_call", { tool: "after" });
    await w.end({ calls: 3 });
    expect(warnings).toEqual(["ledger l.jsonl cannot be written: no space left on device".replace("l.jsonl", path)]);
    const ls = linesOf(path);
    const cps = checkpointLines(ls);
    expect(cps).toEqual([ls.length - 1]);
    expect(getField(parseJson(ls.at(-1)!), "root")).toBe(rootOfLines(ls.slice(0, -1)));
  });

  test("the timer seals an active session between counts; an idle one is left alone", async () => {
    const path = join(tempDir(), "l.jsonl");
    const w = await LedgerWriter.open({
      path,
      session: "s",
      server: "x",
      fsync: "never",
      openAppend,
      checkpoints: { signer, every: 1000, intervalMs: 40 },
    });
    await w.append("session_begin", {});
    await w.append("tool_call", { tool: "t" });
    await new Promise((r) => setTimeout(r, 150));
    const cps = checkpointLines(linesOf(path));
    expect(cps).toEqual([2]);
    await w.end({ calls: 1 });
    expect(checkpointLines(linesOf(path))).toEqual([2, 4]);
  });

  test("two writers on one file, each signing: every checkpoint holds", async () => {
    const path = join(tempDir(), "l.jsonl");
    const open = (session: string) => openSigning(path, session, 3);
    const [a, b] = await Promise.all([open("a"), open("b")]);
    for (let i = 0; i < 20; i++) {
      void a.append("tool_call", { tool: "a" });
      void b.append("tool_call", { tool: "b" });
      if (i % 4 === 0) await new Promise((r) => setTimeout(r, 1));
    }
    await Promise.all([a.end({ calls: 20 }), b.end({ calls: 20 })]);
    const { report, checkpointReport: seal } = await verifyCheckpointed(fileChunks(path), {}, { keys: [verifier] });
    expect([report.breaks, seal.valid, seal.checkpoints]).toEqual([
      0,
      a.checkpoints + b.checkpoints,
      a.checkpoints + b.checkpoints,
    ]);
    expect(seal.valid).toBeGreaterThan(10);
    expect(seal.sealed_through).toBe(linesOf(path).length - 1);
  });

  test("checkpointText of the tree the verifier rebuilds equals what the note says", async () => {
    const path = join(tempDir(), "l.jsonl");
    await writeCheckpointed(path, { calls: 2, every: 1000 });
    const ls = linesOf(path);
    const note = getField(parseJson(ls.at(-1)!), "note") as string;
    expect(note.slice(0, note.indexOf("\n\n") + 1)).toBe(
      checkpointText({
        origin: ledgerOrigin(leafHash(enc.encode(ls[0]!))),
        size: ls.length - 1,
        root: Buffer.from(rootOfLines(ls.slice(0, -1)), "base64"),
      }),
    );
  });
});
