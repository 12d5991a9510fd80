/**
 * The one seam between seam and its runtime. Everything that differs between
 * Bun and Node (spawning, stdio streams, file sinks, signals) sits behind
 * these interfaces; nothing outside src/runtime/ asks which runtime it is on.
 */
import type { Result } from "../base/result.ts";

/** A byte sink with backpressure: `write` returns a promise only when the caller must wait. */
export interface ByteSink {
  /** Queues all of `chunk`; returns a promise when the sink wants the caller to wait before the next write. */
  write(chunk: Uint8Array): void | Promise<void>;
  /** Flushes what is queued and closes; never throws. */
  end(): Promise<void>;
}

/**
 * A byte source: an async iterable of chunks as the OS delivered them. A
 * source may also push them (`each`), which costs less per chunk than its
 * iterator where the runtime's streams are event emitters (Node).
 */
export type ByteSource = AsyncIterable<Uint8Array> & { readonly each?: PushChunks };

/**
 * Hands every chunk to `f`, in order, until the source ends or fails (both
 * resolve; never rejects). While a promise `f` returned is pending no other
 * chunk is read; the result resolves once the last one has settled.
 */
export type PushChunks = (f: (chunk: Uint8Array) => void | Promise<void>) => Promise<void>;

export interface ExitStatus {
  /** Exit code, or null when killed by a signal. */
  code: number | null;
  /** Signal name (e.g. "SIGTERM") when killed by one. */
  signal: string | null;
}

export interface Child {
  readonly pid: number;
  readonly stdin: ByteSink;
  readonly stdout: ByteSource;
  readonly exited: Promise<ExitStatus>;
  kill(signal: string): void;
}

export type SpawnResult = Result<{ child: Child }>;

/** A file opened for appending (the ledger). Every method rejects on an I/O error. */
export interface AppendFile {
  /** Appends all of `bytes` at the end of the file (O_APPEND). */
  write(bytes: Uint8Array): Promise<void>;
  /** Makes what was written durable (fsync). */
  sync(): Promise<void>;
  /** The file's current size in bytes (fstat). */
  size(): Promise<number>;
  /** Reads up to `length` bytes at `position`. */
  readAt(position: number, length: number): Promise<Uint8Array>;
  /** Cuts the file back to `size` bytes (ftruncate): a torn tail is removed, under the ledger's lock. */
  truncate(size: number): Promise<void>;
  close(): Promise<void>;
  /** Which file this is (device and inode, from fstat): two handles of one file say the same. */
  identity?(): string;
}

export interface Runtime {
  /** e.g. "bun 1.4.5" or "node 20.20.2". */
  readonly name: string;
  /**
   * Spawns argv with stdin/stdout piped and stderr inherited. Never throws.
   * The child's output waits until it is read, however late, even once the
   * child has exited (seam wrap starts the server before it reads it).
   */
  spawn(
    argv: readonly string[],
    opts?: { cwd?: string; env?: Record<string, string | undefined> },
  ): Promise<SpawnResult>;
  /** This process's stdin as chunks. */
  stdin(): ByteSource;
  /** This process's stdout as a sink; a reader that went away (EPIPE) makes writes resolve and sets `broken`. */
  stdout(): ByteSink & { readonly broken: boolean };
  /** Opens (creating parent directories and the file) for appending; refuses a symlink or a file others own or may write unless `allowForeign` (file.ts). */
  openAppend(path: string, opts?: { allowForeign?: boolean }): Promise<AppendFile>;
  /** Calls `handler` on each of the signals; returns a function that removes the handlers. */
  onSignals(signals: readonly string[], handler: (signal: string) => void): () => void;
  /** The argv that runs this same build of seam again (selftest and demo spawn it). */
  selfArgv(): string[];
  /**
   * Gives back the memory of garbage now, where the runtime lets a program ask
   * (Bun); elsewhere nothing. Observing large frames makes short-lived copies
   * several times their size, which a lazy collector lets pile up.
   */
  reclaim(): void;
  /**
   * Starts a thread that runs this same build of seam in `role` with `data`
   * (src/runtime/thread.ts); null where this process cannot start one.
   * Throws when the runtime fails to start it.
   */
  startThread?(role: string, data: unknown): Thread | null;
  /**
   * Whether seam wrap records on a thread of its own (src/wrap/recorder-link.ts)
   * rather than behind the forwarding on the thread that forwards
   * (src/wrap/recording-queue.ts). A thread is a second JavaScript runtime,
   * held for as long as the session lasts; it pays for itself where it
   * lets a burst cross markedly faster (docs/performance.md).
   */
  readonly recorderThread?: boolean;
}

/** A thread of seam's own (src/runtime/thread.ts). */
export interface Thread {
  post(message: unknown, transfer?: ArrayBuffer[]): void;
  onMessage(handler: (message: unknown) => void): void;
  /** Called once when the thread ends, normally or not (`error` says why when not). */
  onExit(handler: (error?: string) => void): void;
  terminate(): Promise<void>;
}
