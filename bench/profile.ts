/**
 * Sums up a .cpuprofile (Chrome's format, what `bun --cpu-prof` and
 * `node --cpu-prof` write): the functions that took the most time themselves
 * (self) and with what they called (total), each as `name file:line`.
 *
 *   bun bench/profile.ts FILE.cpuprofile [--top 25] [--under PATTERN]
 * --under keeps only samples with a frame whose function or file matches
 * PATTERN on the stack, to see what one part costs (e.g. --under flush).
 */
import { readFileSync } from "node:fs";
import { Flags } from "./lib.ts";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const flags = new Flags();
const file = process.argv[2];
if (!file || file.startsWith("--")) {
  console.error("usage: bun bench/profile.ts FILE.cpuprofile [--top 25] [--under PATTERN]");
  process.exit(2);
}
const top = flags.number("--top", 25);
const under = flags.string("--under");
const p = JSON.parse(readFileSync(file, "utf8")) as Profile;

const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const label = (n: Node) => {
  const f = n.callFrame;
  const where = f.url ? `${f.url.replace(/^.*\/(src|commands|bench|node_modules)\//, "$1/")}:${f.lineNumber + 1}` : "";
  return `${f.functionName || "(anonymous)"} ${where}`.trim();
};

const self = new Map<string, number>();
const total = new Map<string, number>();
let all = 0;
for (let i = 0; i < p.samples.length; i++) {
  const dt = p.timeDeltas[i + 1] ?? 0; // a sample's time is the gap to the next one
  const stack: Node[] = [];
  for (let id: number | undefined = p.samples[i]; id !== undefined; id = parent.get(id)) stack.push(byId.get(id)!);
  if (under && !stack.some((n) => label(n).includes(under))) continue;
  all += dt;
  self.set(label(stack[0]!), (self.get(label(stack[0]!)) ?? 0) + dt);
  for (const l of new Set(stack.map(label))) total.set(l, (total.get(l) ?? 0) + dt);
}

const ms = (us: number) => `${(us / 1000).toFixed(0).padStart(7)} ms ${((100 * us) / all).toFixed(1).padStart(5)}%`;
console.log(`${file}: ${(all / 1000).toFixed(0)} ms sampled${under ? ` under ${under}` : ""}`);
for (const [title, m] of [
  ["self", self],
  ["total (self + callees)", total],
] as const) {
  console.log(`\n${title}`);
  for (const [name, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${ms(us)}  ${name}`);
}
