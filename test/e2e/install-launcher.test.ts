/**
 * The launcher an installed entry runs, and recognising entries whoever
 * wrote them: the choice of a lasting seam when the running one sits in
 * npm's npx cache or a temporary folder (a table over a laid-out PATH), the
 * shapes every seam launcher writes, and, with real processes, an entry
 * written by each launcher recognised by every build for status, install and
 * uninstall; install run from an npx-cache-like path finding a lasting seam
 * on PATH, or refusing with the command to run.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { WRAP_FLAGS } from "../../commands/_wrap-args.ts";
import { targetsFor } from "../../src/install/clients.ts";
import { parseWrapped } from "../../src/install/entry.ts";
import { jsonFormat } from "../../src/install/json-edit.ts";
import { durableLauncher, type Probe, transientReason } from "../../src/install/launcher.ts";
import { built, ROOT, runCli, seamArgv, VIAS } from "../helpers/cli.ts";
import { CASES, layOut } from "../helpers/install-fixtures.ts";
import { run, tempDir } from "../helpers/proc.ts";

/** A file system given as a table: path → what it is (a link's target, a script, an executable, or some other program). */
type Node = { link: string } | "seam-script" | "seam-exe" | "other-exe";

function probeOf(
  os: Probe["os"],
  path: string[],
  temp: string[],
  fs: Record<string, Node>,
): Probe & { ran: string[][] } {
  const ran: string[][] = [];
  const real = (p: string): string | null => {
    const n = fs[p];
    if (n === undefined) return null;
    return typeof n === "object" ? real(n.link) : p;
  };
  return {
    os,
    path,
    temp,
    ran,
    realpath: real,
    isScript: (p) => (fs[p] === undefined ? null : fs[p] === "seam-script"),
    isSeam(argv) {
      ran.push(argv);
      const file = real(argv[argv.length - 1]!);
      return file !== null && fs[file] !== "other-exe";
    },
  };
}

const NPX_BIN = "/home/me/.npm/_npx/239da8dec6f6d350/node_modules/.bin";
const NPX_SELF = ["/usr/bin/node", `${NPX_BIN}/seam`];
const FS: Record<string, Node> = {
  [`${NPX_BIN}/seam`]: { link: "/home/me/.npm/_npx/239da8dec6f6d350/node_modules/seam-mcp/dist/seam.mjs" },
  "/home/me/.npm/_npx/239da8dec6f6d350/node_modules/seam-mcp/dist/seam.mjs": "seam-script",
  "/usr/local/bin/seam": { link: "/usr/local/lib/node_modules/seam-mcp/dist/seam.mjs" },
  "/usr/local/lib/node_modules/seam-mcp/dist/seam.mjs": "seam-script",
  "/opt/seam/seam": "seam-exe",
  "/usr/games/seam": "other-exe",
  "/home/me/bin/seam": { link: "/tmp/seam-build/seam" },
  "/tmp/seam-build/seam": "seam-exe",
  "/tmp/bunx-1000-seam-mcp@latest/node_modules/.bin/seam": "seam-script",
  "/usr/bin/node": "seam-exe",
  "/usr/bin/bun": "seam-exe",
};
const RERUN = "seam install --client cursor";
const REFUSED = (why: string, where: string) => ({
  ok: false,
  error: `this seam runs from ${why} (${where}), which does not last; an entry pointing at it would stop working when it is cleared`,
  hint: `install seam for good and run it from there: npm install -g seam-mcp, then ${RERUN}`,
});

