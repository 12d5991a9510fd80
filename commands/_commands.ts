/**
 * seam's subcommands, each loaded only when run, so `seam wrap` pays only for
 * what wrapping needs. Kept apart from the entry point so that
 * scripts/cli-docs.ts can read the definitions without running seam.
 */
import type { CommandDef } from "citty";

type Lazy = () => Promise<CommandDef<any>>;
export const SUBCOMMANDS: Record<string, Lazy> = {
  wrap: () => import("./wrap.ts").then((m) => m.default),
  proxy: () => import("./proxy.ts").then((m) => m.default),
  verify: () => import("./verify.ts").then((m) => m.default),
  "verify-release": () => import("./verify-release.ts").then((m) => m.default),
  digest: () => import("./digest.ts").then((m) => m.default),
  erase: () => import("./erase.ts").then((m) => m.default),
  keygen: () => import("./keygen.ts").then((m) => m.default),
  witness: () => import("./witness.ts").then((m) => m.default),
  ship: () => import("./ship.ts").then((m) => m.default),
  export: () => import("./export.ts").then((m) => m.default),
  selftest: () => import("./selftest.ts").then((m) => m.default),
  demo: () => import("./demo.ts").then((m) => m.default),
  log: () => import("./log.ts").then((m) => m.default),
  stats: () => import("./stats.ts").then((m) => m.default),
  check: () => import("./check.ts").then((m) => m.default),
  pin: () => import("./pin.ts").then((m) => m.default),
  install: () => import("./install.ts").then((m) => m.default),
  uninstall: () => import("./uninstall.ts").then((m) => m.default),
  status: () => import("./status.ts").then((m) => m.default),
  diff: () => import("./diff.ts").then((m) => m.default),
  report: () => import("./report.ts").then((m) => m.default),
  mock: () => import("./mock.ts").then((m) => m.default),
  replay: () => import("./replay.ts").then((m) => m.default),
  // The built-in fixture server and scripted client that selftest and demo spawn (the documents run them too).
  fixture: () => import("./fixture.ts").then((m) => m.default),
};
/** Commands left out of --help and docs/cli.md: none (every command the documents name is listed). */
export const HIDDEN: ReadonlySet<string> = new Set();

/** What `seam --help` says seam is. */
export const DESCRIPTION = "record what crosses the MCP stdio seam into a tamper-evident ledger";
