/**
 * install / uninstall over the clients' files: which entries to wrap or put
 * back, the edit of each file (checked before it is written: the document
 * after the edit must equal the one before in every value but the entry's
 * command and args), the safe write, and a unified diff for --dry-run.
 * install also wraps again, through itself, an entry whose seam does not
 * last (npm's npx cache): put back, then wrapped with its own flags, in one
 * write.
 */
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { dirname } from "node:path";
import { createTwoFilesPatch } from "diff";
import { describeIoError } from "../base/io-error.ts";
import { terminalText } from "../base/terminal-text.ts";
import { readSmallFile } from "../runtime/small-file.ts";
import {
  type ClientId,
  defaultLedger,
  expandTargets,
  type PathEnv,
  type Scope,
  type Target,
  targetsFor,
} from "./clients.ts";
import {
  classify,
  launchOf,
  parseWrapped,
  type SeamCommand,
  sameValue,
  valueAt,
  type WrapFlags,
  type Wrapped,
  withLaunch,
  wrapPrefix,
} from "./entry.ts";
import { applyEdits, type ConfigFormat, type Edit, EditError, type Planner, type ServerRef } from "./format.ts";
import { jsonFormat } from "./json-edit.ts";
import { launcherTransience, type Probe } from "./launcher.ts";
import { tomlFormat } from "./toml-edit.ts";
import { editFile, type WriteHooks } from "./write.ts";
import { yamlFormat } from "./yaml-edit.ts";

export type Action =
  /** install: wrapped now (or would be, with --dry-run). */
  | "wrapped"
  /** install: seam's shape already. */
  | "already"
  /** install: seam's shape already, with a seam that does not last: wrapped again (same flags) by this one. */
  | "relaunched"
  /** uninstall: put back (or would be). */
  | "restored"
  /** uninstall: not seam's, untouched. */
  | "not-wrapped"
  /** not recorded: a remote server, or an entry seam cannot start. */
  | "remote"
  | "unsupported";

export interface ServerOutcome {
  name: string;
  where: string;
  action: Action;
  reason?: string;
  ledger?: string;
  /** install, relaunched: where the seam the entry ran sat, and why that does not last. */
  transient?: { path: string; reason: string };
}

export interface FileOutcome {
  client: ClientId;
  scope: Scope;
  file: string;
  /** missing: no such file; unchanged: nothing to do; changed: written (or would be, with --dry-run); error: left as it is. */
  status: "missing" | "unchanged" | "changed" | "error";
  servers: ServerOutcome[];
  error?: string;
  hint?: string;
  /** With --dry-run: the unified diff of what would change. */
  diff?: string;
  backup?: string;
  /** How many times the edit was made (more than 1 when the file changed under seam). */
  attempts?: number;
}

export interface RunOptions {
  clients: ClientId[];
  /** Only these server names (all when undefined). */
  servers?: string[];
  scope: Scope;
  env: PathEnv;
  dryRun: boolean;
  /** How `seam wrap`'s flags look, to recognise the entries it wraps. */
  wrapFlags: WrapFlags;
  hooks?: WriteHooks;
  /** The format of a file (tests pass one that makes a wrong edit, to see it refused). */
  formatFor?: (t: Target) => ConfigFormat;
}

export interface InstallOptions extends RunOptions {
  seam: SeamCommand;
  /** One ledger for every client (absolute); by default one per client in the data folder. */
  ledger?: string;
  sign?: string;
  /** To find the entries whose seam does not last, and wrap them again through this one (none: not looked for). */
  probe?: Pick<Probe, "os" | "temp" | "realpath">;
}

/** The files of a folder (and links to files), by name: the config files of a folder target are among them. */
export function listFolder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isFile() || d.isSymbolicLink())
    .map((d) => d.name);
}

export function formatOf(t: Target): ConfigFormat {
  return t.format === "toml" ? tomlFormat : t.format === "yaml" ? yamlFormat : jsonFormat;
}

