import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { processStartTime } from "../../src/runtime/alive.ts";
import { built, runCli, seamArgv, VIAS } from "../helpers/cli.ts";
import { tempDir } from "../helpers/proc.ts";
import { expectReferenceOk, LedgerBuilder, resetClock, sessionRows } from "../helpers/verify-helpers.ts";

let dir: string;
const file = (name: string) => join(dir, name);

beforeAll(() => {
  dir = tempDir("seam-verify-cli-");
  resetClock();
  const ok = new LedgerBuilder();
  for (const r of sessionRows({ id: "s1", calls: [["echo", 1, "ok"]], writeAhead: true })) ok.add(r);
  writeFileSync(file("ok.jsonl"), ok.text());
  const broken = [...ok.lines];
  broken[2] = broken[2]!.replace('"tool": "echo"', '"tool": "rm"');
  writeFileSync(file("broken.jsonl"), `${broken.join("\n")}\n`);
  const open = new LedgerBuilder();
  for (const r of sessionRows({ id: "s2", noEnd: true })) open.add(r);
  writeFileSync(file("open.jsonl"), open.text());
  writeFileSync(file("prechain.jsonl"), `{"note": "before seam"}\n${ok.text()}`);
  writeFileSync(file("empty.jsonl"), "");
  writeFileSync(file("no-newline.jsonl"), ok.text().replace(/\n$/, ""));
  const start = processStartTime(process.pid) ?? undefined;
  for (const [name, pid, started] of [
    // a live process with its real start time that is no seam: the test runner, and pid 1 (anyone can read its start)
    ["alive.jsonl", process.pid, start],
    ["init.jsonl", 1, processStartTime(1) ?? undefined],
    ["dead.jsonl", 2 ** 22 + 17, start],
    // the live pid, but not the process that started then: a reused pid
    ["reused.jsonl", process.pid, (start ?? 0) + 1],
    ["unstamped.jsonl", process.pid, undefined],
  ] as const) {
    const b = new LedgerBuilder();
    for (const r of sessionRows({ id: "s3", noEnd: true, pid, host: hostname(), start: started })) b.add(r);
    writeFileSync(file(name), b.text());
  }
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const OK_REPORT = (name: string) =>
  [
    `${name}: ok`,
    "  rows      5 (5 chained)",
    "  head      a77d19a3467ea7186e0740e84a668563",
    "  sessions  1 (1 complete)",
    "    s1 (echo): 5 rows, 1 call (ok 1), complete",
    "",
  ].join("\n");

describe.each(VIAS)("seam verify via %s", (via) => {
  const it = built(via) ? test : test.skip;

  it("an intact ledger: the human report on stdout, nothing on stderr, exit 0", async () => {
    const r = await runCli(via, ["verify", file("ok.jsonl")]);
    expect(r.stdout.toString()).toBe(OK_REPORT(file("ok.jsonl")));
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });

  it("an edited row: broken at its line, exit 1", async () => {
    const r = await runCli(via, ["verify", file("broken.jsonl")]);
    expect(r.stdout.toString()).toContain(`${file("broken.jsonl")}: broken\n`);
    expect(r.stdout.toString()).toContain("\n  break     line 3: chain mismatch (1 break)\n");
    expect(r.code).toBe(1);
  });

  it("a session without session_end: inconclusive, exit 3", async () => {
    const r = await runCli(via, ["verify", file("open.jsonl")]);
    expect(r.stdout.toString()).toContain("  findings\n    session s2: no session_end (truncated or still running)\n");
    expect(r.code).toBe(3);
  });

  it("a missing file: seam: error and exit 2 (exit 1 is for what a file holds), nothing on stdout", async () => {
    const r = await runCli(via, ["verify", "--json", file("ok.jsonl"), file("nope.jsonl")]);
    expect(r.stderr).toBe(`seam: error: cannot read ${file("nope.jsonl")}: no such file or directory\n`);
    expect(r.stdout.toString()).toBe("");
    expect(r.code).toBe(2);
  });

  it("several files: one report each, in order; exit is the worst (broken over inconclusive over ok)", async () => {
    const a = await runCli(via, ["verify", "--json", file("ok.jsonl"), file("open.jsonl"), file("empty.jsonl")]);
    const lines = a.stdout
      .toString()
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.file, l.ok, l.verified_scope])).toEqual([
      [file("ok.jsonl"), true, "full"],
      [file("open.jsonl"), null, "full"],
      [file("empty.jsonl"), null, "empty"],
    ]);
    expect(a.code).toBe(3);
    const b = await runCli(via, ["verify", file("open.jsonl"), file("broken.jsonl"), file("ok.jsonl")]);
    expect(b.code).toBe(1);
    expect(b.stdout.toString().endsWith(OK_REPORT(file("ok.jsonl")))).toBe(true);
  });

  // Why a file is inconclusive, and what a reader should know of one that verifies: said in verify's words.
  it.each([
    ["empty.jsonl", 3, "inconclusive", "  why       no rows, so nothing is proven"],
    ["prechain.jsonl", 3, "inconclusive", "  why       1 prechain row not checked"],
    [
      "no-newline.jsonl",
      0,
      "ok",
      "  notes\n    line 5: the last row has no newline: the next writer will cut it off as a torn line (kept in a ledger_repair row)",
    ],
  ])("%s: %p, %s, and why", async (name, code, verdict, said) => {
    const r = await runCli(via, ["verify", file(name)]);
    const text = r.stdout.toString();
    expect(text.split("\n")[0]).toBe(`${file(name)}: ${verdict}`);
    expect(text).toContain(`${said}\n`);
    expect(r.code).toBe(code);
  });

  it("--json: one object per file, exactly", async () => {
    const r = await runCli(via, ["verify", "--json", file("ok.jsonl")]);
    expect(r.stdout.toString()).toBe(
      `{"file": ${JSON.stringify(file("ok.jsonl"))}, "ok": true, "rows": 5, "chained": 5, "prechain": 0, "first_break": null, "first_break_line": null, "first_break_kind": null, "breaks": 0, "break_kinds": {}, "verified_scope": "full", "head": "a77d19a3467ea7186e0740e84a668563", "sessions": [{"id": "s1", "server": "echo", "rows": 5, "calls": 1, "statuses": {"ok": 1}, "complete": true}], "findings": [], "finding_kinds": [], "notes": []}\n`,
    );
  });

  it("--quiet: nothing at all, only the exit status", async () => {
    for (const [name, code] of [
      ["ok.jsonl", 0],
      ["broken.jsonl", 1],
      ["open.jsonl", 3],
    ] as const) {
      const r = await runCli(via, ["verify", "--quiet", file(name)]);
      expect({ name, out: r.stdout.length, err: r.stderr, code: r.code }).toEqual({ name, out: 0, err: "", code });
    }
  });

  it("prechain rows: skipped (exit 3), or rejected with --strict (exit 1)", async () => {
    const lax = await runCli(via, ["verify", file("prechain.jsonl")]);
    expect(lax.stdout.toString()).toContain("  rows      6 (5 chained, 1 prechain skipped)\n");
    expect(lax.code).toBe(3);
    const strict = await runCli(via, ["verify", "--strict", file("prechain.jsonl")]);
    expect(strict.stdout.toString()).toContain(
      "  rows      6 (5 chained, 1 prechain rejected)\n  break     line 1: unchained (prechain) row rejected in strict mode (1 break)\n",
    );
    expect(strict.code).toBe(1);
  });

  it("'-' reads the ledger from stdin", async () => {
    const r = await runCli(via, ["verify", "-"], { input: readFileSync(file("ok.jsonl")) });
    expect(r.stdout.toString()).toBe(OK_REPORT("-"));
    expect(r.code).toBe(0);
  });

  it("no colour when stdout is not a terminal, even without NO_COLOR", async () => {
    const r = await runCli(via, ["verify", file("broken.jsonl")], { env: { NO_COLOR: undefined } });
    expect(r.stdout.toString()).not.toContain("\x1b");
    expect(r.stderr).toBe("");
  });

  it("usage errors exit 2 with a message on stderr and nothing on stdout", async () => {
    const cases: [string[], string][] = [
      [[], "seam: error: missing required positional argument: PATH\nseam: hint: run 'seam verify --help' for usage\n"],
      [
        ["--bogus", "x"],
        "seam: error: unknown flag --bogus for 'seam verify'\nseam: hint: run 'seam verify --help' for the flags it takes\n",
      ],
      [
        ["--json", "--quiet", "x"],
        "seam: error: --json and --quiet do not go together\nseam: hint: run 'seam verify --help' for usage\n",
      ],
    ];
    for (const [args, err] of cases) {
      const r = await runCli(via, ["verify", ...args]);
      expect({ args, code: r.code, out: r.stdout.toString(), err: r.stderr }).toEqual({ args, code: 2, out: "", err });
    }
  });

  it("a session without session_end whose pid is alive but started at another time (or at no recorded time) is a finding", async () => {
    for (const name of ["reused.jsonl", "unstamped.jsonl"]) {
      const r = await runCli(via, ["verify", "--json", file(name)]);
      expect(JSON.parse(r.stdout.toString()).findings).toEqual([
        "session s3: no session_end (truncated or still running)",
      ]);
      expect(r.code).toBe(3);
    }
  });

  it("a session without session_end whose pid is a live process of that start time but no seam is a finding", async () => {
    for (const name of ["alive.jsonl", "init.jsonl"]) {
      const r = await runCli(via, ["verify", "--json", file(name)]);
      expect([name, JSON.parse(r.stdout.toString()).findings]).toEqual([
        name,
        ["session s3: no session_end (truncated or still running)"],
      ]);
      expect(r.code).toBe(3);
    }
  });

  it("a session without session_end whose writer, a seam, still runs on this host is open, not a finding", async () => {
    const live = file(`live-${via}.jsonl`);
    const p = spawn(seamArgv(via)[0]!, [...seamArgv(via).slice(1), "wrap", "--ledger", live, "--", "sleep", "30"], {
      stdio: ["pipe", "ignore", "ignore"],
    });
    try {
      const t0 = Date.now();
      while (!existsSync(live) || !readFileSync(live, "utf8").includes("session_begin")) {
        if (Date.now() - t0 > 15_000) throw new Error("no session_begin");
        await new Promise((r) => setTimeout(r, 50));
      }
      const alive = await runCli(via, ["verify", "--json", live]);
      const r = JSON.parse(alive.stdout.toString());
      expect({ ok: r.ok, findings: r.findings, notes: r.notes }).toEqual({
        ok: true,
        findings: [],
        notes: [expect.stringMatching(/^session [0-9a-f-]+: open \(its writer, pid \d+ on .+, is still running\)$/)],
      });
      expect(alive.code).toBe(0);
    } finally {
      p.kill("SIGTERM");
    }
    const dead = await runCli(via, ["verify", "--json", file("dead.jsonl")]);
    expect(JSON.parse(dead.stdout.toString()).findings).toEqual([
      "session s3: no session_end (truncated or still running)",
    ]);
    expect(dead.code).toBe(3);
  });

  it("a reader that goes away stops the output, not the verifying: the exit status still covers every file", async () => {
    const [cmd, ...pre] = seamArgv(via);
    // Far more report than a pipe holds, so the writes after the reader left fail with EPIPE.
    const child = spawn(cmd!, [...pre, "verify", ...Array<string>(2000).fill(file("ok.jsonl")), file("broken.jsonl")], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let err = "";
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.stdout.once("data", () => child.stdout.destroy());
    const code = await new Promise<number | null>((r) => child.on("close", (c) => r(c)));
    expect({ code, err }).toEqual({ code: 1, err: "" });
  }, 60_000);

  it("a ledger written by `seam wrap` (two sessions, one with --write-ahead) verifies ok, as the reference agrees", async () => {
    const ledger = file(`wrapped-${via}.jsonl`);
    const seam = seamArgv(via);
    for (const [script, extra] of [
      ["awkward", ["--write-ahead"]],
      ["demo", []],
    ] as const) {
      const run = spawnSync(
        seam[0]!,
        [
          ...seam.slice(1),
          "fixture",
          "client",
          "--script",
          script,
          "--",
          ...seam,
          "wrap",
          "--ledger",
          ledger,
          ...extra,
          "--",
          ...seam,
          "fixture",
          "server",
        ],
        {
          stdio: ["ignore", "ignore", "pipe"],
          timeout: 60_000,
        },
      );
      expect({ script, status: run.status, stderr: run.stderr.toString() }).toEqual({ script, status: 0, stderr: "" });
    }
    // The awkward script sends two lines that are not JSON: each is an unparsed_frame row (refused under
    // --write-ahead), so the session is inconclusive unless --allow-unparsed.
    const strict = await runCli(via, ["verify", "--json", ledger]);
    const found = JSON.parse(strict.stdout.toString());
    expect({ ok: found.ok, breaks: found.breaks, kinds: found.finding_kinds, code: strict.code }).toEqual({
      ok: null,
      breaks: 0,
      kinds: ["unparsed_client_frame", "unparsed_client_frame"],
      code: 3,
    });
    expect(found.findings.map((f: string) => f.replace(/^session [^:]+: line \d+: /, ""))).toEqual([
      'a client frame seam could not parse ("expecting value", refused by seam)',
      'a client frame seam could not parse ("unterminated string", refused by seam)',
    ]);
    const r = await runCli(via, ["verify", "--json", "--allow-unparsed", ledger]);
    const report = JSON.parse(r.stdout.toString());
    expect({ ok: report.ok, breaks: report.breaks, findings: report.findings, notes: report.notes.length }).toEqual({
      ok: true,
      breaks: 0,
      findings: [],
      notes: 2,
    });
    expect(report.sessions.map((s: { complete: boolean }) => s.complete)).toEqual([true, true]);
    expect(r.code).toBe(0);
    expectReferenceOk(ledger, report);
  });
});

