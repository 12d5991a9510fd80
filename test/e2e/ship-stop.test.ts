/**
 * A shipper stopped (SIGINT/SIGTERM) while a batch's acks are lost: what the
 * stream holds decides. A stream in memory stands in for JetStream, storing
 * the lines it is given and then, as a cluster whose leader moves does,
 * failing the batch with no ack.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { BatchError, LedgerShipper, type StoredLine, type StreamPort } from "../../src/fleet/ship.ts";
import { tempDir } from "../helpers/proc.ts";

class MemoryStream implements StreamPort {
  readonly held = new Map<string, Uint8Array[]>();
  /** Store a batch's lines, then fail it as if its acks were lost. */
  loseAcks = false;
  /** Store nothing of a batch, and fail it. */
  dropBatches = false;
  /** A line (1-based) a batch loses while later ones are stored, or 0. */
  gapAt = 0;
  /** After a batch, lookups fail this many times (a leader still being elected). */
  lookupFailuresAfterBatch = 0;
  private lookupFailures = 0;

  /** Every message stored, in order (its place + 1 is its sequence). */
  readonly log: (StoredLine & { subject: string })[] = [];

  async publishLines(subject: string, lines: Uint8Array[], first: number): Promise<number> {
    const have = this.held.get(subject) ?? [];
    this.lookupFailures = this.lookupFailuresAfterBatch;
    if (this.dropBatches) throw new BatchError(0, new Error("timeout: the stream acknowledged nothing for 5 s"));
    let duplicates = 0;
    for (let i = 0; i < lines.length; i++) {
      if (first + i === this.gapAt) continue;
      if (have[first - 1 + i] !== undefined) {
        duplicates++;
        continue;
      }
      have[first - 1 + i] = lines[i]!.slice();
      this.log.push({ subject, seq: this.log.length + 1, line: String(first + i), data: lines[i]!.slice() });
    }
    this.held.set(subject, have);
    if (this.loseAcks) throw new BatchError(0, new Error("timeout: the stream acknowledged nothing for 5 s"));
    return duplicates;
  }

  async *since(subject: string, afterSeq: number): AsyncGenerator<StoredLine[]> {
    this.lookup();
    yield this.log.filter((m) => m.subject === subject && m.seq > afterSeq);
  }

  async count(subject: string): Promise<number> {
    this.lookup();
    return this.log.filter((m) => m.subject === subject).length;
  }

  async firstMissing(subject: string, upTo: number): Promise<number | null> {
    this.lookup();
    const have = this.held.get(subject) ?? [];
    for (let i = 0; i < upTo; i++) if (have[i] === undefined) return i + 1;
    return null;
  }

  async last(subject: string): Promise<{ line: number; data: Uint8Array } | null> {
    this.lookup();
    const have = this.held.get(subject) ?? [];
    if (have.length === 0) return null;
    return { line: have.length, data: have[have.length - 1]! };
  }

  maxPayload(): number {
    return 1 << 20;
  }

  private lookup(): void {
    if (this.lookupFailures > 0) {
      this.lookupFailures--;
      throw new Error("timeout: no leader");
    }
  }
}

function ledger(): string {
  const dir = tempDir();
  const path = join(dir, "l.jsonl");
  writeFileSync(path, Array.from({ length: 20 }, (_, i) => `{"seq": ${i + 1}}\n`).join(""));
  return path;
}

describe("a shipper stopped while a batch's acks are lost", () => {
  const deps = (sleeps: number[]) => ({
    warn: () => {},
    sleep: async (ms: number) => {
      sleeps.push(ms);
    },
    stopped: () => true,
  });

  test("every line stored: it returns, the lines counted as shipped", async () => {
    const port = new MemoryStream();
    port.loseAcks = true;
    port.lookupFailuresAfterBatch = 2; // the stream answers on the third asking
    const sleeps: number[] = [];
    // stopped() is true from the start: the shipper still sends its first batch, then stops.
    const s = new LedgerShipper(ledger(), port, { ...deps(sleeps), stopped: stoppedAfter(1) });
    expect(await s.shipAvailable(true)).toBe(20);
    expect(sleeps.length).toBeGreaterThan(0);
  });

  test("a line missing before the last: it fails", async () => {
    const port = new MemoryStream();
    port.loseAcks = true;
    port.gapAt = 5;
    const s = new LedgerShipper(ledger(), port, { ...deps([]), stopped: stoppedAfter(1) });
    await expect(s.shipAvailable(true)).rejects.toThrow("acknowledged nothing");
  });

  test("lines missing: it fails with the batch's error, after asking for a bounded time", async () => {
    const port = new MemoryStream();
    port.dropBatches = true;
    const sleeps: number[] = [];
    const s = new LedgerShipper(ledger(), port, { ...deps(sleeps), stopped: stoppedAfter(1) });
    await expect(s.shipAvailable(true)).rejects.toThrow("acknowledged nothing");
    const waited = sleeps.reduce((a, b) => a + b, 0);
    expect(waited).toBeGreaterThanOrEqual(15_000);
    expect(waited).toBeLessThan(25_000);
  });
});

/** stopped() false for its first n askings, then true (the signal comes while the batch is out). */
function stoppedAfter(n: number): () => boolean {
  let asked = 0;
  return () => asked++ >= n;
}
