/**
 * The Merkle layer: every golden vector of the reference implementation
 * (test/vectors/merkle: inclusion, consistency, and the Merkle Tree
 * Certificates draft's subtree forms), proofs generated here equal to the
 * vectors' happy paths, and the incremental structures equal to the
 * recursive definition.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import {
  CompactRange,
  EMPTY_ROOT,
  type Hash,
  inclusionRanges,
  LineTree,
  leafHash,
  nodeHash,
  RangeHasher,
  verifyInclusion,
} from "../../src/checkpoint/merkle.ts";
import { getField, type Json, parseJson } from "../../src/core/json.ts";
import {
  consistencyRanges,
  hashRanges,
  isValidSubtree,
  rootOf,
  subtreeConsistencyRanges,
  verifyConsistency,
  verifySubtreeConsistency,
  verifySubtreeInclusion,
} from "../helpers/merkle-proofs.ts";

const VECTORS = new URL("../vectors/merkle/", import.meta.url).pathname;
const b64 = (s: Json | undefined) => new Uint8Array(Buffer.from(String(s ?? ""), "base64"));
const toB64 = (h: Uint8Array) => Buffer.from(h).toString("base64");
/** A vector's number; one beyond 2^53 stays beyond it (never rounded into range). */
const num = (v: Json | undefined) => (typeof v === "bigint" ? Number.MAX_SAFE_INTEGER + 2 : Number(v));
const proofOf = (v: Json) => ((getField(v, "proof") ?? []) as Json[]).map(b64);

function files(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...files(p));
    else if (name.endsWith(".json")) out.push(p);
  }
  return out;
}
const load = (p: string) => parseJson(readFileSync(p, "utf8"));
const rel = (p: string) => p.slice(VECTORS.length);

const check: Record<string, (v: Json) => { ok: boolean; reason?: string }> = {
  inclusion: (v) =>
    verifyInclusion(
      num(getField(v, "leafIdx")),
      num(getField(v, "treeSize")),
      b64(getField(v, "leafHash")),
      proofOf(v),
      b64(getField(v, "root")),
    ),
  consistency: (v) =>
    verifyConsistency(
      num(getField(v, "size1")),
      num(getField(v, "size2")),
      proofOf(v),
      b64(getField(v, "root1")),
      b64(getField(v, "root2")),
    ),
  subtreeinclusion: (v) =>
    verifySubtreeInclusion(
      num(getField(v, "leafIdx")),
      num(getField(v, "start")),
      num(getField(v, "end")),
      b64(getField(v, "leafHash")),
      proofOf(v),
      b64(getField(v, "root")),
    ),
  subtreeconsistency: (v) =>
    verifySubtreeConsistency(
      num(getField(v, "start")),
      num(getField(v, "end")),
      num(getField(v, "size")),
      proofOf(v),
      b64(getField(v, "root1")),
      b64(getField(v, "root2")),
    ),
};

describe("golden vectors", () => {
  for (const kind of Object.keys(check)) {
    const all = files(join(VECTORS, kind));
    test(`${kind}: ${all.length} vectors, each verdict as the reference gives it`, () => {
      expect(all.length).toBeGreaterThan(20);
      const wrong: string[] = [];
      for (const p of all) {
        const v = load(p);
        const got = check[kind]!(v);
        if (got.ok === (getField(v, "wantErr") === true))
          wrong.push(`${rel(p)}: ${got.ok ? "accepted" : `rejected (${got.reason})`}`);
      }
      expect(wrong).toEqual([]);
    });
  }

  test("the vectors hold both verdicts, and 518 files in all", () => {
    const all = Object.keys(check).flatMap((k) => files(join(VECTORS, k)));
    expect(all.length).toBe(518);
    const good = all.filter((p) => getField(load(p), "wantErr") === false).length;
    expect(good).toBeGreaterThan(20);
    expect(all.length - good).toBeGreaterThan(400);
  });
});

// The RFC 6962 test tree the vectors are made from: eight leaves.
const RFC_LEAVES = [
  "",
  "00",
  "10",
  "2021",
  "3031",
  "40414243",
  "5051525354555657",
  "606162636465666768696a6b6c6d6e6f",
].map((h) => leafHash(Buffer.from(h, "hex")));

