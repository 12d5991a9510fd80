/**
 * FormRow: the row of a line in chain form (src/core/canonical/fast-line.ts), its
 * members parsed only as they are asked for.
 */

import { BACKSLASH, QUOTE } from "../ascii.ts";
import { type Json, type JsonObject, parseJson } from "../json.ts";
import { chainOfMembers, type FormLayout, readLayout } from "./fast-line.ts";

const NO = -1;
// ignoreBOM: as the line was recognized, a BOM would be text.
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
/**
 * A line up to this long is decoded once, whole, for its members to be read
 * from (one decode for a row's many small members); a longer one member by
 * member, each from its own bytes.
 */
const WHOLE_TEXT_MAX = 1 << 16;

/**
 * A row read off a line in chain form, a member parsed only when it is
 * asked for: `get` and `has` read the one member they name (the value
 * parseJson gives it, kept once read); anything else a Map does (size,
 * iteration, set, delete) first reads the whole row, in line order. `chain`
 * gives the row's chain after a prev. Made by `read` over the line's bytes
 * as they are (good while they are) or over a copy of its own (`own`).
 */
export class FormRow extends Map<string, Json> {
  private text: string | null = null;
  /** Members parsed so far, by index; `undefined`: not yet. */
  private readonly parsed: (Json | undefined)[] = [];
  /** The Map holds every member (then it is an ordinary Map). */
  private filled = false;
  /** The member taken out by dropChain, or NO. */
  private dropped = NO;

  private constructor(
    private readonly line: Uint8Array,
    private readonly layout: FormLayout,
  ) {
    super();
  }

  /**
   * The line as a FormRow, or null when it is not in chain form member by
   * member, or repeats a key (then parse it: a repeated key is a break).
   * `own`: keep a copy of the bytes, for a row that outlives them.
   */
  static read(line: Uint8Array, own = false): FormRow | null {
    const layout = readLayout(line);
    return layout === null ? null : new FormRow(own ? line.slice() : line, layout);
  }

  /** JSON.parse reads the line to this row's values (FormLayout.plain): parsePlainLine may read it. */
  get plain(): boolean {
    return this.layout.plain;
  }

  /** chainOf(prev, this row without its chain); null when prev is not ASCII (then take the long way). */
  chain(prev: string): string | null {
    return chainOfMembers(prev, this.line, this.layout.spans, this.layout.order);
  }

  /** Takes the `chain` member out, as delete("chain") would, without reading the rest. */
  dropChain(): void {
    if (this.filled || !this.layout.ascii) this.delete("chain");
    else this.dropped = this.find("chain");
  }

  /** The whole row as parseJson reads the line: a Map of its own. */
  model(): JsonObject {
    return parseJson(utf8.decode(this.line)) as JsonObject;
  }

  override has(key: string): boolean {
    if (this.filled || !this.layout.ascii) {
      this.fill();
      return super.has(key);
    }
    return this.find(key) !== NO;
  }

  override get(key: string): Json | undefined {
    if (this.filled || !this.layout.ascii) {
      this.fill();
      return super.get(key);
    }
    const m = this.find(key);
    return m === NO ? undefined : this.member(m);
  }

  override set(key: string, v: Json): this {
    this.fill();
    return super.set(key, v);
  }

  override delete(key: string): boolean {
    this.fill();
    return super.delete(key);
  }

  override clear(): void {
    this.fill();
    super.clear();
  }

  override forEach(f: (v: Json, k: string, map: Map<string, Json>) => void, thisArg?: unknown): void {
    this.fill();
    super.forEach(f, thisArg);
  }

  override entries(): MapIterator<[string, Json]> {
    this.fill();
    return super.entries();
  }

  override keys(): MapIterator<string> {
    this.fill();
    return super.keys();
  }

  override values(): MapIterator<Json> {
    this.fill();
    return super.values();
  }

  override [Symbol.iterator](): MapIterator<[string, Json]> {
    this.fill();
    return super[Symbol.iterator]();
  }

