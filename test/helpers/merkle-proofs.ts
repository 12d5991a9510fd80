/**
 * The consistency and subtree proofs of the Merkle Tree Certificates draft
 * (draft-ietf-plants-merkle-tree-certs, section 4), which generalise RFC
 * 9162's. No seam command offers them; they stay here, checked against the
 * draft's vectors (test/vectors/merkle/), so that the tree in
 * src/checkpoint/merkle.ts is known to agree with them.
 */
import {
  CompactRange,
  checkProofHashes,
  EMPTY_ROOT,
  equalHash,
  fail,
  type Hash,
  isSize,
  nodeHash,
  OK,
  type ProofOutcome,
  type Range,
  splitPoint,
  verifyInclusion,
} from "../../src/checkpoint/merkle.ts";

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

/** MTH of a list of leaf hashes. */
export function rootOf(leaves: readonly Hash[]): Hash {
  const r = new CompactRange();
  for (const l of leaves) r.append(l);
  return r.root();
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

/** The proof itself: the MTH of each range, from `mth(start, end)`. */
export function hashRanges(ranges: readonly Range[], mth: (start: number, end: number) => Hash): Hash[] {
  return ranges.map(([s, e]) => mth(s, e));
}

/** The draft's subtree inclusion proof (section 4.3): leaf `index` in the subtree [start, end) whose MTH is `root`. */
export function verifySubtreeInclusion(
  index: number,
  start: number,
  end: number,
  leaf: Hash,
  proof: readonly Hash[],
  root: Hash,
): ProofOutcome {
  if (!isValidSubtree(start, end)) return fail(`[${start}, ${end}) is not a valid subtree`);
  if (!isSize(index) || index < start || index >= end) return fail(`index ${index} is outside [${start}, ${end})`);
  return verifyInclusion(index - start, end - start, leaf, proof, root);
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
