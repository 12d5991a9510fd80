/**
 * When a recording asks the runtime to give garbage's memory back
 * (Runtime.reclaim: under Bun a full collection, synchronous).
 *
 * Observing frames leaves short-lived copies several times their size, which
 * Bun's collector lets pile up where it does not see them (buffers outside its
 * heap, the recorder's backlog), so relaying large answers would grow the
 * process well past what it holds (bench/relay.ts, "large", measures the peak).
 * But a full collection costs the same whether or not memory has grown, and a
 * session of small calls, whose garbage the collector's own young-generation
 * passes take, would pay for one all the same (bench/micro.bench.ts, "record,
 * per call", shows that cost). So every 8 MiB observed the process's resident size is read, and the
 * collection asked for only when it has grown by GROWTH since the last one.
 */

/** Bytes of observed frames between two looks at the resident size. */
export const RECLAIM_EVERY = 8 * 1024 * 1024;
/** How far the resident size may grow past where the last collection left it before another is asked for. */
export const GROWTH = 16 * 1024 * 1024;

export class Reclaimer {
  private since = 0;
  private floor: number;

  /** `rss`: the process's resident size in bytes (the tests give their own). */
  constructor(
    private readonly reclaim: () => void,
    private readonly rss: () => number = () => process.memoryUsage.rss(),
  ) {
    this.floor = rss();
  }

  /** `n` more bytes of frames were observed. */
  observed(n: number): void {
    this.since += n;
    if (this.since < RECLAIM_EVERY) return;
    this.since = 0;
    if (this.rss() < this.floor + GROWTH) return;
    this.reclaim();
    this.floor = this.rss();
  }
}
