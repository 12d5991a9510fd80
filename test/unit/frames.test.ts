import { describe, expect, test } from "bun:test";
import { digestBytes } from "../../src/core/digest.ts";
import { FrameSplitter, type LongFrame } from "../../src/observe/frames.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Splits `input` fed in the given pieces; returns frames as strings and oversize lengths. */
function split(pieces: string[], maxFrame = 1 << 20) {
  const frames: string[] = [];
  const oversize: number[] = [];
  const s = new FrameSplitter(maxFrame, {
    frame: (b, terminated) => frames.push(dec.decode(b) + (terminated ? "⏎" : "∎")),
    oversize: (n) => oversize.push(n),
  });
  for (const p of pieces) s.push(enc.encode(p));
  s.end();
  return { frames, oversize };
}

describe("FrameSplitter", () => {
  const cases: [string, string[], number, string[], number[]][] = [
    ["one frame", ["a\n"], 100, ["a⏎"], []],
    ["CR stays in the frame", ["a\r\nb\n"], 100, ["a\r⏎", "b⏎"], []],
    ["blank lines are frames", ["\n\n"], 100, ["⏎", "⏎"], []],
    ["split across reads", ["ab", "c", "d\ne"], 100, ["abcd⏎", "e∎"], []],
    ["unterminated final frame", ["x"], 100, ["x∎"], []],
    ["exactly maxFrame is observed", ["abcd\n"], 4, ["abcd⏎"], []],
    ["maxFrame + 1 is not, in one read", ["abcde\nz\n"], 4, ["z⏎"], [5]],
    ["maxFrame + 1 is not, across reads", ["ab", "cd", "e", "\nz\n"], 4, ["z⏎"], [5]],
    ["limit crossed by the newline-bearing read", ["abc", "de\n"], 4, [], [5]],
    ["oversize unterminated final frame", ["abcdefgh"], 4, [], [8]],
    ["many frames in one read", ["1\n2\n3\n"], 100, ["1⏎", "2⏎", "3⏎"], []],
  ];
  test.each(cases)("%s", (_name, pieces, max, frames, oversize) => {
    expect(split(pieces, max)).toEqual({ frames, oversize });
  });

  test("a frame is delivered whole whatever the read boundaries", () => {
    const text = `{"a":"${"é".repeat(500)}"}\n{"b":1}\nlast`;
    const bytes = enc.encode(text);
    for (const size of [1, 2, 3, 7, 64, 1000, bytes.length]) {
      const pieces: Uint8Array[] = [];
      for (let i = 0; i < bytes.length; i += size) pieces.push(bytes.slice(i, i + size));
      const got: string[] = [];
      const s = new FrameSplitter(1 << 20, { frame: (b) => got.push(dec.decode(b)), oversize: () => {} });
      for (const p of pieces) s.push(p);
      s.end();
      expect(got).toEqual(text.split("\n"));
    }
  });
});

test("a frame longer than maxFrame, with a longFrame sink: its length, digest and first 64 bytes, however the reads split it", () => {
  const long = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"s":"${"é".repeat(300)}"}}`;
  const bytes = new TextEncoder().encode(`${long}\n{"id":2}\n`);
  const whole = new TextEncoder().encode(long);
  for (const step of [1, 7, 64, 65, 200, bytes.length]) {
    const got: LongFrame[] = [];
    const frames: string[] = [];
    const s = new FrameSplitter(100, {
      frame: (f) => frames.push(new TextDecoder().decode(f)),
      oversize: () => {
        throw new Error("counted instead of described");
      },
      longFrame: (f) => got.push(f),
    });
    for (let i = 0; i < bytes.length; i += step) s.push(bytes.subarray(i, i + step));
    s.end();
    expect([step, got.length, frames]).toEqual([step, 1, ['{"id":2}']]);
    expect(got[0]!.length).toBe(whole.length);
    expect(got[0]!.digest).toBe(digestBytes(whole));
    expect(Buffer.from(got[0]!.head).equals(Buffer.from(whole.subarray(0, 64)))).toBe(true);
  }
});
