/**
 * `seam wrap` end to end, with real processes: the built-in scripted client
 * talks to the built-in awkward server, once directly and once through seam,
 * under Bun, as the Node bundle and as the compiled executable.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chainOf, GENESIS } from "../../src/core/chain.ts";
import { digestBytes } from "../../src/core/digest.ts";
import { getField, type Json } from "../../src/core/json.ts";
import { SCRIPT_CALLS } from "../../src/selftest/fixture-client.ts";
import { seamArgv, VIAS, type Via } from "../helpers/cli.ts";
import { directAndWrapped } from "../helpers/fixture-run.ts";
import { ledgerRows, run, start, tempDir, until } from "../helpers/proc.ts";

const fixture = [...seamArgv("bun"), "fixture"];

function rowsOf(path: string) {
  return ledgerRows(path).map((r) => r as Json);
}
const f = (r: Json, k: string) => getField(r, k);
const evts = (rows: Json[]) => rows.map((r) => f(r, "evt"));

/** Recomputes the chain line by line, as any verifier would. */
function chainHolds(path: string): boolean {
  let prev = GENESIS;
  for (const row of ledgerRows(path)) {
    const m = new Map(row as Map<string, Json>);
    const claimed = m.get("chain");
    m.delete("chain");
    if (claimed !== chainOf(prev, m)) return false;
    prev = claimed as string;
  }
  return true;
}

