/**
 * The end of a `seam wrap --witness-url` session as real processes (from
 * source under Bun, as the Node bundle and as the compiled executable): a
 * witness already failing when stdin closes (a port nothing listens on, in
 * retry backoff) is not waited for, so the wrap exits about as soon as one
 * without a witness, and session_end counts it; a live witness beside it
 * still cosigns the session's last checkpoint.
 */
import { describe, expect, test } from "bun:test";
import { getField } from "../../src/core/json.ts";
import { built, seamArgv, VIAS } from "../helpers/cli.ts";
import { start, until } from "../helpers/proc.ts";
import { freePort } from "../helpers/proxy-helpers.ts";
import { evt, fixture, rowsOf, witnessKit } from "../helpers/witness-kit.ts";

const INIT =
  '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n';
const call = (id: number) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":"${id}"}}}\n`;

describe.each(VIAS.filter(built))("via %s", (via) => {
  test("a witness failing at the end is not waited for and is counted; a live one still cosigns the last checkpoint", async () => {
    const { p, keygen, configureLog, startWitness } = witnessKit(via);
    const logKey = await keygen("log.test", "log.key");
    await keygen("w1.test", "w1.key");

    /**
     * A wrap session of four calls, a checkpoint after each row; `ready` says when
     * to close stdin (the calls answered, and whatever else it waits for). Resolves
     * to the milliseconds from closing stdin to the exit, and the stderr.
     */
    const session = async (ledger: string, urls: string[], ready: (stderr: string) => boolean) => {
      const wrap = start([
        ...seamArgv(via),
        "wrap",
        "--ledger",
        p(ledger),
        "--sign",
        p("log.key"),
        "--checkpoint-every",
        "1",
        ...urls.flatMap((u) => ["--witness-url", u]),
        "--",
        ...fixture,
        "server",
      ]);
      wrap.child.stdin!.write(INIT + [1, 2, 3, 4].map(call).join(""));
      await until(
        () => wrap.stdoutSoFar().toString().split("\n").length > 5 && ready(wrap.stderrSoFar()),
        30_000,
        "the answers",
      );
      const closed = performance.now();
      wrap.child.stdin!.end();
      const done = await wrap.done;
      expect(done.code).toBe(0);
      return { ms: performance.now() - closed, stderr: done.stderr };
    };

    // The origin the witness is configured with comes from a ledger's first line: a session without one.
    const base = await session("l.jsonl", [], () => true);
    expect(base.stderr).toBe("");
    configureLog(logKey);
    const w1 = await startWitness("w1", "s");
    try {
      const down = `http://127.0.0.1:${await freePort()}`;
      // stdin closes once the down witness has failed (said on stderr): it is in retry backoff.
      const both = await session("l.jsonl", [w1.url, down], (e) => e.includes(`witness ${down}: cannot connect`));
      expect(both.ms).toBeLessThan(base.ms + 1000);
      expect(both.stderr).toContain(`witness ${down}: not reached at the session's end`);
      const rows = rowsOf(p("l.jsonl"));
      const end = rows.filter((r) => evt(r) === "session_end").at(-1)!;
      expect(getField(end, "witness_failed")).toBeGreaterThanOrEqual(2);
      // The live witness's answer for the last checkpoint (written after session_end) is still there.
      const last = rows.filter((r) => evt(r) === "checkpoint").at(-1)!;
      expect(rows.indexOf(last)).toBeGreaterThan(rows.indexOf(end));
      const onLast = rows.filter((r) => evt(r) === "cosignature" && getField(r, "size") === getField(last, "size"));
      expect(onLast.map((c) => [getField(c, "witness"), getField(c, "url")])).toEqual([["w1.test", w1.url]]);
    } finally {
      await w1.stop();
    }
  }, 120_000);
});
