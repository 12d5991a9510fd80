import { defineCommand } from "citty";
import { EXIT } from "../src/base/exit.ts";
import type { Json } from "../src/core/json.ts";
import { jsonText } from "../src/read/format.ts";
import { runtime } from "../src/runtime/index.ts";
import { type Arm, runSelftest } from "../src/selftest/run.ts";
import { rejectUnknownFlags } from "./_args.ts";
import { print } from "./_out.ts";
import { selfArgvForChildren } from "./_self.ts";

const args = {
  json: { type: "boolean", description: "print one JSON object instead of lines" },
} as const;

/**
 * One line per arm, as it finishes, in words: `PASS <case> holds: …` for a
 * GREEN arm, `PASS <case> catches <defect>: …` for a RED one (the check
 * fails, as it must, when the defect is injected); `FAIL <case> does not
 * hold` / `misses <defect>` when not. --json keeps the arm's name as it is.
 */
export function selftestLine(a: Arm): string {
  return `${a.pass ? "PASS" : "FAIL"} ${a.case} ${armWords(a.arm, a.pass)}: ${a.detail}\n`;
}

function armWords(arm: string, pass: boolean): string {
  if (arm === "GREEN" || arm.startsWith("GREEN ")) return `${pass ? "holds" : "does not hold"}${arm.slice(5)}`;
  const verb = pass ? "catches" : "misses";
  if (arm.startsWith("RED on ")) {
    const what = arm.slice(7);
    // A fault by its name (drop-byte) or a defect said in words (a checkpoint with a wrong root).
    return `${verb} ${what.includes(" ") ? what : `the fault ${what}`}`;
  }
  if (arm.startsWith("RED with ")) return `${verb} a build ${arm.slice(4)}`;
  return arm;
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
    const result = await runSelftest(
      selfArgvForChildren(),
      a.json ? undefined : (arm) => void print(selftestLine(arm)),
    );
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    if (a.json)
      await print(`${jsonText({ ...result, runtime: runtime.name, seconds: Number(seconds) } as unknown as Json)}\n`);
    else await print(`${result.passed} passed, ${result.failed} failed\n`);
    return result.failed === 0 ? EXIT.OK : EXIT.FAIL;
  },
});
