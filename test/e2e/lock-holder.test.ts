/**
 * A same-user lock beside the ledger that names a live process which is no
 * writer of it (a fresh `since`, so not stale by age): seam wrap
 * --fail-closed does not wait for it on every call, in all three builds.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { built, seamArgv, VIAS } from "../helpers/cli.ts";
import { ledgerRows, start, tempDir, until } from "../helpers/proc.ts";

const SERVER = ["node", new URL("../fixtures/recording-server.mjs", import.meta.url).pathname];
const call = (id: number) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"n":${id}}}}\n`;

describe.each(VIAS)("a forged lock holder via %s", (via) => {
  test.skipIf(!built(via))(
    "--fail-closed calls are answered without waiting for the lock timeout",
    async () => {
      const dir = tempDir();
      const ledger = join(dir, "l.jsonl");
      writeFileSync(ledger, "");
      const stranger = Bun.spawn(["sleep", "60"]);
      const p = start([
        ...seamArgv(via),
        "wrap",
        "--fail-closed",
        "--ledger",
        ledger,
        "--",
        ...SERVER,
        join(dir, "seen"),
      ]);
      try {
        const answered = (id: number) => p.stdoutSoFar().toString().includes(`"id":${id},`);
        p.child.stdin!.write(call(1));
        await until(() => answered(1), 20_000, "the first answer");
        // Planted between calls, fresh, naming a live process of this user that has no ledger open.
        writeFileSync(
          `${ledger}.lock`,
          `${JSON.stringify({ pid: stranger.pid, host: hostname(), since: Date.now(), proc: "planted" })}\n`,
        );
        const t0 = performance.now();
        for (let id = 2; id <= 4; id++) {
          p.child.stdin!.write(call(id));
          await until(() => answered(id), 20_000, `answer ${id}`);
        }
        // The lock timeout is seconds per call; not waiting for it, three calls take well under that.
        expect(performance.now() - t0).toBeLessThan(3_000);
        p.child.stdin!.end();
        expect((await p.done).code).toBe(0);
        const calls = ledgerRows(ledger).filter((r) => (r as Map<string, unknown>).get("evt") === "tool_call");
        expect(calls.map((r) => (r as Map<string, unknown>).get("status"))).toEqual(["ok", "ok", "ok", "ok"]);
      } finally {
        stranger.kill();
        p.child.kill();
      }
    },
    60_000,
  );
});
