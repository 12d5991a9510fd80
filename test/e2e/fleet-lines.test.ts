/**
 * What a shipper reads of a ledger file (src/fleet/lines.ts): complete lines
 * only, each with its "\n" and exactly the file's bytes, from a byte offset,
 * within the line and byte limits, and however the lines fall across reads.
 */
import { describe, expect, test } from "bun:test";
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LineIndex, offsetAfterLine, readLines } from "../../src/fleet/lines.ts";
import { tempDir } from "../helpers/proc.ts";

const dec = new TextDecoder();
const MiB = 1 << 20;

/** A file of `lines` (each ending in "\n") and then `tail` (a line still being written). */
function ledgerFile(lines: string[], tail = ""): string {
  const path = join(tempDir("seam-fleet-lines-"), "l.jsonl");
  writeFileSync(path, lines.join("") + tail);
  return path;
}

/** Lines of varied lengths, some longer than one read of the file. */
function manyLines(n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++)
    out.push(`${i}:${"x".repeat((i * 7919) % 300)}${i % 5000 === 4999 ? "y".repeat(MiB + 17) : ""}\n`);
  return out;
}

describe("readLines", () => {
  const few = ["a\n", "bc\n", "\n", "d€\n"];
  const cases: [string, string[], string, number, number, number, string[]][] = [
    // name, lines, tail, from, maxLines, maxBytes, lines expected
    ["every complete line from the start", few, "", 0, 100, MiB, few],
    ["a last line without its newline is left for later", few, "e{", 0, 100, MiB, few],
    ["nothing yet when no complete line follows", [], "half a line", 0, 100, MiB, []],
    ["from a byte offset", few, "", 2, 100, MiB, few.slice(1)],
    ["at most maxLines", few, "", 0, 2, MiB, few.slice(0, 2)],
    ["maxBytes reached: the line that reached it is the last", few, "", 0, 100, 4, few.slice(0, 2)],
    ["maxBytes below one line still gives that line", few, "", 5, 100, 1, ["\n"]],
  ];
  for (const [name, lines, tail, from, maxLines, maxBytes, expected] of cases) {
    test(name, async () => {
      const b = await readLines(ledgerFile(lines, tail), from, maxLines, maxBytes);
      expect(b.lines.map((l) => dec.decode(l))).toEqual(expected);
      expect(b.next).toBe(from + Buffer.byteLength(expected.join("")));
    });
  }

  test("lines across many reads, some longer than a read, come back exactly, batch after batch", async () => {
    const lines = manyLines(20_000);
    const path = ledgerFile(lines, "torn");
    const got: string[] = [];
    let offset = 0;
    for (;;) {
      const b = await readLines(path, offset, 3000, 2 * MiB);
      if (b.lines.length === 0) break;
      expect(b.lines.every((l) => l[l.length - 1] === 0x0a)).toBe(true);
      got.push(...b.lines.map((l) => dec.decode(l)));
      offset = b.next;
    }
    expect(got.length).toBe(lines.length);
    expect(got.findIndex((l, i) => l !== lines[i])).toBe(-1);
    expect(offset).toBe(Buffer.byteLength(lines.join("")));
  });
});

describe("offsetAfterLine", () => {
  const lines = manyLines(10_000);
  const path = ledgerFile(lines, "torn");
  const cases: [number, boolean][] = [
    [0, true],
    [1, true],
    [4999, true],
    [5000, true],
    [10_000, true],
    [10_001, false],
  ];
  for (const [n, found] of cases) {
    test(`after line ${n}`, async () => {
      const at = await offsetAfterLine(path, n);
      if (!found) return expect(at).toBeNull();
      expect(at!.offset).toBe(Buffer.byteLength(lines.slice(0, n).join("")));
      expect(at!.line === null ? null : dec.decode(at!.line)).toBe(n === 0 ? null : lines[n - 1]!);
    });
  }
});

describe("LineIndex", () => {
  test("any line by number, asked in order, backwards, at random and past the end, while the file grows", async () => {
    const lines = manyLines(12_000);
    const half = lines[9000]!.slice(0, 3);
    const path = ledgerFile(lines.slice(0, 9000), half);
    const index = new LineIndex(path);
    const got = async (n: number) => {
      const l = await index.line(n);
      return l === null ? null : dec.decode(l);
    };
    let seed = 7;
    const random = () => (seed = (seed * 48271) % 2147483647) % 9000;
    const orders: [string, number[]][] = [
      ["in order", Array.from({ length: 9000 }, (_, i) => i + 1)],
      ["backwards", Array.from({ length: 9000 }, (_, i) => 9000 - i)],
      ["at random", Array.from({ length: 2000 }, () => random() + 1)],
    ];
    for (const [order, ns] of orders) {
      const wrong = [];
      for (const n of ns) if ((await got(n)) !== lines[n - 1]) wrong.push(n);
      expect([order, wrong.slice(0, 5)]).toEqual([order, []]);
    }
    // The line being written is not there yet, nor any after it; once complete, they are.
    expect([await got(9001), await got(9002), await got(0)]).toEqual([null, null, null]);
    appendFileSync(path, lines.slice(9000).join("").slice(half.length));
    expect(await got(9001)).toBe(lines[9000]!);
    expect(await got(12_000)).toBe(lines[11_999]!);
    expect(await got(12_001)).toBe(null);
    expect(await got(4999)).toBe(lines[4998]!);
  });
});
