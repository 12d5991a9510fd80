/** Helpers for the checkpoint tests: a fixed key, sealed ledgers written by the real writer, and an attacker's re-chaining. */
import { readFileSync } from "node:fs";
import type { Checkpoint } from "../../src/checkpoint/checkpoint.ts";
import { generateKey, newSigner, newVerifier, signNote } from "../../src/checkpoint/note.ts";
import { getField, type Json, parseJson } from "../../src/core/json.ts";
import { LedgerWriter } from "../../src/ledger/ledger-writer.ts";
import { openAppend } from "../../src/runtime/file.ts";
import type { AppendFile } from "../../src/runtime/types.ts";
import { reforgeCheckpoint } from "../../src/selftest/checkpoints.ts";
import { rechainLines } from "../../src/selftest/tamper.ts";

/** A key made from a fixed seed, so that signatures (Ed25519 is deterministic) are golden. */
export const KEY = generateKey("seam-test", new Uint8Array(32).fill(7));
export const OTHER = generateKey("other", new Uint8Array(32).fill(9));
export const signer = newSigner(KEY.privateKey);
export const verifier = newVerifier(KEY.verifierKey);

export const FIXED_NOW = () => Date.UTC(2026, 10, 30, 3, 24, 7, 123);

export interface Sealed {
  path: string;
  witness: string;
  warnings: string[];
  writer: LedgerWriter;
}

/** Writes a session of `calls` tool_call rows, checkpoints every `every` rows, with a witness file next to it. */
export async function writeCheckpointed(
  path: string,
  o: {
    calls: number;
    every: number;
    session?: string;
    intervalMs?: number;
    open?: (p: string) => Promise<AppendFile>;
    fixedTime?: boolean;
    begin?: Record<string, Json>;
  } = { calls: 5, every: 3 },
): Promise<Sealed> {
  const warnings: string[] = [];
  const witness = `${path}.witness`;
  const writer = await LedgerWriter.open({
    path,
    session: o.session ?? "s1",
    server: "fixture",
    fsync: "batch",
    openAppend: o.open ?? openAppend,
    warn: (m) => warnings.push(m),
    now: o.fixedTime ? FIXED_NOW : undefined,
    checkpoints: { signer, every: o.every, intervalMs: o.intervalMs ?? 0, witness },
  });
  void writer.append("session_begin", { pid: 1, ...o.begin });
  for (let i = 0; i < o.calls; i++) void writer.append("tool_call", { tool: "echo", rpc_id: i + 1, status: "ok" });
  await writer.end({ reason: "client_eof", calls: o.calls });
  return { path, witness, warnings, writer };
}

/** The file's lines without their "\n" (the last, empty piece dropped). */
export function linesOf(path: string): string[] {
  const ls = readFileSync(path, "utf8").split("\n");
  if (ls.at(-1) === "") ls.pop();
  return ls;
}

export const joinLines = (ls: readonly string[]) => new TextEncoder().encode(ls.map((l) => `${l}\n`).join(""));

/** Re-chains lines from index `from` on, as someone who can write the file would after changing them. */
export const rechain = rechainLines;

/** Index of every checkpoint line. */
export function checkpointLines(ls: readonly string[]): number[] {
  const evt = (l: string) => {
    try {
      return getField(parseJson(l), "evt");
    } catch {
      return undefined;
    }
  };
  return ls.flatMap((l, i) => (evt(l) === "checkpoint" ? [i] : []));
}

/** The checkpoint row at index `i` with (origin, size, root) changed by `change`, signed anew by `sign`, re-chained. */
export function reforge(
  ls: readonly string[],
  i: number,
  change: (c: Checkpoint) => void,
  sign = (text: string) => signNote(text, [signer]),
): string[] {
  return reforgeCheckpoint(ls, i, change, sign);
}

/** The message `f` throws when it is a `cls` error; "accepted" when it returns; anything else as "other: …". */
export function refusal(f: () => unknown, cls: abstract new (...args: never[]) => Error): string {
  try {
    f();
    return "accepted";
  } catch (e) {
    return e instanceof cls ? e.message : `other: ${String(e)}`;
  }
}
