/**
 * Recording on a thread of its own (src/wrap/recorder-thread.ts), driven as
 * the relay drives it, with a real thread (test/fixtures/recorder-thread.ts)
 * whose ledger disk is slow: the relay is told to wait, nothing is lost, the
 * backlog stays under its bound, rows keep the order the bytes crossed in and
 * are dated when they crossed, not when they were written.
 */
import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { symlinkSync } from "node:fs";
import { join } from "node:path";
import { verifyFile } from "../../src/api/index.ts";
import { createLog } from "../../src/base/log.ts";
import { runtime } from "../../src/runtime/index.ts";
import { startThreadFrom } from "../../src/runtime/thread.ts";
import type { Runtime } from "../../src/runtime/types.ts";
import { RecorderLink } from "../../src/wrap/recorder-link.ts";
import { NOTE_DELAY_MS, RECORDER_ROLE } from "../../src/wrap/recorder-protocol.ts";
import { field, ledgerRows, tempDir } from "../helpers/proc.ts";
import { answer, type Driven, drive, recordingInit, request } from "../helpers/recorder-drive.ts";

const fixture = join(import.meta.dir, "..", "fixtures", "recorder-thread.ts");
const enc = new TextEncoder();

const init = (ledger: string) => recordingInit(ledger, "s-thread");

/** The runtime, starting the fixture as its thread. */
const rt: Runtime = { ...runtime, startThread: (role, data) => startThreadFrom(fixture, role, data) };

interface Run extends Driven {
  ledger: string;
  elapsedMs: number;
  /** The ring's size at the end. */
  ringSize: number;
}

async function relay(
  calls: number,
  stallMs: number,
  limit: number,
  o: { group?: number; maxAgeMs?: number; gapMs?: number; noteSlots?: number; ringStart?: number } = {},
): Promise<Run> {
  expect(RECORDER_ROLE).toBe("recorder");
  const ledger = join(tempDir("seam-rthread-"), "l.jsonl");
  const link = await RecorderLink.start(
    rt,
    init(ledger),
    { stallMs },
    createLog(),
    limit,
    o.maxAgeMs ?? 60_000,
    o.noteSlots,
    o.ringStart,
  );
  if (!(link instanceof RecorderLink)) throw new Error(`no recorder thread: ${link}`);
  const t0 = performance.now();
  const driven = await drive(link, ledger, calls, o);
  return { ...driven, ledger, elapsedMs: performance.now() - t0, ringSize: link.ringSize };
}

test("a recorder slower than the traffic makes the relay wait; every call is rowed, in order, dated when it crossed", async () => {
  const calls = 600;
  // 8 KiB of backlog is about 25 calls; each write to the disk stalls 40 ms.
  const limit = 8 * 1024;
  const r = await relay(calls, 40, limit);
  // The relay was held back, more than once, and the backlog never went past its bound.
  expect(r.waits).toBeGreaterThan(3);
  expect(r.backlogMax).toBeGreaterThan(limit / 2);
  expect(r.backlogMax).toBeLessThanOrEqual(limit + answer(1).length);

  const rows = ledgerRows(r.ledger);
  const calls_ = rows.filter((row) => field(row, "evt") === "tool_call");
  expect(calls_.map((row) => field(row, "tool"))).toEqual(Array.from({ length: calls }, (_, i) => `t${i + 1}`));
  expect(calls_.every((row) => field(row, "status") === "ok")).toBe(true);
  const end = rows.at(-1)!;
  expect(field(end, "evt")).toBe("session_end");
  expect(field(end, "calls")).toBe(calls);
  expect(field(end, "rows_unlogged")).toBeUndefined();
  // Dated when the answer crossed, although written up to seconds later.
  calls_.forEach((row, i) => {
    const ts = Date.parse(field(row, "ts") as string);
    expect(Math.abs(ts - r.answeredAt[i]!)).toBeLessThanOrEqual(5);
  });
  const report = await verifyFile(r.ledger);
  expect(report.verdict).toBe("ok");
}, 60_000);

