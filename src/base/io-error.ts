/**
 * The one wording of a failed file operation, for every message seam prints
 * or writes (`unreadable: <reason>`, `cannot read …: <reason>`, `ledger …
 * cannot be written: <reason>`): strerror-like, lowercase, no path (the
 * caller says which file).
 */

const REASONS: Record<string, string> = {
  ENOENT: "no such file or directory",
  EACCES: "permission denied",
  EPERM: "permission denied",
  EISDIR: "is a directory",
  ENOTDIR: "not a directory",
  ELOOP: "too many levels of symbolic links",
  ENAMETOOLONG: "file name too long",
  EIO: "input/output error",
  EMFILE: "too many open files",
  ENOSPC: "no space left on device",
  EROFS: "read-only file system",
  EEXIST: "file already exists",
  ERR_FS_FILE_TOO_LARGE: "too large to read",
  // src/runtime/small-file.ts
  ENOTREG: "not a regular file",
  EFBIG: "file too large",
};

/**
 * `EACCES: permission denied, open '…'` → `permission denied`: a known code
 * by its table entry, else the strerror text Bun and Node put in the
 * message, else the code, else the message (lowercase, no final period).
 */
export function describeIoError(err: unknown): string {
  const e = typeof err === "object" && err !== null ? (err as { code?: unknown; message?: unknown }) : undefined;
  const code = typeof e?.code === "string" ? e.code : undefined;
  if (code !== undefined && REASONS[code] !== undefined) return REASONS[code]!;
  // A file seam refused to write to (src/runtime/file.ts, UnsafeFileError) says why itself.
  const why = (e as { why?: unknown } | undefined)?.why;
  if (code === "EUNSAFE" && typeof why === "string") return why;
  const message = typeof e?.message === "string" ? e.message : String(err);
  const strerror = /^[A-Z][A-Z0-9_]*: ([^,]+)/.exec(message);
  if (strerror) return strerror[1]!.trim();
  if (code !== undefined) return code.toLowerCase();
  return message.replace(/\.$/, "").toLowerCase();
}
