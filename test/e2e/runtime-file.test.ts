import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { appendFile } from "node:fs/promises";
import { join } from "node:path";
import { openAppend } from "../../src/runtime/file.ts";
import { runAsNobody } from "../helpers/as-nobody.ts";
import { tempDir } from "../helpers/proc.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const enc = new TextEncoder();
const dec = new TextDecoder();

function canMountTmpfs(): boolean {
  if (process.getuid?.() !== 0) return false;
  const dir = tmp();
  const ok = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", dir]).exitCode === 0;
  if (ok) Bun.spawnSync(["umount", dir]);
  return ok;
}

/** A fresh 16 KiB tmpfs, mounted on a directory inside a temporary one. */
function smallTmpfs(): string {
  const dir = join(tmp(), "small");
  mkdirSync(dir);
  if (Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", dir]).exitCode !== 0)
    throw new Error("cannot mount a tmpfs");
  return dir;
}

function tmp(): string {
  return tempDir("seam-file-");
}

async function errorCode(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "resolved";
  } catch (e) {
    return String((e as NodeJS.ErrnoException).code);
  }
}

describe("AppendFile", () => {
  test("creates missing parent directories and the file, mode 0600", async () => {
    const path = join(tmp(), "a", "b", "ledger.jsonl");
    const f = await openAppend(path);
    expect(await f.size()).toBe(0);
    await f.close();
    expect(existsSync(path)).toBe(true);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  test("appends after existing bytes and after bytes another descriptor appended meanwhile", async () => {
    const path = join(tmp(), "l.jsonl");
    writeFileSync(path, "old\n");
    const f = await openAppend(path);
    await f.write(enc.encode("one\n"));
    await appendFile(path, "other\n");
    await f.write(enc.encode("two\n"));
    expect(await f.size()).toBe(18);
    await f.close();
    expect(readFileSync(path, "utf8")).toBe("old\none\nother\ntwo\n");
  });

  test("a write resolves only once every byte is in the file (16 MiB in one write)", async () => {
    const path = join(tmp(), "big");
    const f = await openAppend(path);
    const big = new Uint8Array(16 * 1024 * 1024);
    for (let i = 0; i < big.length; i++) big[i] = i % 251;
    await f.write(big.subarray(1)); // an offset view, not a whole buffer
    expect(statSync(path).size).toBe(big.length - 1);
    expect(await f.size()).toBe(big.length - 1);
    const back = await f.readAt(5_000_000, 7);
    expect([...back]).toEqual([...big.subarray(5_000_001, 5_000_008)]);
    await f.sync();
    await f.close();
  });

  test("readAt reads exact ranges and returns short at end of file", async () => {
    const path = join(tmp(), "r");
    writeFileSync(path, "0123456789");
    const f = await openAppend(path);
    expect(dec.decode(await f.readAt(2, 3))).toBe("234");
    expect(dec.decode(await f.readAt(8, 10))).toBe("89");
    expect((await f.readAt(10, 4)).length).toBe(0);
    await f.close();
  });

  test("a directory as the file rejects with EISDIR", async () => {
    const dir = tmp();
    expect(await errorCode(openAppend(dir))).toBe("EISDIR");
  });

  test("a regular file as a parent directory rejects", async () => {
    const dir = tmp();
    writeFileSync(join(dir, "plain"), "");
    expect(await errorCode(openAppend(join(dir, "plain", "l.jsonl")))).toMatch(/^(ENOTDIR|EEXIST)$/);
  });

  test("a full disk rejects the write with ENOSPC (/dev/full, a device: only when told to take it)", async () => {
    expect(await errorCode(openAppend("/dev/full"))).toBe("EUNSAFE");
    const f = await openAppend("/dev/full", { allowForeign: true });
    expect(await errorCode(f.write(enc.encode("row\n")))).toBe("ENOSPC");
    await f.close();
  });

  // A file system that fills part way through a write: a small tmpfs (needs root and mount; skipped elsewhere).
  test.skipIf(!canMountTmpfs())(
    "a file system that fills mid-write rejects with ENOSPC, prints nothing, and size() counts what landed",
    async () => {
      const dir = smallTmpfs();
      try {
        const path = join(dir, "l.jsonl");
        const probe = `import { openAppend } from ${JSON.stringify(`${ROOT}src/runtime/file.ts`)};
const f = await openAppend(${JSON.stringify(path)});
let ok = 0, err = "none";
for (let i = 0; i < 20; i++) {
  try { await f.write(new Uint8Array(8000).fill(120)); ok += 8000; } catch (e) { err = e.code; break; }
}
console.log(JSON.stringify({ ok, err, size: await f.size() }));
await f.close();`;
        writeFileSync(join(dir, "..", "probe.ts"), probe);
        const p = Bun.spawnSync([process.execPath, join(dir, "..", "probe.ts")]);
        expect(p.stderr.toString()).toBe("");
        const r = JSON.parse(p.stdout.toString());
        expect(r.err).toBe("ENOSPC");
        expect(r.size).toBeGreaterThanOrEqual(r.ok);
        expect(r.size).toBeLessThan(r.ok + 8000);
      } finally {
        Bun.spawnSync(["umount", dir]);
      }
    },
  );

  test("a read-only directory rejects with EACCES", async () => {
    const dir = tmp();
    const ro = join(dir, "ro");
    mkdirSync(ro);
    chmodSync(ro, 0o555);
    const path = join(ro, "l.jsonl");
    if (process.getuid?.() !== 0) {
      expect(await errorCode(openAppend(path))).toBe("EACCES");
      return;
    }
    // root ignores permissions: try as nobody instead
    const code = `import { openAppend } from ${JSON.stringify(`${ROOT}src/runtime/file.ts`)};
      try { await openAppend(${JSON.stringify(path)}); console.log("resolved"); } catch (e) { console.log(e.code); }`;
    const p = runAsNobody(code);
    expect(p.stdout.trim()).toBe("EACCES");
  });

  test("a write cut short by a file-size limit rejects, and a later write never replays its bytes", () => {
    const path = join(tmp(), "lim");
    const p = Bun.spawnSync([
      "bash",
      "-c",
      `trap '' XFSZ; ulimit -f 1; exec "$0" "$@"`,
      process.execPath,
      `${ROOT}test/fixtures/append-file-probe.ts`,
      path,
    ]);
    expect(p.stderr.toString()).toBe("");
    expect(JSON.parse(p.stdout.toString())).toEqual({
      steps: ["ok 1000", "EFBIG 1024", "ok 5"],
      content: "ccccc",
    });
  });
});

test("file.ts under real Node (bundled): the same short-write behaviour", async () => {
  const out = join(tmp(), "probe.mjs");
  const built = await Bun.build({
    entrypoints: [`${ROOT}test/fixtures/append-file-probe.ts`],
    target: "node",
    format: "esm",
  });
  expect(built.success).toBe(true);
  writeFileSync(out, await built.outputs[0]!.text());
  const path = join(tmp(), "lim");
  const p = Bun.spawnSync(["bash", "-c", `trap '' XFSZ; ulimit -f 1; exec node "$0" "$1"`, out, path]);
  expect(p.stderr.toString()).toBe("");
  expect(JSON.parse(p.stdout.toString())).toEqual({ steps: ["ok 1000", "EFBIG 1024", "ok 5"], content: "ccccc" });
});