export function install(o: InstallOptions): FileOutcome[] {
  // An entry whose seam does not last is wrapped again by this one, when this one lasts.
  const lasts = o.probe !== undefined && launcherTransience(o.seam.argv, o.probe) === null;
  return run(o, (t) => {
    const ledger = o.ledger ?? defaultLedger(t.client, o.env);
    /** The entries put back in the first pass, by key path: their seam wrap flags and why their seam did not last. */
    const again = new Map<string, { flags: string[]; transient: { path: string; reason: string } }>();
    return {
      begin: () => again.clear(),
      first: lasts
        ? (planner, ref) => {
            const c = classify(ref.value, o.wrapFlags, ref.shape);
            const transient = c.kind === "wrapped" && launcherTransience(c.wrapped!.launcher, o.probe!);
            if (!transient) return { outcome: { action: "already" } };
            again.set(ref.path.join("\0"), { flags: c.wrapped!.flags, transient });
            return unwrapPlan(planner, ref, c.wrapped!);
          }
        : undefined,
      onEntry(planner, ref) {
        const c = classify(ref.value, o.wrapFlags, ref.shape);
        if (c.kind === "wrapped") return { outcome: { action: "already", ledger: c.wrapped!.ledger ?? undefined } };
        if (c.kind !== "stdio") return { outcome: { action: c.kind, reason: c.reason } };
        const before = again.get(ref.path.join("\0"));
        const opts = { ledger, sign: o.sign, flags: before?.flags };
        const edits = planner.wrap(ref, o.seam, opts);
        const entry = ref.value as Record<string, unknown>;
        const launch = launchOf(entry, ref.shape) as { command: string; args: string[] };
        const args = [...wrapPrefix(o.seam, ref.name, opts), launch.command, ...launch.args];
        return {
          edits,
          expected: () => withLaunch(entry, ref.shape, o.seam.argv[0]!, args),
          outcome: before
            ? {
                action: "relaunched",
                ledger: parseWrapped(o.seam.argv[0]!, args, o.wrapFlags)?.ledger ?? undefined,
                transient: before.transient,
              }
            : { action: "wrapped", ledger },
        };
      },
      beforeWrite: o.dryRun
        ? undefined
        : () => {
            // Only seam's own folder is private; folders above it get the usual mode.
            const dir = dirname(ledger);
            if (existsSync(dir)) return;
            mkdirSync(dirname(dir), { recursive: true });
            mkdirSync(dir, { mode: 0o700 });
          },
    };
  });
}

export function uninstall(o: RunOptions): FileOutcome[] {
  return run(o, () => ({
    onEntry(planner, ref) {
      const c = classify(ref.value, o.wrapFlags, ref.shape);
      if (c.kind === "remote" || c.kind === "unsupported") return { outcome: { action: c.kind, reason: c.reason } };
      if (c.kind !== "wrapped") return { outcome: { action: "not-wrapped" } };
      return unwrapPlan(planner, ref, c.wrapped!);
    },
  }));
}

/** The edits that put a wrapped entry back as it was before seam. */
function unwrapPlan(planner: Planner, ref: ServerRef, w: Wrapped): EntryPlan {
  const edits = planner.unwrap(ref, w);
  const expected = (after: unknown) => {
    // An `args` seam added is taken away again: the entry then has none.
    const afterEntry = valueAt(after, ref.path);
    const argsKey = ref.shape.args;
    const drop =
      argsKey !== undefined &&
      w.args.length === 0 &&
      !!afterEntry &&
      typeof afterEntry === "object" &&
      !(argsKey in afterEntry);
    return withLaunch(ref.value as Record<string, unknown>, ref.shape, w.command, w.args, drop);
  };
  return { edits, expected, outcome: { action: "restored", ledger: w.ledger ?? undefined } };
}

interface EntryPlan {
  outcome: Omit<ServerOutcome, "name" | "where">;
  /** The entry's edits, if it changes. */
  edits?: Edit[];
  /** The entry's value once edited (given the document after the edit). */
  expected?: (after: unknown) => unknown;
}

