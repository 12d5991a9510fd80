/**
 * The subtree inclusion proofs of the Merkle Tree Certificates draft
 * (draft-ietf-plants-merkle-tree-certs, section 4.3), which no seam command
 * offers, and how a test makes a proof; checked against the draft's vectors
 * (test/vectors/merkle/) with the consistency proofs of
 * src/checkpoint/merkle.ts, re-exported here.
 */
import {
  CompactRange,
  consistencyRanges,
  fail,
  type Hash,
  isSize,
  isValidSubtree,
  type ProofOutcome,
  type Range,
  verifyInclusion,
} from "../../src/checkpoint/merkle.ts";

export {
  consistencyRanges,
  isValidSubtree,
  subtreeConsistencyRanges,
  verifyConsistency,
  verifySubtreeConsistency,
} from "../../src/checkpoint/merkle.ts";

/** MTH of a list of leaf hashes. */
export function rootOf(leaves: readonly Hash[]): Hash {
  const r = new CompactRange();
  for (const l of leaves) r.append(l);
  return r.root();
}

/** The proof itself: the MTH of each range, from `mth(start, end)`. */
export function hashRanges(ranges: readonly Range[], mth: (start: number, end: number) => Hash): Hash[] {
  return ranges.map(([s, e]) => mth(s, e));
}

/** RFC 9162 PROOF(m, D[n]) over `leaves` (n of them at least); [] from size 0, as a witness takes it. */
export function consistencyProof(leaves: readonly Hash[], m: number, n: number): Hash[] {
  if (m === 0) return [];
  return hashRanges(consistencyRanges(m, n), (s, e) => rootOf(leaves.slice(s, e)));
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