test("with a fast disk the relay never waits and the backlog stays small", async () => {
  const r = await relay(300, 0, 64 * 1024 * 1024);
  expect(r.waits).toBe(0);
  expect(r.backlogMax).toBeLessThan(64 * 1024 * 1024);
  const rows = ledgerRows(r.ledger);
  expect(rows.filter((row) => field(row, "evt") === "tool_call")).toHaveLength(300);
  expect((await verifyFile(r.ledger)).verdict).toBe("ok");
}, 60_000);

test("the relay also waits when the oldest bytes have waited too long, however much room is left", async () => {
  // A ring far larger than the traffic: only the age bound can make the relay wait.
  // Calls 2 ms apart; each write to the disk stalls 30 ms; bytes may wait 20 ms.
  const r = await relay(150, 30, 16 * 1024 * 1024, { maxAgeMs: 20, gapMs: 2 });
  expect(r.waits).toBeGreaterThan(3);
  expect(r.backlogMax).toBeLessThan(150 * (request(150).length + answer(150).length));
  const rows = ledgerRows(r.ledger);
  expect(rows.filter((row) => field(row, "evt") === "tool_call")).toHaveLength(150);
  expect((await verifyFile(r.ledger)).verdict).toBe("ok");
}, 60_000);

test("chunks larger than the ring, in a ring of an odd size, arrive whole and in order", async () => {
  // 20 calls a chunk (about 6 KB) through a ring of 1,000 bytes, with a slow disk.
  const r = await relay(400, 5, 1000, { group: 20 });
  expect(r.waits).toBeGreaterThan(10);
  expect(r.backlogMax).toBeLessThanOrEqual(1000);
  const rows = ledgerRows(r.ledger);
  const calls = rows.filter((row) => field(row, "evt") === "tool_call");
  expect(calls.map((row) => field(row, "tool"))).toEqual(Array.from({ length: 400 }, (_, i) => `t${i + 1}`));
  expect((await verifyFile(r.ledger)).verdict).toBe("ok");
}, 60_000);

test("the ring starts small and grows as the backlog asks, up to its limit, every byte read in order", async () => {
  // 20 calls a chunk (about 6 KB) with a slow disk, through a ring that starts at 1,000 bytes (an odd
  // size, so that its ends fall inside frames) and may grow to 400,000: it grows while bytes wait in
  // it, and the rows waiting for the disk pile up past what makes the recorder stop taking notes, so
  // that it grows while notes not yet taken lie in it.
  const calls = 3000;
  const r = await relay(calls, 5, 400_000, { group: 20, ringStart: 1000 });
  expect(r.ringSize).toBeGreaterThan(8000);
  expect(r.ringSize).toBeLessThanOrEqual(400_000);
  expect(r.backlogMax).toBeLessThanOrEqual(r.ringSize);
  const rows = ledgerRows(r.ledger);
  const rowed = rows.filter((row) => field(row, "evt") === "tool_call");
  expect(rowed.map((row) => field(row, "tool"))).toEqual(Array.from({ length: calls }, (_, i) => `t${i + 1}`));
  expect((await verifyFile(r.ledger)).verdict).toBe("ok");
}, 60_000);

test("a ring whose waiting bytes wrap around its end grows only once the recorder is past the end", async () => {
  const ledger = join(tempDir("seam-rthread-"), "l.jsonl");
  const link = await RecorderLink.start(
    rt,
    init(ledger),
    { stallMs: 0 },
    createLog(),
    100_000,
    60_000,
    undefined,
    1000,
  );
  if (!(link instanceof RecorderLink)) throw new Error(`no recorder thread: ${link}`);
  const sent = { c2s: createHash("sha256"), s2c: createHash("sha256") };
  const put = async (dir: "c2s" | "s2c", text: string) => {
    const bytes = enc.encode(text);
    sent[dir].update(bytes);
    const wait = link.chunk(dir, bytes);
    bytes.fill(0x20);
    return wait;
  };
  const ids = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
  // About 700 bytes of calls, recorded; then, at once, two answers that wrap around the ring's end, and
  // calls that do not fit: the ring must not grow before the recorder has taken the wrapped answers.
  await put("c2s", ids(1, 8).map(request).join(""));
  await Bun.sleep(100);
  const waits = [put("s2c", ids(1, 2).map(answer).join("")), put("c2s", ids(9, 16).map(request).join(""))];
  expect(link.ringSize).toBe(1000);
  await Promise.all(waits);
  await put("s2c", ids(3, 16).map(answer).join(""));
  link.eof("c2s");
  link.eof("s2c");
  await link.end({ reason: "client_eof", exitCode: 0 });
  expect(link.ringSize).toBeGreaterThan(1000);
  const rows = ledgerRows(ledger);
  const digests = field(rows.at(-1)!, "stream_digests");
  expect([field(digests!, "c2s"), field(digests!, "s2c")]).toEqual([
    `sha256:raw-bytes:v1:${sent.c2s.digest("hex")}`,
    `sha256:raw-bytes:v1:${sent.s2c.digest("hex")}`,
  ]);
  const rowed = rows.filter((row) => field(row, "evt") === "tool_call");
  expect(rowed.map((row) => [field(row, "tool"), field(row, "status")])).toEqual(
    ids(1, 16).map((i) => [`t${i}`, "ok"]),
  );
  expect((await verifyFile(ledger)).verdict).toBe("ok");
}, 60_000);

