/**
 * Which file a ledger path names, for the lock beside it: the real path (every
 * symlink resolved), so that two names of one ledger (a symlinked directory
 * and the real one) take one lock and never fork its chain.
 */
import { realpath } from "node:fs/promises";

/** The ledger's real path; the path as given when it cannot be resolved. */
export async function lockIdentity(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch {
    return path;
  }
}
