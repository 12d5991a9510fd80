/**
 * Runs what can be run here of dist/release/ (made by scripts/release.ts)
 * and says, per executable, how it was checked:
 *   the host's own target      `seam selftest` and `seam demo`, natively;
 *   linux-arm64 (glibc)        the same under qemu-user (qemu-aarch64-static,
 *                              Debian's qemu-user-static) with Debian's
 *                              arm64 glibc (libc6-arm64-cross) as its -L root;
 *                              SEAM_SELFTEST_EMULATOR makes seam start its own
 *                              children under qemu too, binfmt or not;
 *   the rest                   its header (format, CPU, interpreter) and size,
 *                              checked by the build: built, not run, here.
 * The musl executables need musl's libstdc++ beside musl's loader, which
 * Debian does not package, so they are not run here either.
 * Exit 1 when anything that ran failed.
 *
 * Usage: bun scripts/release-run.ts [--only ID,...]
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { executableKind } from "../src/release/headers.ts";
import { RELEASE_TARGETS, type ReleaseTarget, targetFor } from "../src/release/targets.ts";

const root = new URL("..", import.meta.url).pathname;
const release = `${root}dist/release`;
const QEMU = "qemu-aarch64-static";
const ARM64_ROOT = "/usr/aarch64-linux-gnu";

function onPath(cmd: string): boolean {
  return Bun.spawnSync({ cmd: ["sh", "-c", `command -v ${cmd}`], stdout: "ignore" }).exitCode === 0;
}

function hostLibc(): "glibc" | "musl" {
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  return report?.header?.glibcVersionRuntime ? "glibc" : "musl";
}

/** The argv prefix that runs this target here, or null when it cannot be run. */
function runner(t: ReleaseTarget): string[] | null {
  if (t === targetFor(process.platform, process.arch, hostLibc())) return [];
  if (t.os === "linux" && t.cpu === "arm64" && t.libc === "glibc" && onPath(QEMU) && existsSync(ARM64_ROOT))
    return [QEMU, "-L", ARM64_ROOT];
  return null;
}

function runOnce(pre: string[], file: string, args: string[], cwd: string) {
  return Bun.spawnSync({
    cmd: [...pre, file, ...args],
    cwd,
    env: { ...process.env, NO_COLOR: "1", SEAM_SELFTEST_EMULATOR: pre.join(" ") },
    stdout: "pipe",
    stderr: "pipe",
  });
}

/** A selftest's FAIL lines and its closing count. */
function failLines(out: string): string {
  return out
    .split("\n")
    .filter((l) => l.startsWith("FAIL") || / passed, \d+ failed$/.test(l))
    .join("\n");
}

const only = process.argv.includes("--only") ? process.argv[process.argv.indexOf("--only") + 1]!.split(",") : null;
let failed = 0;
for (const t of RELEASE_TARGETS.filter((t) => only === null || only.includes(t.id))) {
  const file = join(release, t.file);
  if (!existsSync(file)) {
    console.log(`MISSING ${t.file}: run npm run build:release`);
    failed++;
    continue;
  }
  const kind = executableKind(readFileSync(file).subarray(0, 1 << 16));
  const size = statSync(file).size;
  const what = `${kind?.format} ${kind?.arch}${kind?.interpreter ? ` ${kind.interpreter}` : ""}, ${size} bytes`;
  const pre = runner(t);
  if (pre === null) {
    console.log(`BUILT ${t.file}: ${what}; not run here`);
    continue;
  }
  const how = pre.length === 0 ? "natively" : `under ${pre[0]}`;
  const cwd = mkdtempSync(join(tmpdir(), "seam-release-run-"));
  try {
    for (const args of [["selftest"], ["demo"]]) {
      // Under emulation seam runs many times slower, and a few selftest arms
      // depend on their children's timing: an emulated run gets one retry, said aloud.
      const tries = pre.length === 0 ? 1 : 2;
      let p = runOnce(pre, file, args, cwd);
      for (let i = 1; i < tries && p.exitCode !== 0; i++) {
        console.log(`RETRY ${t.file} ${args[0]} ${how}: exit ${p.exitCode}\n${failLines(p.stdout.toString())}`);
        p = runOnce(pre, file, args, cwd);
      }
      const last = p.stdout.toString().trim().split("\n").at(-1) ?? "";
      if (p.exitCode === 0)
        console.log(`RAN ${t.file} ${args[0]} ${how}: ok${args[0] === "selftest" ? ` (${last})` : ""}`);
      else {
        failed++;
        console.log(`FAIL ${t.file} ${args[0]} ${how}: exit ${p.exitCode}\n${p.stdout}${p.stderr}`);
      }
    }
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}
process.exit(failed === 0 ? 0 : 1);
