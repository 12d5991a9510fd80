/**
 * The reading commands' shared flags (`seam log`, `seam stats`, `seam check`):
 * the filters, repeatable flags (citty keeps only the last of a repeated
 * flag, so they are taken from the raw argv), and --key.
 */
import { closeSync, constants, fstatSync, openSync } from "node:fs";
import { UsageError } from "../src/base/exit.ts";
import { describeIoError } from "../src/base/io-error.ts";
import { terminalText } from "../src/base/terminal-text.ts";
import { KeyFileError, readVerifierKeys } from "../src/checkpoint/keys.ts";
import type { Verifier } from "../src/checkpoint/note.ts";
import { type Filters, KNOWN_STATUSES, knownStatus, parseWhen } from "../src/read/filters.ts";
import { repeated, unknownValue } from "./_args.ts";

/** The filters that may be given more than once (citty keeps the last: see `repeated`). */
export const repeatableFilterArgs = {
  session: { type: "string", description: "only this session (an id prefix will do; repeatable)", valueHint: "ID" },
  server: { type: "string", description: "only this server (glob; repeatable)", valueHint: "NAME" },
  tool: { type: "string", description: "only calls of this tool (glob; repeatable)", valueHint: "NAME" },
  status: {
    type: "string",
    description: "only this status: ok, error, unanswered, cancelled, input_required, refused, … (repeatable)",
    valueHint: "STATUS",
  },
} as const;

/** The filters that take one value. */
export const singleFilterArgs = {
  since: {
    type: "string",
    description: "only operations at or after this ISO time, or this long ago (2h, 15m)",
    valueHint: "WHEN",
  },
  until: { type: "string", description: "only operations before this ISO time, or this long ago", valueHint: "WHEN" },
  slow: { type: "string", description: "only operations that took at least this many ms", valueHint: "MS" },
} as const;

export const filterArgs = { ...repeatableFilterArgs, ...singleFilterArgs } as const;

/** Each filter given, as `--name value`, in the order of filterArgs (the repeatable ones once per value). */
export function givenFilters(rawArgs: readonly string[], a: Record<string, unknown>): string[] {
  const given: string[] = [];
  for (const name of Object.keys(repeatableFilterArgs)) {
    for (const v of repeated(rawArgs, name)) given.push(`--${name} ${v}`);
  }
  for (const name of Object.keys(singleFilterArgs)) {
    if (a[name] !== undefined) given.push(`--${name} ${a[name]}`);
  }
  return given;
}

/** The filters from the command line; `now` anchors durations. */
export function filtersFrom(rawArgs: readonly string[], a: Record<string, unknown>, now = Date.now()): Filters {
  const f: Filters = {};
  for (const name of Object.keys(repeatableFilterArgs) as (keyof typeof repeatableFilterArgs)[]) {
    let values = repeated(rawArgs, name);
    if (name === "status") values = values.flatMap((s) => s.split(","));
    if (values.some((v) => v === "")) throw new UsageError(`--${name} must not be empty`);
    if (name === "status") {
      const wrong = values.find((v) => !knownStatus(v));
      if (wrong !== undefined) throw unknownValue("--status", wrong, KNOWN_STATUSES, ", signal:NAME, an HTTP status");
    }
    if (values.length > 0) f[name] = values;
  }
  for (const k of ["since", "until"] as const satisfies readonly (keyof typeof singleFilterArgs)[]) {
    const v = a[k];
    if (typeof v !== "string") continue;
    const t = parseWhen(v, now);
    if (t === null)
      throw new UsageError(
        `--${k} takes an ISO time or a duration, not ${JSON.stringify(v)}`,
        `e.g. --${k} 2026-11-30T09:00:00Z or --${k} 2h`,
      );
    f[k] = t;
  }
  if (typeof a.slow === "string") {
    const ms = Number(a.slow);
    if (a.slow.trim() === "" || !Number.isFinite(ms) || ms < 0)
      throw new UsageError(`--slow takes a number of milliseconds, not ${JSON.stringify(a.slow)}`);
    f.slow = ms;
  }
  return f;
}

/** --key: the verifier keys (a key, or a file of them). The file is read twice with a key, so not stdin. */
export function keysFrom(key: unknown, paths: readonly string[] = []): Verifier[] | undefined {
  if (key === undefined) return undefined;
  if (paths.includes("-")) throw new UsageError("--key reads each ledger twice, so it takes files, not stdin");
  if (typeof key !== "string" || key === "") throw new UsageError("--key must not be empty");
  try {
    return readVerifierKeys(key);
  } catch (e) {
    if (e instanceof KeyFileError)
      throw new UsageError(e.message, "give the verifier key that seam keygen printed, or a file of them");
    throw e;
  }
}

/** Is stdout a terminal that takes colour? */
export function colorOut(): boolean {
  return process.stdout.isTTY === true && !process.env.NO_COLOR;
}

/**
 * Every ledger file named can be opened for reading, or none is read: a file
 * that is missing, a directory or not permitted is an error of the command
 * line (exit 2), never a verdict on evidence (exit 1 is for what a file holds).
 * '-' (stdin) and nats:// streams are not files. Opened without blocking, so a
 * FIFO is only looked at here.
 */
export function requireReadable(paths: readonly string[]): void {
  for (const p of paths) {
    if (p === "-" || p.startsWith("nats://")) continue;
    let fd: number | undefined;
    try {
      fd = openSync(p, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
      if (fstatSync(fd).isDirectory()) throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
    } catch (e) {
      throw new UsageError(`cannot read ${terminalText(p)}: ${describeIoError(e)}`, null);
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }
}
