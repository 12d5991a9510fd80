import { runtime } from "../src/runtime/index.ts";

/**
 * The argv `selftest` and `demo` start seam's own children with. When
 * SEAM_SELFTEST_EMULATOR is set (words split on spaces, e.g.
 * `qemu-aarch64-static -L /usr/aarch64-linux-gnu`), it goes first: a
 * cross-built executable run under a user-mode emulator on a machine whose
 * kernel has no binfmt entry for it could not start itself again otherwise.
 * Only these two commands read it: `install` must never write an emulator
 * into a client's config.
 */
export function selfArgvForChildren(): string[] {
  const prefix = (process.env.SEAM_SELFTEST_EMULATOR ?? "").split(" ").filter((w) => w !== "");
  return [...prefix, ...runtime.selfArgv()];
}
