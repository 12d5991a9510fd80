/**
 * The witness's decision on an add-checkpoint body (src/witness/server.ts),
 * in process: one table of requests run in order against one state, each
 * with the status, kind and size the witness must be left at; then the
 * config file's table and the state read back from disk.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Checkpoint, checkpointText } from "../../src/checkpoint/checkpoint.ts";
import { newCosignatureVerifier, newCosigner } from "../../src/checkpoint/cosignature.ts";
import { type Hash, leafHash } from "../../src/checkpoint/merkle.ts";
import { generateKey, newSigner, openNote, type Signer, signNote } from "../../src/checkpoint/note.ts";
import { parseWitnessConfig, WitnessConfigError } from "../../src/witness/config.ts";
import {
  addCheckpoint,
  formatAddCheckpoint,
  MAX_BODY,
  SIZE_TYPE,
  type WitnessOptions,
} from "../../src/witness/server.ts";
import { WitnessState, WitnessStateError } from "../../src/witness/state.ts";
import { consistencyProof, rootOf } from "../helpers/merkle-proofs.ts";
import { tempDir } from "../helpers/proc.ts";

const LOG = generateKey("log.example", new Uint8Array(32).fill(11));
const STRANGER = generateKey("log.example", new Uint8Array(32).fill(12));
const WITNESS = generateKey("witness.example/w1", new Uint8Array(32).fill(13));
const ORIGIN = "seam-ledger/00112233445566778899aabbccddeeff";
const leaves: Hash[] = Array.from({ length: 40 }, (_, i) => leafHash(Buffer.from(`line ${i}`)));
const forked: Hash[] = leaves.map((l, i) => (i === 6 ? leafHash(Buffer.from("another line 6")) : l));
const enc = new TextEncoder();

const cp = (size: number, of: readonly Hash[] = leaves, origin = ORIGIN): Checkpoint => ({
  origin,
  size,
  root: rootOf(of.slice(0, size)),
});
const note = (c: Checkpoint, signer: Signer = newSigner(LOG.privateKey)) => signNote(checkpointText(c), [signer]);
const body = (old: number, proof: readonly Hash[], n: string) => enc.encode(formatAddCheckpoint(old, proof, n));
/** A request from `old` to `size` with its true proof. */
const add = (old: number, size: number) => body(old, consistencyProof(leaves, old, size), note(cp(size)));

function witness(dir: string): WitnessOptions {
  const logs = parseWitnessConfig(`log ${ORIGIN} ${LOG.verifierKey}\nlog other/log ${LOG.verifierKey}\n`, "cfg");
  return {
    logs,
    state: WitnessState.open(dir, logs.keys()),
    cosigner: newCosigner(newSigner(WITNESS.privateKey)),
    now: () => 1700000000,
  };
}

