/**
 * JSON text straight to its canonical UTF-8 bytes, without building the
 * model: what `seam digest` uses on files of any size. It must equal
 * compactForm(parseJson(text)) (json-c14n) and jcsForm(parseJson(text,
 * {rejectDuplicateKeys: true})) (jcs) byte for byte; test/canonical-text.test.ts
 * checks that on random and hostile input.
 *
 * Bytes go into one buffer. An object's members are written as they come;
 * when the object closes they are put in key order (dropping all but the last
 * of a repeated key) by rewriting the object's own region. Only bytes outside
 * every open object are final, so the buffer is handed to the sink whenever
 * no object is open: a top-level array streams; a top-level object is held
 * whole (the value itself, nothing more).
 */
import { compareCodePoints, isWellFormed } from "./canonical.ts";
import type { Recipe } from "./digest.ts";
import { JsonScanner, guardStack, type ParseOptions } from "./json.ts";
import { pyFloatRepr } from "./pyfloat.ts";

/** Whether the text had a canonical form, or the Python exception that says why not. */
export type Outcome = "ok" | "ValueError" | "UnicodeEncodeError";

const CHUNK = 1 << 20;

/** A growing UTF-8 buffer that writes JSON tokens and hands finished bytes to a sink. */
class Utf8Out {
  buf = new Uint8Array(1 << 12);
  len = 0;
  /** Open objects: while any is open, written bytes may still be reordered. */
  held = 0;
  /** Lone surrogates written (a count, so a dropped repeated key can take its own back). */
  lone = 0;

  constructor(private readonly sink: (bytes: Uint8Array) => void) {}

  room(n: number): void {
    if (this.len + n <= this.buf.length) return;
    if (this.held === 0 && this.len > 0) {
      this.flush();
      if (n <= this.buf.length) return;
    }
    let cap = Math.max(this.buf.length * 2, CHUNK);
    while (cap < this.len + n) cap *= 2;
    const b = new Uint8Array(cap);
    b.set(this.buf.subarray(0, this.len));
    this.buf = b;
  }

  /** Hands the finished bytes over; the chunk is only valid during the call. */
  flush(): void {
    if (this.len > 0) this.sink(this.buf.subarray(0, this.len));
    this.len = 0;
  }

  byte(c: number): void {
    this.room(1);
    this.buf[this.len++] = c;
  }

  /** Writes s[a..b), which is ASCII. */
  ascii(s: string, a = 0, b = s.length): void {
    this.room(b - a);
    const buf = this.buf;
    let o = this.len;
    for (let i = a; i < b; i++) buf[o++] = s.charCodeAt(i);
    this.len = o;
  }

  /** Writes s[a..b), which needs no escape and has no lone surrogate, as a JSON string literal in UTF-8. */
  plainLong(s: string, a: number, b: number): void {
    this.room((b - a) * 3 + 2);
    this.buf[this.len++] = 34;
    this.len += encoder.encodeInto(s.slice(a, b), this.buf.subarray(this.len)).written;
    this.buf[this.len++] = 34;
  }

  /** Writes s[a..b) as a JSON string literal under the shared escaping rules (see src/canonical.ts), in UTF-8. */
  quoted(s: string, a = 0, b = s.length): void {
    const n = b;
    this.room((b - a) * 3 + 2);
    let buf = this.buf;
    let o = this.len;
    buf[o++] = 34;
    for (let i = a; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x80) {
        if (c >= 32 && c !== 34 && c !== 92) {
          buf[o++] = c;
          continue;
        }
        if (o + 7 + (n - i) * 3 > buf.length) {
          this.len = o;
          this.room(7 + (n - i) * 3); // may hand over what is written so far
          buf = this.buf;
          o = this.len;
        }
        buf[o++] = 92;
        switch (c) {
          case 34: buf[o++] = 34; break;
          case 92: buf[o++] = 92; break;
          case 10: buf[o++] = 110; break;
          case 13: buf[o++] = 114; break;
          case 9: buf[o++] = 116; break;
          case 8: buf[o++] = 98; break;
          case 12: buf[o++] = 102; break;
          default:
            buf[o++] = 117;
            buf[o++] = 48;
            buf[o++] = 48;
            buf[o++] = c < 16 ? 48 : 49;
            buf[o++] = HEX[c & 15]!;
        }
      } else if (c < 0x800) {
        buf[o++] = 0xc0 | (c >> 6);
        buf[o++] = 0x80 | (c & 63);
      } else if (c < 0xd800 || c > 0xdfff) {
        buf[o++] = 0xe0 | (c >> 12);
        buf[o++] = 0x80 | ((c >> 6) & 63);
        buf[o++] = 0x80 | (c & 63);
      } else {
        const d = c <= 0xdbff ? s.charCodeAt(i + 1) : 0;
        if (d >= 0xdc00 && d <= 0xdfff) {
          const cp = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
          buf[o++] = 0xf0 | (cp >> 18);
          buf[o++] = 0x80 | ((cp >> 12) & 63);
          buf[o++] = 0x80 | ((cp >> 6) & 63);
          buf[o++] = 0x80 | (cp & 63);
          i++;
        } else {
          // No UTF-8 form: the outcome is UnicodeEncodeError, the bytes are never used.
          this.lone++;
          buf[o++] = 0xef;
          buf[o++] = 0xbf;
          buf[o++] = 0xbd;
        }
      }
    }
    buf[o++] = 34;
    this.len = o;
  }
}