  /** Makes the Map hold every member, in line order (with the values already handed out). */
  private fill(): void {
    if (!this.filled) {
      this.filled = true;
      if (this.layout.ascii) {
        const text = this.lineText();
        for (let m = 0; m < this.layout.n; m++) {
          if (m !== this.dropped)
            super.set(text.slice(this.layout.spans[3 * m]! + 1, this.layout.spans[3 * m + 1]! - 1), this.member(m));
        }
      } else {
        for (const [k, v] of this.model()) super.set(k, v);
      }
    }
  }

  private member(m: number): Json {
    let v = this.parsed[m];
    if (v === undefined) {
      const start = this.layout.spans[3 * m + 1]! + 2;
      const end = this.layout.spans[3 * m + 2]!;
      if (this.line.length <= WHOLE_TEXT_MAX) v = valueAt(this.line, this.lineText(), start, end);
      else {
        // A long line's text is not made whole to read one member: a string the size of the line.
        const bytes = this.line.subarray(start, end);
        v = valueAt(bytes, utf8.decode(bytes), 0, bytes.length);
      }
      this.parsed[m] = v;
    }
    return v;
  }

  private lineText(): string {
    this.text ??= utf8.decode(this.line);
    return this.text;
  }

  /** The member whose key is `key`, or NO (an ASCII line: a key with other characters is in none). */
  private find(key: string): number {
    const b = this.line;
    const spans = this.layout.spans;
    for (let m = 0; m < this.layout.n; m++) {
      const start = spans[3 * m]! + 1;
      if (spans[3 * m + 1]! - 1 - start !== key.length) continue;
      let k = 0;
      while (k < key.length && b[start + k] === key.charCodeAt(k)) k++;
      if (k === key.length) return m === this.dropped ? NO : m;
    }
    return NO;
  }

  /** Map's own size, read once the Map holds every member. */
  static {
    const size = Object.getOwnPropertyDescriptor(Map.prototype, "size")!.get!;
    Object.defineProperty(FormRow.prototype, "size", {
      get(this: FormRow) {
        this.fill();
        return size.call(this);
      },
    });
  }
}

/**
 * The value written in [start, end) of an ASCII line already recognized
 * (its bytes, and its text at the same offsets): what parseJson reads
 * there, read directly for the plain strings, small ints and literals that
 * make up most of a row.
 */
function valueAt(b: Uint8Array, text: string, start: number, end: number): Json {
  const c = b[start]!;
  if (c === QUOTE) {
    for (let j = start + 1; j < end - 1; j++) if (b[j] === BACKSLASH) return parseJson(text.slice(start, end));
    return text.slice(start + 1, end - 1);
  }
  if ((c === 0x2d || (c >= 0x30 && c <= 0x39)) && end - start <= 15) {
    let x = 0;
    for (let j = c === 0x2d ? start + 1 : start; j < end; j++) {
      const d = b[j]!;
      if (d < 0x30 || d > 0x39) return parseJson(text.slice(start, end));
      x = x * 10 + (d - 0x30);
    }
    return c === 0x2d ? -x : x;
  }
  if (c === 0x74) return true;
  if (c === 0x66) return false;
  if (c === 0x6e) return null;
  return parseJson(text.slice(start, end));
}

/**
 * The row of a line that readLayout found `plain`, as parseJson reads it
 * (a Map, nested objects Maps, in line order), by way of JSON.parse: for such
 * a line the two agree value for value (test/unit/form-line.test.ts holds them to
 * it), and JSON.parse is the runtime's own. Any other line: parseJson.
 */
export function parsePlainLine(line: Uint8Array): JsonObject {
  return toModel(JSON.parse(utf8.decode(line))) as JsonObject;
}

function toModel(v: unknown): Json {
  if (typeof v !== "object" || v === null) return v as Json;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x = v[i];
      if (typeof x === "object" && x !== null) v[i] = toModel(x);
    }
    return v as Json[];
  }
  const m: JsonObject = new Map();
  for (const k in v) {
    const x = (v as Record<string, unknown>)[k];
    m.set(k, typeof x === "object" && x !== null ? toModel(x) : (x as Json));
  }
  return m;
}
