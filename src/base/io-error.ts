/** How seam words a failed file operation: lowercase, no path (the caller says which file). */

/** `EACCES: permission denied, open '…'` → `permission denied` (Bun and Node word errors alike). */
export function describeWriteError(err: unknown): string {
  const e = err as NodeJS.ErrnoException | undefined;
  const m = /^[A-Z][A-Z0-9_]*: ([^,]+)/.exec(String(e?.message ?? ""));
  if (m) return m[1]!.trim();
  if (typeof e?.code === "string") return e.code.toLowerCase();
  return String(e?.message ?? err).toLowerCase();
}

const READ_ERRORS: Record<string, string> = {
  ENOENT: "no such file or directory",
  EACCES: "permission denied",
  EPERM: "permission denied",
  EISDIR: "is a directory",
  ENOTDIR: "not a directory",
  ELOOP: "too many levels of symbolic links",
  ENAMETOOLONG: "file name too long",
  EIO: "input/output error",
  EMFILE: "too many open files",
};

/** The `<reason>` of `unreadable: <reason>`: strerror-like, lowercase, no path. */
export function describeReadError(err: unknown): string {
  const code = typeof err === "object" && err !== null ? (err as { code?: unknown }).code : undefined;
  if (typeof code === "string") return READ_ERRORS[code] ?? code.toLowerCase();
  if (err instanceof Error) return err.message.replace(/\.$/, "").toLowerCase();
  return String(err);
}
