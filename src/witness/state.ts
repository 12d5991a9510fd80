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
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { SeamError } from "../base/error.ts";
import { describeIoError } from "../base/io-error.ts";
import { type Checkpoint, checkpointText, parseCheckpointText } from "../checkpoint/checkpoint.ts";
import { sha256Hex } from "../core/sha256.ts";
import { readSmallFile, replaceFileDurably } from "../runtime/small-file.ts";

export class WitnessStateError extends SeamError {
  override readonly name = "WitnessStateError";
  constructor(message: string, hint?: string) {
    super("witness_state", message, { hint });
  }
}

export class WitnessState {
  private readonly latest = new Map<string, Checkpoint>();

  private constructor(readonly dir: string) {}

  /** Opens DIR (made, mode 0700, if missing) and reads what it remembers of each origin in `origins`. */
  static open(dir: string, origins: Iterable<string>): WitnessState {
    const s = new WitnessState(dir);
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch (e) {
      throw new WitnessStateError(`cannot make --state ${dir}: ${describeIoError(e)}`);
    }
    for (const origin of origins) {
      const path = s.pathOf(origin);
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
      s.latest.set(origin, c);
    }
    return s;
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
