import { hostname } from "node:os";

/**
 * Is the writer of a session still running? It is when it ran on this host
 * and its pid still answers signal 0 (EPERM means it exists but is not ours).
 */
export function isWriterAlive(pid: number, host: string): boolean {
  if (host !== hostname()) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: string }).code === "EPERM";
  }
}
