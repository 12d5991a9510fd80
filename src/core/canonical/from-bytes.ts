/**
 * JSON as UTF-8 bytes straight to its canonical UTF-8 bytes, with no model
 * and no JS string: what `seam digest` runs on files of any size. It must
 * equal compactForm(parseJson(text)) (json-c14n) and
 * jcsForm(parseJson(text, {rejectDuplicateKeys: true})) (jcs) byte for byte,
 * and accept exactly what parseJson accepts; test/e2e/canonical-bytes.test.ts
 * checks that on random and hostile input. This file writes the containers;
 * src/core/canonical/from-bytes-scalars.ts the strings and numbers.
 *
 * Output goes into one buffer. An object's members are written as they come;
 * when the object closes they are put in key order (dropping all but the last
 * of a repeated key) by rewriting the object's own region. Only bytes outside
 * every open object are final, so the buffer is handed to the sink whenever
 * no object is open: an array streams. An object outside every other whose
 * region outgrows HOLD_LIMIT is done again member by member instead: its
 * members are found without reading them (src/core/json-spans.ts), put in key
 * order, and each written in turn, so that it streams too (its members are
 * what is held, each the same way). On input that is not JSON the object is
 * read once more in place, so the error is the one a reader in document
 * order meets first.
 *
 * Keys sort by their decoded UTF-8 bytes, which is code point order (Python's
 * sort_keys); a lone surrogate from a `\udXXX` escape is kept as its 3-byte
 * form, which sorts where its code point does. An object written member by
 * member has its keys compared where they lie in the input, with no decoded
 * copy (src/core/canonical/key-order.ts), in the same order.
 */
import { isUtf8 } from "node:buffer";
import { guardStack, JsonParseError } from "../json-error.ts";
import { DEFAULT_MAX_DEPTH } from "../json-scanner.ts";
import { objectKeyStarts, stringEnd, valueEnd, valueStartAfter } from "../json-spans.ts";
import { firstInvalidUtf8 } from "../utf8.ts";
import { ByteOut, FLUSH_AT, HOLD_LIMIT, TOO_LONG } from "./byte-out.ts";
import { ByteScalars } from "./from-bytes-scalars.ts";
import { byteOrder, KeyOrder } from "./key-order.ts";
import type { Recipe } from "./reference.ts";

/** Whether the input had a canonical form, or the Python exception that says why not. */
export type Outcome = "ok" | "ValueError" | "UnicodeEncodeError";

/**
 * `items` put in the order `cmp` gives, stably (of equal items the first
 * stays first), in place: a bottom-up merge sort of typed arrays that copies
 * out the shorter of each two runs it merges, so it needs room for half the
 * items beside them (an object may have millions of members, and a sort
 * call with a comparator would hold each as a value of its own).
 */
function mergeSort(items: Int32Array, cmp: (x: number, y: number) => number): Int32Array {
  const n = items.length;
  const tmp = new Int32Array(n >> 1);
  for (let width = 1; width < n; width *= 2) {
    for (let lo = 0; lo + width < n; lo += 2 * width) {
      const mid = lo + width;
      const hi = Math.min(mid + width, n);
      if (cmp(items[mid]!, items[mid - 1]!) >= 0) continue; // already in order
      if (mid - lo <= hi - mid) {
        // The left run copied out, merged forward. Ties go to the left run: stable.
        const len = mid - lo;
        for (let k = 0; k < len; k++) tmp[k] = items[lo + k]!;
        let a = 0;
        let b = mid;
        let o = lo;
        while (a < len && b < hi) items[o++] = cmp(items[b]!, tmp[a]!) < 0 ? items[b++]! : tmp[a++]!;
        while (a < len) items[o++] = tmp[a++]!;
      } else {
        // The right run copied out, merged backward. Ties go to the right run, placed last: stable.
        const len = hi - mid;
        for (let k = 0; k < len; k++) tmp[k] = items[mid + k]!;
        let a = mid - 1;
        let t = len - 1;
        let o = hi - 1;
        while (a >= lo && t >= 0) items[o--] = cmp(tmp[t]!, items[a]!) < 0 ? items[a--]! : tmp[t--]!;
        while (t >= 0) items[o--] = tmp[t--]!;
      }
    }
  }
  return items;
}

