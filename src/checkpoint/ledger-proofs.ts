/**
 * Consistency proofs of a ledger's own checkpoints, for sending them to
 * witnesses (src/checkpoint/submit.ts): RFC 9162 PROOF(m, D[n]) where n is
 * the size of a checkpoint the writer has just made and m the size a witness
 * last cosigned.
 *
 * The leaves come from the ledger file, read forward from where the last
 * proof stopped (lines before a written checkpoint never change: they are
 * complete lines of an append-only file), so a proof costs the lines written
 * since the previous one, not a pass over the file. What is kept: the
 * compact range of the lines before `keepFrom` (at most 64 hashes) and the
 * leaf hashes from there on, 32 bytes a line. `keepFrom` follows the
 * smallest size a witness still needs proofs from (`forget`), and at most
 * MAX_KEPT leaves are kept; a proof from a size below it (a witness that
 * went back, one first heard of, or one left behind) reads the file again
 * from its start.
 *
 * Every proof element is the MTH of a range wholly below m or wholly at or
 * above m. One below m is a perfect subtree of the tree of n that ends at or
 * before m (only the nodes on a tree's right edge are not perfect), so it is
 * one of the subtrees of the compact range at m (the binary expansion of m,
 * largest first); those above are hashed from the kept leaves.
 */
import { createHash, type Hash as Hasher } from "node:crypto";
import { open } from "node:fs/promises";
import { CompactRange, consistencyRanges, HASH_BYTES, type Hash, leafHash } from "./merkle.ts";

const READ_CHUNK = 1 << 20;
/** Leaf hashes kept at most (32 MiB): past it, those below the proof just made are folded away. */
const MAX_KEPT = 1 << 20;
const LEAF_PREFIX = new Uint8Array([0x00]);

export class LedgerProofs {
  /** The compact range of the lines before `keepFrom`. */
  private base = new CompactRange();
  private keepFrom = 0;
  /** Leaf hashes of lines keepFrom .. lines-1, 32 bytes each. */
  private leaves = new Uint8Array(0);
  private lines = 0;
  /** Where line `lines + 1` begins in the file. */
  private offset = 0;
  /** One reading or proof at a time (several witnesses ask at once). */
  private turn: Promise<unknown> = Promise.resolve();

  constructor(
    readonly path: string,
    private readonly maxKept = MAX_KEPT,
  ) {}

  /** Leaf hashes kept now. */
  get kept(): number {
    return this.lines - this.keepFrom;
  }

  /** PROOF(m, D[n]) from the file's first n lines; [] for m = 0 or m = n. Rejects when the file cannot give them. */
  consistency(m: number, n: number): Promise<Hash[]> {
    const job = this.turn.then(() => this.prove(m, n));
    this.turn = job.catch(() => {});
    return job;
  }

  /** No proof from below `size` will be asked for again: the leaves before it are folded away. */
  forget(size: number): void {
    this.turn = this.turn.then(() => this.fold(size));
  }

  private fold(size: number): void {
    if (size <= this.keepFrom || size > this.lines) return;
    for (let i = this.keepFrom; i < size; i++) this.base.append(this.leaf(i));
    this.leaves = this.leaves.slice((size - this.keepFrom) * HASH_BYTES, (this.lines - this.keepFrom) * HASH_BYTES);
    this.keepFrom = size;
  }

  private leaf(i: number): Hash {
    const at = (i - this.keepFrom) * HASH_BYTES;
    return this.leaves.subarray(at, at + HASH_BYTES);
  }

  private async prove(m: number, n: number): Promise<Hash[]> {
    if (m === 0 || m === n) return [];
    if (m > n) throw new RangeError(`no proof from size ${m} down to ${n}`);
    if (m < this.keepFrom) {
      // Proofs from below what is kept: hash the file again from its start, keeping leaves from m on.
      this.base = new CompactRange();
      this.keepFrom = m;
      this.leaves = new Uint8Array(0);
      this.lines = 0;
      this.offset = 0;
    }
    if (this.lines < n) await this.readTo(n);
    const atM = this.base.clone();
    for (let i = this.keepFrom; i < m; i++) atM.append(this.leaf(i));
    // The compact range at m: its subtrees, largest first, each with the leaves it covers.
    const parts: { start: number; end: number; hash: Hash }[] = [];
    let start = 0;
    const nodes = atM.nodes;
    let bit = 1;
    while (bit * 2 <= m) bit *= 2;
    for (let i = 0; bit >= 1; bit /= 2) {
      if (Math.floor(m / bit) % 2 === 1) {
        parts.push({ start, end: start + bit, hash: nodes[i++]! });
        start += bit;
      }
    }
    const proof = consistencyRanges(m, n).map(([lo, hi]) => {
      if (hi <= m) {
        const part = parts.find((p) => p.start === lo && p.end === hi);
        if (part === undefined) throw new Error(`leaves ${lo}..${hi} are no subtree of the tree of ${m}`);
        return part.hash;
      }
      const r = new CompactRange();
      for (let i = lo; i < hi; i++) r.append(this.leaf(i));
      return r.root();
    });
    // A witness that never catches up must not make memory grow with the ledger: it costs a reading instead.
    if (this.lines - this.keepFrom > this.maxKept) this.fold(m);
    return proof;
  }

  /** Hashes the file's lines until there are n of them; the file ending before is an error. */
  private async readTo(n: number): Promise<void> {
    const f = await open(this.path, "r");
    try {
      let pos = this.offset;
      let partial: Hasher | null = null;
      while (this.lines < n) {
        const buf = new Uint8Array(READ_CHUNK);
        const { bytesRead } = await f.read(buf, 0, READ_CHUNK, pos);
        if (bytesRead === 0) throw new Error(`the ledger has fewer than ${n} lines`);
        const chunk = buf.subarray(0, bytesRead);
        let i = 0;
        while (i < chunk.length && this.lines < n) {
          const nl = chunk.indexOf(0x0a, i);
          if (nl < 0) {
            (partial ??= createHash("sha256").update(LEAF_PREFIX)).update(chunk.subarray(i));
            i = chunk.length;
            break;
          }
          const h: Hash = partial ? partial.update(chunk.subarray(i, nl)).digest() : leafHash(chunk.subarray(i, nl));
          partial = null;
          this.add(h);
          i = nl + 1;
        }
        pos += i;
      }
      this.offset = pos;
    } finally {
      await f.close().catch(() => {});
    }
  }

  private add(h: Hash): void {
    if (this.lines < this.keepFrom) {
      this.base.append(h);
    } else {
      const used = (this.lines - this.keepFrom) * HASH_BYTES;
      if (used + HASH_BYTES > this.leaves.length) {
        const grown = new Uint8Array(Math.max(1024 * HASH_BYTES, this.leaves.length * 2));
        grown.set(this.leaves.subarray(0, used));
        this.leaves = grown;
      }
      this.leaves.set(h, used);
    }
    this.lines++;
  }
}
