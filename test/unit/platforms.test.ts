/**
 * What seam does on each OS it ships for, run here on Linux: every function
 * with an OS-specific answer takes the platform (or a facts object) as a
 * parameter, and each table below has a row per OS. The linux rows run the
 * real thing; the darwin and win32 rows state what those builds do without
 * /proc, uids or POSIX mode bits (docs/install.md, "Platforms").
 */
import { afterAll, expect, test } from "bun:test";
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, chownSync, closeSync, openSync, rmSync, statSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
// @ts-expect-error: plain JavaScript, no declarations
import { launcherSignals } from "../../npm/seam.mjs";
import { createLog } from "../../src/base/log.ts";
import { getField } from "../../src/core/json.ts";
import { defaultLedger, pathEnvFromProcess, targetsFor } from "../../src/install/clients.ts";
import { acquireLock, LockTimeoutError, readLockFile } from "../../src/ledger/lock.ts";
import { type LockDirFacts, lockDirCandidates, ownDir, userLockDir } from "../../src/ledger/open.ts";
import { stopSignals } from "../../src/proxy/run.ts";
import { redactArgv } from "../../src/redact/argv.ts";
import { REDACTED as R } from "../../src/redact/secret-values.ts";
import { holdsFileOpen, isSeamProcess, isWriterAlive, processStartTime } from "../../src/runtime/alive.ts";
import { openAppend, UnsafeFileError, unsafeFile } from "../../src/runtime/file.ts";
import type { ByteSink, Child, ExitStatus, Runtime } from "../../src/runtime/types.ts";
import { userId } from "../../src/runtime/user.ts";
import { serverEnv } from "../../src/wrap/env.ts";
import { wrapSignals } from "../../src/wrap/options.ts";
import { runWrap } from "../../src/wrap/session.ts";
import { ledgerRows, tempDir } from "../helpers/proc.ts";
import { wrapOptions } from "../helpers/wrap-options.ts";

