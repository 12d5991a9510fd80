/**
 * One terminal-safe text policy (src/base/terminal-text.ts) for every command
 * that prints text from a ledger, a client config or a server: the function
 * as a table, then install, uninstall, status and verify (text and --json)
 * on hostile names, in all three builds.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { terminalCell, terminalJson, terminalText } from "../../src/base/terminal-text.ts";
import { built, runCli, VIAS } from "../helpers/cli.ts";
import { tempDir } from "../helpers/proc.ts";
import { sessionOf, writeLedger } from "../helpers/read-fixtures.ts";
import { LedgerBuilder } from "../helpers/verify-helpers.ts";

/** Every code point the policy escapes, one of each class, with the escape it must show as. */
const UNSAFE: [string, string, string][] = [
  ["NUL", "\u0000", "\\u0000"],
  ["BEL", "\u0007", "\\u0007"],
  ["newline", "\n", "\\u000a"],
  ["carriage return", "\r", "\\u000d"],
  ["tab", "\t", "\\u0009"],
  ["ESC", "\u001b", "\\u001b"],
  ["unit separator", "\u001f", "\\u001f"],
  ["DEL", "\u007f", "\\u007f"],
  ["C1 first", "\u0080", "\\u0080"],
  ["CSI", "\u009b", "\\u009b"],
  ["OSC (C1)", "\u009d", "\\u009d"],
  ["C1 last", "\u009f", "\\u009f"],
  ["arabic letter mark", "\u061c", "\\u061c"],
  ["LRM", "\u200e", "\\u200e"],
  ["RLM", "\u200f", "\\u200f"],
  ["LRE", "\u202a", "\\u202a"],
  ["RLO", "\u202e", "\\u202e"],
  ["LRI", "\u2066", "\\u2066"],
  ["PDI", "\u2069", "\\u2069"],
  ["line separator", "\u2028", "\\u2028"],
  ["paragraph separator", "\u2029", "\\u2029"],
  ["lone high surrogate", "\ud800", "\\ud800"],
  ["lone low surrogate", "\udfff", "\\udfff"],
];

/** Text the policy leaves as it is. */
const SAFE = [
  "plain ascii ~!@#$%^&*()_+{}|:\"<>?`-=[]\\;',./",
  "données-✓ é ü ß 日本語",
  "😀 a surrogate pair",
  "\u00a0no-break space, \u200b zero width space, \ufeff BOM",
  "\u2027 and \u202f and \u2065 beside the ranges",
];

describe("terminalText", () => {
  test.each(UNSAFE)("%s is escaped", (_, raw, shown) => {
    expect(terminalText(`a${raw}b`)).toBe(`a${shown}b`);
    expect(terminalCell(`a${raw}b`)).toBe(`a${shown}b`);
    // In JSON text: escaped, and the same value once parsed.
    const json = terminalJson(JSON.stringify({ k: `a${raw}b` }));
    expect(json).not.toContain(raw);
    expect(JSON.parse(json)).toEqual({ k: `a${raw}b` });
  });

  test.each(SAFE)("%p is left as it is", (s) => {
    expect(terminalText(s)).toBe(s);
    expect(terminalCell(s)).toBe(s);
    expect(terminalJson(JSON.stringify(s))).toBe(JSON.stringify(s));
  });

  test("terminal sequences come out whole and inert", () => {
    expect(terminalText("\x1b]8;;https://evil.example\x07click\x1b]8;;\x07")).toBe(
      "\\u001b]8;;https://evil.example\\u0007click\\u001b]8;;\\u0007",
    );
    expect(terminalText("\x1b]0;owned\x07")).toBe("\\u001b]0;owned\\u0007");
  });

  test("JSON whitespace between tokens stays; pretty JSON is still pretty", () => {
    const pretty = JSON.stringify({ a: ["\u2028"] }, null, 2);
    expect(terminalJson(pretty)).toBe('{\n  "a": [\n    "\\u2028"\n  ]\n}');
  });
});

