/**
 * One run of the selftest's scripted fixture client against its fixture
 * server, direct or through `seam wrap` (the running build, as separate
 * processes), and what it leaves behind: the bytes each side saw, the
 * ledger and stderr.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type Json, parseJson } from "../core/json.ts";
import { exec } from "../runtime/exec.ts";
import { corruptsStream, FAULT_ENV, type Fault } from "./faults.ts";

const dec = new TextDecoder();

/** First offset at which a and b differ, or -1 when equal. */
export function firstDiff(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
}

export interface Run {
  sent: Uint8Array;
  received: Uint8Array;
  serverIn: Uint8Array;
  ledger: Uint8Array;
  stderr: string;
  code: number | null;
}

/**
 * How long one of selftest's children may run before it is killed. An honest
 * run never comes near it, so no verdict depends on it: it only bounds a
 * build that hangs, generously, since under a user-mode emulator on a busy
 * machine every process is many times slower.
 */
export const CHILD_DEADLINE_MS = 300_000;

/**
 * How long the fixture client waits for one awaited answer: well inside
 * CHILD_DEADLINE_MS, so that a run that cannot finish ends with the client
 * saying why and keeping what it got, not killed with nothing kept.
 */
export const ANSWER_WAIT_MS = 120_000;

/** The fixture client's arguments for how long it waits: ANSWER_WAIT_MS, or nothing at all for a stream corrupted on purpose. */
export function clientWait(fault?: Fault): string[] {
  return fault !== undefined && corruptsStream(fault) ? ["--blind"] : ["--timeout-ms", String(ANSWER_WAIT_MS)];
}

/** Runs the fixture client's `script` (default "awkward"), through `seam wrap` when `wrapped`, with a selftest fault on. */
export type SessionRun = (wrapped: boolean, fault?: Fault, script?: string) => Promise<Run>;

/** How an arm's outcome is recorded. */
export type Recorder = (c: string, arm: string, pass: boolean, detail: string) => void;

/** Fixture runs of `self` (seam's own argv), each with its own files in `dir`. */
export function fixtureSessions(self: string[], dir: string): SessionRun {
  let n = 0;
  return async (wrapped: boolean, fault?: Fault, script = "awkward"): Promise<Run> => {
    const tag = `r${++n}`;
    const p = (s: string) => join(dir, `${tag}.${s}`);
    const server = [...self, "fixture", "server", "--record-in", p("in")];
    const target = wrapped
      ? [...self, "wrap", "--ledger", p("jsonl"), "--session", `selftest-${tag}`, "--", ...server]
      : server;
    const env: Record<string, string | undefined> = { ...process.env, [FAULT_ENV]: fault };
    // A corrupted stream may never show the client an answer it awaits: it sends
    // blind and reads to the end, so what it keeps never depends on how long it waited.
    const wait = clientWait(fault);
    const r = await exec(
      [
        ...self,
        "fixture",
        "client",
        "--script",
        script,
        ...wait,
        "--sent",
        p("sent"),
        "--received",
        p("recv"),
        "--",
        ...target,
      ],
      {
        env,
        timeoutMs: CHILD_DEADLINE_MS,
      },
    );
    const read = (s: string) => {
      try {
        return new Uint8Array(readFileSync(p(s)));
      } catch {
        return new Uint8Array(0);
      }
    };
    return {
      sent: read("sent"),
      received: read("recv"),
      serverIn: read("in"),
      ledger: read("jsonl"),
      stderr: r.stderr,
      code: r.code,
    };
  };
}

/** The non-blank lines of NDJSON output, those that parse, and the first that does not (null when all do). */
export function jsonLines(bytes: Uint8Array): { values: Json[]; firstBad: string | null } {
  const values: Json[] = [];
  let firstBad: string | null = null;
  for (const line of dec.decode(bytes).split("\n")) {
    if (line.trim() === "") continue;
    try {
      values.push(parseJson(line));
    } catch {
      firstBad ??= line;
    }
  }
  return { values, firstBad };
}

/** The rows of a ledger that parse (a torn line is left out: the tamper cases look at those through verify). */
export function rowsOf(ledger: Uint8Array): Json[] {
  return jsonLines(ledger).values;
}
