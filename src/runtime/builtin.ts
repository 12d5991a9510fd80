/**
 * A node: module loaded when it is first needed instead of when seam starts.
 * Bun builds each node: module a process imports into that process's (and
 * each thread's) heap, so a command that never uses one should not load it:
 * `seam wrap` never makes an HTTP request. Node has them all already, and
 * takes this path only for the same code to run on both.
 */
import { createRequire } from "node:module";

export function nodeBuiltin<T>(id: string): T {
  const get = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  // Node before 20.16 has no getBuiltinModule.
  return (get ? get(id) : createRequire(import.meta.url)(id)) as T;
}