describe("seam verify on a terminal (through script(1))", () => {
  const HAVE_SCRIPT = spawnSync("script", ["--version"]).status === 0;
  const it = HAVE_SCRIPT ? test : test.skip;
  /**
   * Runs the command with stdout and stderr on a pseudo-terminal; returns what the terminal showed.
   * `stdinFrom`: a shell command whose output is the command's standard input.
   */
  function onTty(
    args: string[],
    env: Record<string, string | undefined> = {},
    stdinFrom?: string,
  ): { out: string; code: number | null } {
    const quoted = [...seamArgv("bun"), ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
    const command = stdinFrom === undefined ? quoted : `{ ${stdinFrom}; } | ${quoted}`;
    const r = spawnSync("script", ["-qec", command, "/dev/null"], {
      env: { ...process.env, ...env },
      timeout: 120_000,
    });
    return { out: r.stdout.toString(), code: r.status };
  }

  it("the verdict is coloured on a terminal, unless NO_COLOR is set", () => {
    const coloured = onTty(["verify", file("ok.jsonl")], { NO_COLOR: undefined });
    expect(coloured.out).toContain(`${file("ok.jsonl")}: \x1b[32mok\x1b[0m\r\n`);
    expect(coloured.code).toBe(0);
    const plain = onTty(["verify", file("broken.jsonl")], { NO_COLOR: "1" });
    expect(plain.out).toContain(`${file("broken.jsonl")}: broken\r\n`);
    expect(plain.out).not.toContain("\x1b[");
    expect(plain.code).toBe(1);
  });

  it("a long run shows progress (bytes, rows/s) on a terminal's stderr, then clears it", () => {
    const big = new LedgerBuilder();
    resetClock();
    for (let s = 0; big.lines.length < 150_000; s++) {
      for (const r of sessionRows({
        id: `s${s}`,
        calls: Array.from({ length: 200 }, (_, i): [string, number, string] => ["echo", i, "ok"]),
      }))
        big.add(r);
    }
    writeFileSync(file("big.jsonl"), big.text());
    // Progress shows once a run has taken half a second, however fast this machine reads: the
    // ledger reaches verify on its standard input in two halves, a second apart.
    const half = big.lines.length >> 1;
    writeFileSync(file("big-1.jsonl"), `${big.lines.slice(0, half).join("\n")}\n`);
    writeFileSync(file("big-2.jsonl"), `${big.lines.slice(half).join("\n")}\n`);
    const r = onTty(
      ["verify", "-"],
      { NO_COLOR: "1" },
      `cat '${file("big-1.jsonl")}'; sleep 1; cat '${file("big-2.jsonl")}'`,
    );
    expect(r.out).toMatch(/\rseam: verify -: \d+\.\d MB, [\d,]+ rows\/s\x1b\[K/);
    expect(r.out).toContain(`\r\x1b[K-: ok\r\n`);
    expect(r.code).toBe(0);
    // Not on a pipe.
    const piped = spawnSync(seamArgv("bun")[0]!, [...seamArgv("bun").slice(1), "verify", file("big.jsonl")]);
    expect(piped.stderr.toString()).toBe("");
  }, 120_000);
});
