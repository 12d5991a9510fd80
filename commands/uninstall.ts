import { defineCommand } from "citty";
import { UsageError } from "../src/base/exit.ts";
import { CLIENT_IDS, pathEnvFromProcess } from "../src/install/clients.ts";
import { uninstall } from "../src/install/install.ts";
import { rejectUnknownFlags } from "./_args.ts";
import { absolutePath, clientFlags, multi, report, scopeFlag, selectClients } from "./_install.ts";
import { WRAP_FLAGS } from "./_wrap-args.ts";

const args = {
  ...clientFlags,
  client: {
    ...clientFlags.client,
    description: `a client whose entries to put back; repeat or separate with commas (${CLIENT_IDS.join(", ")})`,
  },
  server: {
    type: "string",
    description: "only the servers of this name; repeat or separate with commas",
    valueHint: "NAME",
  },
  scope: {
    type: "string",
    description: "user (default): the user's files; project: the files in this directory",
    valueHint: "user|project",
  },
  "dry-run": { type: "boolean", description: "print a unified diff of what would change; write nothing" },
} as const;

export default defineCommand({
  meta: {
    name: "uninstall",
    description: "put every entry seam wrapped back as it was (all clients found unless --client is given)",
  },
  args,
  async run({ rawArgs, args: a }) {
    rejectUnknownFlags(rawArgs, args, "uninstall");
    if (a._.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(String(a._[0]))}`);
    const dryRun = Boolean(a.dryRun);
    const servers = multi(rawArgs, "server");
    const outcomes = uninstall({
      clients: selectClients(rawArgs, Boolean(a.all), "uninstall", true),
      servers,
      scope: scopeFlag(a.scope as string | undefined),
      env: pathEnvFromProcess(absolutePath(a.configRoot as string | undefined, "--config-root")),
      dryRun,
      wrapFlags: WRAP_FLAGS,
    });
    return report(outcomes, dryRun, multi(rawArgs, "client") !== undefined, "uninstall", servers);
  },
});
