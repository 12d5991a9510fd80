import { defineCommand } from "citty";
import { UsageError } from "../src/base/exit.ts";
import { describeIoError } from "../src/base/io-error.ts";
import { createLog } from "../src/base/log.ts";
import { terminalText } from "../src/base/terminal-text.ts";
import { VERSION } from "../src/base/version.ts";
import { writeReport } from "../src/report/generate.ts";
import { isWriterAlive } from "../src/runtime/alive.ts";
import { exitCodeFor, inconclusiveReason, worstExit } from "../src/verify/verify-report.ts";
import { intFlag, rejectEmptyValues, rejectUnknownFlags } from "./_args.ts";
import { print } from "./_out.ts";
import { filterArgs, filtersFrom, givenFilters, keysFrom, requireReadable } from "./_read.ts";

/** The page's own flags (a value none may leave empty). */
const pageArgs = {
  out: { type: "string", description: "the HTML file to write (default report.html)", valueHint: "FILE" },
  title: { type: "string", description: "the page's title (default: seam report: PATH)", valueHint: "TEXT" },
} as const;

const args = {
  path: { type: "positional", description: "ledger file(s) to report on", required: true, valueHint: "PATH…" },
  ...pageArgs,
  key: {
    type: "string",
    description: "check signed checkpoints with this verifier key (or a file of them) and show what is sealed",
    valueHint: "VKEY",
  },
  strict: { type: "boolean", description: "as seam verify --strict: leading unchained rows are breaks" },
  ...filterArgs,
  last: {
    type: "string",
    description: "only the last N operations (the whole file is still read and verified)",
    valueHint: "N",
  },
} as const;

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
    rejectEmptyValues(a, pageArgs);
    const out = a.out ?? "report.html";
    const filters = filtersFrom(rawArgs, a);
    const last = a.last === undefined ? undefined : intFlag(a.last, "--last", 0, 1);
    const keys = keysFrom(a.key);
    // The page names the filters that made it, as they were given.
    const given = givenFilters(rawArgs, a);
    if (last !== undefined) given.push(`--last ${last}`);
    requireReadable(paths);
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
        verifier: "auto",
        seam: `seam ${VERSION}`,
        last,
      });
    } catch (e) {
      createLog().error(
        `cannot write ${terminalText(out)}: ${describeIoError(e)}`,
        "choose another --out (its directory must exist and be writable)",
      );
      return 1;
    }
    const verdicts = r.files
      .map((f) => {
        const why = inconclusiveReason(f.report);
        return `${terminalText(f.path)}: ${f.report.verdict}${why === null ? "" : ` (${terminalText(why)})`}`;
      })
      .join(", ");
    await print(
      `${terminalText(out)}: ${r.operations.toLocaleString("en-US")} operations, ${size(r.bytes)}; ${verdicts}\n`,
    );
    return worstExit(r.files.map((f) => exitCodeFor(f.report)));
  },
});

function size(bytes: number): string {
  return bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${(bytes / 1e3).toFixed(1)} kB`;
}
