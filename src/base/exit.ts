/**
 * The one exit-code table. Every command returns one of these; `wrap` also
 * passes the child's own status through (0–255, 128+N for signal N).
 */
import { SeamError } from "./error.ts";
export const EXIT = {
  /** Success; `verify`: every row checked, no break, no finding. */
  OK: 0,
  /** `verify`: the ledger is broken. `digest`: input unreadable, unparseable or undigestible. */
  FAIL: 1,
  /** The command line was wrong, or a file it names cannot be read (missing, a directory, no permission); nothing was done, nothing was spawned. */
  USAGE: 2,
  /** `verify`: nothing proven wrong, but not everything could be proven (empty, prechain, findings, torn tail). */
  INCONCLUSIVE: 3,
  /** `wrap`: the server command could not be started (as a shell does). */
  SPAWN_FAILED: 127,
  /** `wrap`: added to the signal number when the child died of a signal (as a shell does). */
  SIGNAL_BASE: 128,
} as const;

/**
 * Thrown by a command for a bad command line; the entry point prints it and exits 2.
 * Without a hint the entry point points at the command's --help; `null` is no hint at all.
 */
export class UsageError extends SeamError {
  override readonly name = "UsageError";
  /** No hint to give, not even the command's --help (a file that cannot be read). */
  readonly hintless: boolean;
  constructor(message: string, hint?: string | null) {
    super("usage", message, { hint: hint ?? undefined });
    this.hintless = hint === null;
  }
}
