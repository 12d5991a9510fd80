import { defineCommand } from "citty";
import { UsageError } from "../src/exit.ts";

export default defineCommand({
  meta: { name: "selftest", description: "not built yet" },
  run() {
    throw new UsageError("'seam selftest' is not built yet");
  },
});
