/**
 * The report's line tap: it must hand the reader every byte unchanged and give
 * back each line as the file holds it, wherever the chunks split it.
 */
import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { LineTap } from "../../src/report/line-tap.ts";
import { tempDir } from "../helpers/proc.ts";

const dir = tempDir("seam-line-tap-");

test.each([
  ["lines that end with the file", ["{}", '{"a": 1}', '{"b": "é"}'], true],
  ["a last line without a newline", ["{}", '{"a": 1}'], false],
  ["a line longer than a chunk", ["{}", `{"big": "${"x".repeat(3 << 20)}"}`, "{}"], true],
  ["blank lines and a CR before the newline", ["{}", "", '{"a": 1}\r', "   "], true],
] as [string, string[], boolean][])("%s", async (_name, lines, endsWithNewline) => {
  const path = join(dir, `${lines.length}-${endsWithNewline}-${lines[1]!.length}.jsonl`);
  const text = lines.join("\n") + (endsWithNewline ? "\n" : "");
  writeFileSync(path, text);
  const tap = new LineTap();
  const seen: Uint8Array[] = [];
  const found: (string | null)[] = [];
  let line = 0;
  for await (const chunk of tap.chunks(path)) {
    seen.push(chunk);
    // Asked right after each chunk, as the reader asks: every line completed so far is there.
    const done = Buffer.concat(seen).toString("utf8").split("\n").length - 1;
    while (line < done) found.push(tap.text(++line));
  }
  while (line < lines.length) found.push(tap.text(++line));
  expect(Buffer.concat(seen).toString("utf8")).toBe(text);
  expect(found).toEqual(lines);
  expect(tap.text(lines.length + 1)).toBeNull();
});

test("a line chunks back is forgotten: the caller falls back to the parsed row", async () => {
  const path = join(dir, "many.jsonl");
  // About 10 MiB: more chunks than the tap keeps.
  writeFileSync(
    path,
    `${Array.from({ length: 100_000 }, (_, i) => `{"i": ${i}, "pad": "${"p".repeat(80)}"}`).join("\n")}\n`,
  );
  const tap = new LineTap();
  for await (const _ of tap.chunks(path)) {
  }
  expect(tap.text(1)).toBeNull();
  expect(tap.text(100_000)).toBe(`{"i": 99999, "pad": "${"p".repeat(80)}"}`);
  expect(Buffer.from(tap.bytes(99_999)!).toString()).toBe(`{"i": 99998, "pad": "${"p".repeat(80)}"}`);
});
