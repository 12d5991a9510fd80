/**
 * The release folder's checks: `seam verify-release` over a folder made and
 * then damaged one way per row, the header reader over real and spec-built
 * headers, and the target table. When dist/release exists (after `npm run
 * build:release`), each executable there is checked against its target.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { generateKey, newSigner, signNote } from "../../src/checkpoint/note.ts";
import { executableKind } from "../../src/release/headers.ts";
import { formatSums, NOTE_FILE, parseSums, SUMS_FILE, sha256File } from "../../src/release/sums.ts";
import { RELEASE_TARGETS, targetFor } from "../../src/release/targets.ts";
import { built, ROOT, runCli, VIAS } from "../helpers/cli.ts";
import { tempDir } from "../helpers/proc.ts";

const KEY = generateKey("seam-release-test", new Uint8Array(32).fill(3));
const OTHER = generateKey("seam-release-test", new Uint8Array(32).fill(4));

/** A release folder of two files, signed by `key`; `damage` changes it before the check. */
function makeRelease(key = KEY.privateKey): string {
  const dir = tempDir("seam-release-");
  writeFileSync(join(dir, "seam-linux-x64"), "an executable\n");
  writeFileSync(join(dir, "seam-windows-x64.exe"), "another\n");
  const sums = formatSums(
    ["seam-linux-x64", "seam-windows-x64.exe"].map((name) => ({ name, sha256: sha256File(join(dir, name)) })),
  );
  writeFileSync(join(dir, SUMS_FILE), sums);
  writeFileSync(join(dir, NOTE_FILE), signNote(sums, [newSigner(key)]));
  return dir;
}

const resign = (dir: string, sums: string) => {
  writeFileSync(join(dir, SUMS_FILE), sums);
  writeFileSync(join(dir, NOTE_FILE), signNote(sums, [newSigner(KEY.privateKey)]));
};

const CASES: { name: string; damage: (dir: string) => void; kinds: string[]; checked: number }[] = [
  { name: "untouched", damage: () => {}, kinds: [], checked: 2 },
  {
    name: "an executable changed",
    damage: (d) => writeFileSync(join(d, "seam-linux-x64"), "a swapped executable\n"),
    kinds: ["file-changed"],
    checked: 1,
  },
  {
    name: "an executable gone",
    damage: (d) => rmSync(join(d, "seam-windows-x64.exe")),
    kinds: ["file-missing"],
    checked: 1,
  },
  {
    name: "SHA256SUMS rewritten to match a swap, note kept",
    damage: (d) => {
      writeFileSync(join(d, "seam-linux-x64"), "a swapped executable\n");
      writeFileSync(
        join(d, SUMS_FILE),
        formatSums([{ name: "seam-linux-x64", sha256: sha256File(join(d, "seam-linux-x64")) }]),
      );
    },
    kinds: ["sums-mismatch"],
    checked: 0,
  },
  {
    name: "signed by another key",
    damage: (d) => {
      const sums = readFileSync(join(d, SUMS_FILE), "utf8");
      writeFileSync(join(d, NOTE_FILE), signNote(sums, [newSigner(OTHER.privateKey)]));
    },
    kinds: ["note-unsigned"],
    checked: 0,
  },
  { name: "no note", damage: (d) => rmSync(join(d, NOTE_FILE)), kinds: ["note-unreadable"], checked: 0 },
  {
    name: "a signed line naming a file outside the folder",
    damage: (d) => resign(d, `${"0".repeat(64)}  ../seam-linux-x64\n`),
    kinds: ["sums-malformed"],
    checked: 0,
  },
];

