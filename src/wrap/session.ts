/**
 * One wrapped session: spawn the server, relay both directions byte for byte,
 * observe, record, and end the session properly whatever ends it.
 *
 * The core takes its runtime, log and options as arguments; commands/wrap.ts
 * only parses the command line.
 */
import { hostname } from "node:os";
import { constants as osConstants } from "node:os";
import { randomUUID } from "node:crypto";
import { StreamDigest, digestJson } from "../core/digest.ts";
import { EXIT } from "../base/exit.ts";
import { FrameSplitter } from "./frames.ts";
import type { Json } from "../core/json.ts";
import { type FsyncPolicy, LedgerWriter } from "../ledger/writer.ts";
import type { Log } from "../base/log.ts";
import type { ActionRecorder } from "./actions.ts";
import { keyLabel } from "../checkpoint/note.ts";
import type { CheckpointConfig } from "../checkpoint/writer.ts";
import { type Fields, McpObserver, type ObserverFaults, type RowSink } from "./mcp.ts";
import { redactArgv } from "./redact.ts";
import { processStartTime } from "../runtime/alive.ts";
import { ClientOut, type Corruptor, pump, pumpFramed } from "./relay.ts";
import type { Child, Runtime } from "../runtime/types.ts";

export interface WrapOptions {
  ledger: string;
  /** The server's argv, verbatim. */
  argv: string[];
  server: string;
  session?: string;
  raw: boolean;
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
  /** --sign: append signed checkpoints of the ledger's Merkle root (src/checkpoint/writer.ts). */
  checkpoints?: CheckpointConfig;
  /** --allow-foreign-ledger: append to a symlinked ledger, or one another user owns or others may write. */
  allowForeignLedger?: boolean;
}

/** A deliberate defect: named on stderr and in session_begin, and what it changes. */
export interface WrapFault {
  name: string;
  /** Rows the observer gets wrong. */
  observer?: ObserverFaults;
  /** Bytes changed on their way from the server to the client. */
  corrupt?: Corruptor;
}

/** Signals seam passes on to the server, then waits for it to exit. */
export const FORWARDED_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/** Bytes of observed frames between two requests to the runtime to reclaim memory. */
const RECLAIM_EVERY = 8 * 1024 * 1024;

/** How long to keep reading the server's stdout after it exited (a grandchild may hold the pipe). */
const DRAIN_AFTER_EXIT_MS = 2000;

/** Runs one session; resolves to seam's exit status (the child's own). */
export async function runWrap(rt: Runtime, o: WrapOptions, log: Log): Promise<number> {
  // A signal that comes before the server runs is kept and passed on once it
  // does, so that even then the session ends with its session_end row.
  let early: string | undefined;
  const stopEarly = rt.onSignals(FORWARDED_SIGNALS, (sig) => {
    early ??= sig;
  });
  const session = o.session ?? randomUUID();
  const writeAhead = o.writeAhead || o.failClosed;
  let ledger: LedgerWriter;
  try {
    ledger = await LedgerWriter.open({
      path: o.ledger,
      session,
      server: o.server,
      fsync: o.fsync,
      openAppend: rt.openAppend,
      allowForeign: o.allowForeignLedger,
      warn: (m) => log.warn(m),
      checkpoints: o.checkpoints,
    });
  } catch (e) {
    // Only a refused ledger rejects (symlink, another owner, open to others' writes): nothing has started yet.
    stopEarly();
    log.error(
      `ledger ${(e as Error).message}; not writing to it`,
      "use a ledger in a directory only you can write to, or pass --allow-foreign-ledger if this file is meant to be used",
    );
    return EXIT.USAGE;
  }
  const rows: RowSink = {
    row(evt, fields) {
      void ledger.append(evt, fields);
    },
    durable: (evt, fields) => ledger.appendDurable(evt, fields),
  };
  if (o.fault) log.warn(`selftest fault ${o.fault.name} is on: traffic or rows are deliberately wrong`);

  const redacted = redactArgv(o.argv);
  rows.row("session_begin", {
    command: redacted.argv,
    command_redactions: redacted.redactions || undefined,
    // Of the argv as recorded: a digest of the original would let a dictionary attack recover what was redacted.
    command_digest: digestJson(redacted.argv),
    cwd: o.cwd,
    pid: process.pid,
    pid_start: processStartTime(process.pid) ?? undefined,
    host: hostname(),
    runtime: rt.name,
    raw_payloads: o.raw,
    max_frame: o.maxFrame,
    fsync: o.fsync,
    write_ahead: writeAhead || undefined,
    fail_closed: o.failClosed || undefined,
    ...o.actions?.beginFields(),
    checkpoint_key: o.checkpoints ? keyLabel(o.checkpoints.signer.name, o.checkpoints.signer.id) : undefined,
    selftest_fault: o.fault?.name,
  });

  const spawned = await rt.spawn(o.argv, { cwd: o.cwd, env: o.env });
  stopEarly();
  if (!spawned.ok) {
    log.error(`cannot start ${o.argv[0]}: ${spawned.reason}`, "check the command after '--' and your PATH");
    await ledger.end({ reason: "spawn_failed", error: spawned.reason, exit_code: EXIT.SPAWN_FAILED, calls: 0 });
    return EXIT.SPAWN_FAILED;
  }
  const child = spawned.child;
  return relaySession(rt, child, o, rows, ledger, writeAhead, early);
}

