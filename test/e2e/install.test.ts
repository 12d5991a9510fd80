/**
 * seam install / uninstall over every client's config file, in process: the
 * paths per OS, the entries exactly as specified, byte-identical undo,
 * idempotence, --dry-run, and the ways a file can resist (does not parse,
 * changes under seam, read-only, a symlink).
 */
import { describe, expect, test } from "bun:test";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { WRAP_ARGS, WRAP_FLAGS } from "../../commands/_wrap-args.ts";
import {
  CLIENT_IDS,
  type ClientId,
  type Container,
  defaultLedger,
  type Os,
  type PathEnv,
  targetsFor,
} from "../../src/install/clients.ts";
import { classify, launchOf, parseWrapped, type SeamCommand, sameValue } from "../../src/install/entry.ts";
import {
  type FileOutcome,
  formatOf,
  type InstallOptions,
  install,
  unifiedDiff,
  uninstall,
} from "../../src/install/install.ts";
import { jsonFormat } from "../../src/install/json-edit.ts";
import { status } from "../../src/install/status.ts";
import { CASES, fixtureText, layOut, serversOf } from "../helpers/install-fixtures.ts";
import { tempDir } from "../helpers/proc.ts";

const SEAM = { argv: ["/opt/seam/bin/seam"] };
const envAt = (home: string, cwd = home): PathEnv => ({ os: "linux", home: "/nonexistent", cwd, configRoot: home });

/** seam install of `clients` in the user scope of `home`, as the command runs it (`more` on top): the files found. */
function installIn(home: string, clients: ClientId[], more: Partial<InstallOptions> = {}): FileOutcome[] {
  return found(
    install({
      clients,
      scope: "user",
      env: envAt(home),
      dryRun: false,
      seam: SEAM,
      wrapFlags: WRAP_FLAGS,
      ...more,
    }),
  );
}

/** The outcomes of the files that are there (a client may have more places than the test lays out). */
function found(outcomes: FileOutcome[]): FileOutcome[] {
  return outcomes.filter((f) => f.status !== "missing");
}

/** seam uninstall of `clients` in the user scope of `home`. */
function uninstallIn(home: string, clients: ClientId[]): FileOutcome[] {
  return found(uninstall({ clients, scope: "user", env: envAt(home), dryRun: false, wrapFlags: WRAP_FLAGS }));
}

