/**
 * The MCP clients seam can set up, where each keeps its server list on each
 * OS, and under which key. Pure: everything comes from a PathEnv, so a test
 * can ask for the Windows or macOS paths from Linux, and SEAM_CONFIG_HOME /
 * --config-root moves every user-level path under one directory.
 *
 * Sources for the paths and keys (each client's own documentation where it
 * has one): Claude Desktop keeps `claude_desktop_config.json` in the app's
 * data folder (macOS ~/Library/Application Support/Claude, Windows
 * %APPDATA%\Claude; there is no official Linux build, community builds use
 * ~/.config/Claude); Claude Code keeps user- and local-scope servers in
 * ~/.claude.json (top-level `mcpServers`, and `projects[<abs path>].mcpServers`)
 * and project scope in `<project>/.mcp.json`; Cursor ~/.cursor/mcp.json and
 * `<project>/.cursor/mcp.json`; VS Code a user-profile `mcp.json` (the
 * `User` folder of its data dir) and `.vscode/mcp.json`, key `servers`;
 * Windsurf ~/.codeium/windsurf/mcp_config.json; Zed ~/.config/zed/settings.json
 * ($XDG_CONFIG_HOME on Linux, %APPDATA%\Zed on Windows), key `context_servers`;
 * Cline `cline_mcp_settings.json` in VS Code's globalStorage for the
 * saoudrizwan.claude-dev extension; Gemini CLI ~/.gemini/settings.json and
 * `<project>/.gemini/settings.json`; Codex ~/.codex/config.toml ($CODEX_HOME)
 * and `<project>/.codex/config.toml`, tables `[mcp_servers.NAME]`.
 *
 * The clients added after those, each with the documentation its entry
 * follows:
 *   - VS Code Insiders: as VS Code, in the `Code - Insiders` data folder
 *     (its workspace file is VS Code's `.vscode/mcp.json`, set up as vscode).
 *   - Roo Code (docs.roocode.com, "Using MCP in Roo Code"): global
 *     `mcp_settings.json` in VS Code's globalStorage for the
 *     rooveterinaryinc.roo-cline extension, project `.roo/mcp.json`; key
 *     `mcpServers`, entries as Cline's.
 *   - Continue (docs.continue.dev, config.yaml reference, `schema: v1`):
 *     ~/.continue/config.yaml, `mcpServers:` a YAML list of entries, each
 *     named by its `name`, with `command`, `args`, `env`, `type`; and the
 *     block files of the `mcpServers` folder (~/.continue/mcpServers and
 *     `<project>/.continue/mcpServers`): YAML blocks with the same list, or
 *     JSON files in the `mcpServers` notation of Claude's and Cursor's.
 *   - Goose (block.github.io/goose, "Configuration Files"): config.yaml in
 *     ~/.config/goose (%APPDATA%\Block\goose\config on Windows), key
 *     `extensions`, a stdio extension is `type: stdio` with `cmd` and `args`.
 *   - LM Studio (lmstudio.ai/docs, "Use MCP Servers", 0.3.17 and later):
 *     ~/.lmstudio/mcp.json on every OS, Cursor's `mcpServers` notation.
 *   - Amazon Q Developer (docs.aws.amazon.com, Q Developer CLI MCP
 *     configuration, the mcp.json files of CLI 1.9 and later):
 *     ~/.aws/amazonq/mcp.json and `<project>/.amazonq/mcp.json`, key
 *     `mcpServers`. Newer versions also read agent files, not set up here.
 *   - Kiro (kiro.dev/docs/mcp/configuration): ~/.kiro/settings/mcp.json and
 *     `<project>/.kiro/settings/mcp.json`, key `mcpServers`.
 *   - opencode (opencode.ai/docs/mcp-servers): ~/.config/opencode/opencode.json
 *     (or .jsonc) on every OS (it keeps to the XDG layout) and
 *     `<project>/opencode.json` (or .jsonc);
 *     key `mcp`, a local server is `type: local` with `command` one list
 *     (the program, then its arguments).
 *   - Junie (jetbrains.com/help/junie, "Model Context Protocol"):
 *     ~/.junie/mcp/mcp.json and `<project>/.junie/mcp/mcp.json`, key
 *     `mcpServers`; stdio servers only.
 */
