/**
 * How this repository runs its musl release executables on a glibc x86-64
 * Debian machine, on the runtime scripts/musl-runtime/build.sh lays out
 * (docs/install.md, "Platforms"): musl's own loaders with Debian's
 * glibc-built libstdc++ and libgcc_s through a glibc-compat shim. One
 * place for scripts/release-run.ts and test/e2e/musl-runtime.test.ts.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";

/** The runtime's folder under the repository root. */
export const MUSL_RUNTIME_DIR = "dist/.cache/musl-runtime";
export const QEMU_AARCH64 = "qemu-aarch64-static";
const X64_LOADER = "/lib/ld-musl-x86_64.so.1";
/** The shim inside the arm64 root, as the emulated process sees it. */
const ARM64_SHIM = "/lib/aarch64-linux-musl/ld-linux-aarch64.so.1";

export interface MuslRun {
  /** The argv prefix that runs the executable (none: natively). */
  pre: string[];
  /** Set in the executable's environment, which its children inherit. */
  env: Record<string, string>;
}

/**
 * The way to run the `cpu` musl executable on the runtime under `runtime`,
 * or what is missing. `qemu` says whether qemu-aarch64-static is on PATH.
 */
export function muslRun(cpu: "x64" | "arm64", runtime: string, qemu: boolean): MuslRun | { missing: string } {
  if (cpu === "x64") {
    const lib = join(runtime, "x64");
    if (!existsSync(X64_LOADER)) return { missing: `no ${X64_LOADER} (Debian's musl)` };
    if (!existsSync(join(lib, "ld-linux-x86-64.so.2"))) return { missing: `no ${lib}` };
    // The loader is the executable's own interpreter; the folder only adds the C++ runtime and the shim.
    return { pre: [], env: { LD_LIBRARY_PATH: lib } };
  }
  const root = join(runtime, "arm64");
  if (!qemu) return { missing: `no ${QEMU_AARCH64} (Debian's qemu-user-static)` };
  if (!existsSync(join(root, ARM64_SHIM))) return { missing: `no ${root}` };
  // aarch64's libstdc++ does not name glibc's loader, so the shim is preloaded; -E sets that in the
  // emulated process alone, and SEAM_SELFTEST_EMULATOR (this prefix) carries it to seam's children.
  return { pre: [QEMU_AARCH64, "-L", root, "-E", `LD_PRELOAD=${ARM64_SHIM}`], env: {} };
}
