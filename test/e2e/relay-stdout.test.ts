/**
 * A client that stops reading seam's stdout (its pipe full) makes seam stop
 * reading the server's answers, and nothing else: the client's requests
 * still reach the server. Were a write to stdout to block (or wait in a loop
 * for the pipe to take it), the whole relay would stop there.
 */
import { expect, test } from "bun:test";
import { closeSync, constants, existsSync, openSync, readFileSync, readSync } from "node:fs";
import { join } from "node:path";
import { built, ROOT, runCli, seamArgv, VIAS } from "../helpers/cli.ts";
import { field, ledgerRows, tempDir, until } from "../helpers/proc.ts";

const REQUESTS = 200;
const NOTIFICATIONS = 4096;

/** Reads a non-blocking descriptor to its end (every writer gone): the newlines and bytes it held. */
async function readToEnd(fd: number): Promise<{ lines: number; bytes: number }> {
  const buf = Buffer.alloc(1 << 16);
  let lines = 0;
  let bytes = 0;
  for (;;) {
    let n: number;
    try {
      n = readSync(fd, buf);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EAGAIN") throw e;
      await Bun.sleep(5);
      continue;
    }
    if (n === 0) return { lines, bytes };
    bytes += n;
    for (let i = 0; i < n; i++) if (buf[i] === 10) lines++;
  }
}

test.each(VIAS.filter(built))(
  "via %s: a client that stops reading does not hold back its requests",
  async (via) => {
    const dir = tempDir();
    const counted = join(dir, "received");
    // seam's stdout is a FIFO that nobody reads until the requests are in (a pipe
    // from Bun.spawn is read by the test process as it fills): 4 MiB of
    // notifications fill every pipe on the way.
    const fifo = join(dir, "stdout");
    expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = openSync(fifo, constants.O_WRONLY);
    const p = Bun.spawn({
      cmd: [
        ...seamArgv(via),
        "wrap",
        "--ledger",
        join(dir, "l.jsonl"),
        "--",
        "node",
        `${ROOT}test/fixtures/flood-server.mjs`,
        counted,
      ],
      env: { ...process.env, FLOOD_LINES: String(NOTIFICATIONS) },
      stdin: "pipe",
      stdout: writer,
      stderr: "inherit",
    });
    closeSync(writer);
    try {
      await Bun.sleep(500);
      for (let i = 1; i <= REQUESTS; i++)
        p.stdin.write(`{"jsonrpc":"2.0","id":${i},"method":"tools/call","params":{"name":"echo","arguments":{}}}\n`);
      await p.stdin.flush();
      const got = () => (existsSync(counted) ? Number(readFileSync(counted, "utf8")) : 0);
      await until(() => got() >= REQUESTS, 10_000).catch(() => {});
      expect(got()).toBe(REQUESTS);
      await p.stdin.end();
      // Every notification reached the client once it read again.
      const out = await readToEnd(reader);
      expect(out.lines).toBe(NOTIFICATIONS);
      expect(await p.exited).toBe(0);
      // The ledger has each call (the server answers none) and every byte, and verifies.
      const ledger = join(dir, "l.jsonl");
      const rows = ledgerRows(ledger);
      const calls = rows.filter((r) => field(r, "evt") === "tool_call");
      expect(calls.map((r) => field(r, "status"))).toEqual(Array(REQUESTS).fill("unanswered"));
      const end = rows.at(-1)!;
      expect(field(end, "evt")).toBe("session_end");
      expect(field(field(end, "bytes")!, "s2c")).toBe(out.bytes);
      expect((await runCli("bun", ["verify", ledger])).code).toBe(0);
    } finally {
      p.kill("SIGKILL");
      closeSync(reader);
    }
  },
  30_000,
);