async function relaySession(
  rt: Runtime,
  child: Child,
  o: WrapOptions,
  rows: RowSink,
  ledger: LedgerWriter,
  writeAhead: boolean,
  early: string | undefined,
): Promise<number> {
  const observer = new McpObserver({
    rows,
    raw: o.raw,
    writeAhead,
    failClosed: o.failClosed,
    actions: o.actions,
    now: () => performance.now(),
    faults: o.fault?.observer,
    nextSeq: () => ledger.lastSeq + 1,
  });
  let endReason: string | undefined;
  const forward = (sig: string) => {
    endReason ??= `signal:${sig}`;
    child.kill(sig);
  };
  const stopSignals = rt.onSignals(FORWARDED_SIGNALS, forward);
  if (early) forward(early);

  const digests = { c2s: new StreamDigest(), s2c: new StreamDigest() };
  const bytes = { c2s: 0, s2c: 0 };
  const stdout = rt.stdout();
  const clientOut = new ClientOut(stdout);

  // Observed frames leave garbage several times their size; past RECLAIM_EVERY
  // bytes of it, ask the runtime to give the memory back (peak RSS relaying
  // large answers: bench/relay.ts, large).
  let observedSinceReclaim = 0;
  const reclaimAfter = (n: number) => {
    observedSinceReclaim += n;
    if (observedSinceReclaim < RECLAIM_EVERY) return;
    observedSinceReclaim = 0;
    rt.reclaim();
  };

  // server → client
  const s2cFrames = new FrameSplitter(o.maxFrame, {
    frame: (f) => {
      observer.fromServer(f);
      reclaimAfter(f.length);
    },
    oversize: (n) => observer.oversize("s2c", n),
  });
  const s2c = pump(
    child.stdout,
    clientOut,
    (chunk) => {
      digests.s2c.update(chunk);
      bytes.s2c += chunk.length;
      s2cFrames.push(chunk);
    },
    o.fault?.corrupt,
  ).then(() => s2cFrames.end());

  // client → server (test-only corruption is applied server → client only, so
  // that the server still answers and the client sees exactly what changed)
  const c2sTap = (chunk: Uint8Array) => {
    digests.c2s.update(chunk);
    bytes.c2s += chunk.length;
  };
  // Framed (a call waits for its record) under --write-ahead and --map.
  const c2s =
    writeAhead || o.actions
      ? pumpFramed(rt.stdin(), child.stdin, {
          maxFrame: o.maxFrame,
          hold: (f) => {
            const h = observer.fromClient(f);
            reclaimAfter(f.length);
            return h;
          },
          refuse: () => {
            for (const line of observer.refuse()) clientOut.inject(line);
          },
          oversize: (n) => observer.oversize("c2s", n),
          longFrame: (f) => observer.longFrame(f),
          holdLong: writeAhead,
          tap: c2sTap,
        })
      : (() => {
          const frames = new FrameSplitter(o.maxFrame, {
            frame: (f) => {
              void observer.fromClient(f);
              reclaimAfter(f.length);
            },
            oversize: (n) => observer.oversize("c2s", n),
            longFrame: (f) => void observer.longFrame(f),
          });
          return pump(rt.stdin(), child.stdin, (chunk) => {
            c2sTap(chunk);
            frames.push(chunk);
          }).then(() => frames.end());
        })();
  void c2s.then(async () => {
    // Client EOF: close the server's stdin, which is how MCP asks a stdio server to stop.
    endReason ??= "client_eof";
    await child.stdin.end();
  });

  const status = await child.exited;
  endReason ??= "child_exit";
  await Promise.race([s2c, sleep(DRAIN_AFTER_EXIT_MS)]);
  stopSignals();
  await clientOut.end();
  observer.finish(endReason);

  const code = status.code ?? EXIT.SIGNAL_BASE + signalNumber(status.signal);
  const end: Fields = {
    reason: endReason,
    exit_code: code,
    signal: status.signal ?? undefined,
    ...observer.endCounts(),
    client_gone: stdout.broken || undefined,
    bytes: new Map<string, Json>([
      ["c2s", bytes.c2s],
      ["s2c", bytes.s2c],
    ]),
    stream_digests: new Map<string, Json>([
      ["c2s", digests.c2s.digest()],
      ["s2c", digests.s2c.digest()],
    ]),
  };
  await ledger.end(end);
  return code;
}

function signalNumber(signal: string | null): number {
  if (!signal) return 0;
  return (osConstants.signals as Record<string, number>)[signal] ?? 0;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref?.());
}