class ByteCanonicalizer extends ByteScalars {
  // One stack of object members for the whole document; [base, top) belong to the innermost open object.
  private top = 0;
  /** Where each member's decoded key lies in `keys` (typed: an object may have millions of members). */
  private keyStart = new Int32Array(256);
  private keyEnd = new Int32Array(256);
  private readonly start: number[] = [];
  private readonly end: number[] = [];
  private readonly memberValueErrors: number[] = [];
  private readonly memberLone: number[] = [];
  private readonly idx: number[] = [];
  /**
   * Where a member's value begins whose input is longer than HOLD_LIMIT: an
   * object there is written member by member at once (its canonical form is
   * the same either way; only what is held on the way differs). -1: none.
   */
  private longAt = -1;
  /** Compares keys where they lie in the input (objectByMembers); made when first needed. */
  private keyOrder: KeyOrder | null = null;
  /** Objects outside every other are written member by member once they outgrow HOLD_LIMIT (off for the one reading again). */
  streamObjects = true;
  /** Where each member's key begins and its value ends in the input (objectInPlace), for onRepeat. */
  private readonly keyAt: number[] = [];
  private readonly valueEndAt: number[] = [];
  /** The decoded key whose members the outermost object leaves out (the chain form of a row: "chain"). */
  dropTopKey: Uint8Array | null = null;
  /** Told of each repeated key's later occurrence: where its key begins and its value ends in the input. */
  onRepeat: ((at: number, valueEnd: number) => void) | null = null;

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
        return this.nonFinite("NaN");
      case 73:
        return this.nonFinite("Infinity");
      case 45:
        if (this.b[this.i + 1] === 73) return this.nonFinite("-Infinity");
        return this.number();
      default:
        if (c >= 48 && c <= 57) return this.number();
        this.fail("expecting value");
    }
  }

  /** NaN or ±Infinity: written in the chain form, else only counted (it has no canonical form). */
  private nonFinite(word: string): void {
    this.literal(word);
    if (this.chainForm) this.out.ascii(word);
    else this.valueErrors++;
  }

  /** Between two items: "," or, in the chain form, ", ". */
  private comma(): void {
    this.out.byte(44);
    if (this.chainForm) this.out.byte(32);
  }

  /** After a key: ":" or, in the chain form, ": ". */
  private colon(): void {
    this.out.byte(58);
    if (this.chainForm) this.out.byte(32);
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
        this.comma();
      }
    }
    out.byte(93);
    this.depth--;
  }

  object(): void {
    const out = this.out;
    if (out.openObjects > 0 || !this.streamObjects) return this.objectInPlace();
    if (out.len >= FLUSH_AT) out.flush(); // what came before is final: the object alone is held
    const { i, depth, top, keysLen, valueErrors, lone } = this;
    const len = out.len;
    // An object that leaves a key out is written member by member, where members are left out; so is one
    // whose input is known to outgrow what is held (what it holds on the way is spared).
    if ((this.dropTopKey === null || depth !== 0) && this.longAt !== i) {
      out.holdFrom = len;
      try {
        return this.objectInPlace();
      } catch (err) {
        if (err !== TOO_LONG) throw err;
      } finally {
        out.holdFrom = -1;
      }
      this.rewind(i, depth, top, keysLen, valueErrors, lone, len);
    }
    try {
      this.objectByMembers();
    } catch (err) {
      if (!(err instanceof JsonParseError)) throw err;
      // Not JSON: read it again in document order, held whole, for the error such a reader meets first.
      this.rewind(i, depth, top, keysLen, valueErrors, lone, len);
      this.streamObjects = false;
      this.objectInPlace();
      throw err;
    }
  }

  /** Room on the member stack for member t. */
  private push(): number {
    const t = this.top++;
    if (t >= this.keyStart.length) this.stackRoom(this.keyStart.length * 2);
    return t;
  }

  /** The member stack grown to hold `size` members. */
  private stackRoom(size: number): void {
    if (size <= this.keyStart.length) return;
    const ks = new Int32Array(size);
    ks.set(this.keyStart);
    this.keyStart = ks;
    const ke = new Int32Array(size);
    ke.set(this.keyEnd);
    this.keyEnd = ke;
  }

  /** Back to where an object outside every other began. */
  private rewind(
    i: number,
    depth: number,
    top: number,
    keysLen: number,
    valueErrors: number,
    lone: number,
    len: number,
  ) {
    this.i = i;
    this.depth = depth;
    this.top = top;
    this.keysLen = keysLen;
    this.valueErrors = valueErrors;
    this.lone = lone;
    this.out.len = len;
    this.out.openObjects = 0;
  }

  /** The object at the cursor, its members put in key order in its own region when it closes. */
  private objectInPlace(): void {
    this.enter();
    this.i++;
    const out = this.out;
    out.byte(123);
    out.openObjects++;
    const base = this.top;
    const keysBase = this.keysLen;
    const regionStart = out.len;
    let c = this.ws();
    if (c === 125) {
      this.i++;
    } else {
      for (;;) {
        if (c !== 34) this.fail("expecting property name enclosed in double quotes");
        const start = out.len;
        const keyStart = this.keysLen;
        const valueErrors = this.valueErrors;
        const lone = this.lone;
        const keyAt = this.i;
        this.string(true);
        const keyEnd = this.keysLen;
        if (this.ws() !== 58) this.fail("expecting ':' delimiter");
        this.i++;
        this.colon();
        this.value();
        const t = this.push();
        this.keyStart[t] = keyStart;
        this.keyEnd[t] = keyEnd;
        this.keyAt[t] = keyAt;
        this.valueEndAt[t] = this.i;
        this.start[t] = start;
        this.end[t] = out.len;
        this.memberValueErrors[t] = this.valueErrors - valueErrors;
        this.memberLone[t] = this.lone - lone;
        c = this.ws();
        this.i++;
        if (c === 125) break;
        if (c !== 44) this.fail("expecting ',' or '}'", this.i - 1);
        this.comma();
        c = this.ws();
      }
      this.order(base, regionStart);
    }
    this.top = base;
    this.keysLen = keysBase;
    out.byte(125);
    if (--out.openObjects === 0 && out.len >= FLUSH_AT) out.flush();
    this.depth--;
  }

  /** Compares the keys of members x and y: by code point, or for jcs by UTF-16 code unit. */
  private cmp(x: number, y: number): number {
    const k = this.keys;
    let i = this.keyStart[x]!;
    let j = this.keyStart[y]!;
    const ie = this.keyEnd[x]!;
    const je = this.keyEnd[y]!;
    while (i < ie && j < je) {
      const p = k[i]!;
      const q = k[j]!;
      if (p !== q) return byteOrder(p, q, this.jcs);
      i++;
      j++;
    }
    return ie - i - (je - j);
  }

  private sameKey(x: number, y: number): boolean {
    return this.cmp(x, y) === 0;
  }

  /**
   * The object at the cursor, written member by member: its members found
   * (keys read, values only spanned), put in key order, then each value read
   * and written in turn, outside any open object, so it streams. A repeated
   * key's earlier values are still read (they must be JSON), held and dropped.
   */
  private objectByMembers(): void {
    const b = this.b;
    const found = objectKeyStarts(b, this.i);
    if (found === null) this.fail("expecting property name enclosed in double quotes");
    this.enter();
    const out = this.out;
    const lone = this.lone;
    // Each key read strictly before any is compared (its form written and dropped: nothing of it may be handed on).
    out.openObjects++;
    const mark = out.len;
    for (let k = 0; k < found.at.length; k++) {
      this.i = found.at[k]!;
      this.string(false);
      out.len = mark;
    }
    out.openObjects--;
    this.lone = lone; // counted again as each kept key is written
    // Keys compared where they lie and members sorted by where their keys begin: a typed array of
    // four bytes a member, and half as much beside it, is all the order costs (an object may have millions).
    const keys = (this.keyOrder ??= new KeyOrder(this.b, this.jcs));
    const idx = mergeSort(found.at, (x, y) => keys.cmp(x, y));
    const n = idx.length;
    /** Where the value of the member whose key begins at `at` begins. */
    const valueAt = (at: number) => valueStartAfter(b, stringEnd(b, at));
    /** Reads and writes the value of the member whose key begins at `at`, which must fill its span exactly. */
    const memberValue = (at: number) => {
      const start = valueAt(at);
      const end = valueEnd(b, start);
      if (end - start > HOLD_LIMIT) this.longAt = start;
      this.i = start;
      this.value();
      if (this.i !== end) this.fail("expecting ',' or '}'");
    };
    out.byte(123);
    let first = true;
    for (let j = 0; j < n; j++) {
      const m = idx[j]!;
      const later = j + 1 < n ? idx[j + 1]! : -1;
      const repeated = later >= 0 && keys.cmp(later, m) === 0;
      if (repeated && this.jcs) this.fail("duplicate key", m);
      if (repeated) this.onRepeat?.(later, valueEnd(b, valueAt(later)));
      if (repeated || (this.depth === 1 && this.dropTopKey !== null && keys.is(m, this.dropTopKey))) {
        const { valueErrors, lone } = this;
        const held = out.len;
        out.openObjects++;
        memberValue(m);
        out.openObjects--;
        out.len = held;
        this.valueErrors = valueErrors;
        this.lone = lone;
        continue;
      }
      if (!first) this.comma();
      first = false;
      this.i = m;
      this.string(false);
      this.colon();
      memberValue(m);
    }
    out.byte(125);
    this.depth--;
    this.i = found.end;
  }

  /** The members [base, base + n) in key order (stable: of a repeated key, the last comes last); idx itself when few. */
  private sorted(base: number, n: number): number[] | Int32Array {
    if (n > 16) {
      const from = new Int32Array(n);
      for (let j = 0; j < n; j++) from[j] = base + j;
      return mergeSort(from, (x, y) => this.cmp(x, y));
    }
    const idx = this.idx;
    for (let j = 0; j < n; j++) idx[j] = base + j;
    idx.length = n;
    // Insertion sort: stable, and cheaper than a sort call on the few members most objects have.
    for (let j = 1; j < n; j++) {
      const m = idx[j]!;
      let k = j;
      while (k > 0 && this.cmp(idx[k - 1]!, m) > 0) {
        idx[k] = idx[k - 1]!;
        k--;
      }
      idx[k] = m;
    }
    return idx;
  }

  /** Puts the members [base, top) in key order, keeping the last of each repeated key. */
  private order(base: number, regionStart: number): void {
    const n = this.top - base;
    let sorted = true;
    for (let j = base + 1; j < this.top; j++) {
      if (this.cmp(j - 1, j) >= 0) {
        sorted = false;
        break;
      }
    }
    if (sorted) return;
    const idx = this.sorted(base, n);
    // Park the region after the written bytes, then copy the members back in order.
    const out = this.out;
    out.room(out.len - regionStart);
    const buf = out.buf;
    const park = out.len - regionStart;
    buf.copyWithin(out.len, regionStart, out.len);
    let o = regionStart;
    for (let j = 0; j < n; j++) {
      const m = idx[j]!;
      if (j + 1 < n && this.sameKey(idx[j + 1]!, m)) {
        if (this.jcs) this.fail("duplicate key", this.i - 1);
        this.onRepeat?.(this.keyAt[idx[j + 1]!]!, this.valueEndAt[idx[j + 1]!]!);
        // A later value of the same key wins; this one's refusals go with it.
        this.valueErrors -= this.memberValueErrors[m]!;
        this.lone -= this.memberLone[m]!;
        continue;
      }
      if (o !== regionStart) {
        buf[o++] = 44;
        if (this.chainForm) buf[o++] = 32;
      }
      const from = this.start[m]! + park;
      const to = this.end[m]! + park;
      if (to - from < 64) for (let k = from; k < to; k++) buf[o++] = buf[k]!;
      else {
        buf.copyWithin(o, from, to);
        o += to - from;
      }
    }
    out.len = o;
  }
}

