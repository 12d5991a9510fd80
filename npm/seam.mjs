#!/usr/bin/env node
/**
 * The `seam` bin of the published seam-mcp package. seam-mcp lists one
 * package per platform as optionalDependencies (seam-mcp-linux-x64, …), each
 * with os/cpu/libc fields, so npm installs only the one that fits; it holds
 * seam compiled for that platform. When it is there, this runs it; when it
 * is not (another platform, --omit=optional, an install that skipped it), the
 * Node bundle runs instead. SEAM_NATIVE=0 forces the Node bundle.
 *
 * The executable gets this process's stdio as they are (inherited, never
 * piped through here), its arguments unchanged, and its exit status or
 * signal back. Which signals are passed on: launcherSignals.
 */
import { spawn } from "node:child_process";
import { existsSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The platform package's suffix for a process: `linux-x64`, `linux-arm64-musl`, `darwin-arm64`, `win32-x64`. */
export function platformId(platform, arch, libc) {
  return `${platform}-${arch}${platform === "linux" && libc === "musl" ? "-musl" : ""}`;
}

/** glibc or musl on Linux: Node's diagnostic report names the glibc it runs on, and none under musl. */
function libc() {
  if (process.platform !== "linux") return undefined;
  const header = process.report?.getReport?.()?.header;
  return header?.glibcVersionRuntime ? "glibc" : "musl";
}

/** The installed platform package's executable, or null. */
export function nativeExecutable() {
  const id = platformId(process.platform, process.arch, libc());
  let dir;
  try {
    dir = dirname(createRequire(import.meta.url).resolve(`seam-mcp-${id}/package.json`));
  } catch {
    return null;
  }
  const exe = join(dir, "bin", process.platform === "win32" ? "seam.exe" : "seam");
  return existsSync(exe) ? exe : null;
}

/**
 * What this process does with each signal it takes, on `platform`, so that
 * it outlives the executable and reports how that ended. On Linux and macOS
 * SIGTERM and SIGHUP are passed on; SIGINT is not, because a terminal sends
 * it to the whole process group already. On Windows nothing is passed on:
 * the executable shares this console and gets its Ctrl+C (SIGINT),
 * Ctrl+Break (SIGBREAK) and closing (SIGHUP) itself, while passing one on
 * could only end it at once (Node's kill is TerminateProcess there), before
 * it has finished its ledger.
 */
export function launcherSignals(platform) {
  if (platform === "win32") return { pass: [], ignore: ["SIGINT", "SIGBREAK", "SIGHUP"] };
  return { pass: ["SIGTERM", "SIGHUP"], ignore: ["SIGINT"] };
}

function main() {
  const exe = process.env.SEAM_NATIVE === "0" ? null : nativeExecutable();
  if (exe === null) return import("../dist/seam.mjs");
  const child = spawn(exe, process.argv.slice(2), { stdio: "inherit" });
  const signals = launcherSignals(process.platform);
  for (const s of signals.pass) process.on(s, () => child.kill(s));
  for (const s of signals.ignore) process.on(s, () => {});
  child.on("error", (e) => {
    process.stderr.write(`seam: error: cannot start ${exe}: ${e.message}\nseam: hint: SEAM_NATIVE=0 runs the Node bundle instead\n`);
    process.exit(127);
  });
  child.on("exit", (code, signal) => {
    if (signal === null) process.exit(code ?? 1);
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  });
}

/** Whether this file is the program (npm's bin link resolves to it), not imported by a test. */
function isMain() {
  try {
    return realpathSync(process.argv[1] ?? "") === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}

if (isMain()) await main();