interface Handler {
  /** Called as each edit of the file's text starts (it starts again when the file changed under seam). */
  begin?: () => void;
  /** A pass over the entries before onEntry's, on the text it leaves (install: putting back the entries to wrap again). */
  first?: (planner: Planner, ref: ServerRef) => EntryPlan;
  onEntry(planner: Planner, ref: ServerRef): EntryPlan;
  beforeWrite?: () => void;
}

function run(o: RunOptions, handlerFor: (t: Target) => Handler): FileOutcome[] {
  const out: FileOutcome[] = [];
  for (const client of o.clients) {
    for (const t of expandTargets(targetsFor(client, o.scope, o.env), listFolder)) {
      const base = { client, scope: t.scope, file: t.file, servers: [] as ServerOutcome[] };
      if (!existsSync(t.file)) {
        out.push({ ...base, status: "missing" });
        continue;
      }
      const fmt = (o.formatFor ?? formatOf)(t);
      const h = handlerFor(t);
      let servers: ServerOutcome[] = [];
      const edit = (text: string): { text: string } | { error: string } => {
        h.begin?.();
        const plain = () => {
          const r = pass(o, t, fmt, text, h.onEntry);
          servers = r.servers;
          return r.result;
        };
        if (!h.first) return plain();
        // The first pass puts back the entries to wrap again; should the second not wrap each of them, neither pass counts.
        const one = pass(o, t, fmt, text, h.first);
        if ("error" in one.result || one.result.text === text) return plain();
        const two = pass(o, t, fmt, one.result.text, h.onEntry);
        const back = new Set(one.servers.flatMap((s, i) => (s.action === "restored" ? [one.keys[i]] : [])));
        if ("error" in two.result || !two.servers.every((s, i) => !back.has(two.keys[i]) || s.action === "relaunched"))
          return plain();
        servers = two.servers;
        return two.result;
      };
      if (o.dryRun) {
        let text: string;
        try {
          text = readSmallFile(t.file).toString("utf8");
        } catch (e) {
          out.push({ ...base, status: "error", error: `cannot read ${t.file}: ${describeIoError(e)}` });
          continue;
        }
        const r = edit(text);
        if ("error" in r) out.push({ ...base, servers, status: "error", error: r.error });
        else if (r.text === text) out.push({ ...base, servers, status: "unchanged" });
        else out.push({ ...base, servers, status: "changed", diff: unifiedDiff(t.file, text, r.text) });
        continue;
      }
      let prepared = false;
      const w = editFile(
        t.file,
        (text) => {
          const r = edit(text);
          if (!("error" in r) && r.text !== text && !prepared) {
            // The ledger's folder exists before any entry points at it.
            try {
              h.beforeWrite?.();
            } catch (e) {
              return {
                error: `cannot create the ledger's folder: ${describeIoError(e)}`,
              };
            }
            prepared = true;
          }
          return r;
        },
        o.hooks,
      );
      if (!w.ok) out.push({ ...base, servers, status: "error", error: w.error, hint: w.hint });
      else if (!w.changed) out.push({ ...base, servers, status: "unchanged" });
      else
        out.push({
          ...base,
          servers,
          status: "changed",
          backup: w.backup,
          attempts: w.attempts,
        });
    }
  }
  return out;
}

