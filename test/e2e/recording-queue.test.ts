/**
 * Recording behind the forwarding on the thread that forwards
 * (src/wrap/recording-queue.ts), driven as the relay drives it, over a
 * ledger whose disk may be slow: chunks cross without waiting for their
 * rows, the relay is told to wait only past the bounds, nothing is lost,
 * and rows keep the order the bytes crossed in, dated when they crossed.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { verifyFile } from "../../src/api/index.ts";
import { createLog } from "../../src/base/log.ts";
import { Recording } from "../../src/wrap/recording.ts";
import { RecordingQueue } from "../../src/wrap/recording-queue.ts";
import { field, ledgerRows, tempDir } from "../helpers/proc.ts";
import { answer, type Driven, drive, recordingInit, request } from "../helpers/recorder-drive.ts";
import { slowDisk } from "../helpers/slow-disk.ts";

const enc = new TextEncoder();

const init = (ledger: string) => recordingInit(ledger, "s-queue");

async function open(
  stallMs: number,
  o: { limit?: number; maxAgeMs?: number; maxChunks?: number; delayMs?: number; errors?: string[] } = {},
): Promise<{ queue: RecordingQueue; ledger: string }> {
  const ledger = join(tempDir("seam-rqueue-"), "l.jsonl");
  const log = createLog((line) => o.errors?.push(line));
  const recording = await Recording.open(slowDisk(stallMs), init(ledger), {}, log, true, false);
  if (typeof recording === "string") throw new Error(recording);
  return {
    queue: new RecordingQueue(recording, log, o.limit, o.maxAgeMs ?? 60_000, o.maxChunks, o.delayMs ?? 0),
    ledger,
  };
}

interface Run extends Driven {
  ledger: string;
}

async function relay(
  calls: number,
  stallMs: number,
  o: { limit?: number; maxAgeMs?: number; maxChunks?: number; group?: number; gapMs?: number } = {},
): Promise<Run> {
  const { queue, ledger } = await open(stallMs, o);
  return { ...(await drive(queue, ledger, calls, o)), ledger };
}

function toolCalls(ledger: string) {
  return ledgerRows(ledger).filter((row) => field(row, "evt") === "tool_call");
}

test("chunks cross without waiting for their rows: a burst is recorded behind it, in order", async () => {
  const { queue, ledger } = await open(0);
  await queue.recording.ledger.caughtUp();
  const calls = 2000;
  const waits: unknown[] = [];
  for (let id = 1; id <= calls; id++) {
    waits.push(queue.chunk("c2s", enc.encode(request(id))));
    waits.push(queue.chunk("s2c", enc.encode(answer(id))));
  }
  // Nothing made the relay wait, and no row was made (none queued for the file) while the burst crossed.
  expect(waits.every((w) => w === undefined)).toBe(true);
  expect(queue.recording.ledger.lastSeq).toBe(1);
  // Then, between turns of the event loop, the rows come.
  for (let i = 0; i < 200 && toolCalls(ledger).length < calls; i++) await Bun.sleep(10);
  expect(toolCalls(ledger).map((row) => field(row, "tool"))).toEqual(
    Array.from({ length: calls }, (_, i) => `t${i + 1}`),
  );
  await queue.end({ reason: "client_eof", exitCode: 0 });
  expect((await verifyFile(ledger)).verdict).toBe("ok");
});

test("a recorder slower than the traffic makes the relay wait; every call is rowed, in order, dated when it crossed", async () => {
  const calls = 600;
  // 8 KiB of backlog is about 25 calls; each write to the disk stalls 40 ms.
  const limit = 8 * 1024;
  const r = await relay(calls, 40, { limit });
  expect(r.waits).toBeGreaterThan(3);
  expect(r.backlogMax).toBeGreaterThan(limit / 2);
  // Past the bound by less than one chunk: the one that crossed it.
  expect(r.backlogMax).toBeLessThanOrEqual(limit + answer(1).length);
  const rows = toolCalls(r.ledger);
  expect(rows.map((row) => field(row, "tool"))).toEqual(Array.from({ length: calls }, (_, i) => `t${i + 1}`));
  expect(rows.every((row) => field(row, "status") === "ok")).toBe(true);
  rows.forEach((row, i) => {
    const ts = Date.parse(field(row, "ts") as string);
    expect(Math.abs(ts - r.answeredAt[i]!)).toBeLessThanOrEqual(5);
  });
  const end = ledgerRows(r.ledger).at(-1)!;
  expect(field(end, "calls")).toBe(calls);
  expect(field(end, "rows_unlogged")).toBeUndefined();
  expect((await verifyFile(r.ledger)).verdict).toBe("ok");
}, 60_000);

test("with a fast disk the relay never waits", async () => {
  const r = await relay(300, 0, { limit: 64 * 1024 * 1024 });
  expect(r.waits).toBe(0);
  expect(toolCalls(r.ledger)).toHaveLength(300);
  expect((await verifyFile(r.ledger)).verdict).toBe("ok");
}, 60_000);

test("the relay also waits when the oldest bytes have waited too long, however much room is left", async () => {
  // Calls 2 ms apart; each write to the disk stalls 30 ms; bytes may wait 20 ms.
  const r = await relay(150, 30, { limit: 16 * 1024 * 1024, maxAgeMs: 20, gapMs: 2 });
  expect(r.waits).toBeGreaterThan(3);
  expect(toolCalls(r.ledger)).toHaveLength(150);
  expect((await verifyFile(r.ledger)).verdict).toBe("ok");
}, 60_000);

test("the relay also waits when too many reads are kept, however few bytes they hold", async () => {
  const r = await relay(400, 20, { limit: 16 * 1024 * 1024, maxChunks: 16 });
  expect(r.waits).toBeGreaterThan(3);
  expect(toolCalls(r.ledger)).toHaveLength(400);
  expect((await verifyFile(r.ledger)).verdict).toBe("ok");
}, 60_000);

test("chunks far larger than a piece, and eofs behind them, are recorded whole and in order", async () => {
  // 200 calls a chunk (about 60 KB, cut into pieces for the recorder), a final frame without "\n".
  const { queue, ledger } = await open(2);
  let id = 0;
  for (let k = 0; k < 5; k++) {
    const ids = Array.from({ length: 200 }, () => ++id);
    const wait1 = queue.chunk("c2s", enc.encode(ids.map(request).join("")));
    const wait2 = queue.chunk("s2c", enc.encode(ids.map(answer).join("")));
    await wait1;
    await wait2;
  }
  queue.chunk("c2s", enc.encode(request(++id).trimEnd()));
  queue.eof("c2s");
  queue.chunk("s2c", enc.encode(answer(id).trimEnd()));
  queue.eof("s2c");
  await queue.end({ reason: "client_eof", exitCode: 0 });
  expect(toolCalls(ledger).map((row) => field(row, "tool"))).toEqual(Array.from({ length: id }, (_, i) => `t${i + 1}`));
  expect((await verifyFile(ledger)).verdict).toBe("ok");
}, 60_000);

test("a recording that fails stops recording, never the traffic: what crosses after is counted and said", async () => {
  const errors: string[] = [];
  const { queue, ledger } = await open(0, { errors });
  const real = queue.recording.chunk.bind(queue.recording);
  let seen = 0;
  queue.recording.chunk = (dir, bytes) => {
    if (++seen === 3) throw new Error("observer broke");
    real(dir, bytes);
  };
  const waits: unknown[] = [];
  for (let id = 1; id <= 4; id++) {
    waits.push(queue.chunk("c2s", enc.encode(request(id))));
    waits.push(queue.chunk("s2c", enc.encode(answer(id))));
    await Bun.sleep(5);
  }
  expect(waits.every((w) => w === undefined)).toBe(true);
  await queue.end({ reason: "client_eof", exitCode: 0 });
  const said = errors.join("");
  expect(said).toContain("recording stopped (observer broke)");
  expect(said).toMatch(/\d+ bytes crossed after recording stopped and are not in the ledger/);
  // The first call was recorded; session_end is written.
  expect(toolCalls(ledger).map((row) => field(row, "tool"))).toEqual(["t1"]);
  expect(field(ledgerRows(ledger).at(-1)!, "evt")).toBe("session_end");
});

test("with no core to spare, what crosses after a quiet spell is recorded a little later, with what follows", async () => {
  const turns = async (n: number) => {
    for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
  };
  for (const delayMs of [0, 60]) {
    const { queue, ledger } = await open(0, { delayMs });
    await queue.recording.ledger.caughtUp();
    queue.chunk("c2s", enc.encode(request(1)));
    queue.chunk("s2c", enc.encode(answer(1)));
    await turns(5);
    // At once with a core to spare; only once the delay is over on one core.
    expect({ delayMs, rowed: queue.recording.ledger.lastSeq > 1 }).toEqual({ delayMs, rowed: delayMs === 0 });
    await Bun.sleep(delayMs + 40);
    expect(queue.recording.ledger.lastSeq).toBeGreaterThan(1);
    await queue.end({ reason: "client_eof", exitCode: 0 });
    expect(toolCalls(ledger).map((row) => field(row, "tool"))).toEqual(["t1"]);
  }
});