const encoder = new TextEncoder();
const HEX = Uint8Array.from("0123456789abcdef", (ch) => ch.charCodeAt(0));

class CanonicalTextParser extends JsonScanner {
  /** NaN/±Infinity met (a count, so a dropped repeated key can take its own back). */
  valueErrors = 0;
  // One stack of object members for the whole document: [base, top) belong to the innermost open object.
  private keys: string[] = [];
  private starts: number[] = [];
  private ends: number[] = [];
  private memberValueErrors: number[] = [];
  private memberLone: number[] = [];
  private top = 0;
  private idx: number[] = [];

  /** No lone surrogate anywhere in the text, so none in an unescaped string. */
  readonly wellFormed: boolean;

  constructor(
    s: string,
    maxDepth: number | undefined,
    readonly out: Utf8Out,
    readonly jcs: boolean,
  ) {
    super(s, maxDepth);
    this.wellFormed = isWellFormed(s);
  }

  value(): void {
    const c = this.ws();
    switch (c) {
      case 123: return this.object();
      case 91: return this.array();
      case 34: {
        const decoded = this.scanStringRaw();
        if (decoded !== undefined) return this.out.quoted(decoded);
        // Unescaped text has no quote, backslash or control character to escape: long runs go to the native encoder.
        if (this.strEnd - this.strStart >= 64 && this.wellFormed) return this.out.plainLong(this.s, this.strStart, this.strEnd);
        return this.out.quoted(this.s, this.strStart, this.strEnd);
      }
      case 116: this.literal("true"); return this.out.ascii("true");
      case 102: this.literal("false"); return this.out.ascii("false");
      case 110: this.literal("null"); return this.out.ascii("null");
      case 78: this.literal("NaN"); this.valueErrors++; return;
      case 73: this.literal("Infinity"); this.valueErrors++; return;
      case 45:
        if (this.s.charCodeAt(this.i + 1) === 73) {
          this.literal("-Infinity");
          this.valueErrors++;
          return;
        }
        return this.number();
      default:
        if (c >= 48 && c <= 57) return this.number();
        this.fail("expecting value");
    }
  }

  number(): void {
    this.scanNumber();
    const s = this.s;
    const a = this.numStart;
    const b = this.i;
    if (this.jcs || this.numIsFloat) {
      const x = Number(s.slice(a, b));
      if (!Number.isFinite(x)) this.valueErrors++;
      else this.out.ascii(this.jcs ? String(x) : pyFloatRepr(x));
    } else if (b - a === 2 && s.charCodeAt(a) === 45 && s.charCodeAt(a + 1) === 48) {
      this.out.byte(48); // the int -0 is 0
    } else {
      this.out.ascii(s, a, b); // an int literal is already its exact decimal
    }
  }

  array(): void {
    this.enter();
    this.i++;
    const out = this.out;
    out.byte(91);
    if (this.ws() === 93) {
      this.i++;
    } else {
      for (;;) {
        this.value();
        const c = this.ws();
        this.i++;
        if (c === 93) break;
        if (c !== 44) this.fail("expecting ',' or ']'", this.i - 1);
        out.byte(44);
      }
    }
    out.byte(93);
    this.depth--;
  }

