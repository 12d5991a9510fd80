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
  restored: "restored",
  "not-wrapped": "not seam's, untouched",
};

/** The human summary of a run, one block per file found. */
export function summary(outcomes: FileOutcome[], dryRun: boolean, explicit: boolean): string {
  const lines: string[] = [];
  for (const f of outcomes) {
    if (f.status === "missing") {
      if (explicit) lines.push(`${CLIENT_NAMES[f.client]} (${f.scope}): no config file at ${f.file}`);
      continue;
    }
    const state =
      f.status === "error"
        ? "left as it is"
        : f.status === "unchanged"
          ? "unchanged"
          : dryRun
            ? "would change (nothing written)"
            : "changed";
    lines.push(`${CLIENT_NAMES[f.client]} (${f.scope}): ${f.file}: ${state}`);
    for (const s of f.servers) {
      const where =
        s.where === "mcpServers" || s.where === "servers" || s.where === "context_servers" || s.where === "mcp_servers"
          ? ""
          : `  [${s.where}]`;
      if (s.action === "remote" || s.action === "unsupported")
        lines.push(`  ${s.name}: not recorded: ${s.reason}${where}`);
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
  }
  return lines.length > 0 ? `${lines.map(terminalText).join("\n")}\n` : "";
}

/** Prints the run (with --dry-run: the diffs on stdout, the summary on stderr) and says which files were left alone and why. */
export async function report(
  outcomes: FileOutcome[],
  dryRun: boolean,
  explicit: boolean,
  command: string,
  servers?: string[],
): Promise<number> {
  const log = createLog();
  if (dryRun) {
    await print(outcomes.map((f) => f.diff ?? "").join(""));
    process.stderr.write(summary(outcomes, true, explicit));
  } else await print(summary(outcomes, false, explicit));
  let code: number = EXIT.OK;
  for (const f of outcomes) {
    if (f.status !== "error") continue;
    log.error(f.error ?? "failed", f.hint);
    code = EXIT.FAIL;
  }
  const seen = new Set(outcomes.flatMap((f) => f.servers.map((s) => s.name)));
  for (const name of servers ?? [])
    if (!seen.has(name)) log.warn(`no server named ${JSON.stringify(name)} in the files found`);
  if (outcomes.every((f) => f.status === "missing"))
    log.warn(`no config file found for ${explicit ? "the clients named" : "any client"}; nothing to ${command}`);
  return code;
}