describe("where each client keeps its servers", () => {
  const envs: Record<Os, PathEnv> = {
    linux: { os: "linux", home: "/home/me", cwd: "/home/me/app" },
    darwin: { os: "darwin", home: "/Users/me", cwd: "/Users/me/app" },
    win32: {
      os: "win32",
      home: "C:\\Users\\Me",
      cwd: "C:\\src\\app",
      appData: "C:\\Users\\Me\\AppData\\Roaming",
      localAppData: "C:\\Users\\Me\\AppData\\Local",
    },
  };
  /** Each client's user-scope files (and folders of files) per OS. */
  const USER: Record<ClientId, Record<Os, string | string[]>> = {
    "claude-desktop": {
      linux: "/home/me/.config/Claude/claude_desktop_config.json",
      darwin: "/Users/me/Library/Application Support/Claude/claude_desktop_config.json",
      win32: "C:\\Users\\Me\\AppData\\Roaming\\Claude\\claude_desktop_config.json",
    },
    "claude-code": {
      linux: "/home/me/.claude.json",
      darwin: "/Users/me/.claude.json",
      win32: "C:\\Users\\Me\\.claude.json",
    },
    cursor: {
      linux: "/home/me/.cursor/mcp.json",
      darwin: "/Users/me/.cursor/mcp.json",
      win32: "C:\\Users\\Me\\.cursor\\mcp.json",
    },
    vscode: {
      linux: "/home/me/.config/Code/User/mcp.json",
      darwin: "/Users/me/Library/Application Support/Code/User/mcp.json",
      win32: "C:\\Users\\Me\\AppData\\Roaming\\Code\\User\\mcp.json",
    },
    windsurf: {
      linux: "/home/me/.codeium/windsurf/mcp_config.json",
      darwin: "/Users/me/.codeium/windsurf/mcp_config.json",
      win32: "C:\\Users\\Me\\.codeium\\windsurf\\mcp_config.json",
    },
    zed: {
      linux: "/home/me/.config/zed/settings.json",
      darwin: "/Users/me/.config/zed/settings.json",
      win32: "C:\\Users\\Me\\AppData\\Roaming\\Zed\\settings.json",
    },
    cline: {
      linux: "/home/me/.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
      darwin:
        "/Users/me/Library/Application Support/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
      win32:
        "C:\\Users\\Me\\AppData\\Roaming\\Code\\User\\globalStorage\\saoudrizwan.claude-dev\\settings\\cline_mcp_settings.json",
    },
    gemini: {
      linux: "/home/me/.gemini/settings.json",
      darwin: "/Users/me/.gemini/settings.json",
      win32: "C:\\Users\\Me\\.gemini\\settings.json",
    },
    codex: {
      linux: "/home/me/.codex/config.toml",
      darwin: "/Users/me/.codex/config.toml",
      win32: "C:\\Users\\Me\\.codex\\config.toml",
    },
    "vscode-insiders": {
      linux: "/home/me/.config/Code - Insiders/User/mcp.json",
      darwin: "/Users/me/Library/Application Support/Code - Insiders/User/mcp.json",
      win32: "C:\\Users\\Me\\AppData\\Roaming\\Code - Insiders\\User\\mcp.json",
    },
    "roo-code": {
      linux: "/home/me/.config/Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json",
      darwin:
        "/Users/me/Library/Application Support/Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json",
      win32:
        "C:\\Users\\Me\\AppData\\Roaming\\Code\\User\\globalStorage\\rooveterinaryinc.roo-cline\\settings\\mcp_settings.json",
    },
    continue: {
      linux: ["/home/me/.continue/config.yaml", "/home/me/.continue/mcpServers"],
      darwin: ["/Users/me/.continue/config.yaml", "/Users/me/.continue/mcpServers"],
      win32: ["C:\\Users\\Me\\.continue\\config.yaml", "C:\\Users\\Me\\.continue\\mcpServers"],
    },
    goose: {
      linux: "/home/me/.config/goose/config.yaml",
      darwin: "/Users/me/.config/goose/config.yaml",
      win32: "C:\\Users\\Me\\AppData\\Roaming\\Block\\goose\\config\\config.yaml",
    },
    "lm-studio": {
      linux: "/home/me/.lmstudio/mcp.json",
      darwin: "/Users/me/.lmstudio/mcp.json",
      win32: "C:\\Users\\Me\\.lmstudio\\mcp.json",
    },
    "amazon-q": {
      linux: "/home/me/.aws/amazonq/mcp.json",
      darwin: "/Users/me/.aws/amazonq/mcp.json",
      win32: "C:\\Users\\Me\\.aws\\amazonq\\mcp.json",
    },
    kiro: {
      linux: "/home/me/.kiro/settings/mcp.json",
      darwin: "/Users/me/.kiro/settings/mcp.json",
      win32: "C:\\Users\\Me\\.kiro\\settings\\mcp.json",
    },
    opencode: {
      linux: ["/home/me/.config/opencode/opencode.json", "/home/me/.config/opencode/opencode.jsonc"],
      darwin: ["/Users/me/.config/opencode/opencode.json", "/Users/me/.config/opencode/opencode.jsonc"],
      win32: ["C:\\Users\\Me\\.config\\opencode\\opencode.json", "C:\\Users\\Me\\.config\\opencode\\opencode.jsonc"],
    },
    junie: {
      linux: "/home/me/.junie/mcp/mcp.json",
      darwin: "/Users/me/.junie/mcp/mcp.json",
      win32: "C:\\Users\\Me\\.junie\\mcp\\mcp.json",
    },
  };
  for (const client of CLIENT_IDS) {
    test.each(["linux", "darwin", "win32"] as Os[])(`${client} on %s`, (os) => {
      expect(targetsFor(client, "user", envs[os]).map((t) => t.file)).toEqual([USER[client][os]].flat());
    });
  }
  test("project scope: the files in the project directory, for the clients that have them", () => {
    const files = CLIENT_IDS.flatMap((c) => targetsFor(c, "project", envs.linux).map((t) => `${c} ${t.file}`));
    expect(files).toEqual([
      "claude-code /home/me/app/.mcp.json",
      "cursor /home/me/app/.cursor/mcp.json",
      "vscode /home/me/app/.vscode/mcp.json",
      "gemini /home/me/app/.gemini/settings.json",
      "codex /home/me/app/.codex/config.toml",
      "roo-code /home/me/app/.roo/mcp.json",
      "continue /home/me/app/.continue/mcpServers",
      "amazon-q /home/me/app/.amazonq/mcp.json",
      "kiro /home/me/app/.kiro/settings/mcp.json",
      "opencode /home/me/app/opencode.json",
      "opencode /home/me/app/opencode.jsonc",
      "junie /home/me/app/.junie/mcp/mcp.json",
    ]);
  });
  test("keys and formats: servers for VS Code, context_servers for Zed, a YAML list for Continue, cmd for Goose, one command list for opencode", () => {
    const keys = CLIENT_IDS.map((c) => {
      const t = targetsFor(c, "user", envs.linux)[0]!;
      const shape = (k: Container) =>
        k.shape ? ` (${k.shape.command}${k.shape.args ? `, ${k.shape.args}` : " list"})` : "";
      return `${c}: ${t.format} ${t.containers.map((k) => `${k.path.join(".")}${k.list ? "[]" : ""}${shape(k)}`)}`;
    });
    expect(keys).toEqual([
      "claude-desktop: json mcpServers",
      "claude-code: json mcpServers,projects",
      "cursor: json mcpServers",
      "vscode: json servers",
      "windsurf: json mcpServers",
      "zed: json context_servers",
      "cline: json mcpServers",
      "gemini: json mcpServers",
      "codex: toml mcp_servers",
      "vscode-insiders: json servers",
      "roo-code: json mcpServers",
      "continue: yaml mcpServers[]",
      "goose: yaml extensions (cmd, args)",
      "lm-studio: json mcpServers",
      "amazon-q: json mcpServers",
      "kiro: json mcpServers",
      "opencode: json mcp (command list)",
      "junie: json mcpServers",
    ]);
  });
  test("the environment's own folders are used, unless a config root replaces them all", () => {
    const env: PathEnv = {
      os: "linux",
      home: "/home/me",
      cwd: "/",
      xdgConfigHome: "/xdg",
      codexHome: "/ch",
      xdgDataHome: "/data",
    };
    expect(targetsFor("zed", "user", env)[0]!.file).toBe("/xdg/zed/settings.json");
    expect(targetsFor("codex", "user", env)[0]!.file).toBe("/ch/config.toml");
    expect(defaultLedger("zed", env)).toBe("/data/seam/zed.jsonl");
    const rooted = { ...env, configRoot: "/r" };
    expect(targetsFor("zed", "user", rooted)[0]!.file).toBe("/r/.config/zed/settings.json");
    expect(targetsFor("codex", "user", rooted)[0]!.file).toBe("/r/.codex/config.toml");
    expect(defaultLedger("zed", rooted)).toBe("/r/.local/share/seam/zed.jsonl");
  });
  test.each([
    ["linux", "/home/me/.local/share/seam/cursor.jsonl"],
    ["darwin", "/Users/me/Library/Application Support/seam/cursor.jsonl"],
    ["win32", "C:\\Users\\Me\\AppData\\Local\\seam\\cursor.jsonl"],
  ] as [Os, string][])("default ledger on %s", (os, path) => {
    expect(defaultLedger("cursor", envs[os])).toBe(path);
  });
});

