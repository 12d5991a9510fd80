/** Child processes and stdio on Bun (Bun.spawn, FileSink). */
import type { FileSink } from "bun";
import { errorText, writableSink } from "./proc-node.ts";
import type { ByteSink, ByteSource, Child, SpawnResult } from "./types.ts";

/**
 * Wraps a FileSink as a ByteSink. A FileSink buffers; flushing after every
 * chunk keeps latency at zero, and the promise flush() returns while the pipe
 * is full is the backpressure. A closed reader (EPIPE) marks it broken.
 */
export function fileSink(sink: FileSink, readerGone?: Promise<unknown>): ByteSink & { readonly broken: boolean } {
  let broken = false;
  // A FileSink whose reader has gone logs EPIPE on stderr instead of throwing
  // (seen with Bun 1.4): stop writing once the reading process has exited.
  void readerGone?.then(() => {
    broken = true;
  });
  const fail = () => {
    broken = true;
  };
  return {
    get broken() {
      return broken;
    },
    write(chunk) {
      if (broken) return;
      try {
        sink.write(chunk);
        const r = sink.flush();
        if (r instanceof Promise) return r.then(() => {}, fail);
      } catch {
        fail();
      }
    },
    async end() {
      if (broken) return;
      try {
        await sink.end();
      } catch {
        fail();
      }
    },
  };
}

export async function spawnBun(
  argv: readonly string[],
  opts: { cwd?: string; env?: Record<string, string | undefined> } = {},
): Promise<SpawnResult> {
  if (argv.length === 0) return { ok: false, reason: "empty command" };
  let proc;
  try {
    proc = Bun.spawn({
      cmd: [...argv],
      cwd: opts.cwd,
      env: (opts.env ?? process.env) as Record<string, string>,
      stdin: "pipe",
      stdout: "pipe",
      stderr: "inherit",
    });
  } catch (err) {
    return { ok: false, reason: errorText(err) };
  }
  const p = proc;
  const child: Child = {
    pid: p.pid,
    stdin: fileSink(p.stdin, p.exited),
    stdout: p.stdout as unknown as AsyncIterable<Uint8Array>,
    exited: p.exited.then((code) => ({
      code: p.signalCode ? null : code,
      signal: p.signalCode ? String(p.signalCode) : null,
    })),
    kill(signal) {
      try {
        p.kill(signal as NodeJS.Signals);
      } catch {}
    },
  };
  return { ok: true, child };
}

export function bunStdin(): ByteSource {
  return Bun.stdin.stream() as unknown as AsyncIterable<Uint8Array>;
}

/**
 * Bun's process.stdout reports a client that went away as an 'error' event,
 * where a FileSink on fd 1 only logs it; the Writable path is the one that
 * lets seam record EPIPE instead of printing it.
 */
export function bunStdout(): ByteSink & { readonly broken: boolean } {
  return writableSink(process.stdout);
}