const HOSTILE_NAMES = [
  "osc8\x1b]8;;https://evil.example\x07link\x1b]8;;\x07",
  "title\x1b]0;owned\x07",
  "bell\x07\x07",
  "rlo\u202eevil",
  "sep\u2028par",
  "csi\u009b2J",
];

/** Raw code points none of the outputs may carry. */
const RAW = ["\x1b", "\x07", "\u009b", "\u202e", "\u2028"];

function noRaw(what: string, text: string): void {
  for (const r of RAW) expect([what, text.includes(r)]).toEqual([what, false]);
}

/** A Claude Desktop config whose server names are hostile; the names written raw where JSON allows it. */
function hostileConfig(home: string): string {
  const path = join(home, ".config/Claude/claude_desktop_config.json");
  mkdirSync(dirname(path), { recursive: true });
  const servers: Record<string, unknown> = {};
  for (const n of HOSTILE_NAMES) servers[n] = { command: "node", args: ["server.js"] };
  // JSON.stringify leaves U+202E and U+2028 and U+009B raw in the file, escapes the C0 ones.
  writeFileSync(path, `${JSON.stringify({ mcpServers: servers }, null, 2)}\n`);
  return path;
}

describe.each(VIAS)("hostile text via %s", (via) => {
  test.skipIf(!built(via))(
    "install, status, status --json and uninstall print server names from a config escaped",
    async () => {
      const home = tempDir();
      hostileConfig(home);
      const args = ["--client", "claude-desktop", "--config-root", home];
      const dry = await runCli(via, ["install", "--dry-run", ...args]);
      noRaw("install --dry-run stdout", dry.stdout.toString());
      noRaw("install --dry-run stderr", dry.stderr);
      const inst = await runCli(via, ["install", ...args]);
      expect(inst.code).toBe(0);
      const out = inst.stdout.toString();
      noRaw("install", out);
      expect(out).toContain("  osc8\\u001b]8;;https://evil.example\\u0007link\\u001b]8;;\\u0007: recorded (ledger");
      expect(out).toContain("  rlo\\u202eevil: recorded (ledger");
      const st = await runCli(via, ["status", ...args]);
      noRaw("status", st.stdout.toString() + st.stderr);
      expect(st.stdout.toString()).toContain("  sep\\u2028par: recorded into");
      const sj = await runCli(via, ["status", "--json", ...args]);
      noRaw("status --json", sj.stdout.toString());
      const names = (JSON.parse(sj.stdout.toString()) as { servers: { name: string }[] }[])[0]!.servers.map(
        (s) => s.name,
      );
      expect(names.sort()).toEqual([...HOSTILE_NAMES].sort());
      const un = await runCli(via, ["uninstall", ...args]);
      expect(un.code).toBe(0);
      noRaw("uninstall", un.stdout.toString() + un.stderr);
      expect(un.stdout.toString()).toContain("  csi\\u009b2J: restored");
    },
    60000,
  );

  test.skipIf(!built(via))(
    "verify and verify --json print ids and servers from a ledger escaped",
    async () => {
      const dir = tempDir();
      const b = new LedgerBuilder();
      for (const r of sessionOf("sess\u2028ion\u202e", "srv\u009b2J\u2028", [
        ["tool_call", { tool: "t", rpc_id: 1, status: "ok\u2029", ms: 1 }],
      ]))
        b.add(r);
      writeLedger(dir, "l.jsonl", b.lines);
      const text = await runCli(via, ["verify", "l.jsonl"], { cwd: dir });
      noRaw("verify", text.stdout.toString());
      expect(text.stdout.toString()).toContain("sess\\u2028ion\\u202e (srv\\u009b2J\\u2028)");
      const json = await runCli(via, ["verify", "--json", "l.jsonl"], { cwd: dir });
      const jt = json.stdout.toString();
      noRaw("verify --json", jt);
      expect(jt).not.toContain("\u2029");
      const parsed = JSON.parse(jt) as { sessions: { id: string; server: string }[] };
      expect([parsed.sessions[0]!.id, parsed.sessions[0]!.server]).toEqual([
        "sess\u2028ion\u202e",
        "srv\u009b2J\u2028",
      ]);
      expect(text.code).toBe(json.code);
    },
    60000,
  );
});
