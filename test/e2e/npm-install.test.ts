/**
 * The published form: `npm install -g` of the packed seam-mcp beside this
 * platform's seam-mcp-<id> package runs the compiled executable; without it
 * (or with SEAM_NATIVE=0) the Node bundle runs. Which one ran is read from
 * the process itself: the server `seam wrap` starts reads its parent's
 * /proc/<pid>/exe. Runs when dist/npm/ holds the tarballs (`npm run
 * build:release`), on Linux.
 */
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
// @ts-expect-error: plain JavaScript, no declarations
import { platformId } from "../../npm/seam.mjs";
import { platformPackage, RELEASE_TARGETS, targetFor } from "../../src/release/targets.ts";
import { ROOT } from "../helpers/cli.ts";
import { tempDir } from "../helpers/proc.ts";

const VERSION = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version;
const MAIN = join(ROOT, `dist/npm/seam-mcp-${VERSION}.tgz`);
const HOST = targetFor(process.platform, process.arch, "glibc");
const PLATFORM = HOST && join(ROOT, `dist/npm/${platformPackage(HOST)}-${VERSION}.tgz`);

test("the launcher names each target's package as the target table does", () => {
  for (const t of RELEASE_TARGETS) expect(`seam-mcp-${platformId(t.os, t.cpu, t.libc)}`).toBe(platformPackage(t));
});

/** Installs the tarballs into a fresh global prefix; the path of its `seam`. */
function installGlobal(prefix: string, tarballs: string[]): string {
  const r = spawnSync(
    "npm",
    ["install", "-g", "--prefix", prefix, "--offline", "--no-audit", "--no-fund", "--ignore-scripts", ...tarballs],
    { encoding: "utf8" },
  );
  if (r.status !== 0) throw new Error(`npm install -g failed: ${r.stderr}`);
  return join(prefix, "bin", "seam");
}

/** The executable of the process that ran `seam wrap`. */
function whoRan(seam: string, env: Record<string, string> = {}): string {
  const dir = tempDir("seam-npm-ran-");
  try {
    const r = spawnSync(
      seam,
      ["wrap", "--ledger", join(dir, "l.jsonl"), "--", "sh", "-c", 'readlink "/proc/$PPID/exe" >&2'],
      {
        encoding: "utf8",
        input: "",
        env: { ...process.env, ...env },
      },
    );
    expect(r.status).toBe(0);
    return r.stderr.trim().split("\n").at(-1)!;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.skipIf(process.platform !== "linux" || !existsSync(MAIN) || !PLATFORM || !existsSync(PLATFORM))(
  "npm install -g of dist/npm/",
  () => {
    test("the main package stays under 1 MiB", () => expect(statSync(MAIN).size).toBeLessThan(1 << 20));

    test("with the platform package: the compiled executable runs; SEAM_NATIVE=0: the Node bundle", () => {
      const prefix = tempDir("seam-npm-g-");
      try {
        const seam = installGlobal(prefix, [MAIN, PLATFORM!]);
        expect(whoRan(seam)).toBe(join(prefix, `lib/node_modules/${platformPackage(HOST!)}/bin/seam`));
        expect(whoRan(seam, { SEAM_NATIVE: "0" })).toMatch(/\/node$/);
      } finally {
        rmSync(prefix, { recursive: true, force: true });
      }
    }, 120_000);

    test("without it: the Node bundle runs", () => {
      const prefix = tempDir("seam-npm-g-");
      try {
        const seam = installGlobal(prefix, [MAIN]);
        expect(whoRan(seam)).toMatch(/\/node$/);
      } finally {
        rmSync(prefix, { recursive: true, force: true });
      }
    }, 120_000);
  },
);
