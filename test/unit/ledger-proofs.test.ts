/**
 * The proofs the recorder sends witnesses (src/checkpoint/ledger-proofs.ts),
 * read from a ledger file, against the reference PROOF(m, D[n]) of the test
 * helpers, for every pair of sizes up to a few subtrees deep: asked in
 * order, as witnesses do, with the leaves before a size forgotten, and asked
 * again from below what is kept (read anew from the start).
 */
import { describe, expect, test } from "bun:test";
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LedgerProofs } from "../../src/checkpoint/ledger-proofs.ts";
import { type Hash, leafHash, verifyConsistency } from "../../src/checkpoint/merkle.ts";
import { consistencyProof, rootOf } from "../helpers/merkle-proofs.ts";
import { tempDir } from "../helpers/proc.ts";

const N = 37;
// One line longer than a read (1 MiB): its leaf is hashed from pieces.
const lines = Array.from({ length: N }, (_, i) => (i === 5 ? "x".repeat(3 << 20) : `{"line": ${i}}`));
const leaves: Hash[] = lines.map((l) => leafHash(Buffer.from(l)));

describe("LedgerProofs", () => {
  test("every PROOF(m, n), m <= n <= 37, equals the reference and verifies", async () => {
    const path = join(tempDir(), "l.jsonl");
    writeFileSync(path, `${lines.map((l) => `${l}\n`).join("")}an unterminated tail`);
    const proofs = new LedgerProofs(path);
    for (let n = 1; n <= N; n++)
      for (let m = 0; m <= n; m++) {
        const got = await proofs.consistency(m, n);
        const want = m === 0 ? [] : consistencyProof(leaves, m, n);
        expect([m, n, got]).toEqual([m, n, want]);
        if (m > 0)
          expect(verifyConsistency(m, n, got, rootOf(leaves.slice(0, m)), rootOf(leaves.slice(0, n))).ok).toBe(true);
      }
  });

  test("forgets leaves below a size, reads the file again for a proof from below it, and follows appended lines", async () => {
    const path = join(tempDir(), "l.jsonl");
    writeFileSync(
      path,
      lines
        .slice(0, 20)
        .map((l) => `${l}\n`)
        .join(""),
    );
    const proofs = new LedgerProofs(path);
    const cases: [string, number, number][] = [
      ["first", 3, 20],
      ["after forgetting below 13", 13, 20],
      ["from below what is kept", 2, 20],
      ["lines appended since", 20, N],
      ["forgotten again, from above", 25, N],
    ];
    for (const [what, m, n] of cases) {
      if (what === "lines appended since")
        appendFileSync(
          path,
          lines
            .slice(20)
            .map((l) => `${l}\n`)
            .join(""),
        );
      const got = await proofs.consistency(m, n);
      expect([what, got]).toEqual([what, consistencyProof(leaves, m, n)]);
      if (what === "first") proofs.forget(13);
      if (what === "lines appended since") proofs.forget(24);
    }
    await expect(proofs.consistency(3, N + 1)).rejects.toThrow(`the ledger has fewer than ${N + 1} lines`);
  });

  test("with few leaf hashes kept, a proof from below them reads the file again and is still right", async () => {
    const path = join(tempDir(), "l.jsonl");
    writeFileSync(path, lines.map((l) => `${l}\n`).join(""));
    const proofs = new LedgerProofs(path, 4);
    const sizes: [number, number][] = [
      [3, 20],
      [2, 20],
      [20, 30],
      [25, 37],
      [3, 37],
      [36, 37],
    ];
    for (const [m, n] of sizes)
      expect([m, n, await proofs.consistency(m, n)]).toEqual([m, n, consistencyProof(leaves, m, n)]);
    // Past the cap, what lies below the last proof's old size is folded away.
    expect(proofs.kept).toBe(1);
  });
});
