import { expect, test } from "bun:test";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { acquireLock, IMPLAUSIBLE_GRACE_MS, LockTimeoutError } from "../../src/ledger/lock.ts";
import { runAsNobody } from "../helpers/as-nobody.ts";
import { tempDir } from "../helpers/proc.ts";

function lockPath(): string {
  return join(tempDir("seam-lock-"), "l.jsonl.lock");
}

/** The pid of a process that has exited. */
function deadPid(): number {
  const p = Bun.spawnSync(["sh", "-c", "echo $$"]);
  return Number(p.stdout.toString().trim());
}

const holder = (pid: number, since: number, host = hostname(), proc = "other-process") =>
  `${JSON.stringify({ pid, host, since, proc })}\n`;

test("the lock file names its holder and is gone after release; nothing else is left beside it", async () => {
  const path = lockPath();
  const release = await acquireLock(path, { pid: 4242 });
  const h = JSON.parse(readFileSync(path, "utf8"));
  expect(Object.keys(h)).toEqual(["pid", "host", "since", "proc"]);
  expect([h.pid, h.host]).toEqual([4242, hostname()]);
  await release();
  expect(readdirSync(join(path, ".."))).toEqual([]);
});

/** Runs `takers` concurrent lock-hold-release rounds; returns the most holders ever inside at once. */
async function mostInside(path: string, takers: number, holdMs: number): Promise<number> {
  let inside = 0;
  let most = 0;
  await Promise.all(
    Array.from({ length: takers }, async () => {
      const release = await acquireLock(path, { pid: process.pid });
      inside++;
      most = Math.max(most, inside);
      await Bun.sleep(holdMs);
      inside--;
      await release();
    }),
  );
  return most;
}

test("mutual exclusion: 50 concurrent takers never overlap", async () => {
  expect(await mostInside(lockPath(), 50, 1)).toBe(1);
});

test("a lock left by a dead process on this host is broken at once", async () => {
  const path = lockPath();
  writeFileSync(path, holder(deadPid(), Date.now()));
  const t0 = performance.now();
  const release = await acquireLock(path, { pid: process.pid });
  expect(performance.now() - t0).toBeLessThan(1000);
  expect(JSON.parse(readFileSync(path, "utf8")).pid).toBe(process.pid);
  await release();
});

test("a lock left by an earlier process with our own pid (another proc id) is stale", async () => {
  const path = lockPath();
  writeFileSync(path, holder(process.pid, Date.now()));
  const release = await acquireLock(path, { pid: process.pid, timeoutMs: 1000 });
  await release();
});

test("a live holder is waited for, not broken", async () => {
  const path = lockPath();
  const sleeper = Bun.spawn(["sleep", "10"]);
  writeFileSync(path, holder(sleeper.pid, Date.now()));
  let got = false;
  const taking = acquireLock(path, { pid: process.pid }).then((r) => {
    got = true;
    return r;
  });
  await Bun.sleep(200);
  expect(got).toBe(false);
  expect(JSON.parse(readFileSync(path, "utf8")).pid).toBe(sleeper.pid);
  await Bun.$`rm ${path}`; // the holder releases
  const release = await taking;
  expect(got).toBe(true);
  await release();
  sleeper.kill();
});

test("a lock older than staleMs is broken whoever holds it (another host)", async () => {
  const path = lockPath();
  writeFileSync(path, holder(1, Date.now() - 10_000, "elsewhere"));
  const release = await acquireLock(path, { pid: process.pid, staleMs: 5_000 });
  await release();
  // and a fresh one from another host is waited for until the timeout
  writeFileSync(path, holder(1, Date.now(), "elsewhere"));
  await expect(acquireLock(path, { pid: process.pid, staleMs: 5_000, timeoutMs: 100 })).rejects.toBeInstanceOf(
    LockTimeoutError,
  );
});

test("an unreadable-as-ours lock (foreign content) is judged by its age", async () => {
  const path = lockPath();
  writeFileSync(path, "");
  const old = (Date.now() - 10_000) / 1000;
  utimesSync(path, old, old);
  const release = await acquireLock(path, { pid: process.pid, staleMs: 5_000 });
  await release();
});

test("many waiters on one stale lock: exactly one breaks it, and they still never overlap", async () => {
  const path = lockPath();
  writeFileSync(path, holder(deadPid(), Date.now()));
  expect(await mostInside(path, 20, 2)).toBe(1);
  expect(existsSync(path)).toBe(false);
});

test("a directory where the lock cannot be created rejects with the error", async () => {
  await expect(acquireLock("/proc/seam-no-such/l.lock", { pid: 1 })).rejects.toMatchObject({ code: "ENOENT" });
});

// ---- what a neighbour with write access to the directory can plant ----

