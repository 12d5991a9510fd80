/**
 * A ledger in a sticky directory where another user has planted both the
 * lock beside the ledger and this user's lock directory in temp: three
 * writers of this user (nobody, here; the planter is root) still take turns,
 * under the lock directory no other user can plant (~/.cache/seam/locks),
 * and the chain verifies. When no lock directory of its own can be made
 * either, a writer under --fail-closed writes nothing rather than append
 * unlocked.
 */
import { expect, test } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { verifyBytes } from "../../src/verify/verify-ledger.ts";
import { runAsNobody } from "../helpers/as-nobody.ts";
import { tempDir } from "../helpers/proc.ts";

const WRITER = new URL("../fixtures/ledger-writer.ts", import.meta.url).pathname;
const ROWS = 300;

test.skipIf(process.getuid?.() !== 0)(
  "three writers under planted locks take turns: no chain mismatch, and the warning says which lock they use",
  () => {
    const dir = tempDir("seam-sticky-");
    chmodSync(dir, 0o1777);
    writeFileSync(join(dir, "l.jsonl.lock"), "planted"); // root's, in a sticky directory: nobody cannot remove it
    const temp = join(dir, "tmp");
    mkdirSync(temp);
    chmodSync(temp, 0o1777);
    mkdirSync(join(temp, "seam-65534"), { mode: 0o700 }); // nobody's lock directory in temp, taken by root first
    const ledger = join(dir, "l.jsonl");
    const r = runAsNobody(
      `import { mkdtempSync } from "node:fs";
import { join } from "node:path";
const args = process.argv.slice(2);
if (args[0] === "child") {
  process.argv.splice(2, 1);
  await import(${JSON.stringify(WRITER)});
} else {
  const [path, temp, rows] = args;
  const home = mkdtempSync(join(temp, "home-"));
  const kids = [1, 2, 3].map((i) =>
    Bun.spawn([process.execPath, process.argv[1], "child", path, "s" + i, rows], {
      env: { ...process.env, HOME: home, TMPDIR: temp, XDG_RUNTIME_DIR: "" },
      stdout: "pipe",
      stderr: "pipe",
    }),
  );
  const outs = await Promise.all(kids.map(async (k) => ({ out: await new Response(k.stdout).text(), err: await new Response(k.stderr).text() })));
  console.log(JSON.stringify(outs));
}`,
      [ledger, temp, String(ROWS)],
    );
    expect(r.stderr).toBe("");
    const outs = JSON.parse(r.stdout) as { out: string; err: string }[];
    const report = verifyBytes(new Uint8Array(readFileSync(ledger)));
    expect({ breaks: report.breaks, kinds: report.break_kinds, rows: report.rows }).toEqual({
      breaks: 0,
      kinds: {},
      rows: 3 * (ROWS + 2),
    });
    for (const o of outs) {
      expect(o.err).toBe("");
      const w = JSON.parse(o.out) as { written: number; warnings: string[] };
      expect(w.written).toBe(ROWS + 2);
      expect(w.warnings).toEqual([expect.stringMatching(/appending under .*\.cache\/seam\/locks\/\d+-\d+\.lock only/)]);
    }
    expect(readFileSync(join(dir, "l.jsonl.lock"), "utf8")).toBe("planted");
  },
  120_000,
);

test.skipIf(process.getuid?.() !== 0)(
  "no lock to take at all: a --fail-closed writer appends nothing and says so; another appends unlocked",
  () => {
    const dir = tempDir("seam-sticky-");
    chmodSync(dir, 0o1777);
    writeFileSync(join(dir, "l.jsonl.lock"), "planted");
    const temp = join(dir, "tmp");
    mkdirSync(temp);
    chmodSync(temp, 0o1777);
    mkdirSync(join(temp, "seam-65534"), { mode: 0o700 });
    const ledger = join(dir, "l.jsonl");
    // nobody's HOME is a directory it cannot write, and there is no XDG_RUNTIME_DIR: no lock directory of its own.
    const run = (mode: string) =>
      runAsNobody(
        `if (process.argv[2] === "child") {
  process.argv.splice(2, 1);
  await import(${JSON.stringify(WRITER)});
} else {
  const kid = Bun.spawn([process.execPath, process.argv[1], "child", ...process.argv.slice(2)], {
    env: { ...process.env, HOME: "/", TMPDIR: ${JSON.stringify(temp)}, XDG_RUNTIME_DIR: "" },
    stdout: "pipe",
    stderr: "pipe",
  });
  console.log(await new Response(kid.stdout).text());
  console.error(await new Response(kid.stderr).text());
}`,
        [ledger, "s", "5", "batch", mode],
      );
    const closed = run("locked-only");
    const w = JSON.parse(closed.stdout) as { written: number; unlogged: number; warnings: string[] };
    expect([w.written, w.unlogged]).toEqual([0, 7]);
    expect(w.warnings).toContainEqual(expect.stringContaining("--fail-closed appends only under one"));
    expect(readFileSync(ledger, "utf8")).toBe("");
    const open = JSON.parse(run("unlocked").stdout) as { written: number; warnings: string[] };
    expect(open.written).toBe(7);
    expect(open.warnings).toContainEqual(expect.stringContaining("appending without it"));
  },
  120_000,
);
