/**
 * Config files of every client, laid out under one directory the way each
 * client keeps them on Linux (that directory then stands for the home
 * directory: SEAM_CONFIG_HOME / --config-root). The fixtures' `fixture`
 * server runs seam's built-in fixture server; @SEAM_CMD@ and @SEAM_SCRIPT@
 * are filled in with a real runtime and script.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { type ClientId, targetsFor } from "../../src/install/clients.ts";
import type { Shape } from "../../src/install/entry.ts";
import { formatOf } from "../../src/install/install.ts";
import { ROOT } from "./cli.ts";

export interface Case {
  client: ClientId;
  fixture: string;
  /** Where the client keeps the file, relative to the home directory (Linux). */
  rel: string;
  /** Written with CRLF line endings. */
  crlf?: boolean;
  /** Servers install wraps, and those it reports as not recorded (by reason word). */
  wraps: string[];
  remote: string[];
  unsupported: string[];
}

export const CASES: Case[] = [
  {
    client: "claude-desktop",
    fixture: "claude_desktop_config.json",
    rel: ".config/Claude/claude_desktop_config.json",
    wraps: ["fixture", "filesystem"],
    remote: ["remote-notes"],
    unsupported: [],
  },
  {
    client: "claude-code",
    fixture: "claude.json",
    rel: ".claude.json",
    wraps: ["fixture", "postgres"],
    remote: ["linear"],
    unsupported: [],
  },
  {
    client: "cursor",
    fixture: "cursor-mcp.json",
    rel: ".cursor/mcp.json",
    crlf: true,
    wraps: ["fixture", "sqlite"],
    remote: ["github"],
    unsupported: [],
  },
  {
    client: "vscode",
    fixture: "vscode-mcp.json",
    rel: ".config/Code/User/mcp.json",
    wraps: ["fixture", "memory"],
    remote: ["github"],
    unsupported: [],
  },
  {
    client: "windsurf",
    fixture: "windsurf-mcp_config.json",
    rel: ".codeium/windsurf/mcp_config.json",
    wraps: ["fixture", "git"],
    remote: ["zapier"],
    unsupported: [],
  },
  {
    client: "zed",
    fixture: "zed-settings.json",
    rel: ".config/zed/settings.json",
    wraps: ["fixture"],
    remote: ["remote-mcp-server"],
    unsupported: ["mcp-server-context7"],
  },
  {
    client: "cline",
    fixture: "cline_mcp_settings.json",
    rel: ".config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
    wraps: ["fixture", "données-✓"],
    remote: [],
    unsupported: [],
  },
  {
    client: "gemini",
    fixture: "gemini-settings.json",
    rel: ".gemini/settings.json",
    wraps: ["fixture", "pythonTools"],
    remote: ["github"],
    unsupported: [],
  },
  {
    client: "codex",
    fixture: "codex-config.toml",
    rel: ".codex/config.toml",
    wraps: ["fixture", "docs-é", "context7"],
    remote: ["figma"],
    unsupported: [],
  },
  {
    client: "vscode-insiders",
    fixture: "vscode-insiders-mcp.json",
    rel: ".config/Code - Insiders/User/mcp.json",
    wraps: ["fixture", "playwright"],
    remote: ["remote"],
    unsupported: [],
  },
  {
    client: "roo-code",
    fixture: "roo-mcp_settings.json",
    rel: ".config/Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json",
    wraps: ["fixture", "puppeteer"],
    remote: ["remote-sse"],
    unsupported: [],
  },
  {
    client: "continue",
    fixture: "continue-config.yaml",
    rel: ".continue/config.yaml",
    wraps: ["fixture", "SQLite MCP", "Memory"],
    remote: ["Remote"],
    unsupported: [],
  },
  {
    client: "goose",
    fixture: "goose-config.yaml",
    rel: ".config/goose/config.yaml",
    crlf: true,
    wraps: ["fixture", "github"],
    remote: ["remote"],
    unsupported: ["developer"],
  },
  {
    client: "lm-studio",
    fixture: "lmstudio-mcp.json",
    rel: ".lmstudio/mcp.json",
    wraps: ["fixture", "fetch"],
    remote: ["hf-mcp-server"],
    unsupported: [],
  },
  {
    client: "amazon-q",
    fixture: "amazonq-mcp.json",
    rel: ".aws/amazonq/mcp.json",
    wraps: ["fixture", "awslabs.cdk-mcp-server"],
    remote: [],
    unsupported: [],
  },
  {
    client: "kiro",
    fixture: "kiro-mcp.json",
    rel: ".kiro/settings/mcp.json",
    wraps: ["fixture", "aws-docs"],
    remote: ["api-server"],
    unsupported: [],
  },
  {
    client: "opencode",
    fixture: "opencode.json",
    rel: ".config/opencode/opencode.json",
    wraps: ["fixture", "everything"],
    remote: ["jira"],
    unsupported: [],
  },
  {
    client: "junie",
    fixture: "junie-mcp.json",
    rel: ".junie/mcp/mcp.json",
    wraps: ["fixture", "filesystem"],
    remote: [],
    unsupported: [],
  },
];

/** The argv that runs the built-in fixture server (Bun from source, whichever seam does the wrapping). */
export const FIXTURE_SERVER = [process.execPath, `${ROOT}commands/seam.ts`, "fixture", "server"];

/** A fixture's text with the placeholders filled in (escaped for a JSON string, a TOML basic string or a YAML double-quoted one). */
export function fixtureText(c: Case): string {
  const esc = (s: string) => JSON.stringify(s).slice(1, -1);
  let text = readFileSync(join(ROOT, "test/fixtures/install", c.fixture), "utf8")
    .replaceAll("@SEAM_CMD@", esc(FIXTURE_SERVER[0]!))
    .replaceAll("@SEAM_SCRIPT@", esc(FIXTURE_SERVER[1]!));
  if (c.crlf) text = text.replace(/\r?\n/g, "\r\n");
  return text;
}

/** Writes the cases' files under `home`; returns each file's path and original text. */
export function layOut(home: string, cases: Case[] = CASES): Map<ClientId, { path: string; text: string }> {
  const out = new Map<ClientId, { path: string; text: string }>();
  for (const c of cases) {
    const path = join(home, c.rel);
    mkdirSync(dirname(path), { recursive: true });
    const text = fixtureText(c);
    writeFileSync(path, text);
    chmodSync(path, 0o600);
    out.set(c.client, { path, text });
  }
  return out;
}

/** The servers of a case's file (parsed as the client's format), by name. */
export function serversOf(c: Case, text: string): Map<string, { value: Record<string, unknown>; shape: Shape }> {
  const t = targetsFor(c.client, "user", { os: "linux", home: "/h", cwd: "/h", configRoot: "/h" })[0]!;
  const listed = formatOf(t).list(text, t.containers);
  if (!listed.ok) throw new Error(listed.error);
  return new Map(listed.servers.map((s) => [s.name, { value: s.value as Record<string, unknown>, shape: s.shape }]));
}
