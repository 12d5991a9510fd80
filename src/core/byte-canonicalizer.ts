/**
 * Reads UTF-8 JSON and writes its canonical form as it goes (src/core/canonical-bytes.ts
 * says how; src/core/object-members.ts puts each object's members in key order).
 */
import { FLUSH_AT, type ByteOut } from "./byte-out.ts";
import { JsonParseError, MAX_INT_DIGITS } from "./json.ts";
import { ObjectMembers } from "./object-members.ts";
import { pyFloatRepr } from "./pyfloat.ts";
import { writeUtf8 } from "./utf8.ts";

const HEX = Uint8Array.from("0123456789abcdef", (ch) => ch.charCodeAt(0));
/** The byte after the backslash for the controls that have a short escape. */
const SHORT_ESCAPE: Record<number, number> = { 8: 98, 9: 116, 10: 110, 12: 102, 13: 114, 34: 34, 92: 92 };
/** What a short escape in the input stands for. */
const UNESCAPE: Record<number, number> = { 34: 34, 92: 92, 47: 47, 98: 8, 102: 12, 110: 10, 114: 13, 116: 9 };

function hexDigit(c: number | undefined): number {
  if (c === undefined) return -1;
  if (c >= 48 && c <= 57) return c - 48;
  const l = c | 32;
  return l >= 97 && l <= 102 ? l - 87 : -1;
}

const latin1 = new TextDecoder("latin1");

export class ByteCanonicalizer {
  i = 0;
  depth = 0;
  readonly n: number;
  /** NaN/±Infinity met, and lone surrogates written: counts, so a dropped repeated key can take its own back. */
  valueErrors = 0;
  lone = 0;
  /** The members of the open objects, and their key order. */
  private readonly members: ObjectMembers;

  constructor(
    readonly b: Uint8Array,
    readonly maxDepth: number,
    readonly out: ByteOut,
    readonly jcs: boolean,
  ) {
    this.n = b.length;
    this.members = new ObjectMembers(jcs);
  }

  fail(reason: string, at = this.i): never {
    throw new JsonParseError(reason, at, this.b);
  }

  ws(): number {
    const b = this.b;
    let i = this.i;
    let c = b[i];
    while (c === 32 || c === 10 || c === 13 || c === 9) c = b[++i];
    this.i = i;
    return c ?? -1;
  }

  literal(word: string): void {
    const b = this.b;
    for (let k = 0; k < word.length; k++) if (b[this.i + k] !== word.charCodeAt(k)) this.fail("expecting value");
    this.i += word.length;
  }

  enter(): void {
    if (++this.depth > this.maxDepth) this.fail(`nesting deeper than ${this.maxDepth} levels`);
  }

  document(): void {
    const b = this.b;
    if (b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) this.fail("unexpected byte order mark", 0);
    this.value();
    if (this.ws() !== -1) this.fail("extra data after the value");
  }

