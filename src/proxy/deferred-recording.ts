/**
 * When `seam proxy` does its recording: observing the frames of an exchange,
 * making its rows and writing them to the ledger. The bytes are forwarded at
 * once; what records them is queued here and run a moment later
 * (RECORD_DELAY_MS), everything due in one batch, in the order it was queued.
 * The rows' times are taken when the bytes crossed, not when they are made,
 * and each session writes its rows in the order of those times
 * (ProxySession.flush, src/proxy/session.ts).
 *
 * Why wait: right after an answer's last byte, the client reads it and sends
 * its next request. Recording at that moment competes with the client for the
 * CPU and delays that request.
 *
 * Why this long: a client making calls one after another, a few ms apart,
 * then has several of them recorded in one batch, with one write, one look
 * at the file and one turn of the ledger's lock between them, where a batch a
 * call pays each of those a call, and pays them in a process just woken, when
 * every step costs several times what it costs in a loop. The delay buys CPU
 * on the thread that forwards, not latency; bench/proxy.ts measures both
 * (run its latency targets in turns longer than the delay, or a batch lands
 * in the next target's turn). A call that arrives while a batch runs waits
 * for it.
 *
 * What this costs: the chunks are held that much longer, at most
 * RECORD_MAX_BYTES of them (more, and the batch runs at once), and a proxy
 * killed with SIGKILL loses the rows of its last RECORD_DELAY_MS
 * (docs/proxy.md says so; --fsync batch lets a crash of the machine lose its
 * fsync window of rows). The
 * batch runs on the thread that forwards, so reading pauses while it runs (the
 * sockets' own back-pressure). Under --write-ahead, --fail-closed and --map a
 * call waits for its rows, so the proxy runs its recording at the end of the
 * event loop's turn instead (`soon`).
 */

/** How long recording waits after the first bytes of its batch crossed. */
export const RECORD_DELAY_MS = 40;

/** Most bytes of chunks waiting to be recorded: a large body is recorded as it streams, not held. */
export const RECORD_MAX_BYTES = 1 << 20;

/** Runs a function after the bytes it records crossed; `bytes`: how many it holds until then. */
export type Later = (f: () => void, bytes?: number) => void;

/** At the end of the event loop's turn: what the turn wrote has gone out first. */
export const soon: Later = (f) => {
  setImmediate(f);
};

/**
 * A queue run `delayMs` after its first function was put in: whole, in
 * order. Functions put in while it runs (a ledger writer's wait for the rows
 * of the batch) run at the end of that turn, after the promise steps the
 * batch started: the rows those steps append then go in the same write.
 */
export function delayed(delayMs = RECORD_DELAY_MS, maxBytes = RECORD_MAX_BYTES): Later {
  let queue: (() => void)[] = [];
  let held = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
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
  return (f, bytes = 0) => {
    queue.push(f);
    held += bytes;
    // Past the bound, now (in order, everything queued before it first); not from inside a batch, which its follow-up ends.
    if (held > maxBytes && !running) {
      run();
      return;
    }
    if (timer === undefined && !running) timer = setTimeout(run, delayMs);
  };
}
