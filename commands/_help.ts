/**
 * seam's --help, rendered from the commands' citty definitions (their `meta`
 * and `args` are the one source of the text, for this and for docs/cli.md):
 * wrapped to the output's width with no trailing spaces, positional arguments
 * and required flags in the USAGE lines, required flags marked. citty's own
 * renderer pads every line to its widest and leaves positionals and `--` out.
 */
import type { ArgDef, ArgsDef, CommandDef, CommandMeta } from "citty";
import { wrapText } from "../src/base/wrap-text.ts";

declare module "citty" {
  interface CommandMeta {
    /**
     * The USAGE lines after `seam NAME`, when the arguments alone cannot say them (a command after `--`,
     * or forms that exclude each other). Without it, one line is made from `args`.
     */
    usage?: readonly string[];
  }
}

/** What a command's help is made of, resolved (citty allows promises and functions; seam's are plain). */
export interface HelpCommand {
  meta?: CommandMeta;
  args?: ArgsDef;
}

const INDENT = "  ";
/** The widest the flag column may be, as a share of the width; a longer flag puts its description below it. */
const FLAG_COLUMN_SHARE = 0.4;

/** `seam NAME --help`. */
export function commandHelp(cmd: HelpCommand, width: number, version: string): string {
  const meta = cmd.meta ?? {};
  const name = `seam ${meta.name ?? ""}`.trimEnd();
  const args = Object.entries(cmd.args ?? {});
  const out: string[] = [];
  out.push(...wrapText(`${name}: ${meta.description ?? ""} (seam ${version})`, width));
  out.push("", "USAGE");
  for (const u of usageLines(meta, args))
    out.push(...wrapText(`${name} ${u}`.trimEnd(), width, INDENT, `${INDENT}    `));
  const positionals = args.filter(([, a]) => a.type === "positional");
  if (positionals.length > 0) {
    out.push("", "ARGUMENTS");
    out.push(
      ...table(
        positionals.map(([n, a]) => [positionalName(n, a), describe(a)]),
        width,
      ),
    );
  }
  const flags = args.filter(([, a]) => a.type !== "positional");
  if (flags.length > 0) {
    out.push("", "OPTIONS");
    out.push(
      ...table(
        flags.map(([n, a]) => [flagName(n, a), describe(a)]),
        width,
      ),
    );
  }
  return `${out.join("\n")}\n`;
}

/** `seam --help`: every command with its description, then how to read one. */
export function mainHelp(main: HelpCommand, commands: readonly HelpCommand[], width: number, version: string): string {
  const meta = main.meta ?? {};
  const out: string[] = [...wrapText(`seam: ${meta.description ?? ""} (seam ${version})`, width)];
  out.push("", "USAGE", `${INDENT}seam COMMAND [OPTIONS] [ARGUMENTS]`, "", "COMMANDS");
  out.push(
    ...table(
      commands.map((c) => [c.meta?.name ?? "", c.meta?.description ?? ""]),
      width,
    ),
  );
  out.push("", ...wrapText("Run 'seam COMMAND --help' for a command's arguments and options.", width));
  return `${out.join("\n")}\n`;
}

/** A command's USAGE lines after `seam NAME`: its own (`meta.usage`), else the one its args give. */
export function usageLines(meta: { usage?: readonly string[] }, args: [string, ArgDef][]): readonly string[] {
  return meta.usage ?? [usageLine(args)];
}

/** The one USAGE line of a command from its args: required flags, `[OPTIONS]`, then the positionals. */
function usageLine(args: [string, ArgDef][]): string {
  const parts: string[] = [];
  for (const [n, a] of args) if (a.type !== "positional" && a.required === true) parts.push(flagName(n, a));
  if (args.some(([, a]) => a.type !== "positional" && a.required !== true)) parts.push("[OPTIONS]");
  for (const [n, a] of args) {
    if (a.type !== "positional") continue;
    const p = positionalName(n, a);
    // citty's rule: a positional is required unless it says otherwise.
    parts.push(a.required === false ? `[${p}]` : p);
  }
  return parts.join(" ");
}

function positionalName(name: string, a: ArgDef): string {
  return a.valueHint ?? name.toUpperCase();
}

function flagName(name: string, a: ArgDef): string {
  const aliases = ([] as string[]).concat(("alias" in a ? a.alias : undefined) ?? []).filter((x) => x.length === 1);
  const flag = [...aliases.map((x) => `-${x}`), `--${name}`].join(", ");
  if (a.type === "boolean") return flag;
  const hint = a.type === "enum" && a.options ? a.options.join("|") : (a.valueHint ?? "VALUE");
  return `${flag} ${hint}`;
}

function describe(a: ArgDef): string {
  const text = a.description ?? "";
  return a.type !== "positional" && a.required === true ? `(required) ${text}` : text;
}

/** Two columns: the names, and their descriptions wrapped beside them (below a name too long for the column). */
function table(rows: readonly (readonly [string, string])[], width: number): string[] {
  const widest = Math.max(...rows.map(([n]) => n.length));
  const column = Math.min(widest, Math.max(8, Math.floor(width * FLAG_COLUMN_SHARE) - INDENT.length - 2));
  const pad = INDENT.length + column + 2;
  const out: string[] = [];
  for (const [n, d] of rows) {
    const lines = wrapText(d, width, " ".repeat(pad), " ".repeat(pad));
    if (n.length > column || lines.length === 0) {
      out.push(...wrapText(n, width, INDENT, INDENT));
      out.push(...lines);
    } else {
      out.push(`${INDENT}${n.padEnd(column + 2)}${lines[0]!.slice(pad)}`);
      out.push(...lines.slice(1));
    }
  }
  return out;
}

/** Loads a command definition's parts (citty's Resolvable: a value, a promise, or a function of either). */
export async function resolveHelp(cmd: CommandDef<any>): Promise<HelpCommand> {
  const resolve = async <T>(v: unknown): Promise<T> => (typeof v === "function" ? await v() : await v) as T;
  return { meta: await resolve<CommandMeta | undefined>(cmd.meta), args: await resolve<ArgsDef | undefined>(cmd.args) };
}