describe.each(VIAS)("seam wrap via %s", (via: Via) => {
  test("the awkward script is byte-identical with and without seam, and every call is rowed", async () => {
    const { ledger, dir } = await directAndWrapped(via, "awkward");
    const rows = rowsOf(ledger);
    expect(chainHolds(ledger)).toBe(true);
    expect(f(rows[0]!, "evt")).toBe("session_begin");
    expect(f(rows.at(-1)!, "evt")).toBe("session_end");
    expect(rows.map((r) => f(r, "seq"))).toEqual(rows.map((_, i) => i + 1));
    const calls = rows.filter((r) => f(r, "evt") === "tool_call");
    expect(calls).toHaveLength(SCRIPT_CALLS.awkward!);
    const status = (id: Json | undefined) =>
      calls
        .filter((c) => String(f(c, "rpc_id")) === String(id) && typeof f(c, "rpc_id") === typeof id)
        .map((c) => f(c, "status"));
    expect(status(2)).toEqual(["ok"]);
    expect(status("2")).toEqual(["ok"]);
    expect(status(4)).toEqual(["error"]);
    expect(status(5)).toEqual(["error"]);
    expect(status(9)).toEqual(["ok", "ok"]);
    expect(status(13)).toEqual(["cancelled"]);
    expect(status(14)).toEqual(["input_required"]);
    expect(status(16)).toEqual(["unanswered"]);
    expect(status(18446744073709551616n)).toEqual(["ok"]);
    expect(calls.filter((c) => f(c, "status") === "invalid_id")).toHaveLength(2);
    const big = calls.find((c) => f(c, "rpc_id") === 3)!;
    expect(f(big, "status")).toBe("ok");
    expect(evts(rows).filter((e) => e === "server_request")).toHaveLength(1);
    expect(evts(rows).filter((e) => e === "mcp_initialize")).toHaveLength(1);
    expect(evts(rows).filter((e) => e === "tools_list")).toHaveLength(1);
    const end = rows.at(-1)!;
    expect(f(end, "reason")).toBe("client_eof");
    expect(f(end, "exit_code")).toBe(0);
    expect(f(end, "calls")).toBe(SCRIPT_CALLS.awkward!);
    expect(f(end, "unanswered")).toBe(1);
    expect(f(end, "cancelled")).toBe(1);
    expect(f(end, "late_responses")).toBe(1);
    expect(f(end, "unparsed_frames")).toBe(3);
    expect(f(end, "rows_before_end")).toBe(rows.length - 1);
    const sent = readFileSync(join(dir, "w.sent"));
    const recv = readFileSync(join(dir, "w.recv"));
    expect(f(f(end, "bytes")!, "c2s")).toBe(sent.length);
    expect(f(f(end, "bytes")!, "s2c")).toBe(recv.length);
    expect(f(f(end, "stream_digests")!, "c2s")).toBe(digestBytes(sent));
    expect(f(f(end, "stream_digests")!, "s2c")).toBe(digestBytes(recv));
  });

  test("exit codes pass through; a signal death is 128+N", async () => {
    const dir = tempDir();
    const ledger = join(dir, "l.jsonl");
    // stdin stays open, so the child's exit (not the client's EOF) ends each session.
    const seven = await start([...seamArgv(via), "wrap", "--ledger", ledger, "--", "sh", "-c", "exit 7"]).done;
    expect(seven.code).toBe(7);
    const killed = await start([...seamArgv(via), "wrap", "--ledger", ledger, "--", "sh", "-c", "kill -TERM $$"]).done;
    expect(killed.code).toBe(143);
    const ends = rowsOf(ledger).filter((r) => f(r, "evt") === "session_end");
    expect(ends.map((r) => [f(r, "reason"), f(r, "exit_code"), f(r, "signal")])).toEqual([
      ["child_exit", 7, undefined],
      ["child_exit", 143, "SIGTERM"],
    ]);
    expect(chainHolds(ledger)).toBe(true);
  });

  test("a command that cannot be started gives 127 and a spawn_failed session", async () => {
    const dir = tempDir();
    const ledger = join(dir, "l.jsonl");
    const r = await run([...seamArgv(via), "wrap", "--ledger", ledger, "--", "/nonexistent/server", "--flag"], {
      input: "",
    });
    expect(r.code).toBe(127);
    expect(r.stderr).toStartWith("seam: error: cannot start /nonexistent/server: ");
    const rows = rowsOf(ledger);
    expect(evts(rows)).toEqual(["session_begin", "session_end"]);
    expect(f(rows[1]!, "reason")).toBe("spawn_failed");
    expect(f(rows[1]!, "exit_code")).toBe(127);
  });

  test("usage errors exit 2 before anything is spawned or written", async () => {
    const dir = tempDir();
    const ledger = join(dir, "l.jsonl");
    const marker = join(dir, "spawned");
    const cases: [string[], string][] = [
      [["wrap", "--", "touch", marker], "seam: error: --ledger is required\n"],
      [["wrap", "--ledger", ledger], "seam: error: no server command given\n"],
      [
        ["wrap", "--ledger", ledger, "--bogus", "--", "touch", marker],
        "seam: error: unknown flag --bogus for 'seam wrap'\n",
      ],
      [["wrap", "--ledger", ledger, "--fsync", "sometimes", "--", "touch", marker], "seam: error: "],
      [["wrap", "--ledger", ledger, "--max-frame", "-3", "--", "touch", marker], "seam: error: "],
    ];
    for (const [args, err] of cases) {
      const r = await run([...seamArgv(via), ...args], { input: "" });
      expect(r.code).toBe(2);
      expect(r.stdout.length).toBe(0);
      expect(r.stderr).toStartWith(err);
      expect(r.stderr).toContain("seam: hint: ");
    }
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(ledger)).toBe(false);
  });

  test("a .env or bunfig.toml where seam starts never reaches the server's environment", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, ".env"), "SEAM_ENV_PROBE=leaked\n");
    writeFileSync(join(dir, "bunfig.toml"), `preload = ["./nope.ts"]\n`);
    const r = await start(
      [...seamArgv(via), "wrap", "--ledger", join(dir, "l.jsonl"), "--", "sh", "-c", 'echo "[$SEAM_ENV_PROBE]"'],
      { cwd: dir },
    ).done;
    expect(r.stderr).toBe("");
    expect(r.stdout.toString()).toBe("[]\n");
    expect(r.code).toBe(0);
  });

  test("flags after -- belong to the server, --help included", async () => {
    const dir = tempDir();
    const ledger = join(dir, "l.jsonl");
    const r = await run(
      [
        ...seamArgv(via),
        "wrap",
        "--ledger",
        ledger,
        "--",
        "sh",
        "-c",
        'printf "%s|" "$@"',
        "sh",
        "--help",
        "--ledger",
        "x",
      ],
      { input: "" },
    );
    expect(r.code).toBe(0);
    expect(r.stdout.toString()).toBe("--help|--ledger|x|");
  });
});

