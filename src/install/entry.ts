/**
 * What an installed entry's argv looks like, and how to tell one seam wrote
 * from one it did not. Values only: the files' text is edited in json-edit.ts,
 * toml-edit.ts and yaml-edit.ts, which ask this module what a value means.
 *
 * A wrapped entry runs `<seam> wrap --ledger L --server NAME [--sign K] -- C A…`
 * where <seam> is the running seam (an executable alone, or a runtime and
 * its script as two argv items). It is recognised by that shape, so an entry
 * wrapped by an older seam at another path is still recognised.
 */

/** How the running seam is started: argv[0] is the entry's command, the rest go first in its args. */
export interface SeamCommand {
  argv: string[];
}

export interface WrapOptions {
  ledger: string;
  sign?: string;
  /** seam wrap's flags as they are to be written, instead of those made of ledger, name and sign (an entry wrapped again by another seam keeps its own). */
  flags?: string[];
}

/**
 * The flags of `seam wrap` as typed: those that take a value and those that
 * do not. Given by the caller (commands/ derives them from wrap's own flag
 * definitions), so that they cannot fall behind them.
 */
export interface WrapFlags {
  valued: ReadonlySet<string>;
  boolean: ReadonlySet<string>;
}

export interface Wrapped {
  /** Index in args of the element after `--`: the server's own command. */
  commandAt: number;
  ledger: string | null;
  server: string | null;
  /** The server's own command and args, as they were before seam. */
  command: string;
  args: string[];
  /** How the entry starts seam: the entry's command and the args before `wrap`. */
  launcher: string[];
  /** seam wrap's flags in the entry, between `wrap` and `--`. */
  flags: string[];
}

/**
 * How seam can be started, whoever installed it: the executable or npm's
 * shims for it (`seam`, `seam.exe`, `seam.cmd`), or a runtime running one of
 * its scripts given as a path (the bundle `…/dist/seam.mjs`, npm's link to
 * it `…/node_modules/.bin/seam` or `<prefix>/bin/seam`, the source
 * `…/commands/seam.ts`). A bare `seam` after npx is a package name, not a
 * launcher, and is not taken for one.
 */
const SEAM_EXECUTABLE = /^seam(\.exe|\.cmd)?$/i;
const SEAM_SCRIPT = /^seam(\.mjs|\.cjs|\.js|\.ts)?$/i;

/** The entry's command and args if they are seam's wrap shape, else null. */
export function parseWrapped(command: unknown, args: unknown, flags: WrapFlags): Wrapped | null {
  if (typeof command !== "string" || !Array.isArray(args) || !args.every((a) => typeof a === "string")) return null;
  const a = args as string[];
  let at = -1;
  if (SEAM_EXECUTABLE.test(basename(command)) && a[0] === "wrap") at = 0;
  else {
    for (let j = 0; j + 1 < a.length; j++) {
      if (/[\\/]/.test(a[j]!) && SEAM_SCRIPT.test(basename(a[j]!)) && a[j + 1] === "wrap") {
        if (a.slice(0, j).every((x) => x.startsWith("-"))) at = j + 1;
        break;
      }
      if (!a[j]!.startsWith("-")) break;
    }
  }
  if (at < 0) return null;
  let ledger: string | null = null;
  let server: string | null = null;
  for (let k = at + 1; k < a.length; ) {
    const w = a[k]!;
    if (w === "--") {
      if (k + 1 >= a.length) return null;
      return {
        commandAt: k + 1,
        ledger,
        server,
        command: a[k + 1]!,
        args: a.slice(k + 2),
        launcher: [command, ...a.slice(0, at)],
        flags: a.slice(at + 1, k),
      };
    }
    if (flags.valued.has(w)) {
      if (k + 1 >= a.length) return null;
      if (w === "--ledger") ledger = a[k + 1]!;
      if (w === "--server") server = a[k + 1]!;
      k += 2;
    } else if (flags.boolean.has(w) || (w.startsWith("--") && flags.valued.has(w.split("=")[0]!))) {
      if (w.startsWith("--ledger=")) ledger = w.slice(9);
      if (w.startsWith("--server=")) server = w.slice(9);
      k += 1;
    } else return null;
  }
  return null;
}

/** The args seam puts in front of the server's command (the command itself goes after the last one). */
export function wrapPrefix(seam: SeamCommand, name: string, o: WrapOptions): string[] {
  const flags = o.flags ?? ["--ledger", o.ledger, "--server", name, ...(o.sign ? ["--sign", o.sign] : [])];
  return [...seam.argv.slice(1), "wrap", ...flags, "--"];
}

