/**
 * seam's entry point. Subcommands load lazily (commands/_commands.ts). citty's
 * own runMain is not used: it would print usage on stdout (which `wrap` hands to the protocol), exit 1 on a usage error, and
 * take a `--help` meant for the wrapped server as its own.
 */
import { type ArgsDef, type CommandDef, defineCommand, runCommand } from "citty";
import { SeamError } from "../src/base/error.ts";
import { EXIT, UsageError } from "../src/base/exit.ts";
import { createLog } from "../src/base/log.ts";
import { PACKAGE_NAME, VERSION } from "../src/base/version.ts";
import { threadRole } from "../src/runtime/thread.ts";
import { nearest } from "./_args.ts";
import { DESCRIPTION, HIDDEN, SUBCOMMANDS as subCommands } from "./_commands.ts";
import { commandHelp, mainHelp, resolveHelp } from "./_help.ts";
import { flushOut, outputWidth, print } from "./_out.ts";

const main = defineCommand({
  meta: {
    name: "seam",
    version: VERSION,
    description: DESCRIPTION,
  },
  subCommands: Object.fromEntries(Object.entries(subCommands).filter(([n]) => !HIDDEN.has(n))),
});

async function run(argv: string[]): Promise<number> {
  const log = createLog();
  const dashdash = argv.indexOf("--");
  const own = dashdash < 0 ? argv : argv.slice(0, dashdash);
  const name = argv[0];
  // A bare `seam` asks what seam does: the help, and success.
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    const shown = Object.entries(subCommands).filter(([n]) => !HIDDEN.has(n));
    const commands = await Promise.all(shown.map(async ([, load]) => resolveHelp(await load())));
    await print(mainHelp(await resolveHelp(main), commands, outputWidth(), VERSION));
    return EXIT.OK;
  }
  if (name === "--version" || name === "-v") {
    await print(`seam ${VERSION} (${PACKAGE_NAME})\n`);
    return EXIT.OK;
  }
  const load = Object.hasOwn(subCommands, name) ? subCommands[name] : undefined;
  if (!load) {
    const near = nearest(
      name,
      Object.keys(subCommands).filter((n) => !HIDDEN.has(n)),
    );
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
      log.error(err.message, err.hintless ? undefined : (err.hint ?? `run 'seam ${name} --help' for usage`));
      return EXIT.USAGE;
    }
    if (err instanceof Error && err.name === "CLIError") {
      log.error(
        lowerFirst(err.message.replace(/\x1b\[[0-9;]*m/g, "").replace(/\.$/, "")),
        `run 'seam ${name} --help' for usage`,
      );
      return EXIT.USAGE;
    }
    if (err instanceof SeamError) {
      // A failure seam knows and words for its user (a key file it cannot use, a stream that refused).
      log.error(err.message, err.hint);
      return EXIT.FAIL;
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
  if (!(await (await import("./_threads.ts")).serveThread(role))) throw new Error(`no thread role ${role.role}`);
} else {
  const code = await run(process.argv.slice(2));
  // Let stdout drain before leaving (a result cut short by exit is a lie),
  // unless its reader has gone away, when nothing more can be delivered.
  await flushOut();
  process.exit(code);
}