describe("an entry's argv: seam's shape or not", () => {
  test.each([
    [["/opt/seam/bin/seam", ["wrap", "--ledger", "L", "--server", "s", "--", "npx", "-y", "x"]], "npx -y x"],
    [
      ["C:\\Program Files\\seam\\SEAM.EXE", ["wrap", "--ledger", "C:\\l.jsonl", "--", "cmd.exe", "/c", "srv"]],
      "cmd.exe /c srv",
    ],
    [["/usr/bin/node", ["/opt/seam/dist/seam.mjs", "wrap", "--raw", "--sign", "k", "--", "srv"]], "srv"],
    [
      ["/usr/bin/bun", ["--no-env-file", "/src/seam/commands/seam.ts", "wrap", "--ledger=L", "--", "srv", "--"]],
      "srv --",
    ],
    [["C:\\node\\node.exe", ["C:\\seam\\dist\\seam.mjs", "wrap", "--", "srv"]], "srv"],
    [["/opt/seam/bin/seam", ["wrap", "--strip-env", "TOKEN", "--allow-foreign-ledger", "--", "srv"]], "srv"],
  ])("%j is seam's, wrapping %s", ([command, args], original) => {
    const w = parseWrapped(command, args, WRAP_FLAGS);
    expect(w && [w.command, ...w.args].join(" ")).toBe(original as string);
  });
  test("every flag of seam wrap, with or without its value, leaves the entry seam's", () => {
    const unrecognised: string[][] = [];
    for (const [name, arg] of Object.entries(WRAP_ARGS)) {
      const forms = arg.type === "boolean" ? [[`--${name}`]] : [[`--${name}`, "v"], [`--${name}=v`]];
      for (const form of forms) {
        const w = parseWrapped("/opt/seam/bin/seam", ["wrap", ...form, "--", "srv"], WRAP_FLAGS);
        if (w?.command !== "srv") unrecognised.push(form);
      }
    }
    expect(unrecognised).toEqual([]);
  });
  test.each([
    ["npx", ["-y", "seam", "wrap", "--", "x"]],
    ["/usr/bin/seam", ["wrap", "--ledger", "L"]],
    ["/usr/bin/seam", ["wrap", "--frobnicate", "--", "x"]],
    ["/usr/bin/seam", ["wrap", "--"]],
    ["/usr/bin/seam", ["verify", "--", "x"]],
    ["/usr/bin/node", ["server.js", "/opt/seam/dist/seam.mjs", "wrap", "--", "x"]],
    ["/usr/bin/seamless", ["wrap", "--", "x"]],
  ])("%s %j is not", (command, args) => {
    expect(parseWrapped(command, args, WRAP_FLAGS)).toBeNull();
  });
  test.each([
    [{ command: "x" }, "stdio"],
    [{ command: "x", type: "stdio" }, "stdio"],
    [{ url: "https://x" }, "remote"],
    [{ serverUrl: "https://x" }, "remote"],
    [{ httpUrl: "https://x" }, "remote"],
    [{ type: "http", command: "x" }, "remote"],
    [{ type: "sse", url: "https://x" }, "remote"],
    [{ source: "extension", settings: {} }, "unsupported"],
    [{ command: { path: "x", args: [] } }, "unsupported"],
    [{ command: "x", args: "-y" }, "unsupported"],
    [{ command: "x", args: ["-p", 8080] }, "unsupported"],
    [{ command: "x", type: "websocket" }, "unsupported"],
  ])("%j: %s", (entry, kind) => {
    expect(classify(entry, WRAP_FLAGS).kind as string).toBe(kind as string);
  });
});