  value(): void {
    const c = this.ws();
    switch (c) {
      case 123:
        return this.object();
      case 91:
        return this.array();
      case 34:
        return this.string(false);
      case 116:
        this.literal("true");
        return this.out.ascii("true");
      case 102:
        this.literal("false");
        return this.out.ascii("false");
      case 110:
        this.literal("null");
        return this.out.ascii("null");
      case 78:
        this.literal("NaN");
        this.valueErrors++;
        return;
      case 73:
        this.literal("Infinity");
        this.valueErrors++;
        return;
      case 45:
        if (this.b[this.i + 1] === 73) {
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

  /** `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?`, as parseJson reads it. */
  number(): void {
    const b = this.b;
    const a = this.i;
    let i = a;
    let c = b[i];
    if (c === 45) c = b[++i];
    const digits = i;
    if (c === 48) c = b[++i];
    else if (c !== undefined && c >= 49 && c <= 57) {
      do c = b[++i];
      while (c !== undefined && c >= 48 && c <= 57);
    } else this.fail("expecting value", a);
    const intDigits = i - digits;
    let isFloat = false;
    if (c === 46) {
      c = b[++i];
      if (c === undefined || c < 48 || c > 57) this.fail("expecting a digit after the decimal point", i);
      do c = b[++i];
      while (c !== undefined && c >= 48 && c <= 57);
      isFloat = true;
    }
    if (c === 101 || c === 69) {
      c = b[++i];
      if (c === 43 || c === 45) c = b[++i];
      if (c === undefined || c < 48 || c > 57) this.fail("expecting a digit in the exponent", i);
      do c = b[++i];
      while (c !== undefined && c >= 48 && c <= 57);
      isFloat = true;
    }
    if (!isFloat && intDigits > MAX_INT_DIGITS)
      this.fail(`integer literal longer than ${MAX_INT_DIGITS} digits (Python refuses it)`, a);
    this.i = i;
    if (isFloat || this.jcs) {
      const x = Number(
        i - a <= 32
          ? String.fromCharCode.apply(null, b.subarray(a, i) as unknown as number[])
          : latin1.decode(b.subarray(a, i)),
      );
      if (!Number.isFinite(x)) this.valueErrors++;
      else this.out.ascii(this.jcs ? String(x) : pyFloatRepr(x));
    } else if (i - a === 2 && b[a] === 45 && b[a + 1] === 48) {
      this.out.byte(48); // the int -0 is 0
    } else {
      this.out.copy(b, a, i); // an int literal is already its exact decimal
    }
  }

  /**
   * The string at the cursor, written in canonical form; for a key, its
   * decoded bytes also go on the key stack. Unescaped text is valid UTF-8
   * with nothing to escape, so it is copied as it is.
   */
  string(key: boolean): void {
    const b = this.b;
    const n = this.n;
    const out = this.out;
    let i = this.i + 1;
    let chunk = i;
    out.byte(34);
    for (;;) {
      if (i >= n) this.fail("unterminated string", this.i);
      const c = b[i]!;
      if (c === 34) break;
      if (c === 92) {
        if (i > chunk) this.raw(chunk, i, key);
        i = this.escape(i, key);
        chunk = i;
        continue;
      }
      if (c < 32) this.fail("invalid control character in string", i);
      i++;
    }
    if (i > chunk) this.raw(chunk, i, key);
    out.byte(34);
    this.i = i + 1;
  }

  private raw(a: number, z: number, key: boolean): void {
    this.out.copy(this.b, a, z);
    if (key) {
      const m = this.members;
      m.keyRoom(z - a);
      const b = this.b;
      const keys = m.keys;
      let o = m.keysLen;
      for (let i = a; i < z; i++) keys[o++] = b[i]!;
      m.keysLen = o;
    }
  }

  /** Decodes the escape at i (a backslash) and writes it; returns the index after it. */
  private escape(i: number, key: boolean): number {
    const b = this.b;
    const e = b[i + 1];
    let cp: number;
    let next = i + 2;
    if (e === 117) {
      cp = this.hex4(i);
      next = i + 6;
      if (cp >= 0xd800 && cp <= 0xdbff && b[next] === 92 && b[next + 1] === 117) {
        const lo = this.hex4(next);
        if (lo >= 0xdc00 && lo <= 0xdfff) {
          cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
          next += 6;
        }
      }
    } else {
      const u = e === undefined ? undefined : UNESCAPE[e];
      if (u === undefined)
        this.fail(e === undefined ? "unterminated string" : "invalid escape", e === undefined ? this.i : i);
      cp = u;
    }
    this.codePoint(cp, key);
    return next;
  }

  private hex4(i: number): number {
    const b = this.b;
    const v0 = hexDigit(b[i + 2]);
    const v1 = hexDigit(b[i + 3]);
    const v2 = hexDigit(b[i + 4]);
    const v3 = hexDigit(b[i + 5]);
    if (v0 < 0 || v1 < 0 || v2 < 0 || v3 < 0) this.fail("invalid \\uXXXX escape", i);
    return (v0 << 12) | (v1 << 8) | (v2 << 4) | v3;
  }

  /** Writes one decoded character in canonical form (and, for a key, its UTF-8). */
  private codePoint(cp: number, key: boolean): void {
    const out = this.out;
    out.room(6);
    const buf = out.buf;
    if (cp < 32 || cp === 34 || cp === 92) {
      buf[out.len++] = 92;
      const short = SHORT_ESCAPE[cp];
      if (short !== undefined) buf[out.len++] = short;
      else {
        buf[out.len++] = 117;
        buf[out.len++] = 48;
        buf[out.len++] = 48;
        buf[out.len++] = cp < 16 ? 48 : 49;
        buf[out.len++] = HEX[cp & 15]!;
      }
    } else {
      if (cp >= 0xd800 && cp <= 0xdfff) this.lone++; // no UTF-8 form: the outcome is UnicodeEncodeError
      out.len = writeUtf8(buf, out.len, cp);
    }
    if (key) {
      const m = this.members;
      m.keyRoom(4);
      m.keysLen = writeUtf8(m.keys, m.keysLen, cp);
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
    out.openObjects++;
    const m = this.members;
    const base = m.top;
    const keysBase = m.keysLen;
    const regionStart = out.len;
    let c = this.ws();
    if (c === 125) {
      this.i++;
    } else {
      for (;;) {
        if (c !== 34) this.fail("expecting property name enclosed in double quotes");
        const start = out.len;
        const keyStart = m.keysLen;
        const valueErrors = this.valueErrors;
        const lone = this.lone;
        this.string(true);
        const keyEnd = m.keysLen;
        if (this.ws() !== 58) this.fail("expecting ':' delimiter");
        this.i++;
        out.byte(58);
        this.value();
        const t = m.top++;
        m.keyStart[t] = keyStart;
        m.keyEnd[t] = keyEnd;
        m.start[t] = start;
        m.end[t] = out.len;
        m.memberValueErrors[t] = this.valueErrors - valueErrors;
        m.memberLone[t] = this.lone - lone;
        c = this.ws();
        this.i++;
        if (c === 125) break;
        if (c !== 44) this.fail("expecting ',' or '}'", this.i - 1);
        out.byte(44);
        c = this.ws();
      }
      m.order(base, regionStart, out, this);
    }
    m.top = base;
    m.keysLen = keysBase;
    out.byte(125);
    if (--out.openObjects === 0 && out.len >= FLUSH_AT) out.flush();
    this.depth--;
  }
}
