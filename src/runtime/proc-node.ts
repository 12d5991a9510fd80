/** Child processes, stdio and signals on Node (node:child_process, node:net). */
import { spawn as nodeSpawn } from "node:child_process";
import { fstatSync } from "node:fs";
import { Socket } from "node:net";
import type { Readable, Writable } from "node:stream";
import type { ByteSink, ByteSource, Child, ExitStatus, PushChunks, SpawnResult } from "./types.ts";

/**
 * Wraps a Writable as a ByteSink: `write` hands back a promise only when the
 * stream's buffer is full (the caller waits for 'drain'). A reader that went
 * away (EPIPE, ECONNRESET) marks the sink broken; later writes are dropped,
 * which is all a relay can do with bytes nobody can receive.
 */
export function writableSink(stream: Writable): ByteSink & { readonly broken: boolean } {
  let broken = false;
  let ending: Promise<void> | undefined;
  let waiting: (() => void) | null = null;
  const release = () => {
    const w = waiting;
    waiting = null;
    w?.();
  };
  stream.on("error", () => {
    broken = true;
    release();
  });
  stream.on("close", release);
  stream.on("drain", release);
  return {
    get broken() {
      return broken;
    },
    write(chunk) {
      if (broken || stream.destroyed || stream.writableEnded) return;
      try {
        if (stream.write(chunk)) return;
      } catch {
        // Bun's process.stdout can throw EPIPE from write itself.
        broken = true;
        return;
      }
      return new Promise<void>((resolve) => {
        waiting = resolve;
      });
    },
    end() {
      // One ending, however often asked: a second stream.end() on a file
      // under Bun never calls back (writableEnded is not set there).
      ending ??= new Promise<void>((resolve) => {
        if (broken || stream.destroyed || stream.writableEnded) return resolve();
        stream.end(() => resolve());
        stream.once("error", () => resolve());
      });
      return ending;
    },
  };
}

/**
 * A Readable as a ByteSource that also pushes its chunks from 'data' events,
 * pausing while a chunk's promise is pending, as `Readable.pipe` does: the
 * stream's async iterator costs a few promise steps a chunk more.
 */
export function readableSource(stream: Readable): ByteSource {
  const each: PushChunks = (f) =>
    new Promise<void>((resolve) => {
      let last: Promise<void> | undefined;
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        stream.off("data", onData);
        // Whatever the last chunk's promise waits for, then the end.
        void (last ?? Promise.resolve()).then(resolve, resolve);
      };
      const onData = (chunk: Uint8Array) => {
        const wait = f(chunk);
        if (!wait) return;
        stream.pause();
        const p = wait.then(
          () => {
            if (last === p) last = undefined;
            if (!done) stream.resume();
          },
          // A wait that fails ends the flow, as a read error does.
          () => {
            if (last === p) last = undefined;
            finish();
          },
        );
        last = p;
      };
      stream.on("data", onData);
      stream.once("end", finish);
      stream.once("error", finish);
      stream.once("close", finish);
    });
  return { [Symbol.asyncIterator]: () => (stream as AsyncIterable<Uint8Array>)[Symbol.asyncIterator](), each };
}

/**
 * A child's stdout as readableSource makes it, but read from the moment the
 * child is spawned: once a child exits, Node's child_process resumes its
 * output streams, and what nobody has read yet is thrown away. Until the
 * source is read, each chunk that comes is kept and the stream paused (the
 * pipe then holds the rest, and the child waits, as with any reader that
 * does not read; after it exits, what was left in the pipe is kept too).
 * The kept chunks go first.
 */
export function heldSource(stream: Readable): ByteSource {
  const held: Uint8Array[] = [];
  let over = false;
  const keep = (chunk: Uint8Array) => {
    held.push(chunk);
    stream.pause();
  };
  const end = () => {
    over = true;
  };
  stream.on("data", keep);
  stream.once("end", end);
  stream.once("error", end);
  stream.once("close", end);
  /** The kept chunks, once: from then on the stream is read as readableSource reads it. */
  const take = () => {
    stream.off("data", keep);
    stream.off("end", end);
    stream.off("error", end);
    stream.off("close", end);
    return held.splice(0);
  };
  const source = readableSource(stream);
  const each: PushChunks = async (f) => {
    for (const chunk of take()) {
      try {
        const wait = f(chunk);
        if (wait) await wait;
      } catch {
        return;
      }
    }
    if (over) return;
    const done = source.each!(f);
    // Paused by `keep`: a new 'data' listener alone does not make it flow again.
    stream.resume();
    await done;
  };
  return {
    async *[Symbol.asyncIterator]() {
      yield* take();
      // The stream's own iterator reads with read(), paused or not.
      if (!over) yield* stream as AsyncIterable<Uint8Array>;
    },
    each,
  };
}

export async function spawnNode(
  argv: readonly string[],
  opts: { cwd?: string; env?: Record<string, string | undefined> } = {},
): Promise<SpawnResult> {
  const [file, ...args] = argv;
  if (file === undefined) return { ok: false, reason: "empty command" };
  return new Promise<SpawnResult>((resolve) => {
    let proc;
    try {
      proc = nodeSpawn(file, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ["pipe", "pipe", "inherit"] });
    } catch (err) {
      return resolve({ ok: false, reason: errorText(err) });
    }
    const exited = new Promise<ExitStatus>((res) => proc.once("exit", (code, signal) => res({ code, signal })));
    proc.once("error", (err) => resolve({ ok: false, reason: errorText(err) }));
    proc.once("spawn", () => {
      const stdin = proc.stdin!;
      const child: Child = {
        pid: proc.pid!,
        stdin: writableSink(stdin),
        stdout: heldSource(proc.stdout!),
        exited,
        kill(signal) {
          try {
            proc.kill(signal as NodeJS.Signals);
          } catch {}
        },
      };
      resolve({ ok: true, child });
    });
  });
}

export function nodeStdin(): ByteSource {
  return readableSource(process.stdin);
}

/**
 * Node's documentation calls writes to a pipe on stdout synchronous, which
 * would stall the other direction of the relay whenever the client is slow to
 * read. A socket of our own on fd 1 is asynchronous and gives real
 * backpressure wherever Node runs. (On Linux, Node 20's process.stdout on a
 * pipe passes test/e2e/relay-stdout.test.ts as well: libuv writes at once what the
 * pipe takes and queues the rest. Writing with write(2) directly while nothing
 * was queued, to skip the socket's bookkeeping, did not move the round trip
 * of bench/relay.ts.)
 */
export function nodeStdout(): ByteSink & { readonly broken: boolean } {
  let stream: Writable = process.stdout;
  try {
    const st = fstatSync(1);
    if (st.isFIFO() || st.isSocket()) stream = new Socket({ fd: 1, readable: false, writable: true });
  } catch {}
  return writableSink(stream);
}

export function errorText(err: unknown): string {
  if (err && typeof err === "object" && "code" in err && typeof err.code === "string") {
    const e = err as { code: string; message?: string };
    if (e.code === "ENOENT") return "command not found";
    if (e.code === "EACCES") return "permission denied";
    return e.code.toLowerCase();
  }
  return err instanceof Error ? err.message : String(err);
}
