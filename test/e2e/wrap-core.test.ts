/**
 * runWrap in process, with a runtime made for the test: the core takes its
 * runtime as an argument, so moments a real process cannot be caught in
 * (a signal before the server has started) can be made to happen exactly.
 */
import { expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLog } from "../../src/base/log.ts";
import { getField } from "../../src/core/json.ts";
import { openAppend } from "../../src/runtime/file.ts";
import type { ByteSink, Child, ExitStatus, Runtime } from "../../src/runtime/types.ts";
import { runWrap } from "../../src/wrap/session.ts";
import { ledgerRows } from "../helpers/proc.ts";

/** A byte source that never yields and never ends (a client that stays connected and silent). */
const silent: AsyncIterable<Uint8Array> = { [Symbol.asyncIterator]: () => ({ next: () => new Promise(() => {}) }) };

const nullSink: ByteSink = { write: () => {}, end: async () => {} };

test("a signal that arrives before the server has started is passed on to it, and the session still ends", async () => {
  const ledger = join(mkdtempSync(join(tmpdir(), "seam-wrap-core-")), "l.jsonl");
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
    {
      ledger,
      argv: ["server"],
      server: "s",
      raw: false,
      maxFrame: 1024,
      fsync: "batch",
      writeAhead: false,
      failClosed: false,
      cwd: "/",
    },
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
