import { defineCommand } from "citty";
import { UsageError } from "../src/exit.ts";

export default defineCommand({
  meta: { name: "verify", description: "not built yet" },
  run() {
    throw new UsageError("'seam verify' is not built yet");
  },
});
