/**
 * A recording asks the runtime for a full collection only when the process
 * has grown (src/wrap/reclaim.ts): every RECLAIM_EVERY bytes of observed
 * frames it reads the resident size, and collects once that is GROWTH past
 * where the last collection left it.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createLog } from "../../src/base/log.ts";
import { runtime } from "../../src/runtime/index.ts";
import { GROWTH, RECLAIM_EVERY, Reclaimer } from "../../src/wrap/reclaim.ts";
import { Recording } from "../../src/wrap/recording.ts";
import { tempDir } from "../helpers/proc.ts";

const MiB = 1024 * 1024;

describe("Reclaimer", () => {
  // Frames observed (bytes), the resident sizes the Reclaimer is given in turn (MiB; the first is
  // read when it is made), the collections expected and how many sizes it reads: one at each look,
  // and one more after each collection (where the next growth counts from).
  test.each<[string, number[], number[], number, number]>([
    [
      "flat: no collection however much is observed",
      [RECLAIM_EVERY, RECLAIM_EVERY, RECLAIM_EVERY],
      [100, 100, 100, 110],
      0,
      4,
    ],
    ["grown by GROWTH at a look: one collection", [RECLAIM_EVERY], [100, 100 + GROWTH / MiB, 100], 1, 3],
    ["grown by less than GROWTH: none", [RECLAIM_EVERY], [100, 100 + GROWTH / MiB - 1], 0, 2],
    ["not yet RECLAIM_EVERY observed: no look at all", [RECLAIM_EVERY - 1], [100], 0, 1],
    ["small frames add up to a look", Array.from({ length: 8 }, () => MiB), [100, 200, 120], 1, 3],
    [
      "growth counts from where the last collection left it",
      [RECLAIM_EVERY, RECLAIM_EVERY, RECLAIM_EVERY],
      [100, 140, 130, 140, 150, 131],
      2,
      6,
    ],
    ["one frame of several RECLAIM_EVERY: one look", [4 * RECLAIM_EVERY], [100, 200, 100], 1, 3],
  ])("%s", (_name, frames, sizes, collections, reads) => {
    let read = 0;
    let collected = 0;
    const r = new Reclaimer(
      () => collected++,
      () => {
        if (read >= sizes.length) throw new Error("looked at the resident size more often than expected");
        return sizes[read++]! * MiB;
      },
    );
    for (const n of frames) r.observed(n);
    expect([collected, read]).toEqual([collections, reads]);
  });
});

describe("Recording", () => {
  test("collects when the process has grown while frames were observed, and not when it has not", async () => {
    const dir = tempDir();
    // One frame of RECLAIM_EVERY bytes (a log line the observer reads as unparsed): a look each time.
    const frame = new Uint8Array(RECLAIM_EVERY + 1).fill(0x78);
    frame[RECLAIM_EVERY] = 0x0a;
    let collected = 0;
    // The resident size as the Recording reads it: the process's own would also move with whatever else
    // this test process does (other test files run in it, their garbage collected or reused).
    let resident = 100 * MiB;
    const opened = await Recording.open(
      { ...runtime, reclaim: () => collected++ },
      {
        ledger: join(dir, "l.jsonl"),
        session: "0b7c6a52-8f43-4c1e-9d1a-3f0f4b8e2a61",
        server: "t",
        begin: {},
        raw: false,
        maxFrame: 64 * MiB,
        fsync: "never",
        writeAhead: false,
        failClosed: false,
      },
      { rss: () => resident },
      createLog(() => {}),
    );
    if (typeof opened === "string") throw new Error(opened);
    opened.chunk("s2c", frame);
    expect(collected).toBe(0);
    // The process has grown by 4 GROWTHs: the next look collects, once.
    resident += 4 * GROWTH;
    opened.chunk("s2c", frame);
    expect(collected).toBe(1);
    opened.chunk("s2c", frame);
    expect(collected).toBe(1);
    await opened.end({ reason: "client_eof", exitCode: 0 });
  });
});