test("a ring that quiet traffic never fills stays at its first size", async () => {
  const r = await relay(60, 0, 16 * 1024 * 1024, { gapMs: 2, ringStart: 4096 });
  expect(r.ringSize).toBe(4096);
  const rows = ledgerRows(r.ledger);
  expect(rows.filter((row) => field(row, "evt") === "tool_call")).toHaveLength(60);
}, 60_000);

test("a thread that cannot be started leaves recording to the caller (null), and a refused ledger is the refusal's message", async () => {
  const none: Runtime = { ...runtime, startThread: () => null };
  expect(await RecorderLink.start(none, init("/nonexistent/x.jsonl"), {}, createLog())).toBeNull();
  const throwing: Runtime = {
    ...runtime,
    startThread: () => {
      throw new Error("no threads here");
    },
  };
  expect(await RecorderLink.start(throwing, init("/nonexistent/x.jsonl"), {}, createLog())).toBeNull();
  const dir = tempDir("seam-rthread-");
  symlinkSync(join(dir, "real.jsonl"), join(dir, "l.jsonl"));
  const refused = await RecorderLink.start(rt, init(join(dir, "l.jsonl")), { stallMs: 0 }, createLog());
  expect(typeof refused).toBe("string");
  expect(refused as string).toContain("symbolic link");
});

test.skipIf(process.platform !== "linux")(
  "the recorder's thread yields to the relay's: its own nice value is raised, not the process's",
  async () => {
    const { Worker } = await import("node:worker_threads");
    const w = new Worker(join(import.meta.dir, "..", "fixtures", "yield-thread.ts"));
    const said = await new Promise<{ thread: number; process: number }>((resolve) => w.once("message", resolve));
    await w.terminate();
    expect(said.thread).toBe(Math.min(19, said.process + 10));
  },
);

/** The real thread, with the kinds of what the link posts to it seen on the way. */
function watched(): { rt: Runtime; kinds: () => string[] } {
  const posted: string[] = [];
  const rt: Runtime = {
    ...runtime,
    startThread: (role, data) => {
      const t = startThreadFrom(fixture, role, data);
      if (t === null) return null;
      return {
        post: (m, transfer) => {
          posted.push((m as { k: string }).k);
          t.post(m, transfer);
        },
        onMessage: (h) => t.onMessage(h),
        onExit: (h) => t.onExit(h),
        terminate: () => t.terminate(),
      };
    },
  };
  return { rt, kinds: () => [...posted] };
}

/** Polls until `ok` holds (the recorder works on its own thread), failing after `ms`. */
async function until(ok: () => boolean, ms = 20_000): Promise<void> {
  const t0 = performance.now();
  while (!ok()) {
    if (performance.now() - t0 > ms) throw new Error("timed out");
    await Bun.sleep(5);
  }
}

