import { createInterface } from "node:readline/promises";
import { defineCommand } from "citty";
import { EXIT, UsageError } from "../src/base/exit.ts";
import { createLog } from "../src/base/log.ts";
import { KeyFileError, readSignerFile } from "../src/checkpoint/keys.ts";
import { pathEnvFromProcess } from "../src/install/clients.ts";
import { type InstallOptions, install } from "../src/install/install.ts";
import { durableLauncher, processProbe } from "../src/install/launcher.ts";
import { runtime } from "../src/runtime/index.ts";
import { rejectUnknownFlags } from "./_args.ts";
import { absolutePath, clientFlags, multi, report, scopeFlag, selectClients } from "./_install.ts";
import { WRAP_FLAGS } from "./_wrap-args.ts";

const args = {
  ...clientFlags,
  server: {
    type: "string",
    description: "only the servers of this name; repeat or separate with commas",
    valueHint: "NAME",
  },
  ledger: {
    type: "string",
    description: "one ledger for every server (default: <data dir>/seam/<client>.jsonl, one per client)",
    valueHint: "PATH",
  },
  sign: {
    type: "string",
    description: "have every wrapped server sign checkpoints with this key (seam keygen)",
    valueHint: "KEYFILE",
  },
  scope: {
    type: "string",
    description: "user (default): the user's files; project: the files in this directory",
    valueHint: "user|project",
  },
  "dry-run": { type: "boolean", description: "print a unified diff of what would change; write nothing" },
  yes: { type: "boolean", description: "do not ask before writing (asked only on a terminal)" },
} as const;

export default defineCommand({
  meta: {
    name: "install",
    description:
      "record every MCP stdio server a client runs: put `seam wrap` in front of each entry of its config file",
  },
  args,
  async run({ rawArgs, args: a }) {
    rejectUnknownFlags(rawArgs, args, "install");
    if (a._.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(String(a._[0]))}`);
    const sign = absolutePath(a.sign as string | undefined, "--sign");
    if (sign !== undefined) {
      try {
        readSignerFile(sign);
      } catch (e) {
        if (e instanceof KeyFileError) throw new UsageError(e.message, "make a key with: seam keygen --out seam.key");
        throw e;
      }
    }
    const dryRun = Boolean(a.dryRun);
    const env = pathEnvFromProcess(absolutePath(a.configRoot as string | undefined, "--config-root"));
    const clients = selectClients(rawArgs, Boolean(a.all), "install", false);
    const servers = multi(rawArgs, "server");
    const scope = scopeFlag(a.scope as string | undefined);
    const ledger = absolutePath(a.ledger as string | undefined, "--ledger");
    const log = createLog();
    // The command line is sound; now the seam the entries are to run.
    const probe = processProbe(env.os);
    const launcher = durableLauncher(runtime.selfArgv(), probe, rerun(rawArgs));
    if (!launcher.ok) {
      log.error(launcher.error, launcher.hint);
      return EXIT.FAIL;
    }
    if (launcher.found) log.info(`the entries run the seam at ${launcher.found}, not this one`);
    const opts: InstallOptions = {
      clients,
      servers,
      scope,
      env,
      dryRun,
      wrapFlags: WRAP_FLAGS,
      seam: { argv: launcher.argv },
      ledger,
      sign,
      probe,
    };
    const explicit = multi(rawArgs, "client") !== undefined;
    if (!dryRun && !a.yes && process.stdin.isTTY === true && process.stderr.isTTY === true) {
      const preview = install({ ...opts, dryRun: true });
      const diffs = preview.filter((f) => f.diff).map((f) => f.diff);
      if (diffs.length === 0) return report(preview, false, explicit, "install", opts.servers);
      process.stderr.write(diffs.join(""));
      const rl = createInterface({ input: process.stdin, output: process.stderr });
      const answer = await rl.question("seam: write these changes? [y/N] ");
      rl.close();
      if (!/^y(es)?$/i.test(answer.trim())) {
        log.info("nothing written");
        return EXIT.OK;
      }
    }
    return report(install(opts), dryRun, explicit, "install", opts.servers);
  },
});

/** The install command as typed, for a hint (quoted where a shell would need it). */
function rerun(rawArgs: readonly string[]): string {
  const q = (x: string) => (/^[\w@%+=:,./-]+$/.test(x) ? x : `'${x.replaceAll("'", "'\\''")}'`);
  return ["seam", "install", ...rawArgs.map(q)].join(" ");
}