/** What canonicalBytes writes: a digest recipe's form, or the chain form (chainForm in reference.ts). */
export type ByteForm = Recipe | "chain";

export interface ByteFormOptions {
  maxDepth?: number;
  /** A key the outermost object is written without, every member of it (the chain form of a row: "chain"). */
  dropTopKey?: string;
  /**
   * Told of each repeated key's later occurrence: where its key begins (at
   * its quote) and where its value ends in the input. A reader in document
   * order meets the repeats in the order of those ends (it knows a key is
   * repeated once it has read the value and adds the member).
   */
  onRepeat?: (at: number, valueEnd: number) => void;
}

/**
 * Feeds the canonical form of UTF-8 JSON under `form` to `sink`, in chunks
 * valid only during each call, and says whether it was canonical after all:
 * on "ValueError" (NaN/±Infinity) or "UnicodeEncodeError" (a lone surrogate
 * escape) the bytes fed are meaningless. ValueError wins over
 * UnicodeEncodeError, as in Python. The chain form has both (as NaN, and a
 * surrogate's own three bytes, as the chain rule encodes them): always "ok".
 * Throws JsonParseError for input that is not UTF-8 or not JSON (for jcs,
 * also for a repeated key, which I-JSON forbids).
 */
export function canonicalBytes(
  input: Uint8Array,
  form: ByteForm,
  sink: (bytes: Uint8Array) => void,
  opts?: ByteFormOptions,
): Outcome {
  if (!isUtf8(input)) throw new JsonParseError("not UTF-8", firstInvalidUtf8(input));
  const out = new ByteOut(sink);
  const p = new ByteCanonicalizer(input, opts?.maxDepth ?? DEFAULT_MAX_DEPTH, out, form === "jcs");
  p.chainForm = form === "chain";
  if (opts?.dropTopKey !== undefined) p.dropTopKey = new TextEncoder().encode(opts.dropTopKey);
  p.onRepeat = opts?.onRepeat ?? null;
  guardStack(
    input,
    () => p.i,
    () => p.document(),
  );
  out.flush();
  if (p.chainForm) return "ok";
  return p.valueErrors ? "ValueError" : p.lone ? "UnicodeEncodeError" : "ok";
}