describe("add-checkpoint", () => {
  test("the table, in order: each answer and the size the witness is left at", () => {
    const dir = tempDir();
    const o = witness(dir);
    const good = add(5, 8);
    const tampered = consistencyProof(leaves, 8, 12).map((h, i) => (i === 0 ? leafHash(h) : h));
    const otherSigned = note(cp(12), newSigner(STRANGER.privateKey));
    const badSig = note(cp(12)).replace(/[A-Za-z0-9+/]{10}(=*\n)$/, "AAAAAAAAAA$1");
    const cases: [string, Uint8Array, number, string, number][] = [
      ["first checkpoint, from size 0", add(0, 5), 200, "cosigned", 5],
      ["a stale old size", add(0, 8), 409, "old-size-mismatch", 5],
      ["an old size above the witness's", add(8, 12), 409, "old-size-mismatch", 5],
      ["consistent from 5 to 8", good, 200, "cosigned", 8],
      ["the same request again: 8 is no longer the old size", good, 409, "old-size-mismatch", 8],
      ["the same checkpoint again", add(8, 8), 200, "cosigned", 8],
      ["a fork: size 8, another root", body(8, [], note(cp(8, forked))), 409, "fork", 8],
      [
        "a fork further on: no proof holds",
        body(8, consistencyProof(forked, 8, 12), note(cp(12, forked))),
        422,
        "bad-proof",
        8,
      ],
      ["a proof with a hash changed", body(8, tampered, note(cp(12))), 422, "bad-proof", 8],
      ["a proof one hash short", body(8, consistencyProof(leaves, 8, 12).slice(1), note(cp(12))), 422, "bad-proof", 8],
      ["a proof for other sizes", body(8, consistencyProof(leaves, 7, 12), note(cp(12))), 422, "bad-proof", 8],
      ["an older checkpoint (rollback)", body(8, [], note(cp(5))), 400, "malformed", 8],
      ["an unknown origin", body(0, [], note(cp(3, leaves, "elsewhere/log"))), 404, "unknown-log", 8],
      [
        "signed by another key of the same name",
        body(8, consistencyProof(leaves, 8, 12), otherSigned),
        403,
        "bad-signature",
        8,
      ],
      ["a bad signature by the log's key", body(8, consistencyProof(leaves, 8, 12), badSig), 403, "bad-signature", 8],
      ["no blank line", enc.encode(`old 8\n${note(cp(12)).replace("\n\n", "\n")}`), 400, "malformed", 8],
      ["old size with a leading zero", enc.encode(`old 08\n\n${note(cp(12))}`), 400, "malformed", 8],
      ["64 proof lines", body(8, Array(64).fill(leaves[0]), note(cp(12))), 400, "malformed", 8],
      ["a proof line that is not a hash", enc.encode(`old 8\nAAAA\n\n${note(cp(12))}`), 400, "malformed", 8],
      ["not UTF-8", new Uint8Array([0x6f, 0x6c, 0x64, 0x20, 0x38, 0x0a, 0x0a, 0xff, 0x0a]), 400, "malformed", 8],
      [
        "a note that is no checkpoint",
        body(8, [], signNote("just text\n", [newSigner(LOG.privateKey)])),
        400,
        "malformed",
        8,
      ],
      ["an empty body", new Uint8Array(0), 400, "malformed", 8],
      ["consistent from 8 to 40", add(8, 40), 200, "cosigned", 40],
      [
        "another log, from 0 with a proof",
        body(0, [leaves[0]!], note(cp(3, leaves, "other/log"))),
        422,
        "bad-proof",
        40,
      ],
    ];
    const cos = newCosignatureVerifier(o.cosigner.verifierKey);
    for (const [what, b, status, kind, left] of cases) {
      const out = addCheckpoint(b, o);
      expect([what, out.status, out.kind, o.state.get(ORIGIN)?.size]).toEqual([what, status, kind, left]);
      if (status === 409) expect([what, out.type, out.body]).toEqual([what, SIZE_TYPE, `${left}\n`]);
      if (status === 200) {
        // The answer is the cosignature line: appended to the note it verifies with the witness's key.
        const n = new TextDecoder().decode(b).split("\n\n").slice(1).join("\n\n");
        expect(openNote(n + out.body, [cos]).verified.map((s) => s.name)).toEqual(["witness.example/w1"]);
      }
    }
    // What it remembers is on disk: a witness opened afresh on the directory has it.
    const again = WitnessState.open(dir, [ORIGIN, "other/log"]);
    expect([again.get(ORIGIN)?.size, again.get("other/log")]).toEqual([40, null]);
    expect(again.get(ORIGIN)!.root).toEqual(cp(40).root);
    expect(readdirSync(dir).filter((f) => f.startsWith("."))).toEqual([]);
  });

  test("a state file that is not a checkpoint stops the witness rather than starting it over", () => {
    const dir = tempDir();
    const o = witness(dir);
    expect(addCheckpoint(add(0, 5), o).status).toBe(200);
    const [file] = readdirSync(dir);
    writeFileSync(join(dir, file!), "garbage\n");
    expect(() => WitnessState.open(dir, [ORIGIN])).toThrow(WitnessStateError);
    writeFileSync(join(dir, file!), checkpointText(cp(5, leaves, "other/log")));
    expect(() => WitnessState.open(dir, [ORIGIN])).toThrow(WitnessStateError);
  });

  test("MAX_BODY holds the largest well-formed request with room to spare", () => {
    const big = formatAddCheckpoint(8, Array(63).fill(leaves[0]), note(cp(12)));
    expect(big.length * 4).toBeLessThan(MAX_BODY);
  });
});

describe("config", () => {
  test("the table of config files", () => {
    const cases: [string, string][] = [
      [`log a/b ${LOG.verifierKey}\n`, "a/b:1"],
      [
        `# logs\n\nlog a/b ${LOG.verifierKey}\nlog a/b ${STRANGER.verifierKey}\nlog a/b ${LOG.verifierKey}\nlog c ${LOG.verifierKey}\n`,
        "a/b:2 c:1",
      ],
      ["", "error: cfg names no log"],
      [`log a/b\n`, 'error: cfg line 1 is not "log <origin> <verifier key>"'],
      [`logs a/b ${LOG.verifierKey}\n`, 'error: cfg line 1 is not "log <origin> <verifier key>"'],
      [`log a/b ${LOG.verifierKey} extra\n`, 'error: cfg line 1 is not "log <origin> <verifier key>"'],
      [
        `log a/b ${LOG.privateKey}\n`,
        "error: cfg line 1 holds a private key (it is not shown): a witness needs only the log's verifier key",
      ],
      [`\nlog a/b nokey\n`, 'error: cfg line 2: "nokey" is not a verifier key (<name>+<id>+<key>)'],
    ];
    for (const [text, want] of cases) {
      let got: string;
      try {
        const logs = parseWitnessConfig(text, "cfg");
        got = [...logs].map(([o, keys]) => `${o}:${keys.length}`).join(" ");
      } catch (e) {
        got = e instanceof WitnessConfigError ? `error: ${e.message}` : String(e);
      }
      expect([text, got]).toEqual([text, want]);
    }
  });
});
