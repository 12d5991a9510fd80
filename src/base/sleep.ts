/** A pause that does not keep the process alive on its own (its timer is unref'd where the runtime allows). */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref?.());
}
