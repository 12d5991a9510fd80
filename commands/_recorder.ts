/**
 * The recorder thread's start (src/wrap/recorder-thread.ts): seam's entry
 * point runs this instead of a command when it is started as that thread. It
 * makes from plain data what cannot cross between threads (the checkpoint
 * signer, a selftest fault), as the command line did on the other side.
 */
import { createLog } from "../src/base/log.ts";
import { newSigner } from "../src/checkpoint/note.ts";
import type { ThreadRole } from "../src/runtime/thread.ts";
import { runtime } from "../src/runtime/index.ts";
import { type Fault, wrapFault } from "../src/selftest/faults.ts";
import { serveRecorder, threadLog } from "../src/wrap/recorder-thread.ts";
import { RECORDER_ROLE, type RecorderData } from "../src/wrap/recorder-protocol.ts";

/** What commands/wrap.ts hands the recorder thread. */
export interface RecorderPlain {
  fault?: Fault;
  checkpoints?: { keyText: string; every: number; intervalMs: number; witness?: string };
}

/** Serves `role` when it is the recorder's; false for a role this build does not know. */
export async function serveThread(role: ThreadRole): Promise<boolean> {
  if (role.role !== RECORDER_ROLE) return false;
  const data = role.data as RecorderData;
  const plain = data.plain as RecorderPlain;
  const c = plain.checkpoints;
  await serveRecorder(
    runtime,
    role.port,
    data,
    {
      faults: plain.fault === undefined ? undefined : wrapFault(plain.fault).observer,
      checkpoints: c && { signer: newSigner(c.keyText), every: c.every, intervalMs: c.intervalMs, witness: c.witness },
    },
    threadLog(role.port, createLog),
  );
  return true;
}
