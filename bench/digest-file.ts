/**
 * `seam digest` of one big JSON file, as ratios against doing the same job
 * with each runtime's own JSON on the same file in the same run:
 *   JSON.parse + JSON.stringify + SHA-256 (Bun and Node; not canonical, a floor)
 *   json.loads + json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False) + SHA-256
 *     in python3 when it exists (the reference recipe itself; its digest must equal seam's)
 * Every measurement is its own process; wall time and, under GNU time, peak RSS.
 *
 *   bun bench/digest-file.ts [--mb 100] [--runs 1] [--keep] [--smoke] [--json FILE]
 *
 * The file: a top-level array of MCP tools/call requests with unsorted keys,
 * ints, floats, non-ASCII and escapes. Build dist/ first (bun scripts/build.ts --exe)
 * to include the Node bundle and the compiled executable.
 */
import { spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, rmSync, statSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Flags, type Row, writeResult } from "./lib.ts";

const root = new URL("..", import.meta.url).pathname;
const argv = process.argv.slice(2);
const flag = (name: string, fallback: number) =>
  argv.includes(name) ? Number(argv[argv.indexOf(name) + 1]) : fallback;
const mb = flag("--mb", argv.includes("--smoke") ? 1 : 100);
const runs = flag("--runs", 1);
const keep = argv.includes("--keep");
const gnuTime = existsSync("/usr/bin/time");
const has = (cmd: string) => spawnSync("sh", ["-c", `command -v ${cmd}`]).status === 0;

const dir = mkdtempSync(join(tmpdir(), "seam-bench-digest-"));
const file = join(dir, "big.json");

function generate(path: string, bytes: number): number {
  const fd = openSync(path, "w");
  const words = [
    "weather",
    "héllo wörld",
    "日本語テキスト",
    "🔒 locked",
    "line\nbreak",
    'quote"d',
    "plain ascii search text of moderate length",
  ];
  let size = 0;
  let i = 0;
  let batch: string[] = [];
  writeSync(fd, "[");
  while (size < bytes) {
    const row =
      `{"jsonrpc":"2.0","id":${i},"method":"tools/call","params":{"name":"search","arguments":` +
      JSON.stringify({
        query: `${words[i % words.length]} ${i}`,
        limit: i % 100,
        score: (i % 997) / 13,
        tags: ["a", "b", String(i % 7)],
      }).replace(/}$/, "") +
      `,"ratio":${i % 11 ? (1.5e-7 * i).toString() : "1.0"},"big":${i % 5 ? i : "123456789012345678901234567890"},"nested":{"z":true,"y":null,"x":[1,2,3]}}}}`;
    batch.push(row);
    size += row.length + 1;
    i++;
    if (batch.length === 10_000) {
      writeSync(fd, (i > batch.length ? "," : "") + batch.join(","));
      batch = [];
    }
  }
  if (batch.length) writeSync(fd, (i > batch.length ? "," : "") + batch.join(","));
  writeSync(fd, "]");
  closeSync(fd);
  return i;
}

const baselineJs = join(dir, "baseline.mjs");
writeFileSync(
  baselineJs,
  `import { readFileSync } from "node:fs";
import { createHash } from "node:crypto";
const text = readFileSync(process.argv[2], "utf8");
console.log(createHash("sha256").update(JSON.stringify(JSON.parse(text))).digest("hex"));
`,
);
const baselinePy = `import hashlib, json, sys
v = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))
c = json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
print("sha256:json-c14n:v1:" + hashlib.sha256(c.encode("utf-8")).hexdigest())
`;

interface Result {
  seconds: number;
  rssMb?: number;
  out: string;
}

function measure(cmd: string[]): Result | undefined {
  let best: Result | undefined;
  for (let r = 0; r < runs; r++) {
    const argvFull = gnuTime ? ["/usr/bin/time", "-f", "%e %M", ...cmd] : cmd;
    const t0 = performance.now();
    const p = spawnSync(argvFull[0]!, argvFull.slice(1), { encoding: "utf8", maxBuffer: 1 << 26 });
    const wall = (performance.now() - t0) / 1000;
    if (p.status !== 0) {
      console.error(`  ${cmd.join(" ")} failed (${p.status}): ${p.stderr.trim().split("\n").slice(-3).join(" | ")}`);
      return undefined;
    }
    let rssMb: number | undefined;
    if (gnuTime) {
      const last = p.stderr.trim().split("\n").pop()!.split(" ");
      rssMb = Number(last[1]) / 1024;
    }
    const res = { seconds: wall, rssMb, out: p.stdout.trim() };
    if (!best || res.seconds < best.seconds) best = res;
  }
  return best;
}

