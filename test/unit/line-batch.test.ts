import { expect, test } from "bun:test";
import { LineBatch } from "../../src/ledger/line-batch.ts";

const KEEP_MAX = 4 << 20;
const line = (n: number, c: number) => new Uint8Array(n).fill(c);

// Each case: the lengths of the lines added before one take; the lines are filled with their index.
test.each([
  ["nothing", []],
  ["one short line", [10]],
  ["many short lines", Array.from({ length: 500 }, (_, i) => 1 + (i % 300))],
  ["lines that outgrow the first buffer", [40_000, 40_000, 40_000]],
  ["lines that fill the kept buffer past its most", [3 << 20, 2 << 20, 100]],
  ["a line longer than the kept buffer's most, between short ones", [5, KEEP_MAX + 1, 7]],
  ["exactly the kept buffer's most, then one byte", [KEEP_MAX, 1]],
] as const)("take gives every line added, in order: %s", (_name, lengths) => {
  const b = new LineBatch();
  const lines = lengths.map((n, i) => line(n, i % 251));
  for (const l of lines) b.add(l);
  expect(b.total).toBe(lengths.reduce((a, n) => a + n, 0));
  const out = b.take();
  expect(Buffer.compare(out, Buffer.concat(lines))).toBe(0);
  expect(b.total).toBe(0);
  expect(b.take().length).toBe(0);
});

test("the bytes taken are the batch's own: the lines' buffers and later batches do not change them", () => {
  const b = new LineBatch();
  const shared = line(100, 1); // a line writer reuses its buffer from row to row
  b.add(shared);
  shared.fill(2);
  b.add(shared);
  const first = b.take();
  const copy = Uint8Array.from(first);
  shared.fill(3);
  b.add(shared);
  b.add(line(KEEP_MAX + 1, 4));
  const second = b.take();
  expect(Buffer.compare(first, copy)).toBe(0);
  expect(first.subarray(0, 100).every((x) => x === 1)).toBe(true);
  expect(first.subarray(100).every((x) => x === 2)).toBe(true);
  expect(second[0]).toBe(3);
  // A line too long for the kept buffer, alone in its batch, is copied too.
  const long = line(KEEP_MAX + 1, 5);
  b.add(long);
  long.fill(6);
  expect(b.take().every((x) => x === 5)).toBe(true);
});

test("clear forgets what was added", () => {
  const b = new LineBatch();
  b.add(line(10, 1));
  b.add(line(KEEP_MAX + 1, 2));
  b.clear();
  b.add(line(3, 9));
  expect([...b.take()]).toEqual([9, 9, 9]);
});
