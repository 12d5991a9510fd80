import { defineCommand } from "citty";
import { UsageError } from "../src/exit.ts";

export default defineCommand({
  meta: { name: "fixture", description: "not built yet" },
  run() {
    throw new UsageError("'seam fixture' is not built yet");
  },
});
