/**
 * The picture of a report in docs/report.md and the README: `seam demo`, then `seam report` of its
 * ledger, opened in headless Chromium (the system's), one call selected.
 *
 *   bun scripts/report-screenshot.ts docs/report.png
 *
 * Runs in a temporary directory, so the page names the ledger as
 * `seam-demo.jsonl`, as it would for anyone who ran the two commands.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Browser, CHROMIUM, NO_BROWSER_REASON } from "../test/helpers/browser.ts";

const target = process.argv[2];
if (target === undefined) {
  console.error("usage: bun scripts/report-screenshot.ts OUT.png");
  process.exit(2);
}
if (CHROMIUM === null) {
  console.error(NO_BROWSER_REASON);
  process.exit(1);
}
const root = new URL("..", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "seam-shot-"));
const seam = [process.execPath, `${root}commands/seam.ts`];
for (const args of [
  ["demo", "--ledger", "seam-demo.jsonl"],
  ["report", "seam-demo.jsonl", "--out", "report.html"],
]) {
  const r = spawnSync(seam[0]!, [...seam.slice(1), ...args], { cwd: dir, stdio: ["ignore", "ignore", "inherit"] });
  if (r.status !== 0) {
    console.error(`seam ${args.join(" ")} exited ${r.status}`);
    process.exit(1);
  }
}
const browser = await Browser.launch(CHROMIUM);
try {
  const o = await browser.open(join(dir, "report.html"));
  await o.page.setViewportSize({ width: 1280, height: 860 });
  await o.page.click('.trow[data-line="6"]');
  await o.page.screenshot({ path: resolve(target) });
} finally {
  await browser.close();
  rmSync(dir, { recursive: true, force: true });
}
console.log(`wrote ${target}`);