describe("seam wrap under stress", () => {
  const via: Via = "bun";

  test("random bytes through `cat` come back unchanged", async () => {
    const dir = tempDir();
    let seed = 42;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) & 0xff;
    const parts: Buffer[] = [];
    for (let i = 0; i < 200; i++) {
      const kind = i % 4;
      if (kind === 0) parts.push(Buffer.from(Array.from({ length: rnd() * 8 }, rnd)));
      else if (kind === 1)
        parts.push(
          Buffer.from(
            `{"jsonrpc":"2.0","id":${rnd()},"method":"tools/call","params":{"name":"x","arguments":{"a":[${rnd()}`,
          ),
        );
      else if (kind === 2)
        parts.push(Buffer.from(`{"jsonrpc":"2.0","id":${rnd()},"result":{"isError":${rnd() > 128}}}\n`));
      else parts.push(Buffer.from([0xff, 0xfe, 0x0a, 0x0d, 0x0a, 0xed, 0xa0, 0x80, 0x0a]));
    }
    const input = Buffer.concat(parts);
    const r = await run([...seamArgv(via), "wrap", "--ledger", join(dir, "l.jsonl"), "--", "cat"], { input });
    expect(r.code).toBe(0);
    expect(Buffer.compare(r.stdout, input)).toBe(0);
    expect(chainHolds(join(dir, "l.jsonl"))).toBe(true);
  });

  test.each([
    ["SIGINT", 130],
    ["SIGTERM", 143],
    ["SIGHUP", 129],
  ])("%s to seam reaches the server; open calls are rowed and the session ends", async (signal, code) => {
    const dir = tempDir();
    const ledger = join(dir, "l.jsonl");
    const p = start([...seamArgv(via), "wrap", "--ledger", ledger, "--", ...fixture, "server"]);
    p.child.stdin!.write(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"never"}}\n`);
    await until(() => existsSync(ledger) && readFileSync(ledger, "utf8").includes("session_begin"));
    await new Promise((r) => setTimeout(r, 200));
    p.child.kill(signal as NodeJS.Signals);
    const r = await p.done;
    expect(r.code).toBe(code);
    const rows = rowsOf(ledger);
    const end = rows.at(-1)!;
    expect(f(end, "evt")).toBe("session_end");
    expect(f(end, "reason")).toBe(`signal:${signal}`);
    expect(f(end, "signal")).toBe(signal);
    const call = rows.find((row) => f(row, "evt") === "tool_call")!;
    expect([f(call, "status"), f(call, "reason")]).toEqual(["unanswered", `signal:${signal}`]);
  });

  test("an unwritable ledger does not stop the traffic: it is said once on stderr", async () => {
    const dir = tempDir();
    const ledger = join(dir, "a-directory");
    mkdirSync(ledger);
    const input = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}\n`;
    const r = await run([...seamArgv(via), "wrap", "--ledger", ledger, "--", "cat"], { input });
    expect(r.code).toBe(0);
    expect(r.stdout.toString()).toBe(input);
    expect(r.stderr.split("\n").filter(Boolean)).toEqual([
      expect.stringMatching(/^seam: warning: ledger .*a-directory cannot be written: /),
    ]);
  });

  test("--max-frame stops reading a frame, not forwarding it: a client one is rowed, a server one counted", async () => {
    const dir = tempDir();
    const ledger = join(dir, "l.jsonl");
    const big = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"s":"${"z".repeat(5000)}"}}}\n`;
    const small = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t"}}\n`;
    const r = await run([...seamArgv(via), "wrap", "--max-frame", "4096", "--ledger", ledger, "--", "cat"], {
      input: big + small,
    });
    expect(r.stdout.toString()).toBe(big + small);
    const rows = rowsOf(ledger);
    // cat sends each frame back, so each crosses twice: the big one is not read either way, the small one is a call.
    expect(rows.filter((row) => f(row, "evt") === "tool_call").map((row) => f(row, "rpc_id"))).toEqual([2]);
    const long = rows.filter((row) => f(row, "evt") === "unparsed_frame");
    expect(long.map((row) => [f(row, "dir"), f(row, "bytes"), f(row, "frame_digest"), f(row, "refused")])).toEqual([
      ["c2s", big.length - 1, digestBytes(Buffer.from(big.slice(0, -1))), undefined],
    ]);
    expect(f(long[0]!, "head")).toBe(big.slice(0, 64).replaceAll("\\", "\\\\"));
    expect(f(rows.at(-1)!, "oversize_frames_unlogged")).toBe(1);
    // The server acted on a frame seam did not read: verify says so.
    const v = await run([...seamArgv(via), "verify", ledger]);
    expect(v.code).toBe(3);
    expect(v.stdout.toString()).toContain("a client frame seam could not parse");
  });

  test("--write-ahead with --max-frame: a client frame too long to read never reaches the server; -32600 from seam", async () => {
    const dir = tempDir();
    const ledger = join(dir, "l.jsonl");
    const serverIn = join(dir, "server.in");
    const big = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"s":"${"z".repeat(300_000)}"}}}\n`;
    const small = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t"}}\n`;
    const r = await run(
      [
        ...seamArgv(via),
        "wrap",
        "--write-ahead",
        "--max-frame",
        "4096",
        "--ledger",
        ledger,
        "--",
        "sh",
        "-c",
        `tee "$0" | cat`,
        serverIn,
      ],
      { input: big + small },
    );
    expect(r.code).toBe(0);
    // The server got only the small frame; the client, seam's refusal and then the small frame's echo.
    expect(readFileSync(serverIn, "utf8")).toBe(small);
    const out = r.stdout.toString().split("\n").filter(Boolean);
    expect(out).toHaveLength(2);
    expect(JSON.parse(out[0]!)).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: {
        code: -32600,
        message: `seam: frame too long: ${big.length - 1} bytes, longer than --max-frame: not read; the frame was not forwarded`,
      },
    });
    expect(out[1]).toBe(small.trim());
    const rows = rowsOf(ledger);
    const long = rows.filter((row) => f(row, "evt") === "unparsed_frame");
    expect(long.map((row) => [f(row, "dir"), f(row, "bytes"), f(row, "refused")])).toEqual([
      ["c2s", big.length - 1, true],
    ]);
    expect(f(long[0]!, "frame_digest")).toBe(digestBytes(Buffer.from(big.slice(0, -1))));
  });

  test("a client that goes away (EPIPE) is recorded, not a crash", async () => {
    const dir = tempDir();
    const ledger = join(dir, "l.jsonl");
    const p = start([
      ...seamArgv(via),
      "wrap",
      "--ledger",
      ledger,
      "--",
      "sh",
      "-c",
      "sleep 0.3; yes | head -c 2000000; exit 3",
    ]);
    p.child.stdout!.destroy();
    const r = await p.done;
    expect(r.code).toBe(3);
    expect(r.stderr).toBe("");
    const end = rowsOf(ledger).at(-1)!;
    expect(f(end, "client_gone")).toBe(true);
  });

  test("--write-ahead: killing seam with SIGKILL leaves every call the server received in the ledger", async () => {
    const dir = tempDir();
    const ledger = join(dir, "l.jsonl");
    const serverIn = join(dir, "server.in");
    const p = start([
      ...seamArgv(via),
      "wrap",
      "--write-ahead",
      "--ledger",
      ledger,
      "--",
      "sh",
      "-c",
      `tee ${serverIn} >/dev/null`,
    ]);
    for (let i = 1; i <= 50; i++)
      p.child.stdin!.write(
        `{"jsonrpc":"2.0","id":${i},"method":"tools/call","params":{"name":"t","arguments":{"i":${i}}}}\n`,
      );
    const complete = () =>
      readFileSync(serverIn, "utf8")
        .split("\n")
        .filter((l) => l.endsWith("}"));
    await until(() => existsSync(serverIn) && complete().length > 20);
    p.child.kill("SIGKILL");
    await p.done;
    const received = complete().map((l) => JSON.parse(l).id as number);
    expect(received.length).toBeGreaterThan(20);
    const intents = new Set(
      rowsOf(ledger)
        .filter((r) => f(r, "evt") === "tool_call_intent")
        .map((r) => f(r, "rpc_id")),
    );
    for (const id of received) expect(intents.has(id)).toBe(true);
  });

  test("--fail-closed refuses a call it cannot record and lets other traffic through", async () => {
    const dir = tempDir();
    const ledger = join(dir, "is-a-directory");
    mkdirSync(ledger);
    const serverIn = join(dir, "server.in");
    const input =
      `{"jsonrpc":"2.0","id":1,"method":"ping"}\n` +
      `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t"}}\n` +
      `{"jsonrpc":"2.0","id":3,"method":"ping"}\n`;
    const r = await run(
      [...seamArgv(via), "wrap", "--fail-closed", "--ledger", ledger, "--", "sh", "-c", `tee ${serverIn}`],
      { input },
    );
    expect(readFileSync(serverIn, "utf8")).toBe(
      `{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"jsonrpc":"2.0","id":3,"method":"ping"}\n`,
    );
    const lines = r.stdout.toString().split("\n").filter(Boolean);
    expect(lines).toHaveLength(3);
    const refusal = JSON.parse(lines.find((l) => l.includes('"error"'))!);
    expect(refusal.id).toBe(2);
    expect(refusal.error.code).toBe(-32000);
    expect(refusal.error.message).toStartWith("seam: recording failed:");
    expect(r.stderr).toContain("seam: warning: ");
  });

  test("two seam processes on one ledger keep one valid chain", async () => {
    const dir = tempDir();
    const ledger = join(dir, "shared.jsonl");
    const one = () =>
      run([
        ...fixture,
        "client",
        "--script",
        "demo",
        "--",
        ...seamArgv(via),
        "wrap",
        "--ledger",
        ledger,
        "--",
        ...fixture,
        "server",
      ]);
    const rs = await Promise.all([one(), one(), one()]);
    for (const r of rs) expect(r.code).toBe(0);
    expect(chainHolds(ledger)).toBe(true);
    const rows = rowsOf(ledger);
    const sessions = new Set(rows.map((r) => f(r, "session")));
    expect(sessions.size).toBe(3);
    for (const s of sessions) {
      const mine = rows.filter((r) => f(r, "session") === s);
      expect(mine.map((r) => f(r, "seq"))).toEqual(mine.map((_, i) => i + 1));
      expect(f(mine.at(-1)!, "evt")).toBe("session_end");
    }
  });
});
