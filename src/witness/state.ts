/**
 * What a witness remembers per log: the latest checkpoint it cosigned, one
 * file per origin in the --state directory,
 *
 *   DIR/<32 hex of SHA-256(origin)>.witnessed   origin, size and root: the checkpoint's first three lines
 *
 * replaced durably (src/runtime/small-file.ts, replaceFileDurably) before
 * the cosignature is sent, so a witness killed at any moment restarts with
 * a checkpoint it cosigned, never an older one. The whole directory is read
 * at start: a file there that cannot be read, or holds something else, stops
 * the witness rather than letting it start again from nothing.
 *
 * One witness at a time per directory: each holds its state in memory, so
 * two would each cosign from their own view and together roll a log back.
 * DIR/witness.lock names the holder ({"pid", "host", "pid_start"}); one
 * left by a witness that is no longer running (killed, or the machine
 * restarted) is taken over.
 */
import { closeSync, mkdirSync, openSync, unlinkSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { SeamError } from "../base/error.ts";
import { describeIoError } from "../base/io-error.ts";
import { type Checkpoint, checkpointText, parseCheckpointText } from "../checkpoint/checkpoint.ts";
import { sha256Hex } from "../core/sha256.ts";
import { isWriterAlive, processStartTime } from "../runtime/alive.ts";
import { readSmallFile, replaceFileDurably } from "../runtime/small-file.ts";

export class WitnessStateError extends SeamError {
  override readonly name = "WitnessStateError";
  constructor(message: string, hint?: string) {
    super("witness_state", message, { hint });
  }
}

export class WitnessState {
  private readonly latest = new Map<string, Checkpoint>();
  /** What this process wrote to DIR/witness.lock, while it holds it. */
  private lockText: string | null = null;

  private constructor(readonly dir: string) {}

  /** Takes DIR/witness.lock for this process; throws WitnessStateError while a running seam witness holds it. */
  private lock(): void {
    const path = join(this.dir, "witness.lock");
    const mine = `${JSON.stringify({ pid: process.pid, host: hostname(), pid_start: processStartTime(process.pid) })}\n`;
    for (let attempt = 0; ; attempt++) {
      try {
        const fd = openSync(path, "wx", 0o600);
        try {
          writeSync(fd, mine);
        } finally {
          closeSync(fd);
        }
        this.lockText = mine;
        return;
      } catch (e) {
        if ((e as { code?: unknown }).code !== "EEXIST" || attempt > 0)
          throw new WitnessStateError(`cannot take ${path}: ${describeIoError(e)}`);
      }
      let holder: { pid?: unknown; host?: unknown; pid_start?: unknown } = {};
      try {
        holder = JSON.parse(readSmallFile(path, 4096).toString("utf8"));
      } catch {}
      const pid = typeof holder.pid === "number" ? holder.pid : -1;
      if (typeof holder.host === "string" && pid > 0 && isWriterAlive(pid, holder.host, holder.pid_start))
        throw new WitnessStateError(
          `another seam witness (pid ${pid}) is using --state ${this.dir}`,
          "one witness per state directory: stop that one, or give this one its own directory and key",
        );
      try {
        unlinkSync(path);
      } catch {}
    }
  }

  /** Gives DIR/witness.lock up (when it is still this process's). */
  close(): void {
    if (this.lockText === null) return;
    const path = join(this.dir, "witness.lock");
    try {
      if (readSmallFile(path, 4096).toString("utf8") === this.lockText) unlinkSync(path);
    } catch {}
    this.lockText = null;
  }

  /** Opens DIR (made, mode 0700, if missing) and reads what it remembers of each origin in `origins`. */
  static open(dir: string, origins: Iterable<string>): WitnessState {
    const s = new WitnessState(dir);
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch (e) {
      throw new WitnessStateError(`cannot make --state ${dir}: ${describeIoError(e)}`);
    }
    s.lock();
    try {
      s.load(origins);
    } catch (e) {
      s.close();
      throw e;
    }
    return s;
  }

  private load(origins: Iterable<string>): void {
    for (const origin of origins) {
      const path = this.pathOf(origin);
      let text: string;
      try {
        text = readSmallFile(path, 4096).toString("utf8");
      } catch (e) {
        if ((e as { code?: unknown }).code === "ENOENT") continue;
        throw new WitnessStateError(`cannot read state file ${path}: ${describeIoError(e)}`);
      }
      let c: Checkpoint;
      try {
        c = parseCheckpointText(text);
      } catch (e) {
        throw new WitnessStateError(
          `state file ${path} is not a checkpoint: ${(e as Error).message}`,
          "a witness never starts over on its own: restore the file, or remove it to forget that log",
        );
      }
      if (c.origin !== origin)
        throw new WitnessStateError(
          `state file ${path} is for ${JSON.stringify(c.origin)}, not ${JSON.stringify(origin)}`,
        );
      this.latest.set(origin, c);
    }
  }

  /** The latest checkpoint cosigned for `origin`, or null (none yet: size 0). */
  get(origin: string): Checkpoint | null {
    return this.latest.get(origin) ?? null;
  }

  /** Remembers `c` on disk, then in memory; throws WitnessStateError when it cannot be written. */
  put(c: Checkpoint): void {
    const path = this.pathOf(c.origin);
    try {
      replaceFileDurably(path, checkpointText(c));
    } catch (e) {
      throw new WitnessStateError(`cannot write state file ${path}: ${describeIoError(e)}`);
    }
    this.latest.set(c.origin, c);
  }

  private pathOf(origin: string): string {
    return join(this.dir, `${sha256Hex(origin, 16)}.witnessed`);
  }
}