describe.each(CASES.map((c) => [c.client, c] as const))("%s", (_, c) => {
  test("install wraps each stdio entry exactly as specified, leaves the rest; a second install changes nothing; uninstall gives back the same bytes", () => {
    const home = tempDir();
    const { path, text } = layOut(home, [c]).get(c.client)!;
    const ledger = join(home, ".local/share/seam", `${c.client}.jsonl`);
    const r = installIn(home, [c.client]);
    expect(r.map((f) => f.status)).toEqual(["changed"]);
    const got = (a: string) => r[0]!.servers.filter((s) => s.action === a).map((s) => s.name);
    expect(got("wrapped")).toEqual(c.wraps);
    expect(got("remote")).toEqual(c.remote);
    expect(got("unsupported")).toEqual(c.unsupported);

    const after = readFileSync(path, "utf8");
    const before = serversOf(c, text);
    const now = serversOf(c, after);
    expect([...now.keys()]).toEqual([...before.keys()]);
    for (const [name, { value: entry, shape }] of before) {
      if (!c.wraps.includes(name)) {
        expect(sameValue(now.get(name)!.value, entry)).toBe(true);
        continue;
      }
      const was = launchOf(entry, shape) as { command: string; args: string[] };
      const is = launchOf(now.get(name)!.value, shape) as { command: string; args: string[] };
      expect(is).toEqual({
        command: "/opt/seam/bin/seam",
        args: ["wrap", "--ledger", ledger, "--server", name, "--", was.command, ...was.args],
      });
      const rest = (e: Record<string, unknown>) => {
        const { [shape.command]: _c, [shape.args ?? shape.command]: _a, ...others } = e;
        return others;
      };
      expect(sameValue(rest(now.get(name)!.value), rest(entry))).toBe(true);
    }
    // Every byte outside the wrapped entries' command and args is the same: the rest of the document parses equal.
    const fmt = formatOf(targetsFor(c.client, "user", envAt(home))[0]!);
    const strip = (v: unknown): unknown =>
      JSON.parse(JSON.stringify(v, (k, x) => (k === "command" || k === "args" || k === "cmd" ? undefined : x)));
    expect(strip(fmt.value(after))).toEqual(strip(fmt.value(text)) as never);
    if (c.crlf) expect(after.replace(/\r\n/g, "")).not.toContain("\n");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(ledger)).mode & 0o777).toBe(0o700);
    expect(statSync(join(home, ".local")).mode & 0o777).not.toBe(0o700);
    expect(readFileSync(r[0]!.backup!, "utf8")).toBe(text);

    const again = installIn(home, [c.client]);
    expect(again.map((f) => f.status)).toEqual(["unchanged"]);
    expect(again[0]!.servers.filter((s) => s.action === "already").map((s) => s.name)).toEqual(c.wraps);
    expect(readFileSync(path, "utf8")).toBe(after);

    const u = uninstallIn(home, [c.client]);
    expect(u[0]!.servers.filter((s) => s.action === "restored").map((s) => s.name)).toEqual(c.wraps);
    expect(readFileSync(path, "utf8")).toBe(text);
    expect(uninstallIn(home, [c.client])[0]!.status).toBe("unchanged");
  });
});

