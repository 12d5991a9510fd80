/// <reference lib="dom" />
/**
 * A real headless Chromium for the HTML tests: the system's own (Debian's
 * `chromium` package), driven by playwright-core, which never downloads a
 * browser. Each page records every network request, every dialog, console
 * errors, page errors and Content-Security-Policy violations, so a test can
 * assert that none happened.
 */
import { existsSync, rmSync } from "node:fs";
import { delimiter, join } from "node:path";
import { pathToFileURL } from "node:url";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { tempDir } from "./proc.ts";

/** The system Chromium: $SEAM_CHROMIUM, else `chromium` or `chromium-browser` on PATH; null when there is none. */
export function findChromium(): string | null {
  const env = process.env.SEAM_CHROMIUM;
  if (env) return existsSync(env) ? env : null;
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    for (const name of ["chromium", "chromium-browser"]) {
      const p = join(dir, name);
      if (dir && existsSync(p)) return p;
    }
  }
  return null;
}

export const CHROMIUM = findChromium();
export const NO_BROWSER_REASON =
  "no chromium found on PATH (install Debian's chromium package: apt-get install chromium; .ci/run does): the browser tests are skipped";

export interface Opened {
  page: Page;
  /** Every request the page made, the document itself included. */
  requests: string[];
  dialogs: string[];
  errors: string[];
  violations: string[];
}

export class Browser {
  private constructor(
    private readonly ctx: BrowserContext,
    private readonly dir: string,
  ) {}

  static async launch(executable: string): Promise<Browser> {
    const dir = tempDir("seam-chromium-");
    const ctx = await chromium.launchPersistentContext(dir, {
      executablePath: executable,
      headless: true,
      viewport: { width: 1400, height: 1000 },
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
      ],
    });
    return new Browser(ctx, dir);
  }

  /** Opens a file:// URL and waits until the page says it is ready (all operations read). */
  async open(file: string, timeoutMs = 60_000): Promise<Opened> {
    const page = await this.ctx.newPage();
    const o: Opened = { page, requests: [], dialogs: [], errors: [], violations: [] };
    page.on("request", (r) => o.requests.push(r.url()));
    page.on("dialog", (d) => {
      o.dialogs.push(`${d.type()}: ${d.message()}`);
      void d.dismiss().catch(() => {});
    });
    page.on("pageerror", (e) => o.errors.push(e.message));
    page.on("console", (m) => {
      if (m.type() === "error") o.errors.push(m.text());
    });
    await page.exposeBinding("__seamViolation", (_s, text: string) => o.violations.push(text));
    await page.addInitScript(() => {
      document.addEventListener("securitypolicyviolation", (e) =>
        (window as unknown as { __seamViolation(t: string): void }).__seamViolation(
          `${e.violatedDirective} ${e.blockedURI}`,
        ),
      );
    });
    await page.goto(pathToFileURL(file).href, { timeout: timeoutMs });
    await page.waitForSelector("body[data-ready]", { timeout: timeoutMs });
    return o;
  }

  async close(): Promise<void> {
    await this.ctx.close().catch(() => {});
    rmSync(this.dir, { recursive: true, force: true });
  }
}