/** One pass of a handler over a file's text: each entry's outcome (and its key path), and the text after their edits. */
function pass(
  o: RunOptions,
  t: Target,
  fmt: ConfigFormat,
  text: string,
  onEntry: (planner: Planner, ref: ServerRef) => EntryPlan,
): { servers: ServerOutcome[]; keys: string[]; result: { text: string } | { error: string } } {
  const servers: ServerOutcome[] = [];
  const keys: string[] = [];
  const listed = fmt.list(text, t.containers);
  if (!listed.ok) return { servers, keys, result: { error: `${t.file}: ${listed.error}` } };
  const planner = fmt.plan(text);
  const pending: Array<{ ref: ServerRef; at: number; plan: EntryPlan }> = [];
  for (const ref of listed.servers) {
    if (o.servers && !o.servers.includes(ref.name)) continue;
    keys.push(ref.path.join("\0"));
    try {
      const plan = onEntry(planner, ref);
      if (plan.edits) pending.push({ ref, at: servers.length, plan });
      servers.push({ name: ref.name, where: ref.where, ...plan.outcome });
    } catch (e) {
      if (!(e instanceof EditError)) throw e;
      servers.push({ name: ref.name, where: ref.where, action: "unsupported", reason: e.message });
    }
  }
  if (pending.length === 0) return { servers, keys, result: { text } };
  // All entries' edits at once, checked once; should that check fail, one entry at a time, so only the culprit is left out.
  const together = attempt(fmt, text, listed.value, pending);
  if (together) return { servers, keys, result: { text: together.text } };
  let cur = { text, value: listed.value };
  for (const p of pending) {
    let next: { text: string; value: unknown } | null = null;
    try {
      next = attempt(fmt, cur.text, cur.value, [{ ref: p.ref, plan: onEntry(fmt.plan(cur.text), p.ref) }]);
    } catch (e) {
      if (!(e instanceof EditError)) throw e;
    }
    if (next) cur = next;
    else servers[p.at] = { name: p.ref.name, where: p.ref.where, action: "unsupported", reason: UNSAFE };
  }
  return { servers, keys, result: { text: cur.text } };
}

const UNSAFE = "seam's edit would have changed more than this entry; left as it is";

/**
 * The edits changed exactly the planned entries: the document after them,
 * parsed, equals the one before with each of those entries replaced by its
 * expected value. Anything else (a mistake of seam's) gives null, and
 * nothing of it is written.
 */
function attempt(
  fmt: ConfigFormat,
  text: string,
  value: unknown,
  pending: Array<{ ref: ServerRef; plan: EntryPlan }>,
): { text: string; value: unknown } | null {
  let next: string;
  try {
    next = applyEdits(
      text,
      pending.flatMap((p) => p.plan.edits ?? []),
    );
  } catch (e) {
    if (e instanceof EditError) return null;
    throw e;
  }
  const after = fmt.value(next);
  if (after === undefined) return null;
  const overrides = pending.map((p) => ({ path: p.ref.path, entry: p.plan.expected!(after) }));
  return sameWithAll(value, after, overrides, 0) ? { text: next, value: after } : null;
}

/** a and b are equal but at each override's path, where b holds the override's entry. */
function sameWithAll(
  a: unknown,
  b: unknown,
  overrides: Array<{ path: string[]; entry: unknown }>,
  depth: number,
): boolean {
  if (overrides.length === 0) return sameValue(a, b);
  const here = overrides.find((o) => o.path.length === depth);
  if (here) return sameValue(here.entry, b);
  if (!a || !b || typeof a !== "object" || typeof b !== "object" || Array.isArray(a) !== Array.isArray(b)) return false;
  // A list of entries (Continue's) is walked by index, as valueAt walks it.
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  const byKey = new Map<string, Array<{ path: string[]; entry: unknown }>>();
  for (const o of overrides) byKey.set(o.path[depth]!, [...(byKey.get(o.path[depth]!) ?? []), o]);
  return ka.every(
    (k) => Object.hasOwn(b, k) && sameWithAll((a as never)[k], (b as never)[k], byKey.get(k) ?? [], depth + 1),
  );
}

export function unifiedDiff(file: string, before: string, after: string): string {
  // A config's text goes to a terminal line by line: each line made safe (src/base/terminal-text.ts), its break (LF or CRLF) kept.
  return createTwoFilesPatch(file, file, before, after, undefined, undefined, { context: 3 })
    .split("\n")
    .map((l) => (l.endsWith("\r") ? `${terminalText(l.slice(0, -1))}\r` : terminalText(l)))
    .join("\n");
}