/**
 * Which fields of an entry start its server: `command` (a string) and
 * `args` (a list) in most clients, `cmd` and `args` in Goose; without
 * `args`, the `command` field is the whole argv as one list (opencode).
 */
export interface Shape {
  command: string;
  args?: string;
}

export const COMMAND_ARGS: Shape = { command: "command", args: "args" };

/** The server's command and args as the entry gives them, or why it gives none seam can start. */
export function launchOf(
  e: Record<string, unknown>,
  shape: Shape,
): { command: string; args: string[] } | { reason: string } {
  const raw = e[shape.command];
  if (shape.args === undefined) {
    if (!Array.isArray(raw) || raw.length === 0 || !raw.every((a) => typeof a === "string"))
      return { reason: `${shape.command} is not a list of strings` };
    return { command: raw[0] as string, args: raw.slice(1) as string[] };
  }
  if (typeof raw !== "string") return { reason: `${shape.command} is not a string` };
  const args = e[shape.args];
  if (args !== undefined && (!Array.isArray(args) || !args.every((a) => typeof a === "string")))
    return { reason: `${shape.args} is not a list of strings` };
  return { command: raw, args: (args as string[] | undefined) ?? [] };
}

/**
 * The entry with its server started by `command` and `args` instead: the
 * value seam's edit must leave. `dropArgs`: the entry is to have no args
 * field (one seam added, taken away again).
 */
export function withLaunch(
  e: Record<string, unknown>,
  shape: Shape,
  command: string,
  args: string[],
  dropArgs = false,
): Record<string, unknown> {
  if (shape.args === undefined) return { ...e, [shape.command]: [command, ...args] };
  const out: Record<string, unknown> = { ...e, [shape.command]: command, [shape.args]: args };
  if (dropArgs) delete out[shape.args];
  return out;
}

export type Kind = "stdio" | "wrapped" | "remote" | "unsupported";

export interface Classified {
  kind: Kind;
  /** Why an entry is not recorded (remote or unsupported). */
  reason?: string;
  wrapped?: Wrapped;
}

const REMOTE_TYPES = new Set(["http", "sse", "streamable-http", "streamable_http", "streamablehttp", "remote"]);

/** What seam can do with one server entry (a parsed value). */
export function classify(entry: unknown, flags: WrapFlags, shape: Shape = COMMAND_ARGS): Classified {
  if (entry === null || typeof entry !== "object" || Array.isArray(entry))
    return { kind: "unsupported", reason: "entry is not an object" };
  const e = entry as Record<string, unknown>;
  const type = typeof e.type === "string" ? e.type.toLowerCase() : undefined;
  if ("url" in e || "serverUrl" in e || "httpUrl" in e || "uri" in e || (type !== undefined && REMOTE_TYPES.has(type)))
    return { kind: "remote", reason: "remote server" };
  if (type !== undefined && type !== "stdio" && type !== "local")
    return { kind: "unsupported", reason: `transport type ${JSON.stringify(e.type)}` };
  if (!(shape.command in e))
    return { kind: "unsupported", reason: `no ${shape.command} (an extension or a server seam cannot start)` };
  const launch = launchOf(e, shape);
  if ("reason" in launch) return { kind: "unsupported", reason: launch.reason };
  const wrapped = parseWrapped(launch.command, launch.args, flags);
  if (wrapped) return { kind: "wrapped", wrapped };
  return { kind: "stdio" };
}

function basename(p: string): string {
  return p.split(/[\\/]/).pop() ?? p;
}

/** Structural equality of parsed JSON/TOML values, ignoring key order. */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a instanceof Date && b instanceof Date) return iso(a) === iso(b);
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) {
    return typeof a === "number" && typeof b === "number" && Number.isNaN(a) && Number.isNaN(b);
  }
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => sameValue(x, bb[i]));
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.hasOwn(b, k) && sameValue((a as never)[k], (b as never)[k]));
}

/** TOML local dates and times are Dates whose own toISOString says what they hold. */
function iso(d: Date): string {
  try {
    return d.toISOString();
  } catch {
    return String(d.getTime());
  }
}

/** The value at a key path of a parsed document (own keys only; a list's items by their index), or undefined. */
export function valueAt(v: unknown, path: readonly string[]): unknown {
  let n = v;
  for (const k of path)
    n = isPlainObject(n) && Object.hasOwn(n, k) ? n[k] : Array.isArray(n) && /^\d+$/.test(k) ? n[Number(k)] : undefined;
  return n;
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date);
}
