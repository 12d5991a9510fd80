/** Flags and output shared by `seam install`, `seam uninstall` and `seam status`. */
import { isAbsolute, resolve } from "node:path";
import { EXIT, UsageError } from "../src/base/exit.ts";
import { createLog } from "../src/base/log.ts";
import { terminalText } from "../src/base/terminal-text.ts";
import { CLIENT_IDS, CLIENT_NAMES, type ClientId, isClientId } from "../src/install/clients.ts";
import type { FileOutcome } from "../src/install/install.ts";
import { print } from "./_out.ts";

export const clientFlags = {
  client: {
    type: "string",
    description: `a client to set up; repeat or separate with commas (${CLIENT_IDS.join(", ")})`,
    valueHint: "NAME",
  },
  all: { type: "boolean", description: "every client whose config file is on this machine" },
  "config-root": {
    type: "string",
    description: "look for every config file under DIR as if it were the home directory (default: $SEAM_CONFIG_HOME)",
    valueHint: "DIR",
  },
} as const;

/** Every value of a repeatable flag (`--f a --f b`, `--f=a`, `--f a,b`), up to `--`. */
export function multi(rawArgs: readonly string[], flag: string): string[] | undefined {
  const out: string[] = [];
  let seen = false;
  for (let i = 0; i < rawArgs.length; i++) {
    const a = rawArgs[i]!;
    if (a === "--") break;
    let v: string | undefined;
    if (a === `--${flag}`) v = rawArgs[++i];
    else if (a.startsWith(`--${flag}=`)) v = a.slice(flag.length + 3);
    else continue;
    seen = true;
    if (v === undefined || v === "") throw new UsageError(`--${flag} needs a value`);
    out.push(...v.split(",").filter((x) => x !== ""));
  }
  return seen ? out : undefined;
}

/** The clients named by --client / --all; `fallback` when neither is given (undefined: a usage error). */
export function selectClients(
  rawArgs: readonly string[],
  all: boolean,
  command: string,
  fallbackAll: boolean,
): ClientId[] {
  const named = multi(rawArgs, "client");
  if (named && all) throw new UsageError("give --client or --all, not both");
  if (named) {
    for (const n of named)
      if (!isClientId(n))
        throw new UsageError(`unknown client ${JSON.stringify(n)}`, `clients: ${CLIENT_IDS.join(", ")}`);
    return [...new Set(named)] as ClientId[];
  }
  if (!all && !fallbackAll)
    throw new UsageError(
      "name the clients to set up",
      `seam ${command} --client claude-code, or --all for every client found`,
    );
  return [...CLIENT_IDS];
}

export function absolutePath(value: string | undefined, flag: string): string | undefined {
  if (value === undefined) return undefined;
  if (value === "") throw new UsageError(`${flag} must not be empty`);
  return isAbsolute(value) ? value : resolve(value);
}

export function scopeFlag(value: string | undefined): "user" | "project" {
  if (value === undefined) return "user";
  if (value !== "user" && value !== "project")
    throw new UsageError(`--scope takes user or project, not ${JSON.stringify(value)}`);
  return value;
}

const VERB: Record<string, string> = {
  wrapped: "recorded",
  already: "already recorded",
  relaunched: "recorded again through this seam",
  restored: "restored",
  "not-wrapped": "not seam's, untouched",
};

/**
 * The human lines of one file: what was done to it and to each of its
 * servers. A file left as it is because of an error has none: its error
 * says it, and its servers were not recorded whatever the plan was.
 */
export function block(f: FileOutcome, dryRun: boolean, explicit: boolean): string {
  if (f.status === "error") return "";
  if (f.status === "missing")
    return explicit ? `${CLIENT_NAMES[f.client]} (${f.scope}): no config file at ${f.file}\n` : "";
  const lines: string[] = [];
  const state = f.status === "unchanged" ? "unchanged" : dryRun ? "would change (nothing written)" : "changed";
  lines.push(`${CLIENT_NAMES[f.client]} (${f.scope}): ${f.file}: ${state}`);
  for (const s of f.servers) {
    const where = ["mcpServers", "servers", "context_servers", "mcp_servers", "extensions", "mcp"].includes(s.where)
      ? ""
      : `  [${s.where}]`;
    if (s.action === "remote" || s.action === "unsupported")
      lines.push(`  ${s.name}: not recorded: ${s.reason}${where}`);
    else if (s.action === "relaunched" && s.transient)
      lines.push(
        `  ${s.name}: ${dryRun ? "would be " : ""}recorded again through this seam${s.ledger ? ` (ledger ${s.ledger})` : ""}: the one it ran was in ${s.transient.reason} (${s.transient.path})${where}`,
      );
    else {
      const verb =
        dryRun && (s.action === "wrapped" || s.action === "restored") ? `would be ${VERB[s.action]}` : VERB[s.action];
      lines.push(
        `  ${s.name}: ${verb}${s.ledger && s.action !== "not-wrapped" ? ` (ledger ${s.ledger})` : ""}${where}`,
      );
    }
  }
  if (f.backup) lines.push(`  backup: ${f.backup}`);
  if (f.attempts && f.attempts > 1)
    lines.push(`  the file changed while seam edited it; the edit was made again on the new text`);
  return `${lines.map(terminalText).join("\n")}\n`;
}

/**
 * Prints the run one file after another, in the order the files were
 * found: a file's lines (on stdout; with --dry-run its diff on stdout and
 * its lines on stderr), or its error (on stderr) where it comes.
 */
export async function report(
  outcomes: FileOutcome[],
  dryRun: boolean,
  explicit: boolean,
  command: string,
  servers?: string[],
): Promise<number> {
  const log = createLog();
  let code: number = EXIT.OK;
  for (const f of outcomes) {
    if (f.status === "error") {
      log.error(f.error ?? "failed", f.hint);
      code = EXIT.FAIL;
    } else if (dryRun) {
      await print(f.diff ?? "");
      process.stderr.write(block(f, true, explicit));
    } else await print(block(f, false, explicit));
  }
  const seen = new Set(outcomes.flatMap((f) => f.servers.map((s) => s.name)));
  for (const name of servers ?? [])
    if (!seen.has(name)) log.warn(`no server named ${JSON.stringify(name)} in the files found`);
  if (outcomes.every((f) => f.status === "missing"))
    log.warn(`no config file found for ${explicit ? "the clients named" : "any client"}; nothing to ${command}`);
  return code;
}

/** What status says of an entry whose seam sits where it does not last, and how to point it at one that does. */
export function transientNote(t: { path: string; reason: string }, client: string): string {
  return `the seam it runs is in ${t.reason} (${t.path}), which does not last: seam install --client ${client}, run from a seam installed for good, points it at that one`;
}
