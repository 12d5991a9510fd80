/**
 * A pure function's answers, kept by key in a Map the caller owns: for work
 * that sees the same few keys again and again (a session's header values,
 * the server names of a log's lines). The map is emptied when it reaches
 * `max` entries, so keys chosen by a peer, each new, cannot grow it.
 */
export function memo<T>(cache: Map<string, T>, key: string, make: (key: string) => T, max = 1024): T {
  let v = cache.get(key);
  if (v === undefined) {
    v = make(key);
    if (cache.size >= max) cache.clear();
    cache.set(key, v);
  }
  return v;
}
