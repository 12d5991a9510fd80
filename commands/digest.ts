import { defineCommand } from "citty";
import { UsageError } from "../src/exit.ts";

export default defineCommand({
  meta: { name: "digest", description: "not built yet" },
  run() {
    throw new UsageError("'seam digest' is not built yet");
  },
});
