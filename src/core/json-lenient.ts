/**
 * A second reading of JSON text, as permissive as the most permissive of the
 * parsers MCP servers use, for frames the strict parser (src/core/json.ts,
 * Python's rules) refuses:
 *   - no depth limit, and no recursion: an explicit stack, so a frame nested a
 *     million levels deep cannot overflow the JS stack (JSON.parse has no limit
 *     either, Go's encoding/json stops at 10000);
 *   - integer literals of any length (JSON.parse reads them as a double;
 *     Python refuses more than 4300 digits);
 *   - the `NaN`, `Infinity` and `-Infinity` literals (Python only).
 * Everything else is strict JSON, exactly as in parseJson. What it read that
 * some stack would not is reported beside the value (`LenientParse`), so the
 * caller can tell which stacks accept the text. The input is a string: a
 * caller reading bytes decodes them first (invalid UTF-8 as U+FFFD, as
 * JSON.parse after Node's Buffer#toString sees them).
 */
import { type Json, type JsonFloat, type JsonObject, ScalarReader } from "./json.ts";
import { JsonParseError } from "./json-error.ts";
import { MAX_INT_DIGITS } from "./json-scanner.ts";

/** One member of an object, in source order, with where its value's text starts and ends. */
export interface Entry {
  key: string;
  value: Json;
  start: number;
  end: number;
}

export interface LenientParse {
  /** Duplicate keys as JSON.parse, Python and Go keep them: the last value (at the first key's position). */
  value: Json;
  /** The deepest nesting of arrays and objects (1 = a top-level container). */
  depth: number;
  /** A NaN, Infinity or -Infinity literal was read. */
  nanLiteral: boolean;
  /** An integer literal of more than 4300 digits was read. */
  longInt: boolean;
  /** A \uXXXX escape left a lone surrogate in a string. */
  loneSurrogate: boolean;
  /** Members of every object at most `shallow` levels deep, in source order, duplicates included. */
  entries: Map<JsonObject, Entry[]>;
}

interface Open {
  /** The array being filled, or the object. */
  arr?: Json[];
  obj?: JsonObject;
  /** The object's members in source order (shallow objects only). */
  ents?: Entry[];
  /** The key whose value is being read. */
  key: string;
  /** Where the container's own text starts. */
  start: number;
}

class LenientParser extends ScalarReader {
  nanLiteral = false;
  longInt = false;
  loneSurrogate = false;
  deepest = 0;
  readonly entries = new Map<JsonObject, Entry[]>();

  constructor(
    s: string,
    readonly shallow: number,
  ) {
    super(s, Number.POSITIVE_INFINITY);
    this.maxIntDigits = Number.POSITIVE_INFINITY;
  }

  /** Reads a key and the ':' after it; the cursor is on the key's opening quote. */
  key(): string {
    if (this.ws() !== 34) this.fail("expecting property name enclosed in double quotes");
    const k = this.scanString();
    if (this.ws() !== 58) this.fail("expecting ':' delimiter");
    this.i++;
    return k;
  }

  override scanString(): string {
    const v = super.scanString();
    if (!this.loneSurrogate && hasLoneSurrogate(v)) this.loneSurrogate = true;
    return v;
  }

  parse(): Json {
    const stack: Open[] = [];
    for (;;) {
      // A value starts here: a container is opened (and its first member read next), or a scalar completes.
      let c = this.ws();
      let v: Json;
      let start = this.i;
      if (c === 123 || c === 91) {
        const depth = stack.length + 1;
        if (depth > this.deepest) this.deepest = depth;
        this.i++;
        const close = c === 123 ? 125 : 93;
        if (this.ws() === close) {
          this.i++;
          if (c === 123) {
            const obj: JsonObject = new Map();
            if (depth <= this.shallow) this.entries.set(obj, []);
            v = obj;
          } else {
            v = [];
          }
        } else if (c === 123) {
          const obj: JsonObject = new Map();
          const ents = depth <= this.shallow ? [] : undefined;
          if (ents) this.entries.set(obj, ents);
          stack.push({ obj, ents, key: this.key(), start });
          continue;
        } else {
          stack.push({ arr: [], key: "", start });
          continue;
        }
      } else {
        v = this.scalar(c);
      }
      // v is complete: hand it to its container, closing every container it completes.
      for (;;) {
        const top = stack[stack.length - 1];
        if (top === undefined) {
          this.end();
          return v;
        }
        const end = this.i;
        c = this.ws();
        this.i++;
        if (top.arr !== undefined) {
          top.arr.push(v);
          if (c === 44) break;
          if (c !== 93) this.fail("expecting ',' or ']'", this.i - 1);
          v = top.arr;
        } else {
          const obj = top.obj!;
          obj.set(top.key, v);
          top.ents?.push({ key: top.key, value: v, start, end });
          if (c === 44) {
            top.key = this.key();
            break;
          }
          if (c !== 125) this.fail("expecting ',' or '}'", this.i - 1);
          v = obj;
        }
        start = top.start;
        stack.pop();
      }
    }
  }

  override nanLiteralRead(): void {
    this.nanLiteral = true;
  }

  override number(): number | bigint | JsonFloat {
    const v = super.number();
    if (!this.numIsFloat && this.numDigits > MAX_INT_DIGITS) this.longInt = true;
    return v;
  }
}

function hasLoneSurrogate(s: string): boolean {
  return !(s as unknown as { isWellFormed(): boolean }).isWellFormed();
}

/**
 * Parses `text` with no depth or integer-length limit (see the top of this
 * file). A leading byte order mark is refused, as JSON.parse, Python and Go
 * all refuse it. Keeps source-order members of objects up to `shallow` levels
 * deep. Throws JsonParseError and nothing else.
 */
export function parseLenient(text: string, shallow = 3): LenientParse {
  const p = new LenientParser(text, shallow);
  if (text.charCodeAt(0) === 0xfeff) p.fail("unexpected byte order mark", 0);
  let value: Json;
  try {
    value = p.parse();
  } catch (err) {
    if (err instanceof JsonParseError) throw err;
    // Only memory can run out here (no recursion); report it as a parse failure.
    throw new JsonParseError(`cannot read: ${err instanceof Error ? err.message : String(err)}`, p.i, text);
  }
  return {
    value,
    depth: p.deepest,
    nanLiteral: p.nanLiteral,
    longInt: p.longInt,
    loneSurrogate: p.loneSurrogate,
    entries: p.entries,
  };
}
