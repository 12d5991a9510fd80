/**
 * Driving a recorder as the relay drives it (src/wrap/session.ts): calls
 * and their answers handed over chunk by chunk, waiting whenever it asks,
 * the caller's buffer reused at once; then both eofs and the end. Shared by
 * the recorder thread's and the recording queue's tests.
 */
import { expect } from "bun:test";
import { createHash } from "node:crypto";
import type { Dir, RecordingInit, SessionEnd } from "../../src/wrap/recording.ts";
import { field, ledgerRows } from "./proc.ts";

/** What the relay hands what crossed to. */
export interface DrivenRecorder {
  chunk(dir: Dir, chunk: Uint8Array): Promise<void> | undefined;
  eof(dir: Dir): void;
  end(e: SessionEnd): Promise<void>;
}

/** A recording's settings for these tests: rows as they come, no payloads, fsync left to the OS. */
export function recordingInit(ledger: string, session: string): RecordingInit {
  return {
    ledger,
    session,
    server: "srv",
    raw: false,
    maxFrame: 1 << 20,
    fsync: "never",
    writeAhead: false,
    failClosed: false,
    begin: { pid: process.pid },
  };
}

export const request = (id: number) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"t${id}","arguments":{"n":${id}}}}\n`;
export const answer = (id: number) =>
  `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"${"x".repeat(200)}"}]}}\n`;

export interface Driven {
  /** Chunks whose hand-over asked the relay to wait. */
  waits: number;
  /** Wall-clock ms at which each call's answer was handed over. */
  answeredAt: number[];
  /** session_end's recorder_backlog_max. */
  backlogMax: number;
}

/**
 * Hands `calls` calls (`group` a chunk, `gapMs` apart) to `recorder`, ends
 * the session, and checks that every byte reached the ledger in order: the
 * stream digests in session_end are those of what was handed over.
 */
export async function drive(
  recorder: DrivenRecorder,
  ledger: string,
  calls: number,
  o: { group?: number; gapMs?: number } = {},
): Promise<Driven> {
  const enc = new TextEncoder();
  const group = o.group ?? 1;
  let waits = 0;
  const answeredAt: number[] = [];
  const sent = { c2s: createHash("sha256"), s2c: createHash("sha256") };
  for (let id = 1; id <= calls; id += group) {
    if (o.gapMs) await Bun.sleep(o.gapMs);
    const ids = Array.from({ length: Math.min(group, calls - id + 1) }, (_, i) => id + i);
    for (const [dir, text] of [
      ["c2s", ids.map(request).join("")],
      ["s2c", ids.map(answer).join("")],
    ] as const) {
      if (dir === "s2c") for (const _ of ids) answeredAt.push(Date.now());
      const bytes = enc.encode(text);
      sent[dir].update(bytes);
      const wait = recorder.chunk(dir, bytes);
      // The caller may reuse its buffer once chunk returns: what is recorded must not change.
      bytes.fill(0x20);
      if (wait) {
        waits++;
        await wait;
      }
    }
  }
  recorder.eof("c2s");
  recorder.eof("s2c");
  await recorder.end({ reason: "client_eof", exitCode: 0 });
  const end = ledgerRows(ledger).at(-1)!;
  const digests = field(end, "stream_digests");
  expect([field(digests!, "c2s"), field(digests!, "s2c")]).toEqual([
    `sha256:raw-bytes:v1:${sent.c2s.digest("hex")}`,
    `sha256:raw-bytes:v1:${sent.s2c.digest("hex")}`,
  ]);
  return { waits, answeredAt, backlogMax: Number(field(end, "recorder_backlog_max")) };
}
