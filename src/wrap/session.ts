/**
 * One wrapped session: spawn the server, relay both directions byte for byte,
 * observe, record, and end the session properly whatever ends it.
 *
 * The core takes its runtime, log and options as arguments; commands/wrap.ts
 * only parses the command line.
 */

import { randomUUID } from "node:crypto";
import { constants as osConstants } from "node:os";
import type { ActionRecorder } from "../actions/recorder.ts";
import { EXIT } from "../base/exit.ts";
import type { Log } from "../base/log.ts";
import { sleep } from "../base/sleep.ts";
import type { CheckpointConfig } from "../checkpoint/checkpoint-writer.ts";
import { digestJson } from "../core/digest.ts";
import type { FsyncPolicy } from "../ledger/file-sync.ts";
import { REFUSED_LEDGER_HINT, refusedLedgerMessage } from "../ledger/ledger-writer.ts";
import type { ObserverFaults } from "../observe/observer-options.ts";
import { recorderFields } from "../observe/session-fields.ts";
import { redactArgv } from "../redact/argv.ts";
import type { Child, Runtime } from "../runtime/types.ts";
import { RecorderLink } from "./recorder-link.ts";
import { Recording, type RecordingDeps, type RecordingInit } from "./recording.ts";
import { RecordingQueue } from "./recording-queue.ts";
import { ClientOut, type Corruptor, pump, pumpFramed } from "./relay.ts";

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

/** How long to keep reading the server's stdout after it exited (a grandchild may hold the pipe). */
const DRAIN_AFTER_EXIT_MS = 2000;

/** Runs one session; resolves to seam's exit status (the child's own). */
export async function runWrap(
  rt: Runtime,
  o: WrapOptions,
  log: Log,
  platform: NodeJS.Platform = process.platform,
): Promise<number> {
  const signals = wrapSignals(platform);
  // A signal that comes before the server runs is kept and passed on once it
  // does, so that even then the session ends with its session_end row.
  let early: string | undefined;
  const stopEarly = rt.onSignals(signals.take, (sig) => {
    early ??= sig;
  });
  const writeAhead = o.writeAhead || o.failClosed;
  if (o.fault) log.warn(`selftest fault ${o.fault.name} is on: traffic or rows are deliberately wrong`);
  const redacted = redactArgv(o.argv, platform);
  const init: RecordingInit = {
    ledger: o.ledger,
    session: o.session ?? randomUUID(),
    server: o.server,
    raw: o.raw,
    payloads: o.payloads,
    maxFrame: o.maxFrame,
    fsync: o.fsync,
    writeAhead: o.writeAhead,
    failClosed: o.failClosed,
    allowForeignLedger: o.allowForeignLedger,
    begin: {
      command: redacted.argv,
      command_redactions: redacted.redactions || undefined,
      // Of the argv as recorded: a digest of the original would let a dictionary attack recover what was redacted.
      command_digest: digestJson(redacted.argv),
      cwd: o.cwd,
      ...recorderFields({ ...o, runtime: rt.name }),
      selftest_fault: o.fault?.name,
    },
  };
  const deps: RecordingDeps = { actions: o.actions, checkpoints: o.checkpoints, faults: o.fault?.observer };
  // A call that waits for its row (--write-ahead, --fail-closed, --map) is recorded as it crosses,
  // and so is every row under --fsync always, which asks for each to be durable as it crosses.
  // Any other is recorded behind the forwarding: on a thread of its own where the runtime's
  // threads pay for themselves (Runtime.recorderThread), else between forwards on this one.
  const behind = !writeAhead && !o.actions && o.fsync !== "always";
  const threaded = behind && o.recorderThread !== undefined && rt.recorderThread === true;
  const refuse = (message: string) => {
    // Only a refused ledger stops a session before it starts (symlink, another owner, open to others' writes).
    stopEarly();
    log.error(
      refusedLedgerMessage(message),
      `${REFUSED_LEDGER_HINT}, or pass --allow-foreign-ledger if this file is meant to be used`,
    );
    return EXIT.USAGE;
  };
  let recorder: Recorder | string | null = null;
  // Opening the recording takes a while (a recorder thread starts a runtime
  // of its own; then the ledger is locked and its tail read), and so does
  // starting the server: the server starts at the same time, once this
  // thread has made sure the ledger is not one seam refuses, and nothing
  // crosses until the recorder is ready (the server's output waits
  // meanwhile: Runtime.spawn). With --payloads, whose directory may be
  // refused too, one after the other.
  const spawnEarly = behind && o.payloads === undefined;
  if (spawnEarly) {
    const refused = await ledgerRefused(rt, o.ledger, o.allowForeignLedger);
    if (refused !== undefined) return refuse(refused);
  }
  const starting = threaded ? RecorderLink.start(rt, init, o.recorderThread!.plain, log) : null;
  const spawning = spawnEarly ? rt.spawn(o.argv, { cwd: o.cwd, env: o.env }) : undefined;
  if (starting) recorder = await starting;
  if (recorder === null) {
    // Behind the forwarding, payload files are made on a thread of their own, where this process can start one.
    const opened = await Recording.open(rt, init, deps, log, behind, behind && o.recorderThread !== undefined);
    recorder = behind && typeof opened !== "string" ? new RecordingQueue(opened, log) : opened;
  }
  if (typeof recorder === "string") {
    // Refused after all (the file changed since it was looked at): the server, started meanwhile, is stopped unheard.
    const started = await spawning;
    if (started?.ok) {
      started.child.kill("SIGKILL");
      await started.child.exited;
    }
    return refuse(recorder);
  }

  const spawned = await (spawning ?? rt.spawn(o.argv, { cwd: o.cwd, env: o.env }));
  stopEarly();
  if (!spawned.ok) {
    log.error(`cannot start ${o.argv[0]}: ${spawned.reason}`, "check the command after '--' and your PATH");
    await recorder.spawnFailed(spawned.reason, EXIT.SPAWN_FAILED);
    return EXIT.SPAWN_FAILED;
  }
  return relaySession(rt, spawned.child, o, recorder, writeAhead, early, signals);
}