/** MTH by the recursive definition (RFC 9162 2.1.1), the yardstick for everything incremental. */
function mth(leaves: readonly Hash[]): Hash {
  if (leaves.length === 0) return EMPTY_ROOT;
  if (leaves.length === 1) return leaves[0]!;
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return nodeHash(mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}

describe("hashing", () => {
  test("leaf, node and empty hashes, golden", () => {
    expect(Buffer.from(EMPTY_ROOT).toString("hex")).toBe(
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    );
    expect(Buffer.from(leafHash(new Uint8Array(0))).toString("hex")).toBe(
      "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    );
    expect(toB64(leafHash(Buffer.from("10", "hex")))).toBe("ApjRIpBtz8EIkstTpzmS/FufST6kybrbJ7eRtBJ6f+c=");
    expect(toB64(nodeHash(RFC_LEAVES[0]!, RFC_LEAVES[1]!))).toBe("+sVCA+fMaWzw38tCySodnbr3CtnmIfS9jZhmLwDjwSU=");
  });

  test("the RFC tree's roots at every size, incrementally and recursively", () => {
    const want = [
      "bjQLnP+zepicpUTmu3gKLHiQHT+zNzh2hRGjBhevoB0=",
      "+sVCA+fMaWzw38tCySodnbr3CtnmIfS9jZhmLwDjwSU=",
      "rra8/idLcKFPsGel5VeCZNsPqbUa9eC6FZFY8yngbnc=",
      "037kGJdt2VdTwcc4Yrk5j6Kiz5tP8P3+izDNlSCWFLc=",
      "Tju7H3tHjc/nH7YxYxUZo7yhLJrvyhYSv85ME6hiZNQ=",
      "duZ9rbzfHhDht03cYIq9L5jfsW+851J3tSMqEn8gh+8=",
      "3bib5AOAnjJXUNPSY814kpwpQreUKjS3fhIslZSnTIw=",
      "XcnaeacGWamtVZy3Ad7ZoqudgjqtL0lgz+Nw7/RgQyg=",
    ];
    const r = new CompactRange();
    expect(r.root()).toEqual(EMPTY_ROOT);
    RFC_LEAVES.forEach((l, i) => {
      r.append(l);
      expect([toB64(r.root()), toB64(mth(RFC_LEAVES.slice(0, i + 1)))]).toEqual([want[i]!, want[i]!]);
    });
  });

  test("the compact range equals the recursive root up to 300 leaves and holds one hash per set bit", () => {
    const leaves = Array.from({ length: 300 }, (_, i) => leafHash(Buffer.from(`line ${i}`)));
    const r = new CompactRange();
    for (let n = 1; n <= leaves.length; n++) {
      r.append(leaves[n - 1]!);
      expect(r.nodes.length).toBe(n.toString(2).replace(/0/g, "").length);
      if (n < 70 || n % 37 === 0 || n === 256) expect(r.root()).toEqual(mth(leaves.slice(0, n)));
    }
    expect(rootOf(leaves)).toEqual(mth(leaves));
  });
});

describe("LineTree", () => {
  const text = 'first\n\n{"a": 1}\r\nunicode é ✓\nlast, unterminated';
  const lines = text.split("\n");
  const bytes = new TextEncoder().encode(text);

  test("one leaf per complete line, whatever the chunking; the unterminated tail waits", () => {
    const want = rootOf(lines.slice(0, -1).map((l) => leafHash(new TextEncoder().encode(l))));
    for (const step of [1, 2, 3, 7, bytes.length]) {
      const t = new LineTree();
      for (let i = 0; i < bytes.length; i += step) t.push(bytes.subarray(i, i + step));
      expect([t.size, t.atLineStart]).toEqual([4, false]);
      expect(t.root()).toEqual(want);
      expect(t.firstLeaf).toEqual(leafHash(new TextEncoder().encode("first")));
      t.push(new Uint8Array([0x0a]));
      expect(t.size).toBe(5);
      expect(t.root()).toEqual(rootOf(lines.map((l) => leafHash(new TextEncoder().encode(l)))));
    }
  });

  test("a clone is independent, waiting line included", () => {
    const t = new LineTree();
    t.push(new TextEncoder().encode("a\nhalf"));
    const c = t.clone();
    t.push(new TextEncoder().encode(" one\n"));
    c.push(new TextEncoder().encode(" two\n"));
    expect(t.root()).toEqual(rootOf(["a", "half one"].map((l) => leafHash(Buffer.from(l)))));
    expect(c.root()).toEqual(rootOf(["a", "half two"].map((l) => leafHash(Buffer.from(l)))));
  });
});

describe("proof generation", () => {
  const leafMth = (leaves: readonly Hash[]) => (s: number, e: number) => mth(leaves.slice(s, e));

  test("inclusion proofs equal the vectors' happy paths", () => {
    for (const k of ["0", "1", "2", "3", "4"]) {
      const v = load(join(VECTORS, "inclusion", k, "happy-path.json"));
      const proof = hashRanges(
        inclusionRanges(num(getField(v, "leafIdx")), num(getField(v, "treeSize"))),
        leafMth(RFC_LEAVES),
      );
      expect(proof.map(toB64)).toEqual(((getField(v, "proof") ?? []) as string[]).slice());
    }
  });

  test("consistency and subtree consistency proofs equal the vectors' happy paths", () => {
    for (const k of ["0", "1", "2", "3", "4"]) {
      const v = load(join(VECTORS, "consistency", k, "happy-path.json"));
      const proof = hashRanges(
        consistencyRanges(num(getField(v, "size1")), num(getField(v, "size2"))),
        leafMth(RFC_LEAVES),
      );
      expect(proof.map(toB64)).toEqual(((getField(v, "proof") ?? []) as string[]).slice());
      const s = load(join(VECTORS, "subtreeconsistency", k, "happy-path.json"));
      const sp = hashRanges(
        subtreeConsistencyRanges(num(getField(s, "start")), num(getField(s, "end")), num(getField(s, "size"))),
        leafMth(RFC_LEAVES),
      );
      expect(sp.map(toB64)).toEqual(((getField(s, "proof") ?? []) as string[]).slice());
    }
  });

  test("the RFC 9162 worked example: PROOF(3, D[7]) is [2,3) [3,4) [0,2) [4,7)", () => {
    expect(consistencyRanges(3, 7)).toEqual([
      [2, 3],
      [3, 4],
      [0, 2],
      [4, 7],
    ]);
    expect(consistencyRanges(4, 7)).toEqual([[4, 7]]);
    expect(consistencyRanges(6, 7)).toEqual([
      [4, 6],
      [6, 7],
      [0, 4],
    ]);
    expect(inclusionRanges(0, 7)).toEqual([
      [1, 2],
      [2, 4],
      [4, 7],
    ]);
    expect(inclusionRanges(6, 7)).toEqual([
      [4, 6],
      [0, 4],
    ]);
  });

  test("refused: a leaf outside the tree, the empty tree, an invalid subtree", () => {
    expect(() => inclusionRanges(3, 3)).toThrow(RangeError);
    expect(() => inclusionRanges(-1, 3)).toThrow(RangeError);
    expect(() => inclusionRanges(0, 2 ** 53)).toThrow(RangeError);
    expect(() => consistencyRanges(0, 3)).toThrow(RangeError);
    expect(() => consistencyRanges(4, 3)).toThrow(RangeError);
    expect(() => subtreeConsistencyRanges(2, 5, 8)).toThrow(RangeError);
  });

  test("every generated proof verifies, and a flipped bit or a wrong index does not (sizes 1..33)", () => {
    const leaves = Array.from({ length: 33 }, (_, i) => leafHash(Buffer.from(`leaf ${i}`)));
    for (let n = 1; n <= leaves.length; n++) {
      const tree = leaves.slice(0, n);
      const root = mth(tree);
      for (let i = 0; i < n; i++) {
        const proof = hashRanges(inclusionRanges(i, n), leafMth(tree));
        expect(verifyInclusion(i, n, tree[i]!, proof, root)).toEqual({ ok: true });
        if (n > 1) expect(verifyInclusion((i + 1) % n, n, tree[i]!, proof, root).ok).toBe(false);
        if (proof.length > 0) {
          const bad = proof.map((h) => Uint8Array.from(h));
          bad[bad.length - 1]![0]! ^= 1;
          expect(verifyInclusion(i, n, tree[i]!, bad, root).ok).toBe(false);
        }
      }
      for (let m = 1; m <= n; m++) {
        const proof = hashRanges(consistencyRanges(m, n), leafMth(tree));
        expect(verifyConsistency(m, n, proof, mth(tree.slice(0, m)), root)).toEqual({ ok: true });
        if (m < n) expect(verifyConsistency(m, n, proof.slice(1), mth(tree.slice(0, m)), root).ok).toBe(false);
      }
    }
  });

  test("subtree proofs for subtrees that do not start at 0 (the draft's section 4)", () => {
    const leaves = Array.from({ length: 24 }, (_, i) => leafHash(Buffer.from(`leaf ${i}`)));
    let checked = 0;
    for (let n = 1; n <= leaves.length; n++) {
      const tree = leaves.slice(0, n);
      for (let start = 0; start < n; start++) {
        for (let end = start + 1; end <= n; end++) {
          if (!isValidSubtree(start, end)) continue;
          const node = mth(tree.slice(start, end));
          const proof = hashRanges(subtreeConsistencyRanges(start, end, n), leafMth(tree));
          expect(verifySubtreeConsistency(start, end, n, proof, node, mth(tree))).toEqual({ ok: true });
          expect(verifySubtreeConsistency(start, end, n, [...proof, node], node, mth(tree)).ok).toBe(false);
          const index = Math.floor((start + end) / 2);
          const incl = hashRanges(inclusionRanges(index - start, end - start), (s, e) =>
            mth(tree.slice(start + s, start + e)),
          );
          expect(verifySubtreeInclusion(index, start, end, tree[index]!, incl, node)).toEqual({ ok: true });
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(300);
  });

  test("RangeHasher: the MTHs of disjoint ranges in one pass equal the direct ones", () => {
    const leaves = Array.from({ length: 100 }, (_, i) => leafHash(Buffer.from(`leaf ${i}`)));
    const ranges = inclusionRanges(37, 100);
    const h = new RangeHasher(ranges);
    expect(() => h.hashes()).toThrow(RangeError);
    for (const l of leaves) h.append(l);
    expect(h.hashes()).toEqual(hashRanges(ranges, leafMth(leaves)));
    expect(verifyInclusion(37, 100, leaves[37]!, h.hashes(), mth(leaves))).toEqual({ ok: true });
  });
});