import { posix, win32 } from "node:path";
import type { Shape } from "./entry.ts";

export type Os = "linux" | "darwin" | "win32";
export type Scope = "user" | "project";
export type Format = "json" | "toml" | "yaml";

export const CLIENT_IDS = [
  "claude-desktop",
  "claude-code",
  "cursor",
  "vscode",
  "windsurf",
  "zed",
  "cline",
  "gemini",
  "codex",
  "vscode-insiders",
  "roo-code",
  "continue",
  "goose",
  "lm-studio",
  "amazon-q",
  "kiro",
  "opencode",
  "junie",
] as const;
export type ClientId = (typeof CLIENT_IDS)[number];

export const CLIENT_NAMES: Record<ClientId, string> = {
  "claude-desktop": "Claude Desktop",
  "claude-code": "Claude Code",
  cursor: "Cursor",
  vscode: "VS Code",
  windsurf: "Windsurf",
  zed: "Zed",
  cline: "Cline",
  gemini: "Gemini CLI",
  codex: "Codex",
  "vscode-insiders": "VS Code Insiders",
  "roo-code": "Roo Code",
  continue: "Continue",
  goose: "Goose",
  "lm-studio": "LM Studio",
  "amazon-q": "Amazon Q",
  kiro: "Kiro",
  opencode: "opencode",
  junie: "Junie",
};

/** Everything the paths depend on. */
export interface PathEnv {
  os: Os;
  home: string;
  /** The project directory for --scope project (absolute). */
  cwd: string;
  /** Windows %APPDATA% (Roaming). */
  appData?: string;
  /** Windows %LOCALAPPDATA%. */
  localAppData?: string;
  xdgConfigHome?: string;
  xdgDataHome?: string;
  codexHome?: string;
  /** SEAM_CONFIG_HOME / --config-root: every user-level path is laid out under it, as if it were the home directory. */
  configRoot?: string;
}

/**
 * Where a client's servers sit in one file: `path` is the key path of the
 * servers object; `projects` says the object at that key maps project paths
 * to objects that each have their own `mcpServers` (Claude Code local scope).
 */
export interface Container {
  path: string[];
  label: string;
  projects?: boolean;
  /** The servers are a list of entries, each named by its `name` field (Continue), not an object keyed by name. */
  list?: boolean;
  /** The entries' fields that start the server (default: command and args). */
  shape?: Shape;
}

export interface Target {
  client: ClientId;
  scope: Scope;
  file: string;
  format: Format;
  containers: Container[];
  /**
   * `file` is a folder of config files, each a target of its own: its
   * `.yaml`/`.yml` files read as YAML with `containers`, its `.json` files as
   * JSON with `json` (Continue's `mcpServers` folder of blocks).
   */
  folder?: { json: Container[] };
}

/** The OS whose layout a platform follows: every other Unix (FreeBSD, …) keeps to Linux's XDG folders. */
export function osOf(platform: NodeJS.Platform): Os {
  return platform === "win32" ? "win32" : platform === "darwin" ? "darwin" : "linux";
}

/**
 * The PathEnv of this process, or of `platform` with `e` for its environment.
 * On Windows the home folder is %USERPROFILE% before $HOME: the clients find
 * theirs as Windows does (a $HOME set by Git Bash or MSYS may be spelled
 * `/c/Users/…`, or point elsewhere); elsewhere $HOME first.
 */
export function pathEnvFromProcess(
  configRoot?: string,
  cwd = process.cwd(),
  platform: NodeJS.Platform = process.platform,
  e: NodeJS.ProcessEnv = process.env,
): PathEnv {
  const os = osOf(platform);
  return {
    os,
    home: (os === "win32" ? e.USERPROFILE || e.HOME : e.HOME || e.USERPROFILE) || "",
    cwd,
    appData: e.APPDATA || undefined,
    localAppData: e.LOCALAPPDATA || undefined,
    xdgConfigHome: e.XDG_CONFIG_HOME || undefined,
    xdgDataHome: e.XDG_DATA_HOME || undefined,
    codexHome: e.CODEX_HOME || undefined,
    configRoot: configRoot || e.SEAM_CONFIG_HOME || undefined,
  };
}

