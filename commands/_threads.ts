/**
 * Every thread of seam's own starts here (src/runtime/thread.ts): seam's
 * entry point runs serveThread instead of a command when it is started as a
 * thread, and the role it was started with says which:
 *   recorder         a wrapped session's recording (src/wrap/recorder-thread.ts)
 *   stream-verifier  one origin of `seam verify nats://…` (src/fleet/verify-thread.ts)
 *   read-verifier    the verifier one step ahead of log, stats, check, report (src/read/verify-ahead.ts)
 *   payload-writer   the payload files of a recorder thread's --payloads (src/runtime/payload-thread.ts)
 * Each role's code is loaded only by the thread that serves it.
 */
import type { ThreadRole } from "../src/runtime/thread.ts";
import type { Fault } from "../src/selftest/faults.ts";
import type { RecorderData } from "../src/wrap/recorder-protocol.ts";

/** What commands/wrap.ts hands the recorder thread. */
export interface RecorderPlain {
  fault?: Fault;
  checkpoints?: { keyText: string; every: number; intervalMs: number; witness?: string; witnessUrls?: string[] };
}

/** The roles, by the names their protocols give them; each loads its code when served. */
const ROLES: Record<string, (role: ThreadRole) => Promise<void>> = {
  recorder: serveRecorderThread,
  "stream-verifier": async (role) => {
    const { serveVerifier } = await import("../src/fleet/verify-thread.ts");
    serveVerifier(role.port, role.data as import("../src/fleet/verify-thread.ts").VerifierData);
  },
  "read-verifier": async (role) => {
    const { serveAhead } = await import("../src/read/verify-ahead.ts");
    serveAhead(role);
  },
  "payload-writer": async (role) => {
    const { servePayloadWriter } = await import("../src/runtime/payload-thread.ts");
    servePayloadWriter(role);
  },
};

/** The roles this build serves (each must be the name its protocol module exports). */
export const THREAD_ROLES: readonly string[] = Object.keys(ROLES);

/** Serves `role`; false for a role this build does not know. */
export async function serveThread(role: ThreadRole): Promise<boolean> {
  const serve = Object.hasOwn(ROLES, role.role) ? ROLES[role.role] : undefined;
  if (serve === undefined) return false;
  await serve(role);
  return true;
}

/**
 * The recorder makes from plain data what cannot cross between threads (the
 * checkpoint signer, a selftest fault), as the command line did on the other side.
 */
async function serveRecorderThread(role: ThreadRole): Promise<void> {
  const [{ createLog }, { newSigner }, { runtime }, { wrapFault }, { serveRecorder, threadLog }, { WitnessSubmitter }] =
    await Promise.all([
      import("../src/base/log.ts"),
      import("../src/checkpoint/note.ts"),
      import("../src/runtime/index.ts"),
      import("../src/selftest/faults.ts"),
      import("../src/wrap/recorder-thread.ts"),
      import("../src/checkpoint/submit.ts"),
    ]);
  const data = role.data as RecorderData;
  const plain = data.plain as RecorderPlain;
  const c = plain.checkpoints;
  const log = threadLog(role.port, createLog);
  const urls = c?.witnessUrls ?? [];
  await serveRecorder(
    runtime,
    role.port,
    data,
    {
      faults: plain.fault === undefined ? undefined : wrapFault(plain.fault).observer,
      checkpoints: c && {
        signer: newSigner(c.keyText),
        every: c.every,
        intervalMs: c.intervalMs,
        witness: c.witness,
        submitter:
          urls.length > 0
            ? new WitnessSubmitter(urls, { warn: (m) => log.warn(m), info: (m) => log.info(m) })
            : undefined,
      },
    },
    log,
  );
}
