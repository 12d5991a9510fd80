/**
 * What a wrapped session is started with (src/wrap/session.ts), and the
 * signals it takes on each OS: apart, so that the session's two halves and
 * the selftest faults can share them without importing each other.
 */
import type { ActionRecorder } from "../actions/recorder.ts";
import type { CheckpointConfig } from "../checkpoint/checkpoint-writer.ts";
import type { FsyncPolicy } from "../ledger/file-sync.ts";
import type { ObserverFaults } from "../observe/observer-options.ts";
import type { Corruptor } from "./relay.ts";

export interface WrapOptions {
  ledger: string;
  /** The server's argv, verbatim. */
  argv: string[];
  server: string;
  session?: string;
  raw: boolean;
  /** --payloads: the payload store's directory. */
  payloads?: string;
  maxFrame: number;
  fsync: FsyncPolicy;
  writeAhead: boolean;
  failClosed: boolean;
  cwd: string;
  env?: Record<string, string | undefined>;
  /** A deliberate defect, for `seam selftest` only (src/selftest/faults.ts makes them). */
  fault?: WrapFault;
  /** --map: make (and post) an action for each mapped tools/call before forwarding it. */
  actions?: ActionRecorder;
  /** --sign: append signed checkpoints of the ledger's Merkle root (src/checkpoint/checkpoint-writer.ts). */
  checkpoints?: CheckpointConfig;
  /** --allow-foreign-ledger: append to a symlinked ledger, or one another user owns or others may write. */
  allowForeignLedger?: boolean;
  /**
   * Threads of seam's own may be started: one to record on where calls need
   * not wait for their rows and the runtime's threads pay for themselves
   * (Runtime.recorderThread; src/wrap/recorder-thread.ts), one to write
   * payload files on. `plain` is what a recorder thread makes its
   * checkpoint signer and selftest fault from. Only seam's own entry point
   * can serve such a thread, so only the command sets this.
   */
  recorderThread?: { plain: unknown };
}

/** A deliberate defect: named on stderr and in session_begin, and what it changes. */
export interface WrapFault {
  name: string;
  /** Rows the observer gets wrong. */
  observer?: ObserverFaults;
  /** Bytes changed on their way from the server to the client. */
  corrupt?: Corruptor;
}

/** The signals wrap takes on one OS, and what it sends the server for one (null: nothing). */
export interface WrapSignals {
  take: readonly string[];
  /** `shared`: the first signal, come while the server ran (so it may have had its own). */
  send(signal: string, shared: boolean): string | null;
}

/**
 * On Linux and macOS seam passes SIGINT, SIGTERM and SIGHUP on to the
 * server as they came, then waits for it to exit. Windows has no signals to
 * pass on: what Node and Bun raise there are the console's Ctrl+C (SIGINT),
 * Ctrl+Break (SIGBREAK) and closing (SIGHUP, with seconds left), which the
 * server sharing the console gets itself, and all they can do to another
 * process is end it at once (TerminateProcess, whichever signal is named).
 * So on Windows seam sends nothing for the first and lets the server stop
 * as it does; a second, or one that came before the server ran, ends it
 * (SIGTERM). session_end names the first signal seam got.
 */
export function wrapSignals(platform: NodeJS.Platform): WrapSignals {
  if (platform === "win32")
    return { take: ["SIGINT", "SIGBREAK", "SIGHUP"], send: (_signal, shared) => (shared ? null : "SIGTERM") };
  return { take: ["SIGINT", "SIGTERM", "SIGHUP"], send: (signal) => signal };
}