const plants: [string, (path: string) => void][] = [
  ["a FIFO (reading it would block)", (p) => Bun.spawnSync(["mkfifo", p])],
  ["a symlink to /dev/zero (reading it would never end)", (p) => symlinkSync("/dev/zero", p)],
  ["a symlink to a file of ours", (p) => symlinkSync(p.replace(/lock$/, "other"), p)],
  ["a directory", (p) => mkdirSync(p)],
  ["a lock-shaped file larger than 4 KiB", (p) => writeFileSync(p, holder(process.pid + 1, Date.now()).padEnd(10_000))],
];
test.each(plants)("a lock planted as %s is no lock: taken at once", async (_, plant) => {
  const path = lockPath();
  writeFileSync(path.replace(/lock$/, "other"), "keep me\n");
  plant(path);
  const t0 = performance.now();
  const release = await acquireLock(path, { pid: process.pid, timeoutMs: 5_000 });
  expect(performance.now() - t0).toBeLessThan(2_000);
  expect(JSON.parse(readFileSync(path, "utf8")).pid).toBe(process.pid);
  await release();
  expect(readFileSync(path.replace(/lock$/, "other"), "utf8")).toBe("keep me\n");
});

test("a planted break lock (a directory with a file in it) cannot stall a taker: it rejects at once", async () => {
  const path = lockPath();
  writeFileSync(path, "\0not a lock");
  mkdirSync(`${path}.break`);
  writeFileSync(`${path}.break/x`, "");
  const t0 = performance.now();
  await expect(acquireLock(path, { pid: process.pid, timeoutMs: 60_000 })).rejects.toBeInstanceOf(LockTimeoutError);
  expect(performance.now() - t0).toBeLessThan(IMPLAUSIBLE_GRACE_MS + 2_000);
});

test.each([
  ["pid 1 on this host", () => holder(1, Date.now())],
  ["a since a year ahead", () => holder(process.pid + 100_000, Date.now() + 365 * 86_400_000)],
  ["another host, a since a year ahead", () => holder(4242, Date.now() + 365 * 86_400_000, "elsewhere")],
  ["not JSON", () => "\0\0\0garbage"],
])("implausible content (%s) is stale after the short grace, not after staleMs", async (_, content) => {
  const path = lockPath();
  writeFileSync(path, content());
  const t0 = performance.now();
  const release = await acquireLock(path, { pid: process.pid, timeoutMs: 10_000 });
  const took = performance.now() - t0;
  expect(took).toBeGreaterThanOrEqual(IMPLAUSIBLE_GRACE_MS - 50);
  expect(took).toBeLessThan(IMPLAUSIBLE_GRACE_MS + 2_000);
  await release();
});

test("a stale lock that cannot be removed (another user's, in a sticky directory) rejects at once, not after the timeout", () => {
  const dir = tempDir("seam-lock-");
  chmodSync(dir, 0o1777);
  const path = join(dir, "l.jsonl.lock");
  writeFileSync(path, "planted"); // root's file; the taker below is nobody
  const lock = new URL("../../src/ledger/lock.ts", import.meta.url).pathname;
  const r = runAsNobody(`import { acquireLock } from ${JSON.stringify(lock)};
const t0 = performance.now();
try {
  await acquireLock(${JSON.stringify(path)}, { pid: process.pid, timeoutMs: 60_000 });
  console.log(JSON.stringify({ took: performance.now() - t0, error: null }));
} catch (e) {
  console.log(JSON.stringify({ took: performance.now() - t0, error: e.code }));
}`);
  const out = JSON.parse(r.stdout);
  expect(out.error).toBe("ELOCKTIMEOUT");
  expect(out.took).toBeLessThan(5_000);
  expect(readFileSync(path, "utf8")).toBe("planted");
});

test("a fresh lock naming a live process that does not have the ledger open is not waited for; one that has it is", async () => {
  const path = lockPath();
  const ledger = path.slice(0, -".lock".length);
  writeFileSync(ledger, "");
  // Some live process of this user, not writing the ledger: a forged holder, or a pid reused since.
  const stranger = Bun.spawn(["sleep", "30"]);
  // A live process with the ledger open, as a writer has while it appends.
  const writer = Bun.spawn(["sh", "-c", 'exec 3>>"$0"; exec sleep 30', ledger]);
  try {
    await Bun.sleep(200);
    writeFileSync(path, holder(stranger.pid, Date.now()));
    const t0 = performance.now();
    const release = await acquireLock(path, { pid: process.pid, timeoutMs: 10_000 });
    expect(performance.now() - t0).toBeLessThan(1_000);
    await release();
    writeFileSync(path, holder(writer.pid, Date.now()));
    const t1 = performance.now();
    expect(await acquireLock(path, { pid: process.pid, timeoutMs: 1_500 }).catch((e) => e)).toBeInstanceOf(
      LockTimeoutError,
    );
    expect(performance.now() - t1).toBeGreaterThanOrEqual(1_400);
  } finally {
    stranger.kill();
    writer.kill();
  }
});

test("the per-user lock (named by device and inode) judges its holder by the ledger it names", async () => {
  const dir = tempDir("seam-lock-");
  const ledger = join(dir, "l.jsonl");
  writeFileSync(ledger, "");
  const st = statSync(ledger, { bigint: true });
  const locks = tempDir("seam-locks-");
  const path = join(locks, `${st.dev}-${st.ino}.lock`);
  const stranger = Bun.spawn(["sleep", "30"]);
  try {
    await Bun.sleep(100);
    writeFileSync(path, holder(stranger.pid, Date.now()));
    const t0 = performance.now();
    const release = await acquireLock(path, { pid: process.pid, timeoutMs: 10_000 });
    expect(performance.now() - t0).toBeLessThan(1_000);
    await release();
  } finally {
    stranger.kill();
  }
});