/**
 * Why seam would refuse to append to the ledger at `path` (the refusal's
 * message, as Recording.open gives it), or undefined: it opens the file as
 * the recorder will, and closes it again. Any other failure is the
 * recorder's to meet (its rows are then counted as unlogged).
 */
async function ledgerRefused(
  rt: Runtime,
  path: string,
  allowForeign: boolean | undefined,
): Promise<string | undefined> {
  try {
    const file = await rt.openAppend(path, allowForeign ? { allowForeign: true } : undefined);
    await file.close();
    return undefined;
  } catch (e) {
    return (e as { code?: unknown }).code === "EUNSAFE" ? (e as Error).message : undefined;
  }
}

/** Where the relay hands what crossed: the recording itself, its queue, or the link to its thread. */
type Recorder = Recording | RecorderLink | RecordingQueue;

async function relaySession(
  rt: Runtime,
  child: Child,
  o: WrapOptions,
  recorder: Recorder,
  writeAhead: boolean,
  early: string | undefined,
  signals: WrapSignals,
): Promise<number> {
  let endReason: string | undefined;
  let first = true;
  const forward = (sig: string, shared = first) => {
    endReason ??= `signal:${sig}`;
    first = false;
    const send = signals.send(sig, shared);
    if (send !== null) child.kill(send);
  };
  const stopSignals = rt.onSignals(signals.take, (sig) => forward(sig));
  if (early) forward(early, false);

  const stdout = rt.stdout();
  const clientOut = new ClientOut(stdout);

  // server → client
  const s2c = pump(child.stdout, clientOut, (chunk) => recorder.chunk("s2c", chunk), o.fault?.corrupt).then(() =>
    recorder.eof("s2c"),
  );

  // client → server (test-only corruption is applied server → client only, so
  // that the server still answers and the client sees exactly what changed).
  // Framed (a call waits for its record) under --write-ahead and --map, which
  // always record on this thread.
  const c2s =
    recorder instanceof Recording && (writeAhead || o.actions)
      ? framedClient(rt, child, o, recorder, clientOut, writeAhead)
      : pump(rt.stdin(), child.stdin, (chunk) => recorder.chunk("c2s", chunk)).then(() => recorder.eof("c2s"));
  void c2s.then(async () => {
    // Client EOF: close the server's stdin, which is how MCP asks a stdio server to stop.
    endReason ??= "client_eof";
    await child.stdin.end();
  });

  const status = await child.exited;
  endReason ??= "child_exit";
  await Promise.race([s2c, sleep(DRAIN_AFTER_EXIT_MS)]);
  await clientOut.end();
  const code = status.code ?? EXIT.SIGNAL_BASE + signalNumber(status.signal);
  // Signals stay taken until session_end is written: a recorder thread may still be catching up.
  await recorder.end({
    reason: endReason,
    exitCode: code,
    signal: status.signal ?? undefined,
    clientGone: stdout.broken || undefined,
  });
  stopSignals();
  return code;
}

/** The client → server flow frame by frame: a call reaches the server only once its row allows. */
function framedClient(
  rt: Runtime,
  child: Child,
  o: WrapOptions,
  recording: Recording,
  clientOut: ClientOut,
  writeAhead: boolean,
): Promise<void> {
  const observer = recording.observer;
  return pumpFramed(rt.stdin(), child.stdin, {
    maxFrame: o.maxFrame,
    hold: (f) => {
      const h = observer.fromClient(f);
      recording.reclaimAfter(f.length);
      return h;
    },
    refuse: () => {
      for (const line of observer.refuse()) clientOut.inject(line);
    },
    oversize: (n) => observer.oversize("c2s", n),
    longFrame: (f) => observer.longFrame(f),
    holdLong: writeAhead,
    tap: (chunk) => recording.tap("c2s", chunk),
  });
}

function signalNumber(signal: string | null): number {
  if (!signal) return 0;
  return (osConstants.signals as Record<string, number>)[signal] ?? 0;
}
