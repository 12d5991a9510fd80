/**
 * The recorder and the server must never disagree about what a frame means.
 * A seeded corpus (test/helpers/frame-corpus.ts) goes through `seam wrap
 * --write-ahead` to a recording server that parses as the TypeScript SDK does
 * (JSON.parse after Node's UTF-8 decoding), and, where python3 exists, to one
 * that parses as the Python SDK does. Every tools/call the server parsed must
 * have a row naming the tool the server saw (a tool_call row, or a reading of
 * an ambiguous_frame row); a frame seam could not read must have been refused
 * (-32700, and its unparsed_frame row says so).
 */
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { digestBytes } from "../../src/core/digest.ts";
import { getField, type Json, parseJson } from "../../src/core/json.ts";
import { verifyBytes } from "../../src/verify/verify-ledger.ts";
import { built, seamArgv, VIAS } from "../helpers/cli.ts";
import { corpus, stream } from "../helpers/frame-corpus.ts";
import { tempDir } from "../helpers/proc.ts";
import { HAVE_PYTHON } from "../helpers/verify-helpers.ts";

/** Frames per build: thousands per run in all, few enough to keep the suite quick. */
const FRAMES = 800;
const FIXTURES = new URL("../fixtures/", import.meta.url).pathname;

interface Outcome {
  /** Tool names the server parsed a tools/call for. */
  seen: string[];
  /** Every tool name a row gives (tool_call, tool_call_intent, ambiguous_frame readings). */
  named: Set<string>;
  rows: Json[];
  /** seam's own -32700 answers to the client. */
  parseErrors: number;
  ledger: Uint8Array;
  /** Raw-bytes digests of the corpus frames JSON.parse (after Node's decoding) refuses. */
  jsRefuses: Set<string>;
}

const nodeDecoder = new TextDecoder("utf-8", { ignoreBOM: true });

function jsParses(frame: Uint8Array): boolean {
  try {
    JSON.parse(nodeDecoder.decode(frame).replace(/\r$/, ""));
    return true;
  } catch {
    return false;
  }
}

function session(via: (typeof VIAS)[number], server: string[], seed: number): Outcome {
  const dir = tempDir("seam-diff-");
  const ledger = join(dir, "l.jsonl");
  const record = join(dir, "seen.jsonl");
  const frames = corpus(seed, FRAMES);
  const input = stream(frames);
  const jsRefuses = new Set(frames.filter((f) => !jsParses(f.bytes)).map((f) => digestBytes(f.bytes)));
  const r = spawnSync(
    seamArgv(via)[0]!,
    [...seamArgv(via).slice(1), "wrap", "--write-ahead", "--ledger", ledger, "--", ...server, record],
    { input, timeout: 120_000, maxBuffer: 1 << 28 },
  );
  expect({ status: r.status, stderr: r.stderr.toString().slice(0, 500) }).toEqual({ status: 0, stderr: "" });
  const bytes = new Uint8Array(readFileSync(ledger));
  const rows = new TextDecoder()
    .decode(bytes)
    .trimEnd()
    .split("\n")
    .map((l) => parseJson(l));
  const named = new Set<string>();
  for (const row of rows) {
    const evt = getField(row, "evt");
    const tool = getField(row, "tool");
    if ((evt === "tool_call" || evt === "tool_call_intent") && typeof tool === "string") named.add(tool);
    if (evt === "ambiguous_frame") {
      const readings = getField(row, "readings");
      for (const reading of Array.isArray(readings) ? readings : []) {
        const t = getField(reading, "tool");
        if (typeof t === "string") named.add(t);
      }
    }
  }
  const seen = readFileSync(record, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l).name as string);
  const parseErrors = r.stdout
    .toString()
    .split("\n")
    .filter((l) => l.includes('"code":-32700')).length;
  return { seen, named, rows, parseErrors, ledger: bytes, jsRefuses };
}

function check(o: Outcome): void {
  const missing = o.seen.filter((t) => !o.named.has(t));
  expect({ missing: missing.slice(0, 5), count: missing.length }).toEqual({ missing: [], count: 0 });
  // The corpus is built so that many frames are read by the server and many only by some stacks.
  expect(o.seen.length).toBeGreaterThan(FRAMES / 3);
  const evts = (evt: string) => o.rows.filter((r) => getField(r, "evt") === evt);
  expect(evts("ambiguous_frame").length).toBeGreaterThan(FRAMES / 10);
  // Every frame no stack could read was refused, and the client heard so.
  const unparsed = evts("unparsed_frame").filter((r) => getField(r, "dir") === "c2s");
  expect(unparsed.length).toBeGreaterThan(0);
  expect(unparsed.every((r) => getField(r, "refused") === true)).toBe(true);
  expect(o.parseErrors).toBe(unparsed.length);
  // ...and seam refused nothing JSON.parse reads: it parses at least what the TypeScript SDK parses.
  const overRefused = unparsed.filter((r) => !o.jsRefuses.has(getField(r, "frame_digest") as string));
  expect(overRefused.map((r) => getField(r, "head")).slice(0, 3)).toEqual([]);
  const report = verifyBytes(o.ledger);
  expect({ breaks: report.breaks, verdict: report.verdict }).toEqual({ breaks: 0, verdict: "inconclusive" });
  expect([...new Set(report.finding_kinds)].sort()).toEqual(["ambiguous_client_frame", "unparsed_client_frame"]);
}

describe("no parser differential lets a call through unrecorded", () => {
  VIAS.forEach((via, k) => {
    test.skipIf(!built(via))(`${via}: to a JSON.parse server, every call the server parsed is rowed by name`, () => {
      check(session(via, ["node", `${FIXTURES}recording-server.mjs`], 1000 + k));
    });
  });
  test.skipIf(!HAVE_PYTHON)("bun: to a Python json server, every call the server parsed is rowed by name", () => {
    check(session("bun", ["python3", `${FIXTURES}recording_server.py`], 2000));
  });
});
