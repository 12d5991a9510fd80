import { defineCommand } from "citty";
import { EXIT, UsageError } from "../src/base/exit.ts";
import { createLog } from "../src/base/log.ts";
import { safeStringify, terminalText } from "../src/base/terminal-text.ts";
import { CLIENT_IDS, CLIENT_NAMES, pathEnvFromProcess } from "../src/install/clients.ts";
import { processProbe } from "../src/install/launcher.ts";
import { type FileStatus, status } from "../src/install/status.ts";
import { isWriterAlive } from "../src/runtime/alive.ts";
import { rejectUnknownFlags } from "./_args.ts";
import { absolutePath, clientFlags, selectClients, transientNote } from "./_install.ts";
import { print } from "./_out.ts";
import { WRAP_FLAGS } from "./_wrap-args.ts";

const args = {
  client: {
    ...clientFlags.client,
    description: `only this client; repeat or separate with commas (${CLIENT_IDS.join(", ")}); default every client found`,
  },
  "config-root": clientFlags["config-root"],
  json: { type: "boolean", description: "print the status as JSON" },
} as const;

export default defineCommand({
  meta: {
    name: "status",
    description: "for each client found: its config file, each server, whether seam records it, and its last session",
  },
  args,
  async run({ rawArgs, args: a }) {
    rejectUnknownFlags(rawArgs, args, "status");
    if (a._.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(String(a._[0]))}`);
    const env = pathEnvFromProcess(absolutePath(a.configRoot as string | undefined, "--config-root"));
    const files = await status(
      selectClients(rawArgs, false, "status", true),
      env,
      WRAP_FLAGS,
      { isWriterAlive },
      processProbe(env.os),
    );
    if (a.json) await print(`${safeStringify(files, 2)}\n`);
    else await print(human(files));
    const log = createLog();
    let code: number = EXIT.OK;
    for (const f of files) {
      if (!f.error) continue;
      log.error(f.error);
      code = EXIT.FAIL;
    }
    if (files.length === 0) log.info("no client config file found");
    return code;
  },
});

function human(files: FileStatus[]): string {
  const out: string[] = [];
  for (const f of files) {
    const problem = f.problem === "unreadable" ? ": cannot be read" : f.error ? ": does not parse" : "";
    out.push(`${CLIENT_NAMES[f.client]} (${f.scope}): ${f.file}${problem}`);
    if (!f.error && f.servers.length === 0) out.push("  no servers");
    for (const s of f.servers) {
      const where = /\(local\)$/.test(s.where) ? `  [${s.where}]` : "";
      if (s.state === "remote" || s.state === "unsupported") out.push(`  ${s.name}: not recorded: ${s.reason}${where}`);
      else if (s.state === "not-recorded")
        out.push(`  ${s.name}: not recorded (seam install --client ${f.client})${where}`);
      else {
        const l = s.ledger;
        const ledger = !l
          ? "no --ledger in its entry"
          : !l.exists
            ? `${l.path} (no ledger yet)`
            : `${l.path} (verify: ${l.verdict})`;
        const last = s.last_session
          ? `last session ${s.last_session.when ?? "(no time)"}, ${s.last_session.calls} call${s.last_session.calls === 1 ? "" : "s"}${s.last_session.complete ? "" : ", unfinished"}`
          : "no session yet";
        out.push(`  ${s.name}: recorded into ${ledger}; ${last}${where}`);
        if (s.transient_launcher) out.push(`    ${transientNote(s.transient_launcher, f.client)}`);
      }
    }
  }
  return out.length > 0 ? `${out.map(terminalText).join("\n")}\n` : "";
}
