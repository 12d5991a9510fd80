import { defineCommand } from "citty";
import { UsageError } from "../src/exit.ts";

export default defineCommand({
  meta: { name: "wrap", description: "not built yet" },
  run() {
    throw new UsageError("'seam wrap' is not built yet");
  },
});