test("the recorder finds notes without a message; it is woken by one only after it said it was idle", async () => {
  const { rt: watching, kinds } = watched();
  const ledger = join(tempDir("seam-rthread-"), "l.jsonl");
  const link = await RecorderLink.start(watching, init(ledger), { stallMs: 0 }, createLog());
  if (!(link instanceof RecorderLink)) throw new Error(`no recorder thread: ${link}`);
  const rowed = () => ledgerRows(ledger).filter((row) => field(row, "evt") === "tool_call").length;
  // An idle recorder: the first chunk wakes it, the rest of the turn's chunks need no message.
  await Bun.sleep(50);
  for (let id = 1; id <= 10; id++) {
    expect(link.chunk("c2s", enc.encode(request(id)))).toBeUndefined();
    expect(link.chunk("s2c", enc.encode(answer(id)))).toBeUndefined();
  }
  expect(kinds()).toEqual(["wake"]);
  // Recorded while the link stays open (not only at its end).
  await until(() => rowed() === 10);
  // Calls one after another, a turn of the event loop apart: the recorder goes idle (and must be woken)
  // only after a look that found nothing, and it looks NOTE_DELAY_MS after it last found notes.
  await Bun.sleep(100);
  const t0 = performance.now();
  for (let id = 11; id <= 40; id++) {
    link.chunk("c2s", enc.encode(request(id)));
    await Bun.sleep(0);
    link.chunk("s2c", enc.encode(answer(id)));
    await Bun.sleep(0);
  }
  const elapsed = performance.now() - t0;
  await until(() => rowed() === 40);
  const woken = kinds().length - 1;
  expect(woken).toBeGreaterThanOrEqual(1);
  expect(woken).toBeLessThanOrEqual(1 + Math.ceil(elapsed / NOTE_DELAY_MS));
  // An eof is a note in its place, not a message; the end is a message.
  link.chunk("c2s", enc.encode(request(41)));
  link.eof("c2s");
  link.chunk("s2c", enc.encode(answer(41)));
  const before = kinds().length;
  await link.end({ reason: "signal", exitCode: 0 });
  expect(
    kinds()
      .slice(before)
      .filter((k) => k !== "wake"),
  ).toEqual(["end"]);
  const rows = ledgerRows(ledger);
  const calls = rows.filter((row) => field(row, "evt") === "tool_call");
  expect(calls.map((row) => `${field(row, "tool")} ${field(row, "status")}`)).toEqual(
    Array.from({ length: 41 }, (_, i) => `t${i + 1} ok`),
  );
  expect((await verifyFile(ledger)).verdict).toBe("ok");
}, 60_000);

test("a full notes ring makes the relay wait as a full byte ring does: nothing lost, in order", async () => {
  // Eight notes for 800 chunks, with a slow disk.
  const r = await relay(400, 5, 16 * 1024 * 1024, { noteSlots: 8 });
  expect(r.waits).toBeGreaterThan(10);
  const rows = ledgerRows(r.ledger);
  const calls = rows.filter((row) => field(row, "evt") === "tool_call");
  expect(calls.map((row) => `${field(row, "tool")} ${field(row, "status")}`)).toEqual(
    Array.from({ length: 400 }, (_, i) => `t${i + 1} ok`),
  );
  expect(field(rows.at(-1)!, "evt")).toBe("session_end");
  expect((await verifyFile(r.ledger)).verdict).toBe("ok");
}, 60_000);

test("an eof that crosses while chunks wait for the ring keeps its place behind them", async () => {
  const ledger = join(tempDir("seam-rthread-"), "l.jsonl");
  // A ring smaller than one answer: the first answer waits in part, and what crosses after it waits too.
  const link = await RecorderLink.start(rt, init(ledger), { stallMs: 0 }, createLog(), 100);
  if (!(link instanceof RecorderLink)) throw new Error(`no recorder thread: ${link}`);
  expect(link.chunk("c2s", enc.encode(request(1)))).toBeUndefined();
  expect(link.chunk("s2c", enc.encode(answer(1)))).toBeInstanceOf(Promise);
  // The client's last frame has no "\n": only its eof, after its bytes, ends it.
  link.chunk("c2s", enc.encode(request(2).trimEnd()));
  link.eof("c2s");
  link.chunk("s2c", enc.encode(answer(2)));
  link.eof("s2c");
  await link.end({ reason: "client_eof", exitCode: 0 });
  const calls = ledgerRows(ledger).filter((row) => field(row, "evt") === "tool_call");
  expect(calls.map((row) => `${field(row, "tool")} ${field(row, "status")}`)).toEqual(["t1 ok", "t2 ok"]);
  expect((await verifyFile(ledger)).verdict).toBe("ok");
}, 60_000);