/** The per-OS base folders, with a config root standing in for the home directory and ignoring the environment. */
function bases(env: PathEnv) {
  const p = env.os === "win32" ? win32 : posix;
  const root = env.configRoot;
  const home = root ?? env.home;
  const appData = (!root && env.appData) || p.join(home, "AppData", "Roaming");
  const localAppData = (!root && env.localAppData) || p.join(home, "AppData", "Local");
  const xdgConfig = (!root && env.xdgConfigHome) || p.join(home, ".config");
  const xdgData = (!root && env.xdgDataHome) || p.join(home, ".local", "share");
  const codexHome = (!root && env.codexHome) || p.join(home, ".codex");
  return { p, home, appData, localAppData, xdgConfig, xdgData, codexHome };
}

/**
 * A folder of an app's among the user's settings (`config`) or data
 * (`data`): roaming or local AppData on Windows, Application Support on
 * macOS, the XDG folder elsewhere.
 */
function appDir(env: PathEnv, kind: "config" | "data", ...names: string[]): string {
  const { p, home, appData, localAppData, xdgConfig, xdgData } = bases(env);
  const base =
    env.os === "win32"
      ? kind === "config"
        ? appData
        : localAppData
      : env.os === "darwin"
        ? p.join(home, "Library", "Application Support")
        : kind === "config"
          ? xdgConfig
          : xdgData;
  return p.join(base, ...names);
}

/** VS Code's `User` folder (Cline and Roo Code live under it too). */
function vscodeUser(env: PathEnv): string {
  return appDir(env, "config", "Code", "User");
}

const MCP_SERVERS: Container[] = [{ path: ["mcpServers"], label: "mcpServers" }];
const CONTINUE: Container[] = [{ path: ["mcpServers"], label: "mcpServers", list: true }];
const OPENCODE: Container[] = [{ path: ["mcp"], label: "mcp", shape: { command: "command" } }];

