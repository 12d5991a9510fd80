import { expect, test } from "bun:test";
import { serverLabel } from "../../src/wrap/label.ts";

const CASES: [string[], string][] = [
  // python -m
  [["python", "-m", "pkg.mod"], "pkg.mod"],
  [["python3", "-u", "-m", "x", "--flag"], "x"],
  [["/usr/bin/python3.12", "-m", "mcp_server_git", "--repository", "."], "mcp_server_git"],
  [["python", "-mpkg.mod"], "pkg.mod"],
  [["python", "-um", "pkg"], "pkg"],
  [["python", "-W", "ignore", "-X", "utf8", "-m", "srv"], "srv"],
  [["python", "-Wignore", "-m", "srv"], "srv"],
  [["py", "-3", "-m", "srv"], "srv"],
  [["python", "server.py", "-m", "notmine"], "python"],
  [["python", "-c", "import x", "-m", "y"], "python"],
  [["python", "-m"], "python"],
  [["C:\\Python312\\python.exe", "-m", "srv"], "srv"],
  // npx and friends: the package, version stripped
  [["npx", "-y", "@scope/pkg@1.2"], "@scope/pkg"],
  [["npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"], "@modelcontextprotocol/server-filesystem"],
  [["npx", "pkg"], "pkg"],
  [["npx", "pkg@latest", "--port", "1"], "pkg"],
  [["npx", "--yes", "--registry", "https://r.example", "pkg@2"], "pkg"],
  [["npx", "-p", "@scope/tools@3", "tool-bin"], "@scope/tools"],
  [["npx", "--package=@scope/tools", "tool-bin"], "@scope/tools"],
  [["npx", "--", "pkg"], "pkg"],
  [["npx.cmd", "-y", "pkg"], "pkg"],
  [["npx", "-y"], "npx"],
  [["bunx", "pkg"], "pkg"],
  [["bunx", "--bun", "@scope/pkg@1"], "@scope/pkg"],
  [["bun", "x", "pkg@1"], "pkg"],
  [["pnpm", "dlx", "pkg"], "pkg"],
  [["pnpm", "dlx", "@scope/pkg@1.0.0-beta.1"], "@scope/pkg"],
  [["pnpx", "pkg"], "pkg"],
  [["yarn", "dlx", "pkg@1"], "pkg"],
  [["npm", "exec", "--", "pkg@1"], "pkg"],
  [["npm", "exec", "-y", "pkg"], "pkg"],
  // uvx and friends: the Python package, version and extras stripped
  [["uvx", "pkg"], "pkg"],
  [["uvx", "mcp-server-fetch@0.6.2"], "mcp-server-fetch"],
  [["uvx", "pkg==1.0"], "pkg"],
  [["uvx", "pkg[extra]>=2"], "pkg"],
  [["uvx", "--python", "3.12", "--with", "dep", "pkg"], "pkg"],
  [["uvx", "-p", "3.12", "pkg"], "pkg"],
  [["uvx", "--from", "git+https://example.com/r", "tool"], "git+https://example.com/r"],
  [["uv", "tool", "run", "pkg@1"], "pkg"],
  [["pipx", "run", "pkg"], "pkg"],
  // wrappers
  [["env", "A=1", "B=2", "npx", "pkg"], "pkg"],
  [["/usr/bin/env", "-i", "python3", "-m", "srv"], "srv"],
  [["cmd", "/c", "npx", "-y", "pkg"], "pkg"],
  [["env", "A=1"], "env"],
  // else: the executable's basename
  [["/usr/local/bin/node", "dist/index.js"], "node"],
  [["./my-server"], "my-server"],
  [["docker", "run", "-i", "--rm", "mcp/fetch"], "docker"],
  [["uv", "run", "server.py"], "uv"],
  [["bun", "run", "server.ts"], "bun"],
  [["npm", "start"], "npm"],
  [["my server"], "my server"],
  [[], ""],
];

test.each(CASES)("%j → %s", (argv, label) => {
  expect(serverLabel(argv)).toBe(label);
});
