/**
 * Results on stdout, through the runtime's one stdout sink: a reader that
 * goes away (`seam selftest | head -1`) stops the output, never the command,
 * and the process never hangs waiting for a pipe nobody reads.
 */
import { runtime } from "../src/runtime/index.ts";

const encoder = new TextEncoder();

export async function print(text: string): Promise<void> {
  const w = runtime.stdout().write(encoder.encode(text));
  if (w) await w;
}

/** Waits until everything printed has been handed to the OS (or the reader is gone). */
export function flushOut(): Promise<void> {
  return runtime.stdout().end();
}

/** The width to lay text out in: the terminal's, else $COLUMNS, else 80 (a pipe, a file); never under 40. */
export function outputWidth(): number {
  const tty = process.stdout.isTTY === true ? process.stdout.columns : undefined;
  const env = Number(process.env.COLUMNS);
  const w = tty !== undefined && tty > 0 ? tty : Number.isInteger(env) && env > 0 ? env : 80;
  return Math.max(40, w);
}