describe("the launcher install writes", () => {
  test.each([
    [
      "a seam that lasts is written as it runs, nothing looked up",
      ["/usr/bin/node", "/usr/local/bin/seam"],
      [],
      {
        ok: true,
        argv: ["/usr/bin/node", "/usr/local/bin/seam"],
      },
    ],
    ["the executable that lasts: the same", ["/opt/seam/seam"], [NPX_BIN], { ok: true, argv: ["/opt/seam/seam"] }],
    [
      "npx: the npx cache on PATH is passed over, the global seam found and run by this node",
      NPX_SELF,
      [NPX_BIN, "/usr/local/bin"],
      {
        ok: true,
        argv: ["/usr/bin/node", "/usr/local/bin/seam"],
        found: "/usr/local/bin/seam",
      },
    ],
    [
      "npx: another program named seam is passed over; an executable seam is run alone",
      NPX_SELF,
      [NPX_BIN, "/usr/games", "/opt/seam"],
      {
        ok: true,
        argv: ["/opt/seam/seam"],
        found: "/opt/seam/seam",
      },
    ],
    [
      "npx: a seam on PATH that is a link into a temporary folder does not count",
      NPX_SELF,
      [NPX_BIN, "/home/me/bin"],
      REFUSED("npm's npx cache", `${NPX_BIN}/seam`),
    ],
    [
      "npx: no seam on PATH: refused, with the command to run",
      NPX_SELF,
      [NPX_BIN, "relative/bin", ""],
      REFUSED("npm's npx cache", `${NPX_BIN}/seam`),
    ],
    [
      "bunx: a temporary folder",
      ["/usr/bin/bun", "/tmp/bunx-1000-seam-mcp@latest/node_modules/.bin/seam"],
      ["/usr/bin"],
      REFUSED("a temporary folder", "/tmp/bunx-1000-seam-mcp@latest/node_modules/.bin/seam"),
    ],
    [
      "an executable in a temporary folder",
      ["/tmp/seam-build/seam"],
      ["/usr/local/bin"],
      {
        ok: true,
        argv: ["/usr/local/bin/seam"],
        found: "/usr/local/bin/seam",
      },
    ],
  ] as [string, string[], string[], unknown][])("%s", (_, self, path, want) => {
    const probe = probeOf("linux", path, ["/tmp"], FS);
    expect(durableLauncher(self, probe, RERUN)).toEqual(want as never);
    if (self[0] === "/opt/seam/seam" || self[1] === "/usr/local/bin/seam") expect(probe.ran).toEqual([]);
  });

  test("Windows: npm's seam.cmd shim is passed over for the script it runs, under this node", () => {
    const npx = "C:\\Users\\Me\\AppData\\Local\\npm-cache\\_npx\\1a2b\\node_modules\\.bin";
    const npm = "C:\\Users\\Me\\AppData\\Roaming\\npm";
    const probe = probeOf("win32", [npx, npm], ["C:\\Users\\Me\\AppData\\Local\\Temp"], {
      [`${npx}\\seam.cmd`]: "seam-script",
      [`${npm}\\seam.cmd`]: "seam-script",
      [`${npm}\\node_modules\\seam-mcp\\dist\\seam.mjs`]: "seam-script",
      "C:\\Program Files\\nodejs\\node.exe": "seam-exe",
    });
    const self = ["C:\\Program Files\\nodejs\\node.exe", `${npx}\\..\\seam-mcp\\dist\\seam.mjs`];
    expect(durableLauncher(self, probe, RERUN)).toEqual({
      ok: true,
      argv: ["C:\\Program Files\\nodejs\\node.exe", `${npm}\\node_modules\\seam-mcp\\dist\\seam.mjs`],
      found: `${npm}\\seam.cmd`,
    });
  });

  test.each([
    ["/home/me/.npm/_npx/1/node_modules/.bin/seam", "npm's npx cache"],
    ["/home/me/.cache/pnpm/dlx/abc/node_modules/.bin/seam", "pnpm's dlx cache"],
    ["/tmp/x/seam", "a temporary folder"],
    ["/home/me/bin/seam", "a temporary folder"],
    ["/tmp", null],
    ["/tmpfoo/seam", null],
    ["/usr/local/bin/seam", null],
  ])("%s: %s", (file, why) => {
    expect(transientReason(file, probeOf("linux", [], ["/tmp"], FS))).toBe(why);
  });
});

describe("every launcher's entries have seam's shape", () => {
  const TAIL = ["wrap", "--ledger", "L", "--server", "s", "--", "srv", "-v"];
  test.each([
    ["npx (npm's link in its cache)", "/usr/bin/node", [`${NPX_BIN}/seam`]],
    ["a global npm install (its link on PATH)", "/usr/bin/node", ["/usr/local/bin/seam"]],
    ["the bundle", "/usr/bin/node", ["/usr/local/lib/node_modules/seam-mcp/dist/seam.mjs"]],
    ["from source under Bun", "/usr/bin/bun", ["--no-env-file", "/src/seam/commands/seam.ts"]],
    ["the executable", "/opt/seam/seam", []],
    ["npm's Windows shim", "C:\\Users\\Me\\AppData\\Roaming\\npm\\seam.cmd", []],
    [
      "node.exe and the bundle",
      "C:\\nodejs\\node.exe",
      ["C:\\Users\\Me\\AppData\\Roaming\\npm\\node_modules\\seam-mcp\\dist\\seam.mjs"],
    ],
  ] as [string, string, string[]][])("%s", (_, command, lead) => {
    const w = parseWrapped(command, [...lead, ...TAIL], WRAP_FLAGS);
    expect(w && [w.ledger, w.server, w.command, ...w.args]).toEqual(["L", "s", "srv", "-v"]);
  });
});

