/**
 * What the tests that run `seam witness` beside a signed, wrapped session
 * share: a folder, keys made by `seam keygen`, the fixture client driving the
 * fixture server through `seam wrap --sign`, the witnesses' log
 * configuration taken from the ledger's first checkpoint, and witnesses
 * started on loopback.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { getField, type Json, parseJson } from "../../src/core/json.ts";
import { runCli, seamArgv, type Via } from "./cli.ts";
import { run, tempDir } from "./proc.ts";
import { startServing } from "./proxy-helpers.ts";

/** `seam fixture` from source: the client and server the sessions run. */
export const fixture = [...seamArgv("bun"), "fixture"];

/** A ledger's rows, parsed. */
export const rowsOf = (path: string): Json[] =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => parseJson(l));
export const evt = (r: Json) => getField(r, "evt");

export function witnessKit(via: Via) {
  const dir = tempDir();
  const p = (s: string) => join(dir, s);
  return {
    dir,
    p,
    /** `seam keygen --name NAME --out p(out)` with `extra`: the verifier key it prints. */
    keygen: async (name: string, out: string, extra: string[] = []) =>
      (await runCli(via, ["keygen", "--name", name, "--out", p(out), ...extra])).stdout.toString().trimEnd(),
    /**
     * The demo script through `seam wrap --sign log.key` into p(ledger),
     * sending checkpoints to `urls`; a checkpoint every `every` rows (seam's
     * default when undefined).
     */
    wrapDemo: (ledger: string, urls: string[], every: number | undefined = 3) =>
      run([
        ...fixture,
        "client",
        "--script",
        "demo",
        "--",
        ...seamArgv(via),
        "wrap",
        "--ledger",
        p(ledger),
        "--sign",
        p("log.key"),
        ...(every === undefined ? [] : ["--checkpoint-every", String(every)]),
        ...urls.flatMap((u) => ["--witness-url", u]),
        "--",
        ...fixture,
        "server",
      ]),
    /**
     * Writes p("logs.txt"), the witnesses' one log: the origin of the first
     * checkpoint in p(ledger) (the first line of its note) with `logKey`.
     * Returns that checkpoint's note.
     */
    configureLog: (logKey: string, ledger = "l.jsonl"): string => {
      const note = getField(rowsOf(p(ledger)).find((r) => evt(r) === "checkpoint")!, "note") as string;
      writeFileSync(p("logs.txt"), `log ${note.split("\n")[0]} ${logKey}\n`);
      return note;
    },
    /** `seam witness` with the key p(`${name}.key`), the log p("logs.txt") and its state in p(state). */
    startWitness: (name: string, state = `${name}-s`) =>
      startServing(via, ["witness", "--key", p(`${name}.key`), "--config", p("logs.txt"), "--state", p(state)]),
  };
}
