import { describe, expect, test } from "bun:test";
import { VIAS, runCli } from "./cli.ts";

describe.each(VIAS)("seam via %s", (via) => {
  test("--version prints the package version on stdout", async () => {
    const r = await runCli(via, ["--version"]);
    expect(r.code).toBe(0);
    expect(r.stdout.toString()).toMatch(/^seam \d+\.\d+\.\d+\n$/);
    expect(r.stderr).toBe("");
  });
  test("an unknown command is a usage error on stderr, exit 2", async () => {
    const r = await runCli(via, ["frobnicate"]);
    expect(r.code).toBe(2);
    expect(r.stdout.length).toBe(0);
    expect(r.stderr).toBe(`seam: error: unknown command "frobnicate"\nseam: hint: run 'seam --help' for the list of commands\n`);
  });
});