/** The cursor fixture's `fixture` entry as Cursor reads it. */
function fixtureEntry(home: string): { command: string; args: string[] } {
  const t = targetsFor("cursor", "user", { os: "linux", home, cwd: home, configRoot: home })[0]!;
  const listed = jsonFormat.list(readFileSync(t.file, "utf8"), t.containers);
  if (!listed.ok) throw new Error(listed.error);
  return listed.servers.find((s) => s.name === "fixture")!.value as never;
}

const CURSOR = CASES.find((c) => c.client === "cursor")!;
const NODE = process.env.SEAM_TEST_NODE ?? "node";
const allBuilt = VIAS.every(built);

/** A folder laid out like npm's: `<dir>/seam` a link to the bundle (npm's bin link). */
function npmLink(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const link = join(dir, "seam");
  symlinkSync(`${ROOT}dist/seam.mjs`, link);
  return link;
}

describe.skipIf(!allBuilt)("entries written by one launcher, read by every build", () => {
  // Each writer: how the seam that runs install is started (argv before `install`).
  const WRITERS: Array<[string, (dir: string) => string[]]> = [
    ...VIAS.map((v): [string, (dir: string) => string[]] => [v, () => seamArgv(v)]),
    ["npm's link on PATH", (dir) => [NODE, npmLink(join(dir, "prefix/bin"))]],
  ];
  test.each(WRITERS)(
    "written via %s: status says recorded, install says already and writes nothing, uninstall restores the bytes, in each build",
    async (_, writer) => {
      const dir = tempDir();
      const home = join(dir, "home");
      // The test's folders are under the system's temporary folder: give seam another one, so they count as lasting.
      const env = { TMPDIR: join(dir, "tmp") };
      mkdirSync(env.TMPDIR);
      const { path, text } = layOut(home, [CURSOR]).get("cursor")!;
      const w = await run([...writer(dir), "install", "--client", "cursor", "--config-root", home], { env });
      expect([w.code, w.stderr]).toEqual([0, ""]);
      const after = readFileSync(path, "utf8");
      expect(after).not.toBe(text);
      for (const via of VIAS) {
        const st = await runCli(via, ["status", "--json", "--client", "cursor", "--config-root", home], { env });
        const servers = (
          JSON.parse(st.stdout.toString()) as Array<{ servers: Array<{ name: string; state: string }> }>
        )[0]!.servers;
        expect(servers.filter((s) => s.state === "recorded").map((s) => s.name)).toEqual(CURSOR.wraps);
        const again = await runCli(via, ["install", "--client", "cursor", "--config-root", home], { env });
        expect(again.code).toBe(0);
        expect(again.stdout.toString()).toContain(`${path}: unchanged\n  fixture: already recorded`);
        expect(readFileSync(path, "utf8")).toBe(after);
      }
      const u = await runCli("node", ["uninstall", "--client", "cursor", "--config-root", home], { env });
      expect(u.stdout.toString()).toContain("  fixture: restored");
      expect(readFileSync(path, "utf8")).toBe(text);
    },
    120_000,
  );
});

