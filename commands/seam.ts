/**
 * seam's entry point. Subcommands load lazily so `seam wrap` pays only for
 * what wrapping needs. citty's own runMain is not used: it would print usage
 * on stdout (which `wrap` hands to the protocol), exit 1 on a usage error, and
 * take a `--help` meant for the wrapped server as its own.
 */
import { type ArgsDef, type CommandDef, defineCommand, runCommand } from "citty";
import { EXIT, UsageError } from "../src/base/exit.ts";
import { createLog } from "../src/base/log.ts";
import { PACKAGE_NAME, VERSION } from "../src/base/version.ts";
import { nearest } from "./_args.ts";
import { commandHelp, mainHelp, resolveHelp } from "./_help.ts";
import { flushOut, outputWidth, print } from "./_out.ts";
import { threadRole } from "../src/runtime/thread.ts";

type Lazy = () => Promise<CommandDef<any>>;
const subCommands: Record<string, Lazy> = {
  wrap: () => import("./wrap.ts").then((m) => m.default),
  proxy: () => import("./proxy.ts").then((m) => m.default),
  verify: () => import("./verify.ts").then((m) => m.default),
  digest: () => import("./digest.ts").then((m) => m.default),
  keygen: () => import("./keygen.ts").then((m) => m.default),
  ship: () => import("./ship.ts").then((m) => m.default),
  export: () => import("./export.ts").then((m) => m.default),
  selftest: () => import("./selftest.ts").then((m) => m.default),
  demo: () => import("./demo.ts").then((m) => m.default),
  log: () => import("./log.ts").then((m) => m.default),
  stats: () => import("./stats.ts").then((m) => m.default),
  check: () => import("./check.ts").then((m) => m.default),
  install: () => import("./install.ts").then((m) => m.default),
  uninstall: () => import("./uninstall.ts").then((m) => m.default),
  status: () => import("./status.ts").then((m) => m.default),
  diff: () => import("./diff.ts").then((m) => m.default),
  report: () => import("./report.ts").then((m) => m.default),
  // The built-in fixture server and scripted client that selftest and demo spawn (the README runs them too).
  fixture: () => import("./fixture.ts").then((m) => m.default),
};

const main = defineCommand({
  meta: {
    name: "seam",
    version: VERSION,
    description: "record what crosses the MCP stdio seam into a tamper-evident ledger",
  },
  subCommands,
});

async function run(argv: string[]): Promise<number> {
  const log = createLog();
  const dashdash = argv.indexOf("--");
  const own = dashdash < 0 ? argv : argv.slice(0, dashdash);
  const name = argv[0];
  // A bare `seam` asks what seam does: the help, and success.
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    const commands = await Promise.all(Object.values(subCommands).map(async (load) => resolveHelp(await load())));
    await print(mainHelp(await resolveHelp(main), commands, outputWidth(), VERSION));
    return EXIT.OK;
  }
  if (name === "--version" || name === "-v") {
    await print(`seam ${VERSION} (${PACKAGE_NAME})\n`);
    return EXIT.OK;
  }
  const load = Object.hasOwn(subCommands, name) ? subCommands[name] : undefined;
  if (!load) {
    const near = nearest(name, Object.keys(subCommands));
    log.error(
      `unknown command ${JSON.stringify(name)}`,
      near === undefined ? "run 'seam --help' for the list of commands" : `did you mean 'seam ${near}'?`,
    );
    return EXIT.USAGE;
  }
  const cmd = await load();
  if (own.includes("--help") || own.includes("-h")) {
    await print(commandHelp(await resolveHelp(cmd), outputWidth(), VERSION));
    return EXIT.OK;
  }
  try {
    const { result } = await runCommand(ownChecks(cmd), { rawArgs: argv.slice(1) });
    return typeof result === "number" ? result : EXIT.OK;
  } catch (err) {
    if (err instanceof UsageError) {
      log.error(err.message, err.hint === undefined ? `run 'seam ${name} --help' for usage` : (err.hint ?? undefined));
      return EXIT.USAGE;
    }
    if (err instanceof Error && err.name === "CLIError") {
      log.error(
        lowerFirst(err.message.replace(/\x1b\[[0-9;]*m/g, "").replace(/\.$/, "")),
        `run 'seam ${name} --help' for usage`,
      );
      return EXIT.USAGE;
    }
    // One line, never a stack trace: stderr is often the MCP client's log, and a
    // bundled stack quotes seam's source. SEAM_DEBUG=1 shows the stack.
    log.error(`internal error: ${internalMessage(err)}`);
    return EXIT.FAIL;
  }
}

/**
 * The command with its flags' `required` left to the command: each checks its
 * own required flags and says how to give them, which citty's check (made
 * before the command runs) would not. `required` stays in the definition for
 * --help and docs/cli.md.
 */
function ownChecks(cmd: CommandDef<any>): CommandDef<any> {
  const args = cmd.args;
  if (args === undefined || typeof args === "function" || args instanceof Promise) return cmd;
  const relaxed: ArgsDef = {};
  for (const [n, a] of Object.entries(args as ArgsDef))
    relaxed[n] = a.type !== "positional" && a.required === true ? { ...a, required: false } : a;
  return { ...cmd, args: relaxed };
}

function internalMessage(err: unknown): string {
  if (process.env.SEAM_DEBUG === "1" && err instanceof Error && err.stack) return err.stack;
  const text = err instanceof Error ? err.message : String(err);
  return lowerFirst(text.split("\n")[0]!.replace(/\.$/, ""));
}

function lowerFirst(s: string): string {
  return s.charAt(0).toLowerCase() + s.slice(1);
}

// Anything thrown outside a command's own flow (a runtime's asynchronous I/O
// error) is still one `seam: error:` line, and ends seam as a failure.
for (const event of ["uncaughtException", "unhandledRejection"] as const) {
  process.on(event, (err: unknown) => {
    createLog().error(`internal error: ${internalMessage(err)}`);
    process.exit(EXIT.FAIL);
  });
}

// Started as a thread of seam's own (src/runtime/thread.ts): do that thread's
// work; it ends when the thread that started it is done with it.
const role = threadRole();
if (role) {
  const served =
    (await (await import("./_recorder.ts")).serveThread(role)) ||
    (await import("./_verify-stream.ts")).serveThread(role) ||
    (await import("../src/read/verify-ahead.ts")).serveAhead(role);
  if (!served) throw new Error(`no thread role ${role.role}`);
} else {
  const code = await run(process.argv.slice(2));
  // Let stdout drain before leaving (a result cut short by exit is a lie),
  // unless its reader has gone away, when nothing more can be delivered.
  await flushOut();
  process.exit(code);
}