describe.each(CASES.map((c) => [c.client, c] as const))("%s, wrapped by a seam in npm's npx cache", (_, c) => {
  test("install by a lasting seam wraps each entry again through itself: the same bytes as its own install; uninstall gives back the original", () => {
    const npx = { argv: ["/usr/bin/node", "/home/me/.npm/_npx/239da8dec6f6d350/node_modules/.bin/seam"] };
    const probe = { os: "linux" as const, temp: ["/tmp/nothing-here"], realpath: (p: string) => p };
    const [home, fresh] = [tempDir(), tempDir()];
    const { path, text } = layOut(home, [c]).get(c.client)!;
    // The same ledger in both homes, so that the two files can be compared byte for byte.
    const ledger = join(home, "all.jsonl");
    installIn(home, [c.client], { seam: npx, ledger });
    expect(readFileSync(path, "utf8")).toContain("_npx");
    const r = installIn(home, [c.client], { ledger, probe });
    expect(r[0]!.servers.filter((s) => s.action === "relaunched").map((s) => [s.name, s.transient])).toEqual(
      c.wraps.map((n) => [n, { reason: "npm's npx cache", path: npx.argv[1]! }]),
    );
    const freshPath = layOut(fresh, [c]).get(c.client)!.path;
    installIn(fresh, [c.client], { ledger, probe });
    expect(readFileSync(path, "utf8")).toBe(readFileSync(freshPath, "utf8"));
    uninstallIn(home, [c.client]);
    expect(readFileSync(path, "utf8")).toBe(text);
  });
});

describe("Continue's mcpServers folder", () => {
  test("each YAML block and JSON file in it is a config file of its own: wrapped, listed by status, given back byte for byte; other files are left alone", async () => {
    const home = tempDir();
    const dir = join(home, ".continue/mcpServers");
    mkdirSync(join(dir, "sub.yaml"), { recursive: true });
    const files: Record<string, string> = {
      "playwright-mcp.yaml":
        'name: Playwright mcpServer\nversion: 0.0.1\nschema: v1\nmcpServers:\n  - name: Browser search\n    command: npx\n    args:\n      - "@playwright/mcp@latest"\n',
      "mcp.json": '{\n  "mcpServers": {\n    "fs": { "command": "npx", "args": ["-y", "server-fs"] }\n  }\n}\n',
      "notes.txt": "mcpServers:\n  - name: x\n    command: y\n",
    };
    for (const [n, text] of Object.entries(files)) writeFileSync(join(dir, n), text);
    const r = installIn(home, ["continue"]);
    expect(r.map((f) => [f.file, f.status, f.servers.map((s) => `${s.name} ${s.action}`)])).toEqual([
      [join(dir, "mcp.json"), "changed", ["fs wrapped"]],
      [join(dir, "playwright-mcp.yaml"), "changed", ["Browser search wrapped"]],
    ]);
    expect(readFileSync(join(dir, "notes.txt"), "utf8")).toBe(files["notes.txt"]!);
    const st = await status(["continue"], envAt(home), WRAP_FLAGS);
    expect(st.map((f) => [f.file, f.servers.map((s) => `${s.name} ${s.state}`)])).toEqual([
      [join(dir, "mcp.json"), ["fs recorded"]],
      [join(dir, "playwright-mcp.yaml"), ["Browser search recorded"]],
    ]);
    uninstallIn(home, ["continue"]);
    for (const [n, text] of Object.entries(files)) expect(readFileSync(join(dir, n), "utf8")).toBe(text);
  });
});

