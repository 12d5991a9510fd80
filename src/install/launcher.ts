/**
 * The launcher an installed entry runs: it has to outlast the run of
 * `seam install` that wrote it. A seam started by `npx seam …` lives in
 * npm's npx cache (`…/_npx/<hash>/node_modules/.bin/seam`), which npm
 * empties when it likes, and `bunx` / `pnpm dlx` / `yarn dlx` keep theirs
 * in temporary folders or caches alike; an entry pointing there breaks the
 * day the cache goes. So when the running seam is such a one, install
 * looks on PATH for a seam that is not (a global `npm install -g seam-mcp`,
 * the executable), checks that it answers `--version` as seam, and writes
 * that one; finding none, it refuses and says what to run.
 *
 * Pure but for the Probe, so that tests can lay out any PATH.
 */
import { spawnSync } from "node:child_process";
import { closeSync, openSync, readSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { posix, win32 } from "node:path";
import type { Os } from "./clients.ts";

export interface Probe {
  os: Os;
  /** The PATH entries, in order. */
  path: string[];
  /** Temporary folders (os.tmpdir(), $TMPDIR, %TEMP%, …): nothing under them lasts. */
  temp: string[];
  /** The file's real path (links followed), or null when there is no such file. */
  realpath(p: string): string | null;
  /** Whether the file starts with `#!` (a script its runtime runs), null when it cannot be read. */
  isScript(p: string): boolean | null;
  /** Whether `argv --version` prints seam's version line. */
  isSeam(argv: string[]): boolean;
}

export type Launcher =
  | {
      ok: true;
      argv: string[];
      /** Set when the running seam does not last and this one was found on PATH. */
      found?: string;
    }
  | { ok: false; error: string; hint: string };

/** Why a path does not last (npm's npx cache, a dlx cache, a temporary folder), or null. */
export function transientReason(file: string, probe: Pick<Probe, "os" | "temp" | "realpath">): string | null {
  const p = probe.os === "win32" ? win32 : posix;
  const seen = new Set([file, probe.realpath(file) ?? file]);
  for (const f of seen) {
    const parts = f.split(/[\\/]+/);
    if (parts.includes("_npx")) return "npm's npx cache";
    if (parts.some((x, i) => x === "dlx" && /pnpm/i.test(parts[i - 1] ?? ""))) return "pnpm's dlx cache";
    for (const t of probe.temp) {
      if (t === "") continue;
      const rel = p.relative(t, f);
      if (rel !== "" && !rel.startsWith("..") && !p.isAbsolute(rel)) return "a temporary folder";
    }
  }
  return null;
}

/** Why an installed entry's launcher (the command, and a runtime's script) does not last, or null. */
export function launcherTransience(
  launcher: string[],
  probe: Pick<Probe, "os" | "temp" | "realpath">,
): { reason: string; path: string } | null {
  const script = launcher.slice(1).find((a) => !a.startsWith("-"));
  for (const f of [launcher[0]!, ...(script ? [script] : [])]) {
    const reason = transientReason(f, probe);
    if (reason) return { reason, path: f };
  }
  return null;
}

/**
 * The argv an entry should run: `self` (how this seam was started) when it
 * lasts, else a lasting seam found on PATH, else a refusal naming the
 * command to run (`rerun`: the install command as the user typed it).
 */
export function durableLauncher(self: string[], probe: Probe, rerun: string): Launcher {
  // self is [runtime, ...runtime flags, script] or [executable], as an entry's launcher is.
  const transient = launcherTransience(self, probe);
  if (!transient) return { ok: true, argv: self };
  const runtimeLasts = self.length > 1 && transientReason(self[0]!, probe) === null;
  const p = probe.os === "win32" ? win32 : posix;
  const names = probe.os === "win32" ? ["seam.exe", "seam.cmd"] : ["seam"];
  for (const dir of probe.path) {
    if (dir === "" || !p.isAbsolute(dir)) continue;
    for (const name of names) {
      const candidate = p.join(dir, name);
      const real = probe.realpath(candidate);
      if (real === null || transientReason(candidate, probe)) continue;
      let argv: string[];
      if (probe.os === "win32" && name === "seam.cmd") {
        // npm's Windows shim: clients start a command without a shell, so run its script with node instead.
        const script = p.join(dir, "node_modules", "seam-mcp", "dist", "seam.mjs");
        if (!runtimeLasts || probe.realpath(script) === null) continue;
        argv = [self[0]!, script];
      } else {
        const script = probe.isScript(real);
        if (script === null) continue;
        // A script runs through this runtime (a client's PATH may not have the one its #! line asks for).
        argv = script && runtimeLasts ? [self[0]!, candidate] : [candidate];
      }
      if (probe.isSeam(argv)) return { ok: true, argv, found: candidate };
    }
  }
  return {
    ok: false,
    error: `this seam runs from ${transient.reason} (${transient.path}), which does not last; an entry pointing at it would stop working when it is cleared`,
    hint: `install seam for good and run it from there: npm install -g seam-mcp, then ${rerun}`,
  };
}

/** The PATH entries of an environment (Windows spells it Path, and splits on `;`). */
export function pathEntries(os: Os, env: NodeJS.ProcessEnv): string[] {
  const raw = env.PATH ?? env.Path ?? "";
  return raw.split(os === "win32" ? ";" : ":");
}

/** The probe of this process: its PATH and temporary folders, the real file system, `--version` run for real. */
export function processProbe(os: Os, env: NodeJS.ProcessEnv = process.env): Probe {
  const temp = [tmpdir(), env.TMPDIR, env.TEMP, env.TMP].filter((t): t is string => !!t);
  const real = (p: string): string | null => {
    try {
      return realpathSync(p);
    } catch {
      return null;
    }
  };
  return {
    os,
    path: pathEntries(os, env),
    // Both spellings of each folder: macOS's $TMPDIR is under /var, a link to /private/var.
    temp: [...new Set(temp.flatMap((t) => [t, real(t) ?? t]))],
    realpath: real,
    isScript(p) {
      try {
        const fd = openSync(p, "r");
        try {
          const b = Buffer.alloc(2);
          return readSync(fd, b, 0, 2, 0) === 2 && b.toString("latin1") === "#!";
        } finally {
          closeSync(fd);
        }
      } catch {
        return null;
      }
    },
    isSeam(argv) {
      const r = spawnSync(argv[0]!, [...argv.slice(1), "--version"], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
        timeout: 15_000,
      });
      return r.status === 0 && /^seam \S+/.test(r.stdout ?? "");
    },
  };
}
