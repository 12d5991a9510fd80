/// <reference lib="dom" />
/**
 * How fast `seam report` writes the HTML of a big ledger, how big the file
 * is, and how soon headless Chromium paints it.
 *
 *   bun bench/report.ts [--rows 1000000] [--keep] [--smoke] [--json FILE]
 *
 * The ledger is bench/verify.ts's (wrap-shaped sessions of 400 calls).
 * Timed side by side, each as its own process under /usr/bin/time (wall
 * time, peak RSS), from source under Bun:
 *   verify   `seam verify --quiet` of the same file: the baseline (reading
 *            and verifying it is part of every report)
 *   report   `seam report --out FILE`
 * Then the report is opened from file:// in the system's Chromium (when
 * there is one) and the page's own Performance API says when it painted
 * first, when the banner was drawn, when the table first showed rows (a big
 * page shows what the browser has read while it reads the rest), when the
 * document was parsed and when every operation was in the table.
 */
import { spawnSync } from "node:child_process";
import { existsSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { Browser, CHROMIUM } from "../test/helpers/browser.ts";
import { Flags, ROOT, type Row, writeResult } from "./lib.ts";

const flags = new Flags();
const rowsWanted = flags.number("--rows", 1_000_000, 2_000);
const smoke = flags.has("--smoke");
const keep = flags.has("--keep");

if (!existsSync("/usr/bin/time")) {
  console.error("bench/report.ts needs /usr/bin/time (GNU time) for peak RSS");
  process.exit(2);
}

const made = spawnSync(process.execPath, [`${ROOT}bench/verify.ts`, "--rows", String(rowsWanted), "--generate-only"], {
  encoding: "utf8",
});
const ledger = /^kept (.+)$/m.exec(made.stdout)?.[1];
if (made.status !== 0 || ledger === undefined) {
  console.error(`bench/report.ts: the ledger was not generated: ${made.stderr}`);
  process.exit(1);
}
const dir = dirname(ledger);
const out = join(dir, "report.html");
const gen = { rows: rowsWanted };
const bytes = statSync(ledger).size;
console.log(`ledger: ${gen.rows.toLocaleString("en-US")} rows, ${(bytes / 1e6).toFixed(1)} MB`);

interface Timed {
  seconds: number;
  rssMB: number;
  code: number | null;
}

function timed(cmd: string[]): Timed {
  const r = spawnSync("/usr/bin/time", ["-f", "%e %M", ...cmd], {
    stdio: ["ignore", "ignore", "pipe"],
    maxBuffer: 1 << 26,
  });
  const [secs, kb] = r.stderr.toString().trim().split("\n").pop()!.split(" ").map(Number);
  return { seconds: secs!, rssMB: kb! / 1024, code: r.status };
}

const seam = [process.execPath, `${ROOT}commands/seam.ts`];
const verify = timed([...seam, "verify", "--quiet", ledger]);
const report = timed([...seam, "report", ledger, "--out", out]);
const size = existsSync(out) ? statSync(out).size : 0;
const rate = gen.rows / report.seconds;
console.log(
  `verify  ${verify.seconds.toFixed(2)} s, ${Math.round(gen.rows / verify.seconds).toLocaleString("en-US")} rows/s, peak RSS ${verify.rssMB.toFixed(0)} MB`,
);
console.log(
  `report  ${report.seconds.toFixed(2)} s, ${Math.round(rate).toLocaleString("en-US")} rows/s, peak RSS ${report.rssMB.toFixed(0)} MB, ${(size / 1e6).toFixed(1)} MB of HTML (${(size / bytes).toFixed(2)}x the ledger)${report.code === 0 ? "" : ` (exit ${report.code})`}`,
);

const section = `report (${gen.rows.toLocaleString("en-US")} rows, ${(bytes / 1e6).toFixed(0)} MB ledger)`;
const rows: Row[] = [
  {
    section,
    name: "seam report (bun), writing the HTML",
    value: `${Math.round(rate).toLocaleString("en-US")} rows/s, ${(size / 1e6).toFixed(1)} MB file, peak RSS ${report.rssMB.toFixed(0)} MB`,
    ratio: `${(report.seconds / verify.seconds).toFixed(1)}x the time of seam verify`,
    goal: "≥ 100,000 rows/s",
    met: rate >= 100_000 && report.code === 0,
  },
];

let paint: {
  fcp_ms: number | null;
  banner_ms: number | null;
  parsed_ms: number | null;
  table_ms: number | null;
  ready_ms: number | null;
} | null = null;
if (CHROMIUM === null) {
  console.log("first paint: skipped, no chromium on PATH");
} else if (report.code === 0) {
  const browser = await Browser.launch(CHROMIUM);
  try {
    const o = await browser.open(out, 600_000);
    paint = await o.page.evaluate(() => {
      const at = (name: string) => {
        const e = performance.getEntriesByName(name)[0];
        return e ? Math.round(e.startTime) : null;
      };
      const nav = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming | undefined;
      return {
        fcp_ms: at("first-contentful-paint"),
        banner_ms: at("seam-banner"),
        parsed_ms: nav ? Math.round(nav.domContentLoadedEventStart) : null,
        table_ms: at("seam-table"),
        ready_ms: at("seam-ready"),
      };
    });
    if (o.requests.length !== 1) console.log(`the page made ${o.requests.length - 1} network requests`);
  } finally {
    await browser.close();
  }
  console.log(
    `chromium: first contentful paint ${paint.fcp_ms} ms, banner drawn ${paint.banner_ms} ms, first rows in the table ${paint.table_ms} ms, document parsed ${paint.parsed_ms} ms, all read ${paint.ready_ms} ms`,
  );
  rows.push({
    section,
    name: "first paint in headless Chromium",
    value: `${paint.fcp_ms} ms (banner ${paint.banner_ms} ms, first rows ${paint.table_ms} ms, parsed ${paint.parsed_ms} ms, all read ${paint.ready_ms} ms)`,
    goal: "< 2 s",
    met: paint.fcp_ms !== null && paint.fcp_ms < 2000,
  });
}

writeResult(flags, {
  script: "report",
  rows,
  details: { rows: gen.rows, ledger_bytes: bytes, report_bytes: size, verify, report, paint, smoke },
});
if (keep) console.log(`kept ${dir}`);
else rmSync(dir, { recursive: true, force: true });
