import { readdirSync, readFileSync, statSync } from "node:fs";
import { hostname } from "node:os";

/**
 * Only Linux has /proc: on macOS and Windows nothing here reads a path under
 * it (a /proc mounted there, or a file planted at that name, says nothing
 * about processes), and every answer is the one for "cannot be told".
 */
function hasProc(platform: NodeJS.Platform): boolean {
  return platform === "linux";
}

/**
 * When process `pid` started, in clock ticks since boot: field 22 of
 * /proc/PID/stat (proc(5)). Null where there is no /proc (macOS, Windows) or
 * no such process. With the pid it names one process: a pid is reused within
 * minutes on a busy host (pid_max is often 32768), a start time is not.
 */
export function processStartTime(pid: number, platform: NodeJS.Platform = process.platform): number | null {
  if (!hasProc(platform)) return null;
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

/** seam's entry as a command line names it: the executable, the Node bundle, the source, or the npm bin link. */
const SEAM_ENTRY = /(?:^|\/)seam(?:\.mjs|\.js|\.ts)?$/;

/**
 * Whether process `pid` runs seam: an argument of its command line
 * (/proc/PID/cmdline) is seam's entry. False when there is no such process
 * or its command line cannot be read.
 */
export function isSeamProcess(pid: number, platform: NodeJS.Platform = process.platform): boolean {
  if (!hasProc(platform)) return false;
  let raw: string;
  try {
    raw = readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return false;
  }
  return raw.split("\0").some((a) => SEAM_ENTRY.test(a));
}

/**
 * Is the writer of a session still running? Only when it ran on this host,
 * its session_begin recorded the writer's start time (`pid_start`), the
 * process with that pid now started at that same time, and that process is
 * seam: a row can name any process with its real start time (pid 1's is
 * easy to read), so a claim that the writer lives is believed only of seam.
 * Without a start time to compare (an older ledger, a host without /proc:
 * macOS, Windows, where a live pid alone could be any later process) the
 * answer is no, so an open session stays a finding (inconclusive), never ok.
 */
export function isWriterAlive(
  pid: number,
  host: string,
  start?: unknown,
  platform: NodeJS.Platform = process.platform,
): boolean {
  if (host !== hostname()) return false;
  if (typeof start !== "number" || !Number.isSafeInteger(start)) return false;
  return processStartTime(pid, platform) === start && isSeamProcess(pid, platform);
}

/**
 * Whether process `pid` has the file with this device and inode open (one of
 * /proc/PID/fd). null where this cannot be told: no /proc on this system
 * (macOS, Windows). A process of another user, whose descriptors cannot be
 * read, has it open as far as this user can know: false.
 */
export function holdsFileOpen(
  pid: number,
  dev: bigint,
  ino: bigint,
  platform: NodeJS.Platform = process.platform,
): boolean | null {
  if (!hasProc(platform)) return null;
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT") {
      try {
        readdirSync("/proc/self/fd");
      } catch {
        return null; // no /proc here
      }
    }
    return false;
  }
  for (const fd of fds) {
    try {
      const st = statSync(`/proc/${pid}/fd/${fd}`, { bigint: true });
      if (st.dev === dev && st.ino === ino) return true;
    } catch {}
  }
  return false;
}
