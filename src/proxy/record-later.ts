/**
 * When `seam proxy` does its recording: observing the frames of an exchange,
 * making its rows and writing them to the ledger. The bytes are forwarded at
 * once; what records them is queued here and run a moment later
 * (RECORD_DELAY_MS), everything due in one batch, in the order it was queued.
 * The rows' times are taken when the bytes crossed, not when they are made.
 *
 * Why wait: right after an answer's last byte, the client reads it and sends
 * its next request. Recording at that moment competed with the client for the
 * CPU and delayed that request (bench/proxy.ts under Node, server-everything,
 * sequential calls: the next request reached the proxy a median 540 µs after
 * the answer ended, against 180 µs through the bare proxy). A few ms later the
 * call is usually with the upstream and the client waits.
 *
 * What this costs: a frame is held that much longer, so memory holds what
 * crosses in RECORD_DELAY_MS plus one batch; the batch runs on the thread
 * that forwards, so reading pauses while it runs (the sockets' own
 * back-pressure). Under --write-ahead, --fail-closed and --map a call waits
 * for its rows, so the proxy runs its recording at the end of the event
 * loop's turn instead (`soon`), as before.
 */

/** How long recording waits after the bytes it records crossed. */
export const RECORD_DELAY_MS = 3;

/** Runs a function after the bytes it records crossed. */
export type Later = (f: () => void) => void;

/** At the end of the event loop's turn: what the turn wrote has gone out first. */
export const soon: Later = (f) => {
  setImmediate(f);
};

/**
 * A queue run `delayMs` after its first function was put in, whole, in
 * order. Functions put in while it runs (a ledger writer's wait for the rows
 * of the batch) run at the end of that turn, after the promise steps the
 * batch started: the rows those steps append then go in the same write.
 */
export function delayed(delayMs = RECORD_DELAY_MS): Later {
  let queue: (() => void)[] = [];
  let scheduled = false;
  const run = () => {
    const batch = queue;
    queue = [];
    for (const f of batch) {
      try {
        f();
      } catch {
        // Each function handles its own failures; one that escapes must not drop the rest.
      }
    }
    if (queue.length > 0) setImmediate(run);
    else scheduled = false;
  };
  return (f) => {
    queue.push(f);
    if (scheduled) return;
    scheduled = true;
    setTimeout(run, delayMs);
  };
}
