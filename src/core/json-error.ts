/**
 * What a refused JSON text says: the reason, and where (offset, and line and
 * column when the input is at hand), however the text was read (a JS string
 * by src/core/json.ts, UTF-8 bytes by src/core/canonical/from-bytes.ts).
 */
import { SeamError } from "../base/error.ts";

/**
 * The input is not JSON as Python's `json.loads` reads it. `offset` is in
 * the input's own units (UTF-16 code units of a string, bytes of UTF-8);
 * `line` and `column` count from 1, the column in characters.
 */
export class JsonParseError extends SeamError {
  override readonly name = "JsonParseError";
  readonly line: number;
  readonly column: number;
  constructor(
    readonly reason: string,
    readonly offset: number,
    input?: string | Uint8Array,
  ) {
    const { line, column } = input === undefined ? { line: 0, column: 0 } : lineColumn(input, offset);
    super("json_parse", line ? `${reason} at line ${line} column ${column}` : `${reason} at offset ${offset}`);
    this.line = line;
    this.column = column;
  }
}

function lineColumn(input: string | Uint8Array, offset: number): { line: number; column: number } {
  const text = typeof input === "string";
  let line = 1;
  let column = 1;
  const end = Math.min(offset, input.length);
  for (let i = 0; i < end; i++) {
    const c = text ? input.charCodeAt(i) : input[i]!;
    if (c === 10) {
      line++;
      column = 1;
    } else if (text ? c < 0xdc00 || c > 0xdfff || i === 0 || !isHigh(input.charCodeAt(i - 1)) : (c & 0xc0) !== 0x80) {
      column++; // one per character: not the low half of a pair, not a UTF-8 continuation byte
    }
  }
  return { line, column };
}

function isHigh(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

/**
 * A maxDepth set beyond what the stack holds must still end in a
 * JsonParseError, not a RangeError from the engine.
 */
export function guardStack<T>(input: string | Uint8Array, at: () => number, run: () => T): T {
  try {
    return run();
  } catch (err) {
    throw stackGuarded(err, at(), input);
  }
}

/** What guardStack throws for `err`, caught at offset `at` of `input` (for a caller that makes no closures). */
export function stackGuarded(err: unknown, at: number, input: string | Uint8Array): unknown {
  if (err instanceof RangeError) return new JsonParseError("nesting too deep for the stack", at, input);
  return err;
}
