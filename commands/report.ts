import { defineCommand } from "citty";
import { UsageError } from "../src/base/exit.ts";
import { createLog } from "../src/base/log.ts";
import { VERSION } from "../src/base/version.ts";
import { KeyFileError, readVerifierKeys } from "../src/checkpoint/keys.ts";
import type { Filters } from "../src/read/filters.ts";
import { parseWhen } from "../src/read/filters.ts";
import { writeReport } from "../src/report/generate.ts";
import { isWriterAlive } from "../src/runtime/alive.ts";
import { exitCodeFor, printable, worstExit } from "../src/verify/report.ts";
import { describeReadError } from "../src/verify/verifier.ts";
import { intFlag, rejectUnknownFlags } from "./_args.ts";
import { print } from "./_out.ts";

const args = {
  path: { type: "positional", description: "ledger file(s) to report on", required: true },
  out: { type: "string", description: "the HTML file to write (default report.html)", valueHint: "FILE" },
  title: { type: "string", description: "the page's title (default: seam report: PATH)", valueHint: "TEXT" },
  key: {
    type: "string",
    description: "check signed checkpoints with this verifier key (or a file of them) and show what is sealed",
    valueHint: "VKEY",
  },
  strict: { type: "boolean", description: "as seam verify --strict: leading unchained rows are breaks" },
  session: { type: "string", description: "only sessions whose id starts with this (repeatable)", valueHint: "ID" },
  server: { type: "string", description: "only this server (glob, repeatable)", valueHint: "NAME" },
  tool: { type: "string", description: "only tools/call of this tool (glob, repeatable)", valueHint: "NAME" },
  status: { type: "string", description: "only this status, as recorded (repeatable)", valueHint: "STATUS" },
  since: {
    type: "string",
    description: "only from this time (ISO time, or a duration back like 2h)",
    valueHint: "WHEN",
  },
  until: { type: "string", description: "only before this time (ISO time, or a duration back)", valueHint: "WHEN" },
  slow: { type: "string", description: "only operations that took at least this many ms", valueHint: "MS" },
  last: {
    type: "string",
    description: "only the last N operations (the whole file is still verified)",
    valueHint: "N",
  },
} as const;

const REPEATABLE = ["session", "server", "tool", "status"] as const;

export default defineCommand({
  meta: {
    name: "report",
    description:
      "write one self-contained HTML file (verdict, timeline, operations, per-tool figures) that opens offline; exit as seam verify",
  },
  args,
  async run({ args: a, rawArgs }) {
    rejectUnknownFlags(rawArgs, args, "report");
    const paths = a._.map(String);
    if (paths.includes("-"))
      throw new UsageError("seam report reads files, not stdin", "save the ledger to a file first");
    for (const f of ["out", "title", "key"] as const) {
      if (a[f] === "") throw new UsageError(`--${f} must not be empty`);
    }
    const out = a.out ?? "report.html";
    const filters: Filters = {};
    const given: string[] = [];
    for (const name of REPEATABLE) {
      const values = flagValues(rawArgs, name);
      if (values.length > 0) {
        filters[name] = values;
        for (const v of values) given.push(`--${name} ${v}`);
      }
    }
    const now = Date.now();
    for (const name of ["since", "until"] as const) {
      const v = a[name];
      if (v === undefined) continue;
      const t = parseWhen(v, now);
      if (t === null)
        throw new UsageError(`--${name} takes an ISO time or a duration like 2h, not ${JSON.stringify(v)}`);
      filters[name] = t;
      given.push(`--${name} ${v}`);
    }
    if (a.slow !== undefined) {
      filters.slow = intFlag(a.slow, "--slow", 0);
      given.push(`--slow ${a.slow}`);
    }
    const last = a.last === undefined ? undefined : intFlag(a.last, "--last", 0, 1);
    if (last !== undefined) given.push(`--last ${last}`);
    let keys;
    if (a.key !== undefined) {
      try {
        keys = readVerifierKeys(a.key);
      } catch (e) {
        if (e instanceof KeyFileError)
          throw new UsageError(e.message, "give the verifier key that seam keygen printed, or a file of them");
        throw e;
      }
    }
    let r;
    try {
      r = await writeReport({
        paths,
        out,
        title: a.title,
        filters,
        filterText: given.join(" "),
        keys,
        keyArg: a.key,
        strict: a.strict === true,
        isWriterAlive,
        seam: `seam ${VERSION}`,
        last,
      });
    } catch (e) {
      createLog().error(
        `cannot write ${printable(out)}: ${describeReadError(e)}`,
        "choose another --out (the directory must exist and be writable)",
      );
      return 1;
    }
    const verdicts = r.files.map((f) => `${printable(f.path)}: ${f.report.verdict}`).join(", ");
    await print(`${printable(out)}: ${r.operations.toLocaleString("en-US")} operations, ${kb(r.bytes)}; ${verdicts}\n`);
    return worstExit(r.files.map((f) => exitCodeFor(f.report)));
  },
});

/** Every value of a repeatable string flag (`--name V` or `--name=V`), up to `--`. */
function flagValues(rawArgs: readonly string[], name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < rawArgs.length; i++) {
    const x = rawArgs[i]!;
    if (x === "--") break;
    if (x === `--${name}`) {
      const v = rawArgs[++i];
      if (v === undefined || v === "") throw new UsageError(`flag --${name} needs a value`);
      out.push(v);
    } else if (x.startsWith(`--${name}=`)) {
      const v = x.slice(name.length + 3);
      if (v === "") throw new UsageError(`flag --${name} needs a value`);
      out.push(v);
    }
  }
  return out;
}

function kb(bytes: number): string {
  return bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${(bytes / 1e3).toFixed(1)} kB`;
}
