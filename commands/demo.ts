import { defineCommand } from "citty";
import { EXIT } from "../src/base/exit.ts";
import { createLog } from "../src/base/log.ts";
import { isWriterAlive } from "../src/runtime/alive.ts";
import { runDemo } from "../src/selftest/demo.ts";
import { rejectUnknownFlags } from "./_args.ts";
import { print } from "./_out.ts";
import { selfArgvForChildren } from "./_self.ts";

const args = {
  ledger: {
    type: "string",
    description: "ledger to write (default seam-demo.jsonl in the current directory)",
    valueHint: "PATH",
  },
} as const;

export default defineCommand({
  meta: {
    name: "demo",
    description: "wrap the built-in example server with a scripted client, verify the ledger, and show what happened",
  },
  args,
  async run({ rawArgs, args: a }) {
    rejectUnknownFlags(rawArgs, args, "demo");
    const ledger = (a.ledger as string | undefined) || "seam-demo.jsonl";
    const r = await runDemo(selfArgvForChildren(), ledger, isWriterAlive);
    if (!r.text) {
      createLog().error(
        `the demo session failed; the ledger is ${ledger}`,
        "run 'seam selftest' to see which part of seam is not working here",
      );
      return EXIT.FAIL;
    }
    await print(r.text);
    return r.ok ? EXIT.OK : EXIT.FAIL;
  },
});
