import type { Json } from "../src/core/json.ts";
import { jsonText } from "../src/read/format.ts";
import { defineCommand } from "citty";
import { rejectUnknownFlags } from "./_args.ts";
import { print } from "./_out.ts";
import { EXIT } from "../src/base/exit.ts";
import { runtime } from "../src/runtime/index.ts";
import { type Arm, runSelftest } from "../src/selftest/run.ts";

const args = {
  json: { type: "boolean", description: "print one JSON object instead of lines" },
} as const;

/** `PASS <case> <arm>: <detail>` — one line per arm, as it finishes. */
function line(a: Arm): string {
  return `${a.pass ? "PASS" : "FAIL"} ${a.case} ${a.arm}: ${a.detail}\n`;
}

export default defineCommand({
  meta: {
    name: "selftest",
    description: "prove that every check seam makes holds, and fails when the defect it guards against is injected",
  },
  args,
  async run({ rawArgs, args: a }) {
    rejectUnknownFlags(rawArgs, args, "selftest");
    const started = performance.now();
    const result = await runSelftest(runtime.selfArgv(), a.json ? undefined : (arm) => void print(line(arm)));
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    if (a.json)
      await print(`${jsonText({ ...result, runtime: runtime.name, seconds: Number(seconds) } as unknown as Json)}\n`);
    else await print(`${result.passed} passed, ${result.failed} failed\n`);
    return result.failed === 0 ? EXIT.OK : EXIT.FAIL;
  },
});