const dir = tempDir("seam-platforms-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A live process whose command line names seam's entry (a script called seam.mjs that waits). */
function fakeSeam(): ChildProcess {
  const script = join(dir, "seam.mjs");
  writeFileSync(script, "setTimeout(() => {}, 60000);\n");
  return spawn(process.execPath, [script], { stdio: "ignore" });
}

test("process facts: /proc on linux only; macOS and Windows cannot tell, so a writer is never 'still running'", async () => {
  const child = fakeSeam();
  try {
    const pid = child.pid!;
    // Until the child has exec'd its script, its command line is still the parent's.
    for (let i = 0; i < 200 && !isSeamProcess(pid, "linux"); i++) await Bun.sleep(10);
    const start = processStartTime(pid, "linux");
    const file = join(dir, "held");
    writeFileSync(file, "");
    const fd = openSync(file, "r");
    const st = statSync(file, { bigint: true });
    try {
      const rows = (["linux", "darwin", "win32"] as const).map((os) => ({
        os,
        startTime: processStartTime(pid, os) === null ? "none" : "known",
        seam: isSeamProcess(pid, os),
        alive: isWriterAlive(pid, hostname(), start, os),
        holds: holdsFileOpen(process.pid, st.dev, st.ino, os),
      }));
      expect(rows).toEqual([
        { os: "linux", startTime: "known", seam: true, alive: true, holds: true },
        { os: "darwin", startTime: "none", seam: false, alive: false, holds: null },
        { os: "win32", startTime: "none", seam: false, alive: false, holds: null },
      ]);
    } finally {
      closeSync(fd);
    }
  } finally {
    child.kill();
  }
});

test("a lock naming a live pid that does not hold the ledger: broken on linux, waited for on macOS and Windows", async () => {
  const rows: Record<string, string> = {};
  for (const os of ["linux", "darwin", "win32"] as const) {
    const ledger = join(dir, `lock-${os}.jsonl`);
    writeFileSync(ledger, "");
    // The parent of this test runner lives and does not have the ledger open.
    writeFileSync(
      `${ledger}.lock`,
      `${JSON.stringify({ pid: process.ppid, host: hostname(), since: Date.now(), proc: "someone-else" })}\n`,
    );
    try {
      const release = await acquireLock(`${ledger}.lock`, { pid: process.pid, timeoutMs: 300, platform: os });
      await release();
      rows[os] = "taken";
    } catch (e) {
      rows[os] = e instanceof LockTimeoutError ? "waited" : String(e);
    }
  }
  expect(rows).toEqual({ linux: "taken", darwin: "waited", win32: "waited" });
});

test("the user's lock directory per OS", () => {
  const facts = (platform: NodeJS.Platform, over: Partial<LockDirFacts> = {}): LockDirFacts => ({
    platform,
    uid: 501,
    tmpdir: "/tmp",
    home: "/home/ana",
    env: { XDG_RUNTIME_DIR: "/run/user/501" },
    ...over,
  });
  const rows = [
    lockDirCandidates(facts("linux")),
    lockDirCandidates(facts("darwin", { tmpdir: "/var/folders/x/T", home: "/Users/ana", env: {} })),
    lockDirCandidates(
      facts("win32", { uid: undefined, home: "C:\\Users\\ana", env: { LOCALAPPDATA: "D:\\Profiles\\ana\\Local" } }),
    ),
    lockDirCandidates(facts("win32", { uid: undefined, home: "C:\\Users\\ana", env: {} })),
    lockDirCandidates(facts("win32", { uid: undefined, home: "", env: { LOCALAPPDATA: "relative" } })),
    lockDirCandidates(facts("linux", { uid: undefined })),
  ];
  expect(rows).toEqual([
    { dirs: ["/tmp/seam-501", "/run/user/501/seam", "/home/ana/.cache/seam/locks"], owner: 501 },
    { dirs: ["/var/folders/x/T/seam-501", "/Users/ana/.cache/seam/locks"], owner: 501 },
    { dirs: ["D:\\Profiles\\ana\\Local\\seam\\locks"], owner: undefined },
    { dirs: ["C:\\Users\\ana\\AppData\\Local\\seam\\locks"], owner: undefined },
    null,
    null,
  ]);
});

test("a lock directory open to others' writes: refused where there are uids, used on Windows (mode bits mean nothing)", async () => {
  const open = join(dir, "open-locks");
  expect(await ownDir(open, undefined, false)).toBeNull();
  chmodSync(open, 0o777);
  const uid = process.getuid!();
  expect([await ownDir(open, uid, false), await ownDir(open, undefined, false)]).toEqual([
    `${open} is writable by other users`,
    null,
  ]);
  // macOS takes the same path as Linux, made for real here.
  const mac = await userLockDir({ platform: "darwin", uid, tmpdir: dir, home: "", env: {} });
  expect(mac).toBe(join(dir, `seam-${uid}`));
  expect(statSync(mac as string).mode & 0o777).toBe(0o700);
});

test("a ledger file writable by others: refused on linux and macOS, appended to on Windows", async () => {
  const rows: Record<string, string> = {};
  for (const os of ["linux", "darwin", "win32"] as const) {
    const ledger = join(dir, `mode-${os}.jsonl`);
    writeFileSync(ledger, "");
    chmodSync(ledger, 0o666);
    try {
      await (await openAppend(ledger, { platform: os })).close();
      rows[os] = "opened";
    } catch (e) {
      rows[os] = e instanceof UnsafeFileError ? "refused" : String(e);
    }
  }
  expect(rows).toEqual({ linux: "refused", darwin: "refused", win32: "opened" });
  // Another user's file, as Windows cannot tell: only "not a regular file" is left there.
  const foreign = { isFile: () => true, uid: 4242, mode: 0o100644 };
  const fifo = { isFile: () => false, uid: 501, mode: 0o10600 };
  expect([unsafeFile(foreign, "linux", 501), unsafeFile(foreign, "win32", 501), unsafeFile(fifo, "win32")]).toEqual([
    "belongs to another user (uid 4242)",
    null,
    "is not a regular file",
  ]);
});

test("install's folders from each OS's environment (the per-client paths: test/e2e/install.test.ts)", () => {
  const env = {
    HOME: "/c/Users/ana",
    USERPROFILE: "C:\\Users\\ana",
    APPDATA: "C:\\Users\\ana\\AppData\\Roaming",
    LOCALAPPDATA: "C:\\Users\\ana\\AppData\\Local",
    XDG_CONFIG_HOME: "/xdg/config",
  };
  const rows = (["linux", "darwin", "win32", "freebsd"] as const).map((platform) => {
    const e = pathEnvFromProcess(undefined, "/p", platform, env);
    return {
      platform,
      os: e.os,
      desktop: targetsFor("claude-desktop", "user", e)[0]!.file,
      cursor: targetsFor("cursor", "user", e)[0]!.file,
      ledger: defaultLedger("cursor", e),
    };
  });
  expect(rows).toEqual([
    {
      platform: "linux",
      os: "linux",
      desktop: "/xdg/config/Claude/claude_desktop_config.json",
      cursor: "/c/Users/ana/.cursor/mcp.json",
      ledger: "/c/Users/ana/.local/share/seam/cursor.jsonl",
    },
    {
      platform: "darwin",
      os: "darwin",
      desktop: "/c/Users/ana/Library/Application Support/Claude/claude_desktop_config.json",
      cursor: "/c/Users/ana/.cursor/mcp.json",
      ledger: "/c/Users/ana/Library/Application Support/seam/cursor.jsonl",
    },
    {
      platform: "win32",
      os: "win32",
      desktop: "C:\\Users\\ana\\AppData\\Roaming\\Claude\\claude_desktop_config.json",
      cursor: "C:\\Users\\ana\\.cursor\\mcp.json",
      ledger: "C:\\Users\\ana\\AppData\\Local\\seam\\cursor.jsonl",
    },
    {
      platform: "freebsd",
      os: "linux",
      desktop: "/xdg/config/Claude/claude_desktop_config.json",
      cursor: "/c/Users/ana/.cursor/mcp.json",
      ledger: "/c/Users/ana/.local/share/seam/cursor.jsonl",
    },
  ]);
});

test("command lines: Windows paths, program names and shells are Windows shapes on win32 only", () => {
  // [argv, as recorded on linux and macOS, as recorded on Windows]
  const rows: [string[], string[], string[]][] = [
    [
      ["srv", "-p", "C:\\data"],
      ["srv", "-p", R],
      ["srv", "-p", "C:\\data"],
    ],
    [
      ["srv", "-pC:/data"],
      ["srv", `-p${R}`],
      ["srv", "-pC:/data"],
    ],
    [
      ["srv", "-k", ".\\keys"],
      ["srv", "-k", R],
      ["srv", "-k", ".\\keys"],
    ],
    [
      ["srv", "--pwd", "D:\\srv"],
      ["srv", "--pwd", R],
      ["srv", "--pwd", "D:\\srv"],
    ],
    [
      ["srv", "--pwd=\\\\host\\share"],
      ["srv", `--pwd=${R}`],
      ["srv", "--pwd=\\\\host\\share"],
    ],
    [
      ["srv", "-p", "%USERPROFILE%\\x"],
      ["srv", "-p", R],
      ["srv", "-p", "%USERPROFILE%\\x"],
    ],
    // A secret flag's value is the secret whatever it looks like.
    [
      ["srv", "--token=C:\\secret"],
      ["srv", `--token=${R}`],
      ["srv", `--token=${R}`],
    ],
    [
      ["srv", "--api-key", "C:\\secret"],
      ["srv", "--api-key", R],
      ["srv", "--api-key", R],
    ],
    [
      ["C:\\Program Files\\nodejs\\npx.cmd", "-p", "mcp-pkg", "srv"],
      ["C:\\Program Files\\nodejs\\npx.cmd", "-p", R, "srv"],
      ["C:\\Program Files\\nodejs\\npx.cmd", "-p", "mcp-pkg", "srv"],
    ],
    // A shell's script is redacted word by word: the server's name after the assignment stays.
    [
      ["C:\\Windows\\System32\\cmd.exe", "/c", "MY_PASSWORD=hunter2 srv"],
      ["C:\\Windows\\System32\\cmd.exe", "/c", `MY_PASSWORD=${R}`],
      ["C:\\Windows\\System32\\cmd.exe", "/c", `MY_PASSWORD=${R} srv`],
    ],
    [
      ["pwsh.exe", "-Command", "MY_PASSWORD=hunter2 srv"],
      ["pwsh.exe", "-Command", `MY_PASSWORD=${R}`],
      ["pwsh.exe", "-Command", `MY_PASSWORD=${R} srv`],
    ],
    // POSIX shapes stay what they are on Windows too.
    [
      ["sh", "-c", "MY_PASSWORD=hunter2 srv -p /data"],
      ["sh", "-c", `MY_PASSWORD=${R} srv -p /data`],
      ["sh", "-c", `MY_PASSWORD=${R} srv -p /data`],
    ],
  ];
  const got = rows.map(([argv]) => [
    argv,
    redactArgv(argv, "linux").argv,
    redactArgv(argv, "darwin").argv,
    redactArgv(argv, "win32").argv,
  ]);
  expect(got).toEqual(rows.map(([argv, posix, win]) => [argv, posix, posix, win]));
});

test("signals: passed on as they came on linux and macOS; on Windows the server has the first itself, a second (or an early one) ends it", () => {
  const rows = (["linux", "darwin", "win32"] as const).map((os) => {
    const w = wrapSignals(os);
    return {
      os,
      wrapTakes: w.take,
      sendsFirst: w.take.map((s) => w.send(s, true)),
      sendsThen: w.take.map((s) => w.send(s, false)),
      proxyStops: stopSignals(os),
    };
  });
  expect(rows).toEqual([
    {
      os: "linux",
      wrapTakes: ["SIGINT", "SIGTERM", "SIGHUP"],
      sendsFirst: ["SIGINT", "SIGTERM", "SIGHUP"],
      sendsThen: ["SIGINT", "SIGTERM", "SIGHUP"],
      proxyStops: ["SIGINT", "SIGTERM"],
    },
    {
      os: "darwin",
      wrapTakes: ["SIGINT", "SIGTERM", "SIGHUP"],
      sendsFirst: ["SIGINT", "SIGTERM", "SIGHUP"],
      sendsThen: ["SIGINT", "SIGTERM", "SIGHUP"],
      proxyStops: ["SIGINT", "SIGTERM"],
    },
    {
      os: "win32",
      wrapTakes: ["SIGINT", "SIGBREAK", "SIGHUP"],
      sendsFirst: [null, null, null],
      sendsThen: ["SIGTERM", "SIGTERM", "SIGTERM"],
      proxyStops: ["SIGINT", "SIGBREAK", "SIGHUP"],
    },
  ]);
});

test("a thread yields to the others on linux only (macOS and Windows have no per-thread nice value to set)", async () => {
  const { Worker } = await import("node:worker_threads");
  const rows: Record<string, string> = {};
  for (const platform of ["linux", "darwin", "win32"] as const) {
    const w = new Worker(join(import.meta.dir, "..", "fixtures", "yield-thread.ts"), { workerData: { platform } });
    const said = await new Promise<{ thread: number; process: number }>((resolve) => w.once("message", resolve));
    await w.terminate();
    rows[platform] =
      said.thread === said.process ? "kept" : said.thread === Math.min(19, said.process + 10) ? "lowered" : "?";
  }
  expect(rows).toEqual({ linux: "lowered", darwin: "kept", win32: "kept" });
});

test("the npm launcher passes signals on to the executable on linux and macOS, none on Windows", () => {
  const plan = launcherSignals as (platform: NodeJS.Platform) => { pass: string[]; ignore: string[] };
  expect((["linux", "darwin", "win32"] as const).map((os) => [os, plan(os)])).toEqual([
    ["linux", { pass: ["SIGTERM", "SIGHUP"], ignore: ["SIGINT"] }],
    ["darwin", { pass: ["SIGTERM", "SIGHUP"], ignore: ["SIGINT"] }],
    ["win32", { pass: [], ignore: ["SIGINT", "SIGBREAK", "SIGHUP"] }],
  ]);
});

test("the server's environment: seam's secret removed in any spelling on Windows, where names ignore case", () => {
  const env = { Commitlayer_Api_Key: "k1", COMMITLAYER_API_KEY: "k2", db_password: "p", Path: "C:\\bin", KEEP: "1" };
  const rows = (["linux", "darwin", "win32"] as const).map((os) => [
    os,
    Object.keys(serverEnv(env, { strip: ["DB_PASSWORD"] }, os)),
    Object.keys(serverEnv(env, { strip: ["DB_PASSWORD"], pass: ["commitlayer_api_key"] }, os)),
  ]);
  expect(rows).toEqual([
    [
      "linux",
      ["Commitlayer_Api_Key", "db_password", "Path", "KEEP"],
      ["Commitlayer_Api_Key", "db_password", "Path", "KEEP"],
    ],
    [
      "darwin",
      ["Commitlayer_Api_Key", "db_password", "Path", "KEEP"],
      ["Commitlayer_Api_Key", "db_password", "Path", "KEEP"],
    ],
    ["win32", ["Path", "KEEP"], ["Commitlayer_Api_Key", "COMMITLAYER_API_KEY", "Path", "KEEP"]],
  ]);
});

test("user ids: none on Windows, whatever the runtime offers; so no lock file is another user's there", async () => {
  expect([userId("linux"), userId("darwin"), userId("win32")]).toEqual([
    process.getuid!(),
    process.getuid!(),
    undefined,
  ]);
  // Only root can give a file to another user here.
  if (process.getuid!() !== 0) return;
  const lock = join(dir, "foreign.lock");
  writeFileSync(lock, `${JSON.stringify({ pid: 2, host: "h", since: 1, proc: "p" })}\n`);
  chownSync(lock, 4242, 4242);
  expect([(await readLockFile(lock, "linux"))?.kind, (await readLockFile(lock, "win32"))?.kind]).toEqual([
    "alien",
    "file",
  ]);
});

/**
 * runWrap as on `platform`, with a runtime made for the test (as in
 * test/e2e/wrap-core.test.ts): `early` signals come while the server starts,
 * `later` ones one by one once it runs. What was listened for, what the
 * server was sent, and how the session ended.
 */
async function wrapUnder(platform: NodeJS.Platform, early: string[], later: string[]) {
  const ledger = join(tempDir("seam-platforms-wrap-"), "l.jsonl");
  const handlers: ((signal: string) => void)[] = [];
  const taken: string[][] = [];
  const killed: string[] = [];
  let exit!: (s: ExitStatus) => void;
  const nullSink: ByteSink = { write: () => {}, end: async () => {} };
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
  const fire = (sig: string) => {
    for (const h of [...handlers]) h(sig);
  };
  const rt: Runtime = {
    name: "test",
    async spawn() {
      for (const sig of early) fire(sig);
      later.forEach((sig, i) => setTimeout(() => fire(sig), 20 * (i + 1)));
      // Nothing sent: the server stops on its own (it had the console's signal itself).
      setTimeout(() => exit({ code: 0, signal: null }), 20 * (later.length + 2));
      return { ok: true, child };
    },
    stdin: () => ({ [Symbol.asyncIterator]: () => ({ next: () => new Promise(() => {}) }) }),
    stdout: () => ({ ...nullSink, broken: false }),
    openAppend,
    onSignals(signals, handler) {
      taken.push([...signals]);
      handlers.push(handler);
      return () => handlers.splice(handlers.indexOf(handler), 1);
    },
    selfArgv: () => [],
    reclaim: () => {},
  };
  const o = wrapOptions(ledger);
  const code = await runWrap(
    rt,
    o,
    createLog(() => {}),
    platform,
  );
  const end = ledgerRows(ledger).at(-1)!;
  return { taken: taken[0], killed, code, reason: getField(end, "reason") };
}

test("seam wrap's signals as run: each passed on at once on linux; on Windows the first left to the server", async () => {
  expect(await wrapUnder("linux", [], ["SIGINT"])).toEqual({
    taken: ["SIGINT", "SIGTERM", "SIGHUP"],
    killed: ["SIGINT"],
    code: 130,
    reason: "signal:SIGINT",
  });
  // The server stops by itself after the first.
  expect(await wrapUnder("win32", [], ["SIGINT"])).toEqual({
    taken: ["SIGINT", "SIGBREAK", "SIGHUP"],
    killed: [],
    code: 0,
    reason: "signal:SIGINT",
  });
  // A second ends it.
  expect(await wrapUnder("win32", [], ["SIGBREAK", "SIGINT"])).toEqual({
    taken: ["SIGINT", "SIGBREAK", "SIGHUP"],
    killed: ["SIGTERM"],
    code: 143,
    reason: "signal:SIGBREAK",
  });
  // One that came before the server ran: the server never had it.
  expect(await wrapUnder("win32", ["SIGHUP"], [])).toEqual({
    taken: ["SIGINT", "SIGBREAK", "SIGHUP"],
    killed: ["SIGTERM"],
    code: 143,
    reason: "signal:SIGHUP",
  });
});
