/**
 * Picks the runtime implementation once. This is the only place that asks
 * whether seam runs on Bun or Node.
 */

import { useSha256 } from "../core/sha256.ts";
import { openAppend } from "./file.ts";
import { bunStdin, bunStdout, spawnBun } from "./proc-bun.ts";
import { nodeStdin, nodeStdout, spawnNode } from "./proc-node.ts";
import { startThread } from "./thread.ts";
import type { Runtime } from "./types.ts";

export type * from "./types.ts";

const isBun = typeof (globalThis as { Bun?: unknown }).Bun !== "undefined";

// Every row's digests and chain are hashed in one shot: Bun's own, which
// writes into a buffer, costs less than node:crypto's there (src/core/sha256.ts).
if (isBun) {
  const { SHA256 } = (
    globalThis as unknown as { Bun: { SHA256: { hash(d: string | Uint8Array, out: Uint8Array): void } } }
  ).Bun;
  useSha256((data, out) => SHA256.hash(data, out));
}

function onSignals(signals: readonly string[], handler: (signal: string) => void): () => void {
  const handlers = signals.map((s) => {
    const h = () => handler(s);
    process.on(s as NodeJS.Signals, h);
    return [s, h] as const;
  });
  return () => {
    for (const [s, h] of handlers) process.off(s as NodeJS.Signals, h);
  };
}

/**
 * The argv that starts this same seam again: the compiled executable alone
 * (its script lives in Bun's embedded filesystem), else runtime + script.
 */
function selfArgv(): string[] {
  const script = process.argv[1];
  if (!script || script.startsWith("/$bunfs/") || /^[A-Z]:\\~BUN\\/.test(script)) return [process.execPath];
  // From source under Bun, keep a .env in the working directory out of the children too.
  return isBun ? [process.execPath, "--no-env-file", script] : [process.execPath, script];
}

/** One sink for fd 1 per process, whoever asks: two would interleave. */
function once<T>(make: () => T): () => T {
  let made: T | undefined;
  return () => (made ??= make());
}

export const runtime: Runtime = isBun
  ? {
      name: `bun ${(globalThis as unknown as { Bun: { version: string } }).Bun.version}`,
      spawn: spawnBun,
      stdin: bunStdin,
      stdout: once(bunStdout),
      openAppend,
      onSignals,
      selfArgv,
      startThread,
      // A fresh process forwards a burst much faster with the recording on a thread of its own.
      recorderThread: true,
      reclaim: () => (globalThis as unknown as { Bun: { gc(sync: boolean): void } }).Bun.gc(true),
    }
  : {
      name: `node ${process.versions.node}`,
      spawn: spawnNode,
      stdin: nodeStdin,
      stdout: once(nodeStdout),
      openAppend,
      onSignals,
      selfArgv,
      startThread,
      // A thread holds a second V8 isolate for the whole session, where a warm burst goes no faster.
      recorderThread: false,
      // Node lets a program collect only when started with --expose-gc; its
      // collector already keeps the heap near what is live (bench/relay.ts, large).
      reclaim: () => (globalThis as { gc?: () => void }).gc?.(),
    };
