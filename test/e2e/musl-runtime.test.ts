/**
 * The runtime scripts/musl-runtime/build.sh lays out for the musl release
 * executables (docs/install.md, "Platforms"): Debian's glibc-built
 * libstdc++ and libgcc_s on musl's loader through glibc-compat.c. Real
 * musl programs built here run on it: a C++ exception thrown and caught
 * (libgcc_s's unwinder finds frames only through the shim's
 * _dl_find_object) and a thread_local destructor run at thread exit (the
 * shim's __cxa_thread_atexit_impl). Then the musl executables in
 * dist/release start on it. Each part is skipped where its pieces are
 * absent; .ci/run makes them all, and scripts/release-run.ts runs the
 * executables' selftest and demo on the same runtime.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MUSL_RUNTIME_DIR, type MuslRun, muslRun, QEMU_AARCH64 } from "../../src/release/musl-runtime.ts";
import { ROOT, runCli } from "../helpers/cli.ts";
import { tempDir } from "../helpers/proc.ts";

const RUNTIME = join(ROOT, MUSL_RUNTIME_DIR);
const onPath = (cmd: string) => Bun.spawnSync({ cmd: ["sh", "-c", `command -v ${cmd}`] }).exitCode === 0;
const here = process.platform === "linux" && process.arch === "x64";
const ready = (m: MuslRun | { missing: string }): MuslRun | null => (here && !("missing" in m) ? m : null);
const X64 = ready(muslRun("x64", RUNTIME, false));
const ARM64 = ready(muslRun("arm64", RUNTIME, onPath(QEMU_AARCH64)));

// No headers: g++ compiles against glibc's, which a musl program must not use.
const PROGRAMS: [string, string][] = [
  [
    "a C++ exception is thrown and caught",
    `static int thrower(int x) { if (x > 0) throw x; return 0; }
int main(int argc, char **) { try { thrower(argc); } catch (int v) { return v == argc ? 0 : 2; } return 1; }`,
  ],
  [
    "a thread_local's destructor runs when its thread ends",
    `extern "C" int pthread_create(unsigned long *, const void *, void *(*)(void *), void *);
extern "C" int pthread_join(unsigned long, void **);
static int ran = 0;
struct Mark { int n = 0; ~Mark() { ran += 1 + n; } };
thread_local Mark mark;
static void *body(void *) { mark.n = 41; return nullptr; }
int main() { unsigned long t; if (pthread_create(&t, nullptr, body, nullptr)) return 3; pthread_join(t, nullptr); return ran == 42 ? 0 : 1; }`,
  ],
];

function run(cmd: string[], env: Record<string, string> = {}) {
  const p = Bun.spawnSync({ cmd, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}

describe.skipIf(X64 === null || !onPath("musl-gcc") || !onPath("g++"))("a musl C++ program on the x64 runtime", () => {
  for (const [name, source] of PROGRAMS)
    test(name, () => {
      const dir = tempDir("seam-musl-");
      try {
        writeFileSync(join(dir, "t.cc"), source);
        expect(run(["g++", "-O1", "-fPIC", "-c", join(dir, "t.cc"), "-o", join(dir, "t.o")]).code).toBe(0);
        // musl-gcc's specs leave out --eh-frame-hdr, which gcc's own pass and the unwinder needs.
        const link = run([
          "musl-gcc",
          join(dir, "t.o"),
          "-o",
          join(dir, "t"),
          "-Wl,--eh-frame-hdr",
          `-L${X64!.env.LD_LIBRARY_PATH}`,
          "-l:libstdc++.so.6",
          "-l:libgcc_s.so.1",
          "-Wl,--allow-shlib-undefined",
        ]);
        expect(link.err).toBe("");
        const r = run([join(dir, "t"), "x"], X64!.env);
        expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: "" });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
});

const RELEASE = join(ROOT, "dist/release");
for (const [file, how] of [
  ["seam-linux-x64-musl", X64],
  ["seam-linux-arm64-musl", ARM64],
] as const)
  test.skipIf(how === null || !existsSync(join(RELEASE, file)))(`${file} starts on the runtime`, async () => {
    const want = (await runCli("bun", ["--version"])).stdout.toString();
    const r = run([...how!.pre, join(RELEASE, file), "--version"], how!.env);
    expect({ code: r.code, out: r.out, err: r.err }).toEqual({ code: 0, out: want, err: "" });
  });
