import { defineCommand } from "citty";
import { EXIT, UsageError } from "../src/base/exit.ts";
import { createLog } from "../src/base/log.ts";
import { KeyFileError, readVerifierKeys } from "../src/checkpoint/keys.ts";
import { checkRelease, NOTE_FILE, SUMS_FILE } from "../src/release/sums.ts";
import { rejectEmptyValues, rejectUnknownFlags } from "./_args.ts";
import { print } from "./_out.ts";

const args = {
  dir: {
    type: "positional",
    description: `release folder holding ${SUMS_FILE}, ${NOTE_FILE} and the files they list (default .)`,
    required: false,
  },
  key: {
    type: "string",
    description: "the release verifier key (or a file of them) the note must be signed by",
    valueHint: "VKEY",
  },
  json: { type: "boolean", description: "print one JSON object: ok, signedBy, checked, findings" },
} as const;

/**
 * Exit 0 when the note is signed by a given key, SHA256SUMS is its text and
 * every file listed matches; 1 otherwise (each finding on stderr, or in the
 * JSON on stdout).
 */
export default defineCommand({
  meta: {
    name: "verify-release",
    description: `check a release folder: ${NOTE_FILE} signed by --key, and every file in ${SUMS_FILE}`,
  },
  args,
  async run({ rawArgs, args: a }) {
    rejectUnknownFlags(rawArgs, args, "verify-release");
    rejectEmptyValues(a, args);
    if (a._.length > 1)
      throw new UsageError(
        `unexpected argument ${JSON.stringify(String(a._[1]))}`,
        "seam verify-release [DIR] --key VKEY",
      );
    if (a.key === undefined)
      throw new UsageError(
        "--key is required: the verifier key the release is signed with",
        "seam verify-release [DIR] --key VKEY",
      );
    const log = createLog();
    let keys;
    try {
      keys = readVerifierKeys(a.key as string);
    } catch (e) {
      if (!(e instanceof KeyFileError)) throw e;
      throw new UsageError(e.message);
    }
    const dir = (a.dir as string | undefined) ?? ".";
    const report = checkRelease(dir, keys);
    if (a.json) {
      await print(`${JSON.stringify(report)}\n`);
    } else {
      for (const f of report.findings) log.error(f.message);
      if (report.ok)
        await print(
          `${dir}: ${report.checked.length} files match ${SUMS_FILE}, signed by ${report.signedBy.join(", ")}\n`,
        );
    }
    return report.ok ? EXIT.OK : EXIT.FAIL;
  },
});
