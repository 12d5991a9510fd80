/**
 * A neighbour with write access to the ledger's directory (not to seam's
 * process): planted lock files, symlinks, foreign-owned ledgers, an injected
 * unterminated row, secrets in the environment and in flags. Real seam
 * processes, under Bun, as the Node bundle and as the compiled executable.
 */
import { describe, expect, test } from "bun:test";
import {
  appendFileSync,
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { lineForm } from "../../src/core/canonical/index.ts";
import { chainOf } from "../../src/core/chain.ts";
import { digestJson } from "../../src/core/digest.ts";
import { getField, type Json, parseJson } from "../../src/core/json.ts";
import { runAsNobody } from "../helpers/as-nobody.ts";
import { built, ROOT, runCli, seamArgv, VIAS, type Via } from "../helpers/cli.ts";
import { ledgerRows, start, tempDir, until } from "../helpers/proc.ts";

const fixtureServer = [...seamArgv("bun"), "fixture", "server"];

/** Whether this process may mount a tmpfs (root, with the capability). */
const canMount = (() => {
  if (process.getuid?.() !== 0) return false;
  const dir = tempDir();
  const ok = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", dir]).exitCode === 0;
  if (ok) Bun.spawnSync(["umount", dir]);
  return ok;
})();
const f = (r: Json, k: string) => getField(r, k);

/** initialize, then `calls` echo calls (ids 2…). */
function callsInput(calls: number): string {
  let s = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n`;
  for (let i = 0; i < calls; i++)
    s += `{"jsonrpc":"2.0","id":${i + 2},"method":"tools/call","params":{"name":"echo","arguments":{"i":${i}}}}\n`;
  return s;
}

/** The ids answered (result or error) on seam's stdout. */
function answeredIds(stdout: Buffer): number[] {
  const ids: number[] = [];
  for (const line of stdout.toString().split("\n")) {
    try {
      const m = JSON.parse(line);
      if (typeof m.id === "number" && ("result" in m || "error" in m)) ids.push(m.id);
    } catch {}
  }
  return ids.sort((a, b) => a - b);
}

function referenceVerdict(path: string): { verdict: string; rows: number; breaks: number } {
  const ref = Bun.spawnSync(["python3", `${ROOT}test/helpers/reference_verify.py`, path]);
  return JSON.parse(ref.stdout.toString());
}

/** Runs argv, killing it (and failing the test) if it has not finished within `ms`. */
async function runWithin(argv: string[], input: string, ms: number, cwd?: string) {
  const p = start(argv, { input, cwd });
  const timer = setTimeout(() => p.child.kill("SIGKILL"), ms);
  const done = await p.done;
  clearTimeout(timer);
  return done;
}

describe.each(VIAS.filter(built))("hostile neighbours via %s", (via: Via) => {
  const seam = seamArgv(via);
  const plants: [string, (lock: string) => void][] = [
    ["a FIFO", (lock) => Bun.spawnSync(["mkfifo", lock])],
    ["a symlink to /dev/zero", (lock) => symlinkSync("/dev/zero", lock)],
    [
      "pid 1 with a since far in the future",
      (lock) =>
        writeFileSync(
          lock,
          `${JSON.stringify({ pid: 1, host: hostname(), since: Date.now() + 365 * 86400_000, proc: "x" })}\n`,
        ),
    ],
    ["garbage", (lock) => writeFileSync(lock, "\0".repeat(100) + "x".repeat(100_000))],
    ["a directory", (lock) => mkdirSync(lock)],
  ];
  test.each(plants)(
    "a lock file planted as %s: --fail-closed answers every call, the ledger verifies",
    async (_, plant) => {
      const dir = tempDir();
      const ledger = join(dir, "l.jsonl");
      plant(`${ledger}.lock`);
      const t0 = performance.now();
      const r = await runWithin(
        [...seam, "wrap", "--fail-closed", "--ledger", ledger, "--", ...fixtureServer],
        callsInput(5),
        20_000,
      );
      expect(r.signal).toBe(null);
      expect(r.code).toBe(0);
      expect(answeredIds(r.stdout)).toEqual([1, 2, 3, 4, 5, 6]);
      expect(r.stdout.toString()).not.toContain("recording failed");
      expect(performance.now() - t0).toBeLessThan(15_000);
      const v = await runCli(via, ["verify", "--json", ledger]);
      expect(JSON.parse(v.stdout.toString()).ok).toBe(true);
    },
    30_000,
  );

  test("SIGTERM ends seam even while a planted FIFO sits at the lock's name", async () => {
    const dir = tempDir();
    const ledger = join(dir, "l.jsonl");
    Bun.spawnSync(["mkfifo", `${ledger}.lock`]);
    const p = start([...seam, "wrap", "--ledger", ledger, "--", ...fixtureServer]);
    p.child.stdin!.write(callsInput(1));
    await until(() => p.stdoutSoFar().toString().includes('"id":2'), 15_000, "the call's answer");
    p.child.kill("SIGTERM");
    const timer = setTimeout(() => p.child.kill("SIGKILL"), 10_000);
    const r = await p.done;
    clearTimeout(timer);
    expect(r.signal).toBe(null); // ended by itself, passing the server's status on
    expect(ledgerRows(ledger).map((row) => f(row, "evt"))).toContain("session_end");
  }, 30_000);

  test("a ledger that is a symlink is refused (exit 2) and the file it points to is untouched", async () => {
    const dir = tempDir();
    const target = join(dir, "victim");
    writeFileSync(target, "precious\n");
    chmodSync(target, 0o600);
    const ledger = join(dir, "l.jsonl");
    symlinkSync(target, ledger);
    const r = await runCli(via, ["wrap", "--ledger", ledger, "--", ...fixtureServer], { input: callsInput(1) });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^seam: error: ledger .*l\.jsonl is a symbolic link; not writing to it\nseam: hint: .*--allow-foreign-ledger/,
    );
    expect(r.stdout.length).toBe(0); // the server never started
    expect(readFileSync(target, "utf8")).toBe("precious\n");
  }, 30_000);

  test("a ledger another user made (0666, sticky shared directory) is refused; --allow-foreign-ledger takes it", async () => {
    const shared = tempDir();
    chmodSync(shared, 0o1777);
    const ledger = join(shared, "l.jsonl");
    const made = runAsNobody(
      `import { writeFileSync, chmodSync } from "node:fs"; writeFileSync(${JSON.stringify(ledger)}, ""); chmodSync(${JSON.stringify(ledger)}, 0o666);`,
    );
    expect(made.code).toBe(0);
    expect(statSync(ledger).uid).toBe(65534);
    const r = await runCli(via, ["wrap", "--raw", "--ledger", ledger, "--", ...fixtureServer], {
      input: callsInput(1),
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("belongs to another user (uid 65534); not writing to it");
    expect(readFileSync(ledger, "utf8")).toBe("");
    const ok = await runCli(via, ["wrap", "--allow-foreign-ledger", "--ledger", ledger, "--", ...fixtureServer], {
      input: callsInput(1),
    });
    expect(ok.code).toBe(0);
    expect(ledgerRows(ledger).length).toBeGreaterThan(0);
  }, 30_000);

  test("a ledger of our own but writable by others is refused", async () => {
    const dir = tempDir();
    const ledger = join(dir, "l.jsonl");
    writeFileSync(ledger, "");
    chmodSync(ledger, 0o666);
    const r = await runCli(via, ["wrap", "--ledger", ledger, "--", ...fixtureServer], { input: callsInput(1) });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("can be written by others (mode 666)");
  }, 30_000);

  test("an injected unterminated row is cut off before the next session, recorded, and never signed", async () => {
    const dir = tempDir();
    const ledger = join(dir, "l.jsonl");
    const keyed = await runCli(via, ["keygen", "--out", join(dir, "k")]);
    expect(keyed.code).toBe(0);
    const vkey = keyed.stdout.toString().trim();
    const first = await runCli(via, ["wrap", "--ledger", ledger, "--", ...fixtureServer], { input: callsInput(1) });
    expect(first.code).toBe(0);
    // A well-formed tool_call row chained onto the last one, without its "\n".
    const rows = ledgerRows(ledger);
    const prev = f(rows.at(-1)!, "chain") as string;
    const fake = new Map<string, Json>([
      ["evt", "tool_call"],
      ["seam", "mcp-stdio"],
      ["session", "forged"],
      ["seq", 1],
      ["tool", "transfer_funds"],
      ["status", "ok"],
    ]);
    fake.set("chain", chainOf(prev, fake));
    const injected = lineForm(fake);
    appendFileSync(ledger, injected);
    const second = await runCli(via, ["wrap", "--sign", join(dir, "k"), "--ledger", ledger, "--", ...fixtureServer], {
      input: callsInput(1),
    });
    expect(second.code).toBe(0);
    const text = readFileSync(ledger, "utf8");
    const after = text
      .split("\n")
      .filter(Boolean)
      .map((l) => parseJson(l));
    expect(after.some((r) => f(r, "session") === "forged")).toBe(false);
    const repair = after.find((r) => f(r, "evt") === "ledger_repair")!;
    expect(f(repair, "torn_bytes")).toBe(Buffer.byteLength(injected));
    expect(f(repair, "torn_text")).toBe(injected);
    const v = await runCli(via, ["verify", "--json", "--key", vkey, ledger]);
    const report = JSON.parse(v.stdout.toString());
    expect(report.ok).toBe(true);
    expect(report.notes.join("\n")).toMatch(/torn line \(\d+ bytes\) cut off and recorded by the ledger_repair row/);
    expect(referenceVerdict(ledger)).toMatchObject({ verdict: "ok", breaks: 0 });
  }, 30_000);

  test("the server's environment: COMMITLAYER_API_KEY and --strip-env names removed, --pass-env kept", async () => {
    const dir = tempDir();
    const out = join(dir, "env");
    const env = { COMMITLAYER_API_KEY: "cl_live_secret", DB_PASSWORD: "hunter2", KEEP_ME: "1", OTHER_KEY: "x" };
    const server = ["sh", "-c", `env > ${out}`];
    const r = await runCli(
      via,
      ["wrap", "--strip-env", "DB_PASSWORD", "--strip-env=OTHER_KEY", "--ledger", join(dir, "l"), "--", ...server],
      { env },
    );
    expect(r.code).toBe(0);
    const seen = readFileSync(out, "utf8");
    expect(seen).not.toContain("COMMITLAYER_API_KEY");
    expect(seen).not.toContain("hunter2");
    expect(seen).not.toContain("OTHER_KEY");
    expect(seen).toContain("KEEP_ME=1");
    const passed = await runCli(
      via,
      ["wrap", "--pass-env", "COMMITLAYER_API_KEY", "--ledger", join(dir, "l"), "--", ...server],
      { env },
    );
    expect(passed.code).toBe(0);
    expect(readFileSync(out, "utf8")).toContain("COMMITLAYER_API_KEY=cl_live_secret");
  }, 30_000);

  test("an open session whose pid is alive but is another process is inconclusive; seam's own running session is not", async () => {
    const dir = tempDir();
    const ledger = join(dir, "l.jsonl");
    // A cut-short session naming a live process (as a reused pid would): a sleeper here.
    const sleeper = Bun.spawn(["sleep", "30"]);
    const begin = new Map<string, Json>([
      ["evt", "session_begin"],
      ["seam", "mcp-stdio"],
      ["session", "cut"],
      ["seq", 1],
      ["pid", sleeper.pid],
      ["host", hostname()],
    ]);
    begin.set("chain", chainOf("genesis", begin));
    writeFileSync(ledger, `${lineForm(begin)}\n`);
    const v = await runCli(via, ["verify", "--json", ledger]);
    sleeper.kill();
    expect(v.code).toBe(3);
    expect(JSON.parse(v.stdout.toString()).findings.join("\n")).toContain("session cut: no session_end");

    // seam's own session, still running, is recognised by pid and start time: open, not a finding.
    const live = join(dir, "live.jsonl");
    const p = start([...seam, "wrap", "--ledger", live, "--", "sleep", "20"]);
    await until(
      () => existsSync(live) && readFileSync(live, "utf8").includes("session_begin"),
      15_000,
      "session_begin",
    );
    const w = await runCli(via, ["verify", "--json", live]);
    p.child.kill("SIGTERM");
    await p.done;
    expect(JSON.parse(w.stdout.toString()).notes.join("\n")).toContain("is still running");
    expect(w.code).toBe(0);
  }, 40_000);

  test("command_digest is the digest of the redacted command, so it gives no redacted password back", async () => {
    const dir = tempDir();
    const ledger = join(dir, "l.jsonl");
    const server = ["sh", "-c", "exit 0", "srv", "--password", "hunter2", "-pSECRET"];
    const r = await runCli(via, ["wrap", "--ledger", ledger, "--", ...server]);
    expect(r.code).toBe(0);
    const begin = ledgerRows(ledger)[0]!;
    const command = f(begin, "command") as Json[];
    expect(command).toEqual(["sh", "-c", "exit 0", "srv", "--password", "<redacted>", "-p<redacted>"]);
    expect(f(begin, "command_digest")).toBe(digestJson(command));
    expect(readFileSync(ledger, "utf8")).not.toContain(digestJson(server));
  }, 30_000);

  // A full file system part way through a row: a small tmpfs (needs root and mount; skipped elsewhere).
  test.skipIf(!canMount)(
    "a full disk mid-write: one warning line on stderr, never a stack trace; the client still gets every answer",
    async () => {
      const dir = join(tempDir(), "small");
      mkdirSync(dir);
      expect(Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", dir]).exitCode).toBe(0);
      try {
        const big = "x".repeat(6000);
        let input = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n`;
        for (let i = 0; i < 6; i++)
          input += `{"jsonrpc":"2.0","id":${i + 2},"method":"tools/call","params":{"name":"echo","arguments":{"t":"${big}"}}}\n`;
        const r = await runCli(via, ["wrap", "--raw", "--ledger", join(dir, "l.jsonl"), "--", ...fixtureServer], {
          input,
        });
        expect(r.code).toBe(0);
        expect(answeredIds(r.stdout)).toEqual([1, 2, 3, 4, 5, 6, 7]);
        expect(r.stderr).toBe(
          `seam: warning: ledger ${join(dir, "l.jsonl")} cannot be written: no space left on device\n`,
        );
      } finally {
        Bun.spawnSync(["umount", dir]);
      }
    },
    30_000,
  );

  test("a private key given to --key or --sign is named as such and never echoed", async () => {
    const dir = tempDir();
    const keyed = await runCli(via, ["keygen", "--out", join(dir, "k")]);
    const priv = readFileSync(join(dir, "k"), "utf8").trim();
    // PRIVATE+KEY+<name>+<id>+<key>: the key's base64 may itself hold "+".
    const secret = priv.split("+").slice(4).join("+");
    expect(secret.length).toBeGreaterThan(40);
    const ledger = join(dir, "l.jsonl");
    writeFileSync(ledger, "");
    expect(keyed.code).toBe(0);
    const v = await runCli(via, ["verify", "--key", priv, ledger]);
    expect(v.code).toBe(2);
    expect(v.stderr).toContain("this looks like a private key");
    expect(v.stderr + v.stdout.toString()).not.toContain(secret.slice(0, 12));
    const w = await runCli(via, ["wrap", "--sign", priv, "--ledger", ledger, "--", "true"]);
    expect(w.code).toBe(2);
    expect(w.stderr).toContain("this looks like a private key");
    expect(w.stderr + w.stdout.toString()).not.toContain(secret.slice(0, 12));
  }, 30_000);
});