/** The files of one client at one scope (none when the client has no such scope). */
export function targetsFor(client: ClientId, scope: Scope, env: PathEnv): Target[] {
  const { p, home, appData, xdgConfig, codexHome } = bases(env);
  const t = (file: string, containers: Container[], format: Format = "json"): Target[] => [
    { client, scope, file, format, containers },
  ];
  const project = (...parts: string[]) => p.join(env.cwd, ...parts);
  if (scope === "project") {
    switch (client) {
      case "claude-code":
        return t(project(".mcp.json"), MCP_SERVERS);
      case "cursor":
        return t(project(".cursor", "mcp.json"), MCP_SERVERS);
      case "vscode":
        return t(project(".vscode", "mcp.json"), [{ path: ["servers"], label: "servers" }]);
      case "gemini":
        return t(project(".gemini", "settings.json"), MCP_SERVERS);
      case "codex":
        return t(project(".codex", "config.toml"), [{ path: ["mcp_servers"], label: "mcp_servers" }], "toml");
      case "roo-code":
        return t(project(".roo", "mcp.json"), MCP_SERVERS);
      case "continue":
        return [
          {
            client,
            scope,
            file: project(".continue", "mcpServers"),
            format: "yaml",
            containers: CONTINUE,
            folder: { json: MCP_SERVERS },
          },
        ];
      case "amazon-q":
        return t(project(".amazonq", "mcp.json"), MCP_SERVERS);
      case "kiro":
        return t(project(".kiro", "settings", "mcp.json"), MCP_SERVERS);
      case "opencode":
        return [...t(project("opencode.json"), OPENCODE), ...t(project("opencode.jsonc"), OPENCODE)];
      case "junie":
        return t(project(".junie", "mcp", "mcp.json"), MCP_SERVERS);
      default:
        return [];
    }
  }
  switch (client) {
    case "claude-desktop":
      return t(appDir(env, "config", "Claude", "claude_desktop_config.json"), MCP_SERVERS);
    case "claude-code":
      return t(p.join(home, ".claude.json"), [
        { path: ["mcpServers"], label: "mcpServers (user)" },
        { path: ["projects"], label: "projects", projects: true },
      ]);
    case "cursor":
      return t(p.join(home, ".cursor", "mcp.json"), MCP_SERVERS);
    case "vscode":
      return t(p.join(vscodeUser(env), "mcp.json"), [{ path: ["servers"], label: "servers" }]);
    case "windsurf":
      return t(p.join(home, ".codeium", "windsurf", "mcp_config.json"), MCP_SERVERS);
    case "zed": {
      const dir =
        env.os === "win32"
          ? p.join(appData, "Zed")
          : p.join(env.os === "darwin" ? p.join(home, ".config") : xdgConfig, "zed");
      return t(p.join(dir, "settings.json"), [{ path: ["context_servers"], label: "context_servers" }]);
    }
    case "cline":
      return t(
        p.join(vscodeUser(env), "globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json"),
        MCP_SERVERS,
      );
    case "gemini":
      return t(p.join(home, ".gemini", "settings.json"), MCP_SERVERS);
    case "codex":
      return t(p.join(codexHome, "config.toml"), [{ path: ["mcp_servers"], label: "mcp_servers" }], "toml");
    case "vscode-insiders":
      return t(p.join(appDir(env, "config", "Code - Insiders", "User"), "mcp.json"), [
        { path: ["servers"], label: "servers" },
      ]);
    case "roo-code":
      return t(
        p.join(vscodeUser(env), "globalStorage", "rooveterinaryinc.roo-cline", "settings", "mcp_settings.json"),
        MCP_SERVERS,
      );
    case "continue":
      return [
        ...t(p.join(home, ".continue", "config.yaml"), CONTINUE, "yaml"),
        {
          client,
          scope,
          file: p.join(home, ".continue", "mcpServers"),
          format: "yaml",
          containers: CONTINUE,
          folder: { json: MCP_SERVERS },
        },
      ];
    case "goose": {
      const dir = env.os === "win32" ? p.join(appData, "Block", "goose", "config") : p.join(xdgConfig, "goose");
      return t(
        p.join(dir, "config.yaml"),
        [{ path: ["extensions"], label: "extensions", shape: { command: "cmd", args: "args" } }],
        "yaml",
      );
    }
    case "lm-studio":
      return t(p.join(home, ".lmstudio", "mcp.json"), MCP_SERVERS);
    case "amazon-q":
      return t(p.join(home, ".aws", "amazonq", "mcp.json"), MCP_SERVERS);
    case "kiro":
      return t(p.join(home, ".kiro", "settings", "mcp.json"), MCP_SERVERS);
    case "opencode": {
      const dir = p.join(home, ".config", "opencode");
      return [...t(p.join(dir, "opencode.json"), OPENCODE), ...t(p.join(dir, "opencode.jsonc"), OPENCODE)];
    }
    case "junie":
      return t(p.join(home, ".junie", "mcp", "mcp.json"), MCP_SERVERS);
  }
}

/** The default ledger of a client: one file per client in the user's data folder. */
export function defaultLedger(client: ClientId, env: PathEnv): string {
  return appDir(env, "data", "seam", `${client}.jsonl`);
}

export function isClientId(s: string): s is ClientId {
  return (CLIENT_IDS as readonly string[]).includes(s);
}

/** The targets with each folder replaced by the config files in it (a folder that is not there has none). */
export function expandTargets(targets: Target[], readdir: (dir: string) => string[]): Target[] {
  return targets.flatMap((t) => {
    if (!t.folder) return [t];
    let names: string[];
    try {
      names = readdir(t.file);
    } catch {
      return [];
    }
    const p = t.file.includes("\\") && !t.file.includes("/") ? win32 : posix;
    return names
      .filter((n) => /\.(ya?ml|json)$/i.test(n))
      .sort()
      .map((n): Target => {
        const json = /\.json$/i.test(n);
        return {
          client: t.client,
          scope: t.scope,
          file: p.join(t.file, n),
          format: json ? "json" : "yaml",
          containers: json ? t.folder!.json : t.containers,
        };
      });
  });
}
