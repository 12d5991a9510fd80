/**
 * The platforms seam ships a compiled executable for: one table for the
 * release build (scripts/release.ts), the per-platform npm packages (npm/)
 * and the launcher that picks one at run time.
 */

export interface ReleaseTarget {
  /** `<os>-<cpu>[-musl]`, in Node's names (process.platform, process.arch). */
  id: string;
  /** `bun build --compile --target` value. */
  bunTarget: string;
  /** The npm package holding the Bun runtime for this platform (its bin/bun or bin/bun.exe). */
  runtimePackage: string;
  /** The executable's name in dist/release/. */
  file: string;
  os: "linux" | "darwin" | "win32";
  cpu: "x64" | "arm64";
  libc?: "glibc" | "musl";
  /** What the file's header must say (src/release/headers.ts). */
  format: "elf" | "macho" | "pe";
}

function target(os: ReleaseTarget["os"], cpu: ReleaseTarget["cpu"], libc?: ReleaseTarget["libc"]): ReleaseTarget {
  const bunOs = os === "win32" ? "windows" : os;
  const bunCpu = cpu === "arm64" ? "aarch64" : "x64";
  const musl = libc === "musl" ? "-musl" : "";
  const id = `${os}-${cpu}${musl}`;
  return {
    id,
    bunTarget: `bun-${bunOs}-${cpu}${musl}`,
    runtimePackage: `@oven/bun-${bunOs}-${bunCpu}${musl}`,
    file: `seam-${bunOs}-${cpu}${musl}${os === "win32" ? ".exe" : ""}`,
    os,
    cpu,
    ...(libc === undefined ? {} : { libc }),
    format: os === "linux" ? "elf" : os === "darwin" ? "macho" : "pe",
  };
}

export const RELEASE_TARGETS: readonly ReleaseTarget[] = [
  target("linux", "x64", "glibc"),
  target("linux", "x64", "musl"),
  target("linux", "arm64", "glibc"),
  target("linux", "arm64", "musl"),
  target("darwin", "x64"),
  target("darwin", "arm64"),
  target("win32", "x64"),
];

/** The npm package that carries a target's executable. */
export function platformPackage(t: ReleaseTarget): string {
  return `seam-mcp-${t.id}`;
}

/** The target for a running process, or undefined when seam ships none for it. */
export function targetFor(
  platform: string,
  arch: string,
  libc: "glibc" | "musl" | undefined,
): ReleaseTarget | undefined {
  return RELEASE_TARGETS.find(
    (t) => t.os === platform && t.cpu === arch && (t.libc === undefined || t.libc === (libc ?? "glibc")),
  );
}
