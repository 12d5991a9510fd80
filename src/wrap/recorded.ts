/**
 * The recording side of a wrapped session, loaded by src/wrap/session.ts
 * once the server is starting: the recording opened (on a recorder thread,
 * behind the forwarding, or as each call crosses), then both directions
 * relayed until the session ends, and session_end written.
 */

import { randomUUID } from "node:crypto";
import { constants as osConstants } from "node:os";
import { EXIT } from "../base/exit.ts";
import type { Log } from "../base/log.ts";
import { sleep } from "../base/sleep.ts";
import { digestJson } from "../core/digest.ts";
import { REFUSED_LEDGER_HINT, refusedLedgerMessage } from "../ledger/ledger-writer.ts";
import { recorderFields } from "../observe/session-fields.ts";
import { redactArgv } from "../redact/argv.ts";
import type { Child, Runtime, SpawnResult } from "../runtime/types.ts";
import type { WrapOptions, WrapSignals } from "./options.ts";
import { RecorderLink } from "./recorder-link.ts";
import { Recording, type RecordingDeps, type RecordingInit } from "./recording.ts";
import { RecordingQueue } from "./recording-queue.ts";
import { ClientOut, pump, pumpFramed } from "./relay.ts";

/** How long to keep reading the server's stdout after it exited (a grandchild may hold the pipe). */
const DRAIN_AFTER_EXIT_MS = 2000;

/** How the session was started (src/wrap/session.ts): what this side goes on from. */
export interface SessionStart {
  platform: NodeJS.Platform;
  signals: WrapSignals;
  /** The first signal that came before the server ran, if one did. */
  early: () => string | undefined;
  /** Stops keeping early signals (the relay's own handlers take over). */
  stopEarly: () => void;
  /** The server, when it was started before the recording was opened. */
  spawning?: Promise<SpawnResult>;
  /** Rows are made behind the forwarding (not as each call crosses). */
  behind: boolean;
  writeAhead: boolean;
}

/** A refused ledger (symlink, another owner, open to others' writes): said, and exit 2. */
export function refuseLedger(message: string, log: Log): number {
  log.error(
    refusedLedgerMessage(message),
    `${REFUSED_LEDGER_HINT}, or pass --allow-foreign-ledger if this file is meant to be used`,
  );
  return EXIT.USAGE;
}

/** Opens the recording, starts the server if it has not been, and relays until the session ends. */
export async function recordSession(rt: Runtime, o: WrapOptions, log: Log, s: SessionStart): Promise<number> {
  const redacted = redactArgv(o.argv, s.platform);
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
  const threaded = s.behind && o.recorderThread !== undefined && rt.recorderThread === true;
  let recorder: Recorder | string | null = null;
  if (threaded) recorder = await RecorderLink.start(rt, init, o.recorderThread!.plain, log);
  if (recorder === null) {
    // Behind the forwarding, payload files are made on a thread of their own, where this process can start one.
    const opened = await Recording.open(rt, init, deps, log, s.behind, s.behind && o.recorderThread !== undefined);
    recorder = s.behind && typeof opened !== "string" ? new RecordingQueue(opened, log) : opened;
  }
  if (typeof recorder === "string") {
    // Refused after all (the file changed since it was looked at): the server, started meanwhile, is stopped unheard.
    const started = await s.spawning;
    if (started?.ok) {
      started.child.kill("SIGKILL");
      await started.child.exited;
    }
    s.stopEarly();
    return refuseLedger(recorder, log);
  }

  const spawned = await (s.spawning ?? rt.spawn(o.argv, { cwd: o.cwd, env: o.env }));
  s.stopEarly();
  if (!spawned.ok) {
    log.error(`cannot start ${o.argv[0]}: ${spawned.reason}`, "check the command after '--' and your PATH");
    await recorder.spawnFailed(spawned.reason, EXIT.SPAWN_FAILED);
    return EXIT.SPAWN_FAILED;
  }
  return relaySession(rt, spawned.child, o, recorder, s.writeAhead, s.early(), s.signals);
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
  // Signals stay taken until session_end is written: the recorder may still be catching up.
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
