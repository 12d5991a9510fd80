import { expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { acquireLock, LockTimeoutError } from "../src/ledger/lock.ts";

function lockPath(): string {
  return join(mkdtempSync(join(tmpdir(), "seam-lock-")), "l.jsonl.lock");
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
