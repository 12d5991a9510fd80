import { defineCommand } from "citty";
import { UsageError } from "../src/exit.ts";

export default defineCommand({
  meta: { name: "demo", description: "not built yet" },
  run() {
    throw new UsageError("'seam demo' is not built yet");
  },
});
