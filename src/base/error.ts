/**
 * The base of every error seam throws that a user or a library caller can
 * see. `code` is stable and meant for machines (compare it, not the
 * message): an errno-style code where the error stands for a refused file
 * operation (EUNSAFE, ENOTREG, EFBIG, ELOCKTIMEOUT, a transport's ECONNRESET),
 * which src/base/io-error.ts words like the system's own; otherwise a
 * snake_case name. `hint`, when there is an obvious fix, is what the CLI
 * prints as `seam: hint: …`.
 */
export class SeamError extends Error {
  override readonly name: string = "SeamError";
  readonly code: string;
  readonly hint: string | undefined;

  constructor(code: string, message: string, options?: { hint?: string; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.hint = options?.hint;
  }
}
