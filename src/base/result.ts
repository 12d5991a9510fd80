/**
 * What a fallible step returns where a failure is an answer, not an
 * exception: `ok` and the value's fields, or `ok: false` and why (in words
 * for a message), with a hint when there is an obvious fix.
 */
export type Result<T extends object = object> = ({ ok: true } & T) | Failure;

export interface Failure {
  ok: false;
  reason: string;
  hint?: string;
}
