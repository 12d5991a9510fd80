/**
 * The one line splitter (src/core/lines.ts): the same parts however the
 * bytes are chunked, never more than maxKept bytes of a line copied, and
 * `raw` giving back the stream exactly.
 */
import { describe, expect, test } from "bun:test";
import { GROW_FROM, LineSplitter } from "../../src/core/lines.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Splits `text` fed in `pieces` (lengths; the rest in one last piece); parts as short strings. */
function split(text: string, maxKept: number, pieces: number[] = [], fresh = false): { parts: string[]; raw: string } {
  const bytes = enc.encode(text);
  const s = new LineSplitter(maxKept, fresh);
  const parts: string[] = [];
  let raw = "";
  const drain = () => {
    for (let p = s.next(); p !== null; p = s.next()) {
      raw += dec.decode(p.raw);
      const tail = p.kind === "long" ? `:${p.length}` : "";
      parts.push(`${p.kind}${p.kind === "over" || p.ends ? "" : "?"} ${dec.decode(p.bytes)}${tail}`);
    }
  };
  let at = 0;
  for (const n of [...pieces, bytes.length]) {
    s.feed(bytes.slice(at, Math.min(bytes.length, at + n)));
    drain();
    at = Math.min(bytes.length, at + n);
  }
  s.end();
  drain();
  return { parts, raw };
}

describe("LineSplitter", () => {
  const cases: [string, string, number, number[], string[]][] = [
    ["lines in one chunk", "a\nbc\n", 10, [], ["line a", "line bc"]],
    ["an empty line is a line", "\n\n", 10, [], ["line ", "line "]],
    ["an unterminated last line comes at end", "a\nbc", 10, [], ["line a", "line? bc"]],
    ["a line across chunks is joined", "abcd\n", 10, [1, 1, 1], ["line abcd"]],
    ["a line in one chunk is whole however long", "abcdefgh\n", 2, [], ["line abcdefgh"]],
    [
      "a line that outgrows maxKept is handed on in pieces, then closed",
      "abcdefgh\nx\n",
      4,
      [3, 3],
      ["over abc", "over def", "long gh:8", "line x"],
    ],
    ["kept up to maxKept exactly, then joined", "abcd\n", 4, [2, 2], ["line abcd"]],
    ["maxKept 0: every open line streams", "ab\ncd", 0, [1, 3], ["over a", "long b:2", "over c", "over d", "long? :2"]],
    ["U+2028 does not split", "a\u2028b\n", 10, [], ["line a\u2028b"]],
    ["\\r stays in the line", "a\r\n", 10, [], ["line a\r"]],
  ];
  for (const [name, text, max, pieces, parts] of cases) {
    test(name, () => {
      const r = split(text, max, pieces);
      expect(r.parts).toEqual(parts);
      expect(r.raw).toBe(text);
    });
  }

  test("every chunking of a stream gives the same lines, and raw gives back every byte", () => {
    const text = "first\n\nsecond line\nthird, a longer one than the rest\nlast";
    const want = split(text, 1000).parts;
    for (let seed = 1; seed < 300; seed++) {
      const pieces: number[] = [];
      let x = seed;
      for (let n = 0; n < text.length; n += pieces.at(-1)!) {
        x = (x * 1103515245 + 12345) & 0x7fffffff;
        pieces.push(1 + (x % 9));
      }
      const r = split(text, 1000, pieces);
      expect(r.parts).toEqual(want);
      expect(r.raw).toBe(text);
    }
  });

  test("a kept piece is a copy: the chunk's buffer may be reused", () => {
    const s = new LineSplitter(100);
    const buf = enc.encode("abc");
    s.feed(buf);
    expect(s.next()).toBeNull();
    buf.fill(0x7a);
    s.feed(enc.encode("d\n"));
    expect(dec.decode(s.next()!.bytes)).toBe("abcd");
  });

  test("with freshChunks a kept piece is a view of its chunk, not a copy (the source never reuses one)", () => {
    const s = new LineSplitter(100, true);
    const buf = enc.encode("abc");
    s.feed(buf);
    expect(s.next()).toBeNull();
    buf.fill(0x7a); // only to show that no copy was taken: a fresh-chunk source never does this
    s.feed(enc.encode("d\n"));
    expect(dec.decode(s.next()!.bytes)).toBe("zzzd");
    // and the parts are the same as without it, however the stream is chunked
    const text = "one\ntwo across\nthree\nlast";
    const fresh = new LineSplitter(100, true);
    const got: string[] = [];
    for (let i = 0; i < text.length; i += 3) {
      fresh.feed(enc.encode(text.slice(i, i + 3)));
      for (let p = fresh.next(); p !== null; p = fresh.next()) got.push(dec.decode(p.bytes));
    }
    fresh.end();
    for (let p = fresh.next(); p !== null; p = fresh.next()) got.push(dec.decode(p.bytes));
    expect(got).toEqual(["one", "two across", "three", "last"]);
  });

  // Past GROW_FROM an open line of fresh chunks goes on in one buffer that grows: the parts and raw
  // must be those of the copying splitter, however the line is cut, wherever maxKept falls.
  const long = (n: number, c: string) => Array.from({ length: n }, (_, i) => c + (i % 10)).join("");
  const big = `a\n${long(GROW_FROM, "x")}\n${long(GROW_FROM / 2 + 7, "y")}\nb\n${long(GROW_FROM + 3, "z")}`;
  // One line of 1.5 MiB and its "\n", then a short one: cut where it has grown, and where maxKept falls.
  const one = `${long((3 * GROW_FROM) / 4, "w")}\nv\n`;
  const M = GROW_FROM / 4;
  test.each([
    ["in chunks of a MiB", big, 8 * GROW_FROM, Array(8).fill(GROW_FROM)],
    ["in uneven chunks", big, 8 * GROW_FROM, [5, GROW_FROM + 1, 3, 7 * 65536, GROW_FROM * 0.75, 2, GROW_FROM]],
    ["in small chunks", big, 8 * GROW_FROM, Array(300).fill(20_011)],
    ["maxKept just over GROW_FROM", big, GROW_FROM + 1, Array(40).fill(65_537)],
    ["over maxKept after it grew", one, 5 * M + 10, [5 * M, M]],
    ["over maxKept only by its last piece", one, 5 * M + 10, [5 * M]],
    ["up to maxKept exactly", one, 6 * M, [5 * M]],
  ] as [string, string, number, number[]][])(
    "fresh chunks, lines past GROW_FROM %s: as when copied",
    (_, text, max, pieces) => {
      const copied = split(text, max, pieces);
      const fresh = split(text, max, pieces, true);
      expect(fresh.parts.length).toBe(copied.parts.length);
      expect(fresh.parts).toEqual(copied.parts);
      expect(fresh.raw).toBe(text);
    },
  );
});
