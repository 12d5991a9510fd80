/** Child processes and stdio on Bun (Bun.spawn, FileSink). */
import type { FileSink } from "bun";
import type { ByteSink, ByteSource, Child, SpawnResult } from "./types.ts";
import { errorText } from "./proc-node.ts";

/**
 * Wraps a FileSink as a ByteSink. A FileSink buffers; flushing after every
 * chunk keeps latency at zero, and the promise flush() returns while the pipe
 * is full is the backpressure. A closed reader (EPIPE) marks it broken.
 */
export function fileSink(sink: FileSink): ByteSink & { readonly broken: boolean } {
  let broken = false;
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
  if (argv.length === 0) return { ok: false, error: "empty command" };
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
    return { ok: false, error: errorText(err) };
  }
  const p = proc;
  const child: Child = {
    pid: p.pid,
    stdin: fileSink(p.stdin),
    stdout: p.stdout as unknown as AsyncIterable<Uint8Array>,
    exited: p.exited.then((code) => ({ code: p.signalCode ? null : code, signal: p.signalCode ?? null })),
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

export function bunStdout(): ByteSink & { readonly broken: boolean } {
  return fileSink(Bun.stdout.writer());
}
