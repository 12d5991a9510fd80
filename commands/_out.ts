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
