/** One descriptor per ledger file for the sessions of `seam proxy` (src/proxy/shared-files.ts). */
import { expect, test } from "bun:test";
import { sharingOpen } from "../../src/proxy/shared-files.ts";
import type { AppendFile } from "../../src/runtime/types.ts";

/** Handles of one file (one identity), each counting whether it is closed; a close may be held back. */
function fakeFiles() {
  const handles: { closed: boolean }[] = [];
  let holdClose: Promise<void> | null = null;
  const open = async (): Promise<AppendFile> => {
    const h = { closed: false };
    handles.push(h);
    const alive = async () => {
      if (h.closed) throw new Error("closed");
    };
    return {
      write: alive,
      sync: alive,
      size: async () => (await alive(), 0),
      readAt: async () => (await alive(), new Uint8Array(0)),
      truncate: alive,
      identity: () => "1:2",
      async close() {
        if (holdClose !== null) await holdClose;
        h.closed = true;
      },
    };
  };
  return {
    open,
    handles,
    hold(p: Promise<void> | null) {
      holdClose = p;
    },
  };
}

test("sessions of one file share its first handle, closed when the last lets go", async () => {
  const f = fakeFiles();
  const open = sharingOpen(f.open);
  const a = await open("ledger");
  const b = await open("ledger");
  expect(f.handles.map((h) => h.closed)).toEqual([false, true]);
  await a.close();
  await a.close(); // twice is once
  await b.write(new Uint8Array([1]));
  await b.close();
  expect(f.handles.map((h) => h.closed)).toEqual([true, true]);
});

test("a session ending while another is opening does not close the handle the new one shares", async () => {
  const f = fakeFiles();
  const open = sharingOpen(f.open);
  const a = await open("ledger");
  // The second open's own handle takes a while to close; the first session ends meanwhile.
  let release!: () => void;
  f.hold(
    new Promise<void>((r) => {
      release = r;
    }),
  );
  const opening = open("ledger");
  await Bun.sleep(0);
  f.hold(null);
  await a.close();
  release();
  const b = await opening;
  await b.write(new Uint8Array([1]));
  expect(f.handles[0]!.closed).toBe(false);
  await b.close();
  expect(f.handles[0]!.closed).toBe(true);
});
