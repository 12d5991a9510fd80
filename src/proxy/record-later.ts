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
 * Sooner when the proxy has just passed a request on and waits for the
 * upstream (Later.waiting): a sequential client's call is then recorded
 * while the upstream works on its next one, not at a moment that may fall
 * on the next request's arrival.
 *
 * What this costs: the chunks are held that much longer, at most
 * RECORD_MAX_BYTES of them (more, and the batch runs at once); the batch runs
 * on the thread that forwards, so reading pauses while it runs (the sockets'
 * own back-pressure). Under --write-ahead, --fail-closed and --map a call waits
 * for its rows, so the proxy runs its recording at the end of the event
 * loop's turn instead (`soon`), as before.
 */

/** How long recording waits after the bytes it records crossed. */
export const RECORD_DELAY_MS = 3;

/** Most bytes of chunks waiting to be recorded: a large body is recorded as it streams, not held. */
export const RECORD_MAX_BYTES = 1 << 20;

/** Runs a function after the bytes it records crossed; `bytes`: how many it holds until then. */
export interface Later {
  (f: () => void, bytes?: number): void;
  /** A request has gone upstream and the proxy waits for the answer: what is queued may run now (after this turn's writes). */
  waiting(): void;
}

/** At the end of the event loop's turn: what the turn wrote has gone out first. */
export const soon: Later = Object.assign(
  (f: () => void) => {
    setImmediate(f);
  },
  { waiting: () => {} },
);

/**
 * A queue run `delayMs` after its first function was put in, or at the end
 * of the turn `waiting` was called in, whichever comes first: whole, in
 * order. Functions put in while it runs (a ledger writer's wait for the rows
 * of the batch) run at the end of that turn, after the promise steps the
 * batch started: the rows those steps append then go in the same write.
 */
export function delayed(delayMs = RECORD_DELAY_MS, maxBytes = RECORD_MAX_BYTES): Later {
  let queue: (() => void)[] = [];
  let held = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let kicked = false;
  let running = false;
  const run = () => {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    const batch = queue;
    queue = [];
    held = 0;
    running = true;
    for (const f of batch) {
      try {
        f();
      } catch {
        // Each function handles its own failures; one that escapes must not drop the rest.
      }
    }
    running = false;
    if (queue.length > 0) setImmediate(run);
  };
  const kick = () => {
    kicked = false;
    if (!running && queue.length > 0) run();
  };
  const later = (f: () => void, bytes = 0) => {
    queue.push(f);
    held += bytes;
    // Past the bound, now (in order, everything queued before it first); not from inside a batch, which its follow-up ends.
    if (held > maxBytes && !running) {
      run();
      return;
    }
    if (timer === undefined && !running) timer = setTimeout(run, delayMs);
  };
  return Object.assign(later, {
    waiting: () => {
      if (kicked || queue.length === 0) return;
      kicked = true;
      setImmediate(kick);
    },
  });
}