  object(): void {
    this.enter();
    this.i++;
    const out = this.out;
    out.byte(123);
    out.held++;
    const base = this.top;
    const regionStart = out.len;
    let c = this.ws();
    if (c === 125) {
      this.i++;
    } else {
      for (;;) {
        if (c !== 34) this.fail("expecting property name enclosed in double quotes");
        const key = this.scanString();
        const start = out.len;
        const valueErrors = this.valueErrors;
        const lone = out.lone;
        out.quoted(key);
        if (this.ws() !== 58) this.fail("expecting ':' delimiter");
        this.i++;
        out.byte(58);
        this.value();
        const t = this.top++;
        this.keys[t] = key;
        this.starts[t] = start;
        this.ends[t] = out.len;
        this.memberValueErrors[t] = this.valueErrors - valueErrors;
        this.memberLone[t] = out.lone - lone;
        c = this.ws();
        this.i++;
        if (c === 125) break;
        if (c !== 44) this.fail("expecting ',' or '}'", this.i - 1);
        out.byte(44);
        c = this.ws();
      }
      this.order(base, regionStart);
    }
    this.top = base;
    out.held--;
    out.byte(125);
    this.depth--;
  }

  /** Puts the members [base, top) in key order, keeping the last of each repeated key. */
  private order(base: number, regionStart: number): void {
    const keys = this.keys;
    const n = this.top - base;
    const cmp = this.jcs ? compareUnits : compareCodePoints;
    let sorted = true;
    for (let j = base + 1; j < this.top; j++) {
      if (cmp(keys[j - 1]!, keys[j]!) >= 0) {
        sorted = false;
        break;
      }
    }
    if (sorted) return;
    const idx = this.idx;
    for (let j = 0; j < n; j++) idx[j] = base + j;
    idx.length = n;
    if (n <= 16) {
      // Insertion sort: stable, and cheaper than Array#sort on the few members most objects have.
      for (let j = 1; j < n; j++) {
        const m = idx[j]!;
        let k = j;
        while (k > 0 && cmp(keys[idx[k - 1]!]!, keys[m]!) > 0) {
          idx[k] = idx[k - 1]!;
          k--;
        }
        idx[k] = m;
      }
    } else {
      idx.sort((x, y) => cmp(keys[x]!, keys[y]!) || x - y);
    }
    // Park the region after the written bytes, then copy the members back in order.
    const out = this.out;
    const size = out.len - regionStart;
    out.room(size);
    const buf = out.buf;
    const park = out.len - regionStart;
    buf.copyWithin(out.len, regionStart, out.len);
    let o = regionStart;
    for (let j = 0; j < n; j++) {
      const m = idx[j]!;
      if (j + 1 < n && keys[idx[j + 1]!] === keys[m]) {
        if (this.jcs) this.fail("duplicate key", this.i - 1);
        // A later value of the same key wins; this one's refusals go with it.
        this.valueErrors -= this.memberValueErrors[m]!;
        out.lone -= this.memberLone[m]!;
        continue;
      }
      if (o !== regionStart) buf[o++] = 44;
      const from = this.starts[m]! + park;
      const to = this.ends[m]! + park;
      if (to - from < 64) for (let k = from; k < to; k++) buf[o++] = buf[k]!;
      else {
        buf.copyWithin(o, from, to);
        o += to - from;
      }
    }
    out.len = o;
  }
}

function compareUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Feeds the canonical form of JSON text under `recipe` to `sink`, in chunks
 * valid only during each call, and says whether it was canonical after all:
 * on "ValueError" (NaN/±Infinity) or "UnicodeEncodeError" (a lone
 * surrogate) the bytes fed are meaningless. ValueError wins over
 * UnicodeEncodeError, as in Python. Throws JsonParseError for text that
 * is not JSON (for jcs, also for a repeated key, which I-JSON forbids).
 */
export function canonicalText(
  text: string,
  recipe: Recipe,
  sink: (bytes: Uint8Array) => void,
  opts?: Pick<ParseOptions, "maxDepth">,
): Outcome {
  const out = new Utf8Out(sink);
  const p = new CanonicalTextParser(text, opts?.maxDepth, out, recipe === "jcs");
  guardStack(p, () => {
    if (text.charCodeAt(0) === 0xfeff) p.fail("unexpected byte order mark", 0);
    p.value();
    p.end();
  });
  out.flush();
  return p.valueErrors ? "ValueError" : out.lone ? "UnicodeEncodeError" : "ok";
}
