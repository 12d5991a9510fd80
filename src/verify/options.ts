/** What the caller of `seam verify`'s core may ask of it (src/verify/ledger-verifier.ts). */
import type { Json, JsonObject } from "../core/json.ts";
import type { Break } from "../format/kinds.ts";
import { MAX_LINE_BYTES } from "../format/line.ts";

export interface VerifyOptions {
  /** Reject leading unchained rows as breaks instead of skipping them. */
  strict?: boolean;
  /**
   * Is the writer of a session without session_end still running? Asked with
   * the pid, host and process start time (`pid_start`, undefined when not
   * recorded) its session_begin recorded; a throw counts as no. Without it
   * every unfinished session is a finding.
   */
  isWriterAlive?: (pid: number, host: string, start?: Json) => boolean;
  /**
   * A longer line is not parsed nor held whole (only its length, digest and
   * last CHAIN_TAIL_BYTES are kept): when it ends with a `"chain": "…"}` key,
   * as every seam row does, it is a finding (kind `line_too_long`: its chain
   * is taken as claimed, unchecked, so the rows after it are still checked);
   * otherwise it counts as unparseable, with a note. Default
   * DEFAULT_MAX_LINE_BYTES (MAX_LINE_BYTES, 64 MiB), the limit the ledger
   * writer reads the file's last row with. Memory: a line under the limit
   * costs a few times its size while it is parsed (bench/memory.ts).
   */
  maxLineBytes?: number;
  /**
   * Every pushed chunk is a buffer of its own that the source never reuses
   * (fileChunks): a line spanning chunks keeps them as they are instead of a
   * copy (LineSplitter's freshChunks).
   */
  freshChunks?: boolean;
  /** Findings listed at most (the rest are counted in a note). Default 1000. */
  maxFindings?: number;
  /**
   * Sees each object row once checked (its `chain` taken out) with its line number, and whether it carried a
   * chain that was checked: where src/checkpoint/checkpoint-verifier.ts checks checkpoint rows.
   */
  onRow?: (row: JsonObject | { readonly [k: string]: Json }, line: number, chained: boolean) => void;
  /**
   * onRow reads what it needs of a row while it is called and keeps no
   * reference to the row itself: a line in chain form is then lent as a
   * FormRow (src/core/canonical/fast-line.ts), which parses only the members asked for.
   */
  rowsOnLoan?: boolean;
  /** Sees each break as it is found, before the row it is on reaches onRow: where `seam log` marks what the chain no longer vouches for. */
  onBreak?: (b: Break) => void;
  /**
   * "reference": a row with a repeated key is read as the reference verifier
   * reads it (the last value), without the duplicate_key break; only for
   * comparing with it. Default "break".
   */
  duplicateKeys?: "break" | "reference";
  /** Client frames rowed as unparsed or ambiguous are notes, not findings (`seam verify --allow-unparsed`). */
  allowUnparsed?: boolean;
}

export const DEFAULT_MAX_LINE_BYTES = MAX_LINE_BYTES;
