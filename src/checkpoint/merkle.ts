/**
 * The Merkle tree of RFC 6962 / RFC 9162 (section 2.1) over a ledger's lines,
 * its inclusion proofs, and its consistency proofs in the general form of the
 * Merkle Tree Certificates draft (draft-ietf-plants-merkle-tree-certs,
 * section 4), which `seam witness` checks (its subtree inclusion proofs,
 * which no command offers, are in test/helpers/merkle-proofs.ts; both are
 * checked against the draft's vectors).
 *
 *   leaf hash  = SHA-256(0x00 ‖ line)      the line's bytes without its "\n"
 *   node hash  = SHA-256(0x01 ‖ left ‖ right)
 *   MTH({})    = SHA-256("")                the empty tree
 *   MTH(D[n])  = node(MTH(D[0:k]), MTH(D[k:n])), k the largest power of two below n
 *
 * Sizes and indexes are JS numbers: whole and at most 2^53 - 1, which no
 * ledger reaches; anything else is refused, never wrapped around. Nothing
 * here throws on hostile input: verifiers return a verdict with a reason.
 */
import { createHash, type Hash as Hasher } from "node:crypto";
import type { Result } from "../base/result.ts";
import { LineSplitter } from "../core/lines.ts";

export type Hash = Uint8Array;
export const HASH_BYTES = 32;

const LEAF = new Uint8Array([0x00]);
const NODE = new Uint8Array([0x01]);

/** SHA-256(0x00 ‖ data). */
export function leafHash(data: Uint8Array): Hash {
  return createHash("sha256").update(LEAF).update(data).digest();
}

/** SHA-256(0x01 ‖ left ‖ right). */
export function nodeHash(left: Hash, right: Hash): Hash {
  return createHash("sha256").update(NODE).update(left).update(right).digest();
}

/** MTH of the empty tree: SHA-256 of nothing. */
export const EMPTY_ROOT: Hash = createHash("sha256").digest();

/** The outcome of checking a proof: `reason` says what did not hold. */
export type ProofOutcome = Result;
export const OK: ProofOutcome = { ok: true };
export const fail = (reason: string): ProofOutcome => ({ ok: false, reason });