describe("files that resist", () => {
  const CURSOR = CASES.find((c) => c.client === "cursor")!;
  const small = '{\n  "mcpServers": {\n    "a": { "command": "srv", "args": ["-v"] }\n  }\n}\n';
  const lay = (text: string) => {
    const home = tempDir();
    const path = join(home, ".cursor/mcp.json");
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    return { home, path };
  };
  const siblings = (path: string) => readdirSync(dirname(path)).sort();

  test("--dry-run prints a unified diff and writes nothing: no file, no backup, no ledger folder", () => {
    const { home, path } = lay(small);
    const r = installIn(home, ["cursor"], { dryRun: true });
    expect(r[0]!.status).toBe("changed");
    const ledger = join(home, ".local/share/seam/cursor.jsonl");
    expect(r[0]!.diff).toBe(
      [
        `Index: ${path}`,
        "===================================================================",
        `--- ${path}`,
        `+++ ${path}`,
        "@@ -1,5 +1,5 @@",
        " {",
        '   "mcpServers": {',
        '-    "a": { "command": "srv", "args": ["-v"] }',
        `+    "a": { "command": "/opt/seam/bin/seam", "args": ["wrap", "--ledger", ${JSON.stringify(ledger)}, "--server", "a", "--", "srv", "-v"] }`,
        "   }",
        " }",
        "",
      ].join("\n"),
    );
    expect(readFileSync(path, "utf8")).toBe(small);
    expect(siblings(path)).toEqual(["mcp.json"]);
    expect(existsSync(join(home, ".local"))).toBe(false);
  });

  test("a file that does not parse is left as it is, and the error names the file and the position", () => {
    const bad = '{\n  "mcpServers": {\n    "a": { "command": "srv" }\n    "b": { "command": "x" }\n  }\n}\n';
    const { home, path } = lay(bad);
    for (const run of [
      () => installIn(home, ["cursor"]),
      () => uninstallIn(home, ["cursor"]),
      () => installIn(home, ["cursor"], { dryRun: true }),
    ]) {
      const r = run();
      expect(r[0]!.status).toBe("error");
      expect(r[0]!.error).toBe(`${path}: line 4, column 5: comma expected`);
    }
    expect(readFileSync(path, "utf8")).toBe(bad);
    expect(siblings(path)).toEqual(["mcp.json"]);
  });

  test("a TOML file that does not parse: the same", () => {
    const home = tempDir();
    const path = join(home, ".codex/config.toml");
    mkdirSync(dirname(path), { recursive: true });
    const bad = '[mcp_servers.a]\ncommand = "srv"\nargs = ["x",\n';
    writeFileSync(path, bad);
    const r = installIn(home, ["codex"]);
    expect(r[0]!.status).toBe("error");
    expect(r[0]!.error).toMatch(new RegExp(`^${path.replace(/[.]/g, "\\.")}: line 4, column 1: `));
    expect(readFileSync(path, "utf8")).toBe(bad);
  });

  test("a YAML file that does not parse: the same", () => {
    const home = tempDir();
    const path = join(home, ".continue/config.yaml");
    mkdirSync(dirname(path), { recursive: true });
    const bad = "mcpServers:\n  - name: a\n    command: [x\n";
    writeFileSync(path, bad);
    const r = installIn(home, ["continue"]);
    expect(r[0]!.status).toBe("error");
    expect(r[0]!.error).toMatch(new RegExp(`^${path.replace(/[.]/g, "\\.")}: line \\d+, column \\d+: `));
    expect(readFileSync(path, "utf8")).toBe(bad);
  });

  test("YAML entries seam does not edit (a block scalar, an anchored command, an args that is not a list) are reported and left alone; the others are wrapped and come back", () => {
    const home = tempDir();
    const path = join(home, ".config/goose/config.yaml");
    mkdirSync(dirname(path), { recursive: true });
    const text = [
      "extensions:",
      "  block:",
      "    cmd: |",
      "      srv",
      "    type: stdio",
      "  anchored:",
      "    cmd: &c srv",
      "    type: stdio",
      "  flow: {cmd: srv, type: stdio}",
      "  odd:",
      "    args: -v",
      "    cmd: srv",
      "",
    ].join("\n");
    writeFileSync(path, text);
    const r = installIn(home, ["goose"]);
    expect(r[0]!.servers.map((s) => [s.name, s.action, s.reason])).toEqual([
      ["block", "unsupported", "its cmd is not a one-line string"],
      ["anchored", "unsupported", "its cmd is not a one-line string"],
      ["flow", "wrapped", undefined],
      ["odd", "unsupported", "args is not a list of strings"],
    ]);
    const wrapped = readFileSync(path, "utf8");
    expect(wrapped).toContain(
      `  flow: {cmd: "/opt/seam/bin/seam", args: ["wrap", "--ledger", ${JSON.stringify(join(home, ".local/share/seam/goose.jsonl"))}, "--server", "flow", "--", srv], type: stdio}\n`,
    );
    uninstallIn(home, ["goose"]);
    expect(readFileSync(path, "utf8")).toBe(text);
  });

  test("Codex entries not written as their own table are reported and left alone", () => {
    const home = tempDir();
    const path = join(home, ".codex/config.toml");
    mkdirSync(dirname(path), { recursive: true });
    const text =
      '[mcp_servers]\ninline = { command = "x", args = ["-y"] }\n\n[mcp_servers.own]\ncommand = """multi"""\n';
    writeFileSync(path, text);
    const r = installIn(home, ["codex"]);
    expect(r[0]!.status).toBe("unchanged");
    expect(r[0]!.servers.map((s) => [s.name, s.action, s.reason])).toEqual([
      ["inline", "unsupported", "not written as its own [mcp_servers.inline] table; seam edits only that layout"],
      ["own", "unsupported", "its command is not a one-line string in its table"],
    ]);
    expect(readFileSync(path, "utf8")).toBe(text);
  });

  test("a file the client rewrites between seam's read and write: read again, the edit made on the new text, the client's change kept", () => {
    const { home, path } = lay(small);
    const clients =
      '{\n  "mcpServers": {\n    "a": { "command": "srv", "args": ["-v"] },\n    "b": { "command": "new" }\n  }\n}\n';
    const r = installIn(home, ["cursor"], {
      hooks: { beforeCommit: (file, attempt) => attempt === 1 && writeFileSync(file, clients) },
    });
    expect(r[0]!.status).toBe("changed");
    expect(r[0]!.attempts).toBe(2);
    expect(r[0]!.servers.map((s) => `${s.name} ${s.action}`)).toEqual(["a wrapped", "b wrapped"]);
    const now = serversOf(CURSOR, readFileSync(path, "utf8"));
    expect(now.get("b")!.value.args).toEqual([
      "wrap",
      "--ledger",
      join(home, ".local/share/seam/cursor.jsonl"),
      "--server",
      "b",
      "--",
      "new",
    ]);
    // The backup holds what the edit was made on: the client's version.
    expect(readFileSync(r[0]!.backup!, "utf8")).toBe(clients);
    expect(siblings(path).filter((n) => n.includes(".seam-backup-")).length).toBe(1);
    uninstallIn(home, ["cursor"]);
    expect(readFileSync(path, "utf8")).toBe(clients);
  });

  test("a file that keeps changing is never overwritten: the client's last write stays", () => {
    const { home, path } = lay(small);
    let n = 0;
    const r = installIn(home, ["cursor"], {
      hooks: { beforeCommit: (file) => writeFileSync(file, small.replace("-v", `-v${++n}`)) },
    });
    expect(r[0]!.status).toBe("error");
    expect(r[0]!.error).toContain("kept changing");
    expect(readFileSync(path, "utf8")).toBe(small.replace("-v", `-v${n}`));
    expect(siblings(path)).toEqual(["mcp.json"]);
  });

  test("a read-only file is refused, not replaced", () => {
    const { home, path } = lay(small);
    chmodSync(path, 0o444);
    const r = installIn(home, ["cursor"]);
    expect(r[0]!.status).toBe("error");
    expect(r[0]!.error).toBe(`${path} is read-only; seam left it as it is`);
    expect(readFileSync(path, "utf8")).toBe(small);
    expect(statSync(path).mode & 0o777).toBe(0o444);
    expect(siblings(path)).toEqual(["mcp.json"]);
  });

  test("a symlinked config stays a symlink; its target is edited", () => {
    const { home, path } = lay(small);
    const real = join(home, "dotfiles-mcp.json");
    writeFileSync(real, small);
    const { unlinkSync } = require("node:fs") as typeof import("node:fs");
    unlinkSync(path);
    symlinkSync(real, path);
    installIn(home, ["cursor"]);
    expect(lstatSync(path).isSymbolicLink()).toBe(true);
    expect(readlinkSync(path)).toBe(real);
    expect(readFileSync(real, "utf8")).toContain('"/opt/seam/bin/seam"');
    uninstallIn(home, ["cursor"]);
    expect(readFileSync(real, "utf8")).toBe(small);
  });

  test("--server picks entries by name; --ledger and --sign go into each wrapped entry", () => {
    const two = '{"mcpServers": {"a": {"command": "x"}, "b": {"command": "y", "args": []}}}';
    const { home, path } = lay(two);
    installIn(home, ["cursor"], { servers: ["b"], ledger: "/var/log/seam/all.jsonl", sign: "/home/me/seam.key" });
    expect(readFileSync(path, "utf8")).toBe(
      '{"mcpServers": {"a": {"command": "x"}, "b": {"command": "/opt/seam/bin/seam", "args": ["wrap", "--ledger", "/var/log/seam/all.jsonl", "--server", "b", "--sign", "/home/me/seam.key", "--", "y"]}}}',
    );
    uninstallIn(home, ["cursor"]);
    expect(readFileSync(path, "utf8")).toBe(two);
  });

  test("Windows: a seam.exe and ledger with backslashes, entries with Windows paths, round trip", () => {
    const win =
      '{\r\n  "mcpServers": {\r\n    "fs": {\r\n      "command": "C:\\\\Program Files\\\\nodejs\\\\npx.cmd",\r\n      "args": ["-y", "D:\\\\data"]\r\n    }\r\n  }\r\n}';
    const { home, path } = lay(win);
    const seam = { argv: ["C:\\Program Files\\seam\\seam.exe"] };
    installIn(home, ["cursor"], { seam, ledger: "C:\\Users\\Me\\AppData\\Local\\seam\\cursor.jsonl" });
    const entry = serversOf(CURSOR, readFileSync(path, "utf8")).get("fs")!.value;
    expect(entry).toEqual({
      command: "C:\\Program Files\\seam\\seam.exe",
      args: [
        "wrap",
        "--ledger",
        "C:\\Users\\Me\\AppData\\Local\\seam\\cursor.jsonl",
        "--server",
        "fs",
        "--",
        "C:\\Program Files\\nodejs\\npx.cmd",
        "-y",
        "D:\\data",
      ],
    } as never);
    uninstallIn(home, ["cursor"]);
    expect(readFileSync(path, "utf8")).toBe(win);
  });

  test('an entry that had `"args": []` just before its command comes back without it (the documented ambiguity)', () => {
    const t = '{"mcpServers": {"a": {"args": [], "command": "x"}}}';
    const { home, path } = lay(t);
    installIn(home, ["cursor"]);
    uninstallIn(home, ["cursor"]);
    expect(readFileSync(path, "utf8")).toBe('{"mcpServers": {"a": {"command": "x"}}}');
  });

  test("Claude Code: a large ~/.claude.json, servers of every project wrapped, the rest byte-identical after uninstall", () => {
    const base = JSON.parse(fixtureText(CASES.find((c) => c.client === "claude-code")!));
    for (let i = 0; i < 200; i++) {
      base.projects[`/home/me/src/p${i}`] = {
        allowedTools: [],
        history: Array.from({ length: 20 }, (_, j) => ({ display: `prompt ${j} ✓ in p${i}`, pastedContents: {} })),
        mcpServers:
          i % 50 === 0 ? { [`local-${i}`]: { type: "stdio", command: "srv", args: [`--p=${i}`], env: {} } } : {},
        hasTrustDialogAccepted: i % 2 === 0,
      };
    }
    const text = JSON.stringify(base, null, 2);
    const home = tempDir();
    const path = join(home, ".claude.json");
    writeFileSync(path, text);
    const r = installIn(home, ["claude-code"]);
    const wrapped = r[0]!.servers.filter((s) => s.action === "wrapped");
    expect(wrapped.map((s) => s.name)).toEqual([
      "fixture",
      "postgres",
      ...Array.from({ length: 4 }, (_, k) => `local-${k * 50}`),
    ]);
    expect(wrapped[2]!.where).toBe('projects["/home/me/src/p0"].mcpServers (local)');
    uninstallIn(home, ["claude-code"]);
    expect(readFileSync(path, "utf8")).toBe(text);
  }, 60_000);

  test("project scope edits the project's files only", () => {
    const home = tempDir();
    const project = join(home, "proj");
    mkdirSync(project);
    writeFileSync(join(project, ".mcp.json"), '{"mcpServers": {"p": {"command": "x"}}}\n');
    const r = install({
      clients: ["claude-code"],
      scope: "project",
      env: envAt(home, project),
      dryRun: false,
      seam: SEAM,
      wrapFlags: WRAP_FLAGS,
    });
    expect(r.map((f) => [f.file, f.status])).toEqual([[join(project, ".mcp.json"), "changed"]]);
  });

  test("an edit that would change more than its entry is refused: that entry is left, the others are written", () => {
    const two = '{"mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}}, "keep": 1}';
    const { home, path } = lay(two);
    // A planner that, for b, also changes a byte outside b (`"keep": 1` becomes 2).
    const faulty = {
      ...jsonFormat,
      plan(text: string) {
        const p = jsonFormat.plan(text);
        return {
          ...p,
          wrap(ref: Parameters<typeof p.wrap>[0], seam: SeamCommand, o: { ledger: string }) {
            const edits = p.wrap(ref, seam, o);
            const keep = text.indexOf('"keep": 1');
            return ref.name === "b" && keep >= 0 ? [...edits, { offset: keep + 8, length: 1, content: "2" }] : edits;
          },
        };
      },
    };
    const r = installIn(home, ["cursor"], { formatFor: () => faulty });
    expect(r[0]!.servers.map((s) => [s.name, s.action, s.reason])).toEqual([
      ["a", "wrapped", undefined],
      ["b", "unsupported", "seam's edit would have changed more than this entry; left as it is"],
    ]);
    const now = readFileSync(path, "utf8");
    expect(now).toContain('"b": {"command": "y"}');
    expect(now).toContain('"keep": 1');
    expect(now).toContain('"a": {"args": ["wrap"');
  });

  test("the diff is the `diff` package's unified format", () => {
    expect(unifiedDiff("f", "a\nb\n", "a\nc\n")).toBe(
      "Index: f\n===================================================================\n--- f\n+++ f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n",
    );
  });
});
