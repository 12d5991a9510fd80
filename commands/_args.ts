import type { ArgsDef } from "citty";
import { UsageError } from "../src/base/exit.ts";

/**
 * citty parses leniently (an unknown flag is silently kept); a security tool
 * should not, so every command checks its own flags before acting.
 * Flags after `--` are never looked at: they belong to the wrapped server.
 */
export function rejectUnknownFlags(rawArgs: readonly string[], def: ArgsDef, command: string): void {
  const known = new Set<string>();
  for (const [name, arg] of Object.entries(def)) {
    if (arg.type === "positional") continue;
    known.add(name);
    known.add(kebab(name));
    for (const alias of ([] as string[]).concat(("alias" in arg ? arg.alias : undefined) ?? [])) known.add(alias);
    if (arg.type === "boolean") known.add(`no-${kebab(name)}`);
  }
  for (let i = 0; i < rawArgs.length; i++) {
    const a = rawArgs[i]!;
    if (a === "--") return;
    if (!a.startsWith("-") || a === "-") continue;
    const name = a.replace(/^--?/, "").split("=")[0]!;
    if (!known.has(name)) {
      const near = nearest(
        name,
        [...known].filter((k) => k.length > 1),
      );
      throw new UsageError(
        `unknown flag ${a.split("=")[0]} for 'seam ${command}'`,
        near === undefined ? `run 'seam ${command} --help' for the flags it takes` : `did you mean --${near}?`,
      );
    }
    const spec = def[name] ?? def[camel(name)];
    if (spec && (spec.type === "string" || spec.type === "enum") && !a.includes("=")) {
      const next = rawArgs[i + 1];
      if (next === undefined || next === "--") throw new UsageError(`flag ${a} needs a value`);
      i++;
    }
  }
}

/** The flags of `def` that take a value (`--name VALUE`), as typed on the command line. */
export function valueFlags(def: ArgsDef): Set<string> {
  return flagsOfType(def, ["string", "enum"]);
}

/** The flags of `def` that take no value (`--name`), as typed on the command line (not their `--no-` forms). */
export function booleanFlags(def: ArgsDef): Set<string> {
  return flagsOfType(def, ["boolean"]);
}

function flagsOfType(def: ArgsDef, types: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const [name, arg] of Object.entries(def)) {
    if (!types.includes(arg.type ?? "")) continue;
    out.add(`--${kebab(name)}`);
    for (const alias of ([] as string[]).concat(("alias" in arg ? arg.alias : undefined) ?? []))
      out.add(alias.length === 1 ? `-${alias}` : `--${alias}`);
  }
  return out;
}

/** A flag of `def` that takes a value, given it empty (`--f ""`, `--f=`): a usage error. Checked in `def`'s order. */
export function rejectEmptyValues(a: Record<string, unknown>, def: ArgsDef): void {
  for (const [name, arg] of Object.entries(def)) {
    if (arg.type !== "string" && arg.type !== "enum") continue;
    if (a[name] === "" || a[camel(name)] === "") throw new UsageError(`--${kebab(name)} must not be empty`);
  }
}

/** Parses a whole number flag, or throws a usage error naming the flag. */
export function intFlag(value: string | undefined, flag: string, fallback: number, min = 0): number {
  if (value === undefined || value === "") return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`${flag} takes a whole number of at least ${min}, not ${JSON.stringify(value)}`);
  }
  return Number(value);
}

/**
 * The name of `known` nearest to `given`, for a "did you mean": at most a
 * third of its length in edits (one at least, transpositions one edit), or
 * the only name it is a prefix of; else undefined.
 */
export function nearest(given: string, known: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestD = Math.max(1, Math.floor(given.length / 3)) + 1;
  const prefixed: string[] = [];
  for (const k of known) {
    if (given.length >= 2 && k.startsWith(given)) prefixed.push(k);
    const d = editDistance(given, k);
    if (d < bestD) [best, bestD] = [k, d];
  }
  return best ?? (prefixed.length === 1 ? prefixed[0] : undefined);
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent transpositions. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  return d[a.length]![b.length]!;
}

/**
 * A value of `flag` outside `known`: a usage error naming the values it takes
 * and, when one is near, the one meant.
 */
export function unknownValue(flag: string, value: string, known: readonly string[], more = ""): UsageError {
  // e.g. `--by "srever" is not one of tool, server, session, day` / `did you mean --by server?`
  const near = nearest(value, known);
  return new UsageError(
    `${flag} ${JSON.stringify(value)} is not one of ${known.join(", ")}${more}`,
    near === undefined ? null : `did you mean ${flag} ${near}?`,
  );
}

function kebab(s: string): string {
  return s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
function camel(s: string): string {
  return s.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** Every value of a flag that may be given more than once (`--f V` and `--f=V`), before any `--`. */
export function repeated(rawArgs: readonly string[], name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < rawArgs.length; i++) {
    const a = rawArgs[i]!;
    if (a === "--") break;
    if (a === `--${name}`) {
      const v = rawArgs[i + 1];
      if (v !== undefined) out.push(v);
      i++;
    } else if (a.startsWith(`--${name}=`)) out.push(a.slice(name.length + 3));
  }
  return out;
}
