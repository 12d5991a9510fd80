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
 * signal back. SIGTERM and SIGHUP sent to this process are passed on; SIGINT
 * is not, because a terminal sends it to the whole process group already.
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

function main() {
  const exe = process.env.SEAM_NATIVE === "0" ? null : nativeExecutable();
  if (exe === null) return import("../dist/seam.mjs");
  const child = spawn(exe, process.argv.slice(2), { stdio: "inherit" });
  for (const s of ["SIGTERM", "SIGHUP"]) process.on(s, () => child.kill(s));
  process.on("SIGINT", () => {});
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