describe.skipIf(!allBuilt)("an entry an npx-run seam wrote, pointing into npm's npx cache", () => {
  test.each(VIAS)(
    "via %s: status says recorded and that its seam does not last; install wraps it again through this seam, its flags kept; uninstall restores it",
    async (via) => {
      const dir = tempDir();
      const home = join(dir, "home");
      const env = { TMPDIR: join(dir, "tmp") };
      mkdirSync(env.TMPDIR);
      const seam = join(home, ".npm/_npx/239da8dec6f6d350/node_modules/.bin/seam");
      const ledger = join(home, "ledgers/all.jsonl");
      const original =
        '{\n  "mcpServers": {\n    "fs": {"command": "npx", "args": ["-y", "server-fs", "/data"]}\n  }\n}\n';
      const flags = ["--ledger", ledger, "--server", "fs", "--raw"];
      const wrapped = original.replace(
        '"command": "npx", "args": [',
        `"command": "/usr/bin/node", "args": [${[seam, "wrap", ...flags, "--", "npx"].map((x) => JSON.stringify(x)).join(", ")}, `,
      );
      const path = join(home, ".cursor/mcp.json");
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, wrapped);
      const st = await runCli(via, ["status", "--client", "cursor", "--config-root", home], { env });
      expect(st.stdout.toString()).toBe(
        `Cursor (user): ${path}\n  fs: recorded into ${ledger} (no ledger yet); no session yet\n` +
          `    the seam it runs is in npm's npx cache (${seam}), which does not last: seam install --client cursor, run from a seam installed for good, points it at that one\n`,
      );
      const again = await runCli(via, ["install", "--client", "cursor", "--config-root", home], { env });
      expect(again.code).toBe(0);
      expect(again.stdout.toString()).toStartWith(
        `Cursor (user): ${path}: changed\n  fs: recorded again through this seam (ledger ${ledger}): the one it ran was in npm's npx cache (${seam})\n  backup: `,
      );
      const entry = JSON.parse(readFileSync(path, "utf8")).mcpServers.fs as { command: string; args: string[] };
      const self = seamArgv(via);
      expect([entry.command, ...entry.args]).toEqual([
        ...(via === "bun" ? [self[0]!, "--no-env-file", self[3]!] : via === "node" ? [realNode(), self[1]!] : self),
        "wrap",
        ...flags,
        "--",
        "npx",
        "-y",
        "server-fs",
        "/data",
      ]);
      const third = await runCli(via, ["install", "--client", "cursor", "--config-root", home], { env });
      expect(third.stdout.toString()).toBe(
        `Cursor (user): ${path}: unchanged\n  fs: already recorded (ledger ${ledger})\n`,
      );
      const u = await runCli(via, ["uninstall", "--client", "cursor", "--config-root", home], { env });
      expect(u.code).toBe(0);
      expect(u.stdout.toString()).toContain("  fs: restored");
      expect(readFileSync(path, "utf8")).toBe(original);
    },
    60_000,
  );
});

describe.skipIf(!built("node"))("install run from npm's npx cache", () => {
  /** A home with Cursor's file, seam laid out as npx lays it out, and a TMPDIR of its own. */
  function layout() {
    const dir = tempDir();
    const home = join(dir, "home");
    const npxBin = join(dir, ".npm/_npx/239da8dec6f6d350/node_modules/.bin");
    const self = npmLink(npxBin);
    const tmp = join(dir, "tmp");
    mkdirSync(tmp);
    const { path, text } = layOut(home, [CURSOR]).get("cursor")!;
    const nodeDir = dirname(Bun.which(NODE)!);
    return { dir, home, npxBin, self, tmp, path, text, nodeDir };
  }

  test("with a seam on PATH that lasts: the entry runs that one, and install says so", async () => {
    const l = layout();
    const global = npmLink(join(l.dir, "prefix/bin"));
    const r = await run([NODE, l.self, "install", "--client", "cursor", "--config-root", l.home], {
      env: { TMPDIR: l.tmp, PATH: [l.npxBin, join(l.dir, "prefix/bin"), l.nodeDir].join(":") },
    });
    expect([r.code, r.stderr]).toEqual([0, `seam: info: the entries run the seam at ${global}, not this one\n`]);
    const entry = fixtureEntry(l.home);
    expect(entry.args.slice(0, 2)).toEqual([global, "wrap"]);
    expect(entry.command).toBe(realNode());
    expect(JSON.stringify(entry)).not.toContain("_npx");
  });

  test("with none: refused, the file untouched, the hint names the command to run", async () => {
    const l = layout();
    const r = await run([NODE, l.self, "install", "--client", "cursor", "--config-root", l.home], {
      env: { TMPDIR: l.tmp, PATH: [l.npxBin, l.nodeDir].join(":") },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `seam: error: this seam runs from npm's npx cache (${l.self}), which does not last; an entry pointing at it would stop working when it is cleared\n` +
        `seam: hint: install seam for good and run it from there: npm install -g seam-mcp, then seam install --client cursor --config-root ${l.home}\n`,
    );
    expect(r.stdout.toString()).toBe("");
    expect(readFileSync(l.path, "utf8")).toBe(l.text);
    // A wrong command line is told first, whichever seam runs.
    const usage = await run([NODE, l.self, "install", "--config-root", l.home], {
      env: { TMPDIR: l.tmp, PATH: [l.npxBin, l.nodeDir].join(":") },
    });
    expect([usage.code, usage.stderr.split("\n")[0]]).toEqual([2, "seam: error: name the clients to set up"]);
  });
});

/** The node that runs a script named by path (what process.execPath says under it). */
function realNode(): string {
  const r = Bun.spawnSync([NODE, "-p", "process.execPath"]);
  return r.stdout.toString().trim();
}
