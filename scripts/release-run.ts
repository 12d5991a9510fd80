/**
 * Runs what can be run here of dist/release/ (made by scripts/release.ts)
 * and says, per executable, how it was checked:
 *   the host's own target      `seam selftest` and `seam demo`, natively;
 *   linux-arm64 (glibc)        the same under qemu-user (qemu-aarch64-static,
 *                              Debian's qemu-user-static) with Debian's
 *                              arm64 glibc (libc6-arm64-cross) as its -L root;
 *                              SEAM_SELFTEST_EMULATOR makes seam start its own
 *                              children under qemu too, binfmt or not;
 *   linux-x64-musl             the same, natively, on musl's loader (Debian's
 *                              `musl`), with the library folder that
 *                              scripts/musl-runtime/build.sh makes on
 *                              LD_LIBRARY_PATH: Debian's glibc-built
 *                              libstdc++ and libgcc_s through a small
 *                              glibc-compat shim, as Debian ships no C++
 *                              runtime built for musl;
 *   linux-arm64-musl           the same under qemu-user, its -L root the one
 *                              that script makes (Debian's arm64 musl, arm64
 *                              libstdc++ and libgcc_s, the shim preloaded);
 *   the rest                   its header (format, CPU, interpreter) and size,
 *                              checked by the build: built, not run, here.
 * Without that script's output the musl executables are skipped, said
 * aloud; under CI (CI set) that is a failure, since .ci/run makes it.
 * Exit 1 when anything that ran failed.
 *
 * Usage: bun scripts/release-run.ts [--only ID,...]
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { executableKind } from "../src/release/headers.ts";
import { MUSL_RUNTIME_DIR, type MuslRun, muslRun, QEMU_AARCH64 } from "../src/release/musl-runtime.ts";
import { RELEASE_TARGETS, type ReleaseTarget, targetFor } from "../src/release/targets.ts";

const root = new URL("..", import.meta.url).pathname;
const release = `${root}dist/release`;
const QEMU = QEMU_AARCH64;
const ARM64_ROOT = "/usr/aarch64-linux-gnu";

function onPath(cmd: string): boolean {
  return Bun.spawnSync({ cmd: ["sh", "-c", `command -v ${cmd}`], stdout: "ignore" }).exitCode === 0;
}

function hostLibc(): "glibc" | "musl" {
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  return report?.header?.glibcVersionRuntime ? "glibc" : "musl";
}

interface Runner extends MuslRun {
  how: string;
}

/** How this target runs here; null when it cannot; a string saying what is missing when it could but a piece is absent. */
function runner(t: ReleaseTarget): Runner | string | null {
  if (t === targetFor(process.platform, process.arch, hostLibc())) return { pre: [], env: {}, how: "natively" };
  if (process.platform !== "linux" || process.arch !== "x64" || hostLibc() !== "glibc" || t.os !== "linux") return null;
  const qemu = onPath(QEMU);
  if (t.cpu === "arm64" && t.libc === "glibc")
    return qemu && existsSync(ARM64_ROOT) ? { pre: [QEMU, "-L", ARM64_ROOT], env: {}, how: `under ${QEMU}` } : null;
  if (t.libc === "musl") {
    const m = muslRun(t.cpu, join(root, MUSL_RUNTIME_DIR), qemu);
    if ("missing" in m) return `${m.missing}: run scripts/musl-runtime/build.sh (its packages: see .ci/run)`;
    const on = t.cpu === "x64" ? "natively on musl's loader" : `under ${QEMU} on musl's arm64 loader`;
    return { ...m, how: `${on}, with Debian's ${t.cpu} libstdc++ through the glibc-compat shim` };
  }
  return null;
}

function runOnce(r: Runner, file: string, args: string[], cwd: string) {
  return Bun.spawnSync({
    cmd: [...r.pre, file, ...args],
    cwd,
    env: { ...process.env, ...r.env, NO_COLOR: "1", SEAM_SELFTEST_EMULATOR: r.pre.join(" ") },
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
  const r = runner(t);
  if (r === null) {
    console.log(`BUILT ${t.file}: ${what}; not run here`);
    continue;
  }
  if (typeof r === "string") {
    // CI installs and makes every piece, so a missing one there is a broken .ci/run, not a skip.
    if (process.env.CI) failed++;
    console.log(`${process.env.CI ? "FAIL" : "SKIPPED"} ${t.file}: ${what}; not run: ${r}`);
    continue;
  }
  const { pre, how } = r;
  const cwd = mkdtempSync(join(tmpdir(), "seam-release-run-"));
  try {
    for (const args of [["selftest"], ["demo"]]) {
      // Under emulation seam runs many times slower; no selftest arm depends on
      // timing, but a starved emulator can still miss a child's deadline: an
      // emulated run gets one retry, said aloud.
      const tries = pre.length === 0 ? 1 : 2;
      let p = runOnce(r, file, args, cwd);
      for (let i = 1; i < tries && p.exitCode !== 0; i++) {
        console.log(`RETRY ${t.file} ${args[0]} ${how}: exit ${p.exitCode}\n${failLines(p.stdout.toString())}`);
        p = runOnce(r, file, args, cwd);
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