console.log(`generating ${mb} MB in ${dir} …`);
const rows = generate(file, mb * 1e6);
const size = statSync(file).size;
console.log(`${rows} rows, ${(size / 1e6).toFixed(1)} MB; best of ${runs} run(s) each\n`);

const bun = process.execPath;
const cases: [string, string[]][] = [
  ["seam digest (bun, source)", [bun, join(root, "commands/seam.ts"), "digest", file]],
];
if (existsSync(join(root, "dist/seam.mjs")) && has("node"))
  cases.push(["seam digest (node bundle)", ["node", join(root, "dist/seam.mjs"), "digest", file]]);
if (existsSync(join(root, "dist/seam")))
  cases.push(["seam digest (compiled exe)", [join(root, "dist/seam"), "digest", file]]);
cases.push(["JSON.parse+stringify+sha256 (bun)", [bun, baselineJs, file]]);
if (has("node")) cases.push(["JSON.parse+stringify+sha256 (node)", ["node", baselineJs, file]]);
const python = has("python3");
if (python) cases.push(["python3 json loads+dumps+sha256", ["python3", "-c", baselinePy, file]]);

const results = new Map<string, Result>();
for (const [name, cmd] of cases) {
  const r = measure(cmd);
  if (r) results.set(name, r);
}

const pad = (s: string, n: number) => s.padEnd(n);
const baselineFor = (name: string) =>
  results.get(name.includes("node") ? "JSON.parse+stringify+sha256 (node)" : "JSON.parse+stringify+sha256 (bun)");
const py = results.get("python3 json loads+dumps+sha256");
console.log(
  `${pad("", 38)} ${pad("seconds", 9)} ${pad("peak RSS (x file)", 18)} ${pad("vs JSON same runtime", 22)} vs python3`,
);
for (const [name, r] of results) {
  const base = name.startsWith("seam") ? baselineFor(name) : undefined;
  const vsBase = base ? `${(r.seconds / base.seconds).toFixed(2)}x the time` : "";
  const vsPy = py && name.startsWith("seam") ? `${(r.seconds / py.seconds).toFixed(2)}x the time` : "";
  const rss = r.rssMb === undefined ? "" : `${r.rssMb.toFixed(0)} MB (${(r.rssMb / (size / 2 ** 20)).toFixed(1)}x)`;
  console.log(`${pad(name, 38)} ${pad(r.seconds.toFixed(2), 9)} ${pad(rss, 18)} ${pad(vsBase, 22)} ${vsPy}`);
}
if (py) {
  const agree = [...results].filter(([n]) => n.startsWith("seam")).every(([, r]) => r.out === py.out);
  console.log(`\nseam's digest ${agree ? "equals" : "DIFFERS FROM"} python3's: ${py.out}`);
  if (!agree) process.exitCode = 1;
}
const summary: Row[] = [];
for (const [name, r] of results) {
  if (!name.startsWith("seam")) continue;
  const speedup = py ? py.seconds / r.seconds : undefined;
  summary.push({
    section: `digest (${(size / 1e6).toFixed(0)} MB JSON file)`,
    name,
    value: `${(size / 1e6 / r.seconds).toFixed(0)} MB/s${r.rssMb === undefined ? "" : `, peak RSS ${r.rssMb.toFixed(0)} MB`}`,
    ratio: speedup === undefined ? undefined : `${speedup.toFixed(1)}x python3's speed`,
    goal: speedup === undefined ? undefined : "≥ 5x python3",
    met: speedup === undefined ? undefined : speedup >= 5,
  });
}
writeResult(new Flags(argv), {
  script: "digest",
  rows: summary,
  details: {
    bytes: size,
    rows,
    runs,
    results: Object.fromEntries([...results].map(([n, r]) => [n, { seconds: r.seconds, rss_mb: r.rssMb }])),
  },
});
if (keep) console.log(`kept ${dir}`);
else rmSync(dir, { recursive: true, force: true });
