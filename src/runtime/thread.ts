/**
 * Threads of seam's own. Bun and Node both implement node:worker_threads, so
 * nothing here differs between them; what belongs to the runtime is where a
 * thread's code comes from. A thread runs the script this build was started
 * from (the source entry under Bun, dist/seam.mjs under Node, the compiled
 * executable's own embedded entry), which asks `threadRole()` first and does
 * that role's work instead of reading a command line. So all three builds
 * carry their threads with them and nothing is looked up on disk by name.
 */
import { readlinkSync } from "node:fs";
import { getPriority, setPriority } from "node:os";
import { isMainThread, type MessagePort, parentPort, Worker, workerData } from "node:worker_threads";
import type { Thread } from "./types.ts";

/** The script this process was started from, or undefined when it cannot start a thread of itself. */
function selfEntry(): string | undefined {
  const bun = (globalThis as { Bun?: { main?: string } }).Bun;
  return bun?.main ?? process.argv[1];
}

/** A thread's side of the link, and what it was started with. */
export interface ThreadRole {
  role: string;
  data: unknown;
  port: MessagePort;
}

interface Envelope {
  seamThreadRole: string;
  data: unknown;
}

/**
 * Starts this process's own script as a thread in `role`; null when there is
 * no script to start; throws when the runtime cannot start it.
 */
export function startThread(role: string, data: unknown): Thread | null {
  const entry = selfEntry();
  return entry ? startThreadFrom(entry, role, data) : null;
}

/** Starts the script `entry` as a thread in `role` (a test starts a fixture so). */
export function startThreadFrom(entry: string, role: string, data: unknown): Thread {
  const envelope: Envelope = { seamThreadRole: role, data };
  const worker = new Worker(entry, { workerData: envelope });
  let exited = false;
  const exits: ((error?: string) => void)[] = [];
  const exit = (error?: string) => {
    if (exited) return;
    exited = true;
    for (const h of exits) h(error);
  };
  worker.on("error", (e: unknown) => exit(e instanceof Error ? e.message : String(e)));
  worker.on("exit", (code: number) => exit(code === 0 ? undefined : `exit code ${code}`));
  return {
    post: (m, transfer) => worker.postMessage(m, transfer),
    onMessage: (h) => worker.on("message", h),
    onExit: (h) => {
      exits.push(h);
    },
    terminate: async () => {
      await worker.terminate();
    },
  };
}

/**
 * A thread started with `start` (a Runtime's startThread) in `role`, or null
 * when there is no way to start one here or it fails to start: the caller
 * then does the work on its own thread.
 */
export function threadOrNull(
  start: ((role: string, data: unknown) => Thread | null) | undefined,
  role: string,
  data: unknown,
): Thread | null {
  try {
    return start?.(role, data) ?? null;
  } catch {
    return null;
  }
}

/** In a thread started by `startThread`: its role, data and port to the starting thread; else null. */
export function threadRole(): ThreadRole | null {
  if (isMainThread || parentPort === null) return null;
  const e = workerData as Partial<Envelope> | undefined;
  if (typeof e?.seamThreadRole !== "string") return null;
  return { role: e.seamThreadRole, data: e.data, port: parentPort };
}

/**
 * Makes the calling thread yield to the process's other threads where they
 * compete for a core: on Linux it sets this thread's own nice value `by`
 * above the process's (a thread id is a pid to setpriority, found through
 * /proc/thread-self). Nothing elsewhere: macOS's setpriority sets the whole
 * process's priority, and Node offers no thread priority on Windows, so
 * there the thread keeps the process's priority; likewise on Linux when
 * that fails. Never throws.
 */
export function yieldToOtherThreads(by = 10, platform: NodeJS.Platform = process.platform): void {
  if (platform !== "linux") return;
  try {
    const tid = Number(readlinkSync("/proc/thread-self").split("/").pop());
    if (Number.isSafeInteger(tid) && tid > 0 && tid !== process.pid)
      setPriority(tid, Math.min(19, getPriority(process.pid) + by));
  } catch {
    // Not allowed: the thread keeps the process's priority.
  }
}