describe("seam verify-release", () => {
  for (const via of VIAS.filter((v) => v !== "exe")) {
    for (const c of CASES) {
      test.skipIf(!built(via))(`${via}: ${c.name}`, async () => {
        const dir = makeRelease();
        try {
          c.damage(dir);
          const r = await runCli(via, ["verify-release", dir, "--key", KEY.verifierKey, "--json"]);
          const report = JSON.parse(r.stdout.toString());
          expect(report.findings.map((f: { kind: string }) => f.kind)).toEqual(c.kinds);
          expect(report.checked.length).toBe(c.checked);
          expect(r.code).toBe(c.kinds.length === 0 ? 0 : 1);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      });
    }
  }

  test("--key is required", async () => {
    const r = await runCli("bun", ["verify-release", "."]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--key is required");
  });
});

describe("SEAM_SELFTEST_EMULATOR", () => {
  // `env` runs its argument unchanged: a stand-in emulator that works anywhere.
  for (const [emulator, ok] of [
    ["env", true],
    ["seam-no-such-emulator", false],
  ] as const)
    test(`seam demo starts its children under ${emulator}`, async () => {
      const dir = tempDir("seam-emulator-");
      try {
        const r = await runCli("bun", ["demo", "--ledger", join(dir, "demo.jsonl")], {
          cwd: dir,
          env: { SEAM_SELFTEST_EMULATOR: emulator },
        });
        expect(r.code === 0).toBe(ok);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
});

describe("SHA256SUMS", () => {
  test("round trip, sorted by name", () => {
    const entries = [
      { name: "b", sha256: "b".repeat(64) },
      { name: "a.exe", sha256: "a".repeat(64) },
    ];
    const text = formatSums(entries);
    expect(text).toBe(`${"a".repeat(64)}  a.exe\n${"b".repeat(64)}  b\n`);
    expect(parseSums(text)).toEqual({ entries: [entries[1]!, entries[0]!] });
  });
  for (const [bad, line] of [
    ["", 1],
    [`${"a".repeat(64)}  a`, 1],
    [`${"a".repeat(64)}  a\n${"A".repeat(64)}  b\n`, 2],
    [`${"a".repeat(64)}  a\n${"a".repeat(64)}  a\n`, 2],
    [`${"a".repeat(64)}  sub/a\n`, 1],
    [`${"a".repeat(64)}  .hidden\n`, 1],
    [`${"a".repeat(64)} *a\n`, 1],
  ] as const)
    test(`refuses ${JSON.stringify(bad.slice(-12))}`, () => expect(parseSums(bad)).toEqual({ badLine: line }));
});

/** A 64-bit Mach-O header's first bytes: magic MH_MAGIC_64, then cputype. */
function machO(cpu: number): Uint8Array {
  const b = new Uint8Array(32);
  const v = new DataView(b.buffer);
  v.setUint32(0, 0xfeedfacf, true);
  v.setUint32(4, cpu, true);
  return b;
}

/** "MZ", e_lfanew at 0x3c pointing at "PE\0\0" and the COFF machine field. */
function pe(machine: number): Uint8Array {
  const b = new Uint8Array(0x100);
  const v = new DataView(b.buffer);
  b.set([0x4d, 0x5a]);
  v.setUint32(0x3c, 0x80, true);
  v.setUint32(0x80, 0x00004550, true);
  v.setUint16(0x84, machine, true);
  return b;
}

describe("executable headers", () => {
  test("the running Bun: ELF, this machine's CPU, a program interpreter", () => {
    const kind = executableKind(readFileSync(process.execPath).subarray(0, 1 << 16));
    expect(kind?.format).toBe(process.platform === "darwin" ? "macho" : process.platform === "win32" ? "pe" : "elf");
    expect(kind?.arch).toBe(process.arch as "x64" | "arm64");
  });
  const rows: [string, Uint8Array, unknown][] = [
    ["Mach-O x86_64", machO(0x01000007), { format: "macho", arch: "x64" }],
    ["Mach-O arm64", machO(0x0100000c), { format: "macho", arch: "arm64" }],
    ["PE amd64", pe(0x8664), { format: "pe", arch: "x64" }],
    ["PE arm64", pe(0xaa64), { format: "pe", arch: "arm64" }],
    ["MZ without PE", new Uint8Array(0x100).fill(0).map((x, i) => (i === 0 ? 0x4d : i === 1 ? 0x5a : x)), null],
    ["a script", new TextEncoder().encode("#!/usr/bin/env node\nconsole.log(1)\n".padEnd(80)), null],
    ["truncated ELF", new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]), null],
  ];
  for (const [name, bytes, want] of rows) test(name, () => expect(executableKind(bytes)).toEqual(want as never));
});

describe("targets", () => {
  test("a process finds its target by platform, CPU and C library", () => {
    expect(targetFor("linux", "x64", "glibc")?.file).toBe("seam-linux-x64");
    expect(targetFor("linux", "arm64", "musl")?.file).toBe("seam-linux-arm64-musl");
    expect(targetFor("darwin", "arm64", undefined)?.bunTarget).toBe("bun-darwin-arm64");
    expect(targetFor("win32", "x64", undefined)?.file).toBe("seam-windows-x64.exe");
    expect(targetFor("win32", "arm64", undefined)).toBeUndefined();
    expect(targetFor("freebsd", "x64", undefined)).toBeUndefined();
  });
  test("every runtime package is pinned in package-lock.json at the bun devDependency's version", () => {
    const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8"));
    const bun = lock.packages["node_modules/bun"].version;
    for (const t of RELEASE_TARGETS) {
      const entry = lock.packages[`node_modules/${t.runtimePackage}`];
      expect({ pkg: t.runtimePackage, version: entry?.version }).toEqual({ pkg: t.runtimePackage, version: bun });
      expect(entry.integrity).toMatch(/^sha512-/);
    }
  });
});

test("engines names exactly the Node versions .ci/run tests", () => {
  const lines = readFileSync(join(ROOT, ".ci/node-lines"), "utf8")
    .split("\n")
    .filter((l) => l !== "" && !l.startsWith("#"))
    .map((l) => l.split(" ")[0]!);
  const engines = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).engines.node as string;
  expect(engines.split(" || ")).toEqual(lines.map((v) => `^${v}`));
});

const RELEASE = join(ROOT, "dist/release");
const SUMS = existsSync(join(RELEASE, SUMS_FILE)) ? parseSums(readFileSync(join(RELEASE, SUMS_FILE), "utf8")) : null;
const LISTED = SUMS !== null && "entries" in SUMS ? SUMS.entries.map((e) => e.name) : [];
describe.skipIf(SUMS === null)("dist/release (after npm run build:release)", () => {
  test("lists only known targets' files", () => {
    expect(LISTED.filter((n) => !RELEASE_TARGETS.some((t) => t.file === n))).toEqual([]);
  });
  // A build of some targets only (--only) lists those.
  for (const t of RELEASE_TARGETS.filter((t) => LISTED.includes(t.file)))
    test(`${t.file}: ${t.format} ${t.cpu}${t.libc ? ` ${t.libc}` : ""}`, () => {
      const kind = executableKind(readFileSync(join(RELEASE, t.file)).subarray(0, 1 << 16));
      expect({ format: kind?.format, arch: kind?.arch }).toEqual({ format: t.format, arch: t.cpu });
      if (t.libc) expect(kind?.interpreter).toContain(t.libc === "musl" ? "/ld-musl-" : "/ld-linux-");
    });
  test("verify-release accepts it with the build's key", async () => {
    const key = readFileSync(join(ROOT, "dist/release.pub"), "utf8").trim();
    const r = await runCli("bun", ["verify-release", RELEASE, "--key", key, "--json"]);
    expect(JSON.parse(r.stdout.toString()).checked).toEqual(LISTED);
    expect(r.code).toBe(0);
  });
});
