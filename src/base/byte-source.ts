/**
 * Reading a byte source (a file's chunks, stdin, a followed file) where the
 * source's own failure is an answer, not an exception: the verifier turns it
 * into `unreadable: <reason>`, the I/O error in seam's one wording.
 */
import { describeIoError } from "./io-error.ts";

/** The last item of guardSource when the source threw: why, in words. */
export interface SourceFailure {
  failed: string;
}

/**
 * The source's chunks in order and, when the source itself throws, one last
 * item `{ failed }` in place of the error. Only the source's failures are
 * caught: an error thrown by the loop that reads these passes through. The
 * source is closed however that loop ends.
 */
export async function* guardSource(
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
): AsyncGenerator<Uint8Array | SourceFailure> {
  const it: AsyncIterator<Uint8Array> | Iterator<Uint8Array> =
    Symbol.asyncIterator in source ? source[Symbol.asyncIterator]() : source[Symbol.iterator]();
  try {
    for (;;) {
      let step: IteratorResult<Uint8Array>;
      try {
        step = await it.next();
      } catch (err) {
        yield { failed: describeIoError(err) };
        return;
      }
      if (step.done) return;
      yield step.value;
    }
  } finally {
    await Promise.resolve(it.return?.()).catch(() => {});
  }
}
