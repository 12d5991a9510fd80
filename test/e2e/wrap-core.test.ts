/**
 * runWrap in process, with a runtime made for the test: the core takes its
 * runtime as an argument, so moments a real process cannot be caught in
 * (a signal before the server has started) can be made to happen exactly.
 */
import { expect, test } from "bun:test";
import { readFileSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createLog } from "../../src/base/log.ts";
import { getField } from "../../src/core/json.ts";
import { openAppend } from "../../src/runtime/file.ts";
import { startThreadFrom } from "../../src/runtime/thread.ts";
import type { ByteSink, Child, ExitStatus, Runtime } from "../../src/runtime/types.ts";
import { runWrap } from "../../src/wrap/session.ts";
import { ledgerRows, tempDir } from "../helpers/proc.ts";
import { wrapOptions } from "../helpers/wrap-options.ts";

/** A recorder thread for these tests: the real one, over a disk as fast as the real one. */
const fixture = join(import.meta.dir, "..", "fixtures", "recorder-thread.ts");

/** A byte source that never yields and never ends (a client that stays connected and silent). */
const silent: AsyncIterable<Uint8Array> = { [Symbol.asyncIterator]: () => ({ next: () => new Promise(() => {}) }) };

const nullSink: ByteSink = { write: () => {}, end: async () => {} };

test("a signal that arrives before the server has started is passed on to it, and the session still ends", async () => {
  const ledger = join(tempDir("seam-wrap-core-"), "l.jsonl");
  const handlers: ((signal: string) => void)[] = [];
  const killed: string[] = [];
  let exit!: (s: ExitStatus) => void;
  const child: Child = {
    pid: 4242,
    stdin: nullSink,
    stdout: { async *[Symbol.asyncIterator]() {} },
    exited: new Promise<ExitStatus>((r) => (exit = r)),
    kill(signal) {
      killed.push(signal);
      exit({ code: null, signal });
    },
  };
  const rt: Runtime = {
    name: "test",
    async spawn() {
      // The signal comes while the server is still starting.
      for (const h of handlers) h("SIGTERM");
      return { ok: true, child };
    },
    stdin: () => silent,
    stdout: () => ({ ...nullSink, broken: false }),
    openAppend,
    onSignals(_signals, handler) {
      handlers.push(handler);
      return () => handlers.splice(handlers.indexOf(handler), 1);
    },
    selfArgv: () => [],
    reclaim: () => {},
  };
  const code = await runWrap(
    rt,
    wrapOptions(ledger),
    createLog(() => {}),
  );
  expect(killed).toEqual(["SIGTERM"]);
  expect(code).toBe(143);
  const end = ledgerRows(ledger).at(-1)!;
  expect([getField(end, "evt"), getField(end, "reason"), getField(end, "signal")]).toEqual([
    "session_end",
    "signal:SIGTERM",
    "SIGTERM",
  ]);
});

/** A server that answers nothing and ends when killed or when its stdin ends; `events` says when it was started and first read. */
function quietServer(events: string[]): { child: Child; killed: string[] } {
  const killed: string[] = [];
  let exit!: (s: ExitStatus) => void;
  const exited = new Promise<ExitStatus>((r) => (exit = r));
  const child: Child = {
    pid: 4243,
    stdin: { write: () => {}, end: async () => exit({ code: 0, signal: null }) },
    stdout: {
      [Symbol.asyncIterator]: () => {
        events.push("server stdout read");
        return { next: () => exited.then(() => ({ done: true as const, value: undefined })) };
      },
    },
    exited,
    kill(signal) {
      killed.push(signal);
      exit({ code: null, signal });
    },
  };
  return { child, killed };
}

/** The runtime of these tests, with a recorder thread whose messages are noted in `events`. */
function threadRuntime(events: string[], child: Child, openAppendFile: Runtime["openAppend"] = openAppend): Runtime {
  return {
    name: "test",
    async spawn() {
      events.push("server spawned");
      return { ok: true, child };
    },
    stdin: () => ({ async *[Symbol.asyncIterator]() {} }),
    stdout: () => ({ ...nullSink, broken: false }),
    openAppend: openAppendFile,
    onSignals: () => () => {},
    selfArgv: () => [],
    reclaim: () => {},
    recorderThread: true,
    startThread(role, data) {
      const thread = startThreadFrom(fixture, role, data);
      return {
        ...thread,
        onMessage: (h) =>
          thread.onMessage((m) => {
            const k = (m as { k: string }).k;
            if (k === "opened" || k === "refused") events.push(`recorder ${k}`);
            h(m);
          }),
      };
    },
  };
}

const threadedWrap = (ledger: string) => ({ ...wrapOptions(ledger), recorderThread: { plain: { stallMs: 0 } } });

test("the server starts while the recorder thread starts, and is read only once the recorder has opened the ledger", async () => {
  const ledger = join(tempDir("seam-wrap-core-"), "l.jsonl");
  const events: string[] = [];
  const { child } = quietServer(events);
  const code = await runWrap(
    threadRuntime(events, child),
    threadedWrap(ledger),
    createLog(() => {}),
  );
  expect(code).toBe(0);
  expect(events).toEqual(["server spawned", "recorder opened", "server stdout read"]);
  expect(ledgerRows(ledger).map((row) => getField(row, "evt"))).toEqual(["session_begin", "session_end"]);
});

test("a ledger that the recorder thread finds refused after it was looked at: the server started meanwhile is killed, exit 2", async () => {
  const dir = tempDir("seam-wrap-core-");
  const ledger = join(dir, "l.jsonl");
  const victim = join(dir, "victim");
  writeFileSync(victim, "precious\n");
  const events: string[] = [];
  const { child, killed } = quietServer(events);
  // Looked at, the ledger is a file of our own; then, before the thread opens it, it is a symbolic link.
  const swapped: Runtime["openAppend"] = async (path, opts) => {
    const file = await openAppend(path, opts);
    unlinkSync(path);
    symlinkSync(victim, path);
    return file;
  };
  const errors: string[] = [];
  const code = await runWrap(
    threadRuntime(events, child, swapped),
    threadedWrap(ledger),
    createLog((line) => errors.push(line)),
  );
  expect(code).toBe(2);
  expect(events).toEqual(["server spawned", "recorder refused"]);
  expect(killed).toEqual(["SIGKILL"]);
  expect(errors.join("")).toContain("is a symbolic link");
  expect(readFileSync(victim, "utf8")).toBe("precious\n");
});

test("where the runtime's threads do not pay for themselves, none is started: the session is recorded behind the forwarding", async () => {
  const ledger = join(tempDir("seam-wrap-core-"), "l.jsonl");
  const events: string[] = [];
  const { child } = quietServer(events);
  const roles: string[] = [];
  const threads = threadRuntime(events, child);
  const rt: Runtime = {
    ...threads,
    recorderThread: false,
    startThread: (role, data) => {
      roles.push(role);
      return threads.startThread!(role, data);
    },
  };
  const code = await runWrap(
    rt,
    threadedWrap(ledger),
    createLog(() => {}),
  );
  expect(code).toBe(0);
  expect(roles).toEqual([]);
  expect(events).toEqual(["server spawned", "server stdout read"]);
  expect(ledgerRows(ledger).map((row) => getField(row, "evt"))).toEqual(["session_begin", "session_end"]);
});
