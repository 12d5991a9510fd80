import { readFileSync } from "node:fs";
import { hostname } from "node:os";

/**
 * When process `pid` started, in clock ticks since boot: field 22 of
 * /proc/PID/stat (proc(5)). Null where there is no /proc (macOS, Windows) or
 * no such process. With the pid it names one process: a pid is reused within
 * minutes on a busy host (pid_max is often 32768), a start time is not.
 */
export function processStartTime(pid: number): number | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "latin1");
  } catch {
    return null;
  }
  // The command name (field 2) is in parentheses and may hold spaces and ")": fields resume after the last ")".
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[19]);
  return Number.isSafeInteger(ticks) ? ticks : null;
}

/**
 * Is the writer of a session still running? Only when it ran on this host,
 * its session_begin recorded the writer's start time (`pid_start`), and the
 * process with that pid now started at that same time. Without a start time
 * to compare (an older ledger, a host without /proc) the answer is no, so an
 * open session stays a finding (inconclusive), never ok.
 */
export function isWriterAlive(pid: number, host: string, start?: unknown): boolean {
  if (host !== hostname()) return false;
  if (typeof start !== "number" || !Number.isSafeInteger(start)) return false;
  return processStartTime(pid) === start;
}