export function equalHash(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

// ---- arithmetic on sizes up to 2^53 - 1 (JS bit operators stop at 32 bits) ----

export function isSize(n: number): boolean {
  return Number.isSafeInteger(n) && n >= 0;
}
export const odd = (n: number) => n % 2 === 1;
export const half = (n: number) => Math.floor(n / 2);

/** The largest power of two strictly below n (n >= 2). */
export function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

// ---- incremental root ----

/**
 * The compact range [0, size): the roots of the perfect subtrees that the
 * binary expansion of `size` cuts the tree into, largest first — at most 64
 * hashes, whatever the size. Appending a leaf merges equal-sized neighbours;
 * the root folds them right to left.
 */
export class CompactRange {
  private hashes: Hash[] = [];
  private n = 0;

  get size(): number {
    return this.n;
  }

  /** The subtree roots, largest first (a copy). */
  get nodes(): Hash[] {
    return this.hashes.slice();
  }

  append(leaf: Hash): void {
    let h = leaf;
    for (let n = this.n; odd(n); n = half(n)) h = nodeHash(this.hashes.pop()!, h);
    this.hashes.push(h);
    this.n++;
  }

  root(): Hash {
    if (this.hashes.length === 0) return EMPTY_ROOT;
    let r = this.hashes[this.hashes.length - 1]!;
    for (let i = this.hashes.length - 2; i >= 0; i--) r = nodeHash(this.hashes[i]!, r);
    return r;
  }

  clone(): CompactRange {
    const c = new CompactRange();
    c.hashes = this.hashes.slice();
    c.n = this.n;
    return c;
  }
}

/**
 * The tree of a byte stream's lines, fed in chunks as they come: every "\n"
 * ends a leaf (the bytes before it, since the previous "\n"); bytes after
 * the last "\n" wait, hashed as they arrive, for the "\n" that completes
 * them. Memory stays flat however long a line is.
 */
export class LineTree {
  private range = new CompactRange();
  private partial: Hasher | null = null;
  private first: Hash | null = null;

  /** Complete lines so far. */
  get size(): number {
    return this.range.size;
  }
  /** No bytes wait for a "\n". */
  get atLineStart(): boolean {
    return this.partial === null;
  }
  /** Leaf hash of line 1, once it is complete. */
  get firstLeaf(): Hash | null {
    return this.first;
  }

  /** Adds the file's next bytes: each "\n" ends a leaf. */
  push(bytes: Uint8Array): void {
    // Keeps nothing: whatever splitter state there is, `partial` holds it too.
    const lines = new LineSplitter(0);
    lines.feed(bytes);
    for (let p = lines.next(); p !== null; p = lines.next()) {
      if (p.kind === "over") this.add(p.bytes);
      else this.endLine(p.bytes);
    }
  }

  /** Adds bytes (no "\n" among them) to the line not yet ended. */
  add(piece: Uint8Array): void {
    this.partialHasher().update(piece);
  }

  /** Ends the current line with `tail` as its last bytes (the "\n" itself not included). */
  endLine(tail: Uint8Array): Hash {
    let h: Hash;
    if (this.partial !== null) {
      h = this.partial.update(tail).digest();
      this.partial = null;
    } else {
      h = leafHash(tail);
    }
    this.first ??= h;
    this.range.append(h);
    return h;
  }

  root(): Hash {
    return this.range.root();
  }

  /** Forgets the bytes waiting for a "\n" (the ledger's torn tail was cut off). */
  dropPartial(): void {
    this.partial = null;
  }

  /** A copy to go back to (the range is at most 64 hashes; a waiting line's hash state is copied). */
  clone(): LineTree {
    const c = new LineTree();
    c.range = this.range.clone();
    c.partial = this.partial === null ? null : this.partial.copy();
    c.first = this.first;
    return c;
  }

  private partialHasher(): Hasher {
    if (this.partial === null) this.partial = createHash("sha256").update(LEAF);
    return this.partial;
  }
}

// ---- proof generation ----

/** A half-open range of leaves [start, end) whose MTH is one proof element. */
export type Range = readonly [start: number, end: number];

/**
 * The leaf ranges whose MTHs make up the inclusion proof of leaf `index` in
 * a tree of `size` (RFC 9162 2.1.3.1, PATH(m, D[n])), leaf's sibling first.
 * They and {index} partition [0, size), so one pass over the leaves can hash
 * them all. Throws RangeError unless 0 <= index < size.
 */
export function inclusionRanges(index: number, size: number): Range[] {
  if (!isSize(index) || !isSize(size) || index >= size) throw new RangeError(`no leaf ${index} in a tree of ${size}`);
  const out: Range[] = [];
  const walk = (m: number, lo: number, hi: number) => {
    const n = hi - lo;
    if (n <= 1) return;
    const k = splitPoint(n);
    if (m < k) {
      walk(m, lo, lo + k);
      out.push([lo + k, hi]);
    } else {
      walk(m - k, lo + k, hi);
      out.push([lo, lo + k]);
    }
  };
  walk(index, 0, size);
  return out;
}

/**
 * MTHs of several disjoint leaf ranges in one pass over the leaves, in
 * order: feed every leaf from 0 on with `append`, then read `hashes()`.
 * Each range keeps its own compact range, so memory is at most 64 hashes a
 * range whatever the tree's size.
 */
export class RangeHasher {
  private readonly order: number[];
  private readonly ranges: CompactRange[];
  private next = 0;
  private at = 0;

  constructor(private readonly wanted: readonly Range[]) {
    this.order = wanted.map((_, i) => i).sort((a, b) => wanted[a]![0] - wanted[b]![0]);
    this.ranges = wanted.map(() => new CompactRange());
  }

  /** Leaf number `this.at`; leaves outside every range are passed over. */
  append(leaf: Hash): void {
    const i = this.at++;
    while (this.next < this.order.length && this.wanted[this.order[this.next]!]![1] <= i) this.next++;
    const r = this.order[this.next];
    if (r !== undefined && this.wanted[r]![0] <= i) this.ranges[r]!.append(leaf);
  }

  /** Each range's MTH, in the order the ranges were given; throws if a range is not complete yet. */
  hashes(): Hash[] {
    return this.wanted.map(([s, e], i) => {
      if (this.ranges[i]!.size !== e - s) throw new RangeError(`leaves ${s}..${e} not all seen`);
      return this.ranges[i]!.root();
    });
  }
}

// ---- proof verification ----

export function checkProofHashes(proof: readonly Uint8Array[]): ProofOutcome {
  for (let i = 0; i < proof.length; i++) {
    if (proof[i]!.length !== HASH_BYTES)
      return fail(`proof hash ${i + 1} is ${proof[i]!.length} bytes, not ${HASH_BYTES}`);
  }
  return OK;
}

/**
 * RFC 9162 2.1.3.2: the inclusion proof of leaf `index` (its hash `leaf`)
 * in the tree of `size` with root `root`.
 */
export function verifyInclusion(
  index: number,
  size: number,
  leaf: Hash,
  proof: readonly Hash[],
  root: Hash,
): ProofOutcome {
  if (!isSize(index) || !isSize(size)) return fail("index or size out of range");
  if (index >= size) return fail(`index ${index} is not below size ${size}`);
  if (leaf.length !== HASH_BYTES) return fail(`leaf hash is ${leaf.length} bytes, not ${HASH_BYTES}`);
  const shape = checkProofHashes(proof);
  if (!shape.ok) return shape;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return fail("proof is too long");
    if (odd(fn) || fn === sn) {
      r = nodeHash(p, r);
      while (!odd(fn) && fn !== 0) {
        fn = half(fn);
        sn = half(sn);
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  if (sn !== 0) return fail("proof is too short");
  return equalHash(r, root) ? OK : fail("root does not match");
}

// ---- consistency proofs ----

/** The smallest power of two at least n (1 for 0 and 1). */
function bitCeil(n: number): number {
  let k = 1;
  while (k < n) k *= 2;
  return k;
}

/**
 * A subtree of the draft's section 4.1: the half-open interval [start, end)
 * with start < end and start a multiple of BIT_CEIL(end - start), so that
 * MTH(D[start:end]) is a node (or a run of nodes) of every tree that holds it.
 */
export function isValidSubtree(start: number, end: number): boolean {
  return isSize(start) && isSize(end) && start < end && start % bitCeil(end - start) === 0;
}

/**
 * The leaf ranges of the subtree consistency proof of [start, end) in a tree
 * of `size` (the draft's SUBTREE_PROOF, section 4.4.1); with start = 0 it is
 * RFC 9162's PROOF(end, D[size]) (2.1.4.1). Throws RangeError for an invalid
 * subtree or end > size.
 */
export function subtreeConsistencyRanges(start: number, end: number, size: number): Range[] {
  if (!isValidSubtree(start, end) || !isSize(size) || end > size) {
    throw new RangeError(`[${start}, ${end}) is not a subtree of a tree of ${size}`);
  }
  const out: Range[] = [];
  const walk = (s: number, e: number, lo: number, hi: number, known: boolean) => {
    const n = hi - lo;
    if (s === 0 && e === n) {
      if (!known) out.push([lo, hi]);
      return;
    }
    const k = splitPoint(n);
    if (e <= k) {
      walk(s, e, lo, lo + k, known);
      out.push([lo + k, hi]);
    } else if (s >= k) {
      walk(s - k, e - k, lo + k, hi, known);
      out.push([lo, lo + k]);
    } else {
      // A valid subtree that straddles k starts at 0 (see isValidSubtree).
      walk(0, e - k, lo + k, hi, false);
      out.push([lo, lo + k]);
    }
  };
  walk(start, end, 0, size, true);
  return out;
}

/** RFC 9162 PROOF(size1, D[size2]); [] when the sizes are equal. Throws RangeError unless 0 < size1 <= size2. */
export function consistencyRanges(size1: number, size2: number): Range[] {
  if (!isSize(size1) || size1 === 0) throw new RangeError("a consistency proof from the empty tree proves nothing");
  return subtreeConsistencyRanges(0, size1, size2);
}

/**
 * RFC 9162 2.1.4.2: `proof` shows that the tree of `size2` (root2) extends
 * the tree of `size1` (root1). Equal sizes need an empty proof and equal
 * roots (for size 0, both the empty root); from size 0 to more nothing can
 * be proven.
 */
export function verifyConsistency(
  size1: number,
  size2: number,
  proof: readonly Hash[],
  root1: Hash,
  root2: Hash,
): ProofOutcome {
  if (!isSize(size1) || !isSize(size2)) return fail("size out of range");
  if (size1 > size2) return fail(`size1 ${size1} is larger than size2 ${size2}`);
  if (size1 === 0 && size2 === 0) {
    if (proof.length > 0) return fail("sizes are equal but the proof is not empty");
    return equalHash(root1, EMPTY_ROOT) && equalHash(root2, EMPTY_ROOT)
      ? OK
      : fail("an empty tree's root is SHA-256 of nothing");
  }
  if (size1 === 0) return fail("a consistency proof from the empty tree proves nothing");
  return verifySubtreeConsistency(0, size1, size2, proof, root1, root2);
}

/**
 * The draft's subtree consistency proof (section 4.4.3): [start, end), whose
 * MTH is `nodeHash1`, is part of the tree of `size` with root `root`. An
 * empty subtree (start = end <= size) is part of any tree: it needs an empty
 * proof and the empty root. The proof is consumed from its last element,
 * the top of the tree, mirroring how subtreeConsistencyRanges builds it.
 */
export function verifySubtreeConsistency(
  start: number,
  end: number,
  size: number,
  proof: readonly Hash[],
  nodeHash1: Hash,
  root: Hash,
): ProofOutcome {
  if (!isSize(start) || !isSize(end) || !isSize(size)) return fail("start, end or size out of range");
  if (end > size) return fail(`end ${end} is beyond size ${size}`);
  if (start === end) {
    if (proof.length > 0) return fail("an empty subtree has an empty proof");
    return equalHash(nodeHash1, EMPTY_ROOT) ? OK : fail("an empty subtree's hash is SHA-256 of nothing");
  }
  if (!isValidSubtree(start, end)) return fail(`[${start}, ${end}) is not a valid subtree`);
  const shape = checkProofHashes(proof);
  if (!shape.ok) return shape;
  let left = proof.length;
  const take = (): Hash | null => (left > 0 ? proof[--left]! : null);
  /** [MTH of the subtree as rebuilt, MTH of the tree [0, n) as rebuilt], or null when the proof ran out. */
  const walk = (s: number, e: number, n: number, known: boolean): [Hash, Hash] | null => {
    if (s === 0 && e === n) {
      if (known) return [nodeHash1, nodeHash1];
      const h = take();
      return h === null ? null : [h, h];
    }
    const k = splitPoint(n);
    const sibling = take();
    if (sibling === null) return null;
    if (e <= k) {
      const r = walk(s, e, k, known);
      return r === null ? null : [r[0], nodeHash(r[1], sibling)];
    }
    if (s >= k) {
      const r = walk(s - k, e - k, n - k, known);
      return r === null ? null : [r[0], nodeHash(sibling, r[1])];
    }
    const r = walk(0, e - k, n - k, false);
    return r === null ? null : [nodeHash(sibling, r[0]), nodeHash(sibling, r[1])];
  };
  const got = walk(start, end, size, true);
  if (got === null) return fail("proof is too short");
  if (left > 0) return fail("proof is too long");
  if (!equalHash(got[0], nodeHash1)) return fail("first root does not match");
  return equalHash(got[1], root) ? OK : fail("second root does not match");
}
