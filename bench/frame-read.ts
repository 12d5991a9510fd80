/**
 * The cost of reading a client frame as every JSON stack reads it
 * (src/observe/frame-reading.ts), side by side in the same run with the read it
 * replaced (strict UTF-8 decode + parseJson, nothing else), on frames of the
 * common case: a small tools/call, one with 4 KiB of text arguments, and an
 * answer-sized 20 KiB one. Reports the best ns per frame of interleaved
 * batches, and the ratio.
 *
 *   bun bench/frame-read.ts [--smoke]
 */
import { parseJson } from "../src/core/json.ts";
import { readFrame } from "../src/observe/frame-reading.ts";
import { Flags } from "./lib.ts";

const flags = new Flags();
const smoke = flags.has("--smoke");
const enc = new TextEncoder();
const strict = new TextDecoder("utf-8", { fatal: true });

const call = (args: string) =>
  enc.encode(
    `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"read_text_file","arguments":${args},"_meta":{"progressToken":7}}}`,
  );
const cases: [string, Uint8Array][] = [
  ["small call", call(`{"path":"/home/user/notes/today.md","head":20}`)],
  ["4 KiB call", call(JSON.stringify({ text: "lorem ipsum dolor sit amet ".repeat(150), n: [1, 2.5, -3] }))],
  ["20 KiB call", call(JSON.stringify({ rows: Array.from({ length: 800 }, (_, i) => ({ i, v: `value ${i}` })) }))],
];

/** CPU time of this process in ns (less swayed than wall time by other processes on a shared machine). */
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1000;
};

/**
 * Best of `rounds` batches, in CPU ns per call; batches of before and after
 * interleaved so that drifts in load hit both alike.
 */
function race(before: () => unknown, after: () => unknown, perBatch: number, rounds: number): [number, number] {
  let b = Infinity;
  let a = Infinity;
  for (let r = 0; r < rounds; r++) {
    let t = cpu();
    for (let i = 0; i < perBatch; i++) before();
    b = Math.min(b, (cpu() - t) / perBatch);
    t = cpu();
    for (let i = 0; i < perBatch; i++) after();
    a = Math.min(a, (cpu() - t) / perBatch);
  }
  return [b, a];
}

for (const [name, frame] of cases) {
  const perBatch = Math.max(10, Math.round((smoke ? 2e5 : 5e7) / frame.length));
  const [before, after] = race(
    () => parseJson(strict.decode(frame)),
    () => readFrame(frame, { readings: true }),
    perBatch,
    smoke ? 2 : 30,
  );
  console.log(
    `${name.padEnd(12)} ${frame.length.toString().padStart(6)} B   strict parse ${before.toFixed(0).padStart(8)} ns   readFrame ${after.toFixed(0).padStart(8)} ns   ${(after / before).toFixed(2)}x`,
  );
}
