import { defineCommand } from "citty";
import { EXIT, UsageError } from "../src/base/exit.ts";
import { createLog } from "../src/base/log.ts";
import { KeyFileError } from "../src/checkpoint/keys.ts";
import { isLoopbackHost } from "../src/proxy/guard.ts";
import { nodeHttp as http } from "../src/runtime/http-node.ts";
import { runtime } from "../src/runtime/index.ts";
import { readCosignerKey, readWitnessConfig, WitnessConfigError } from "../src/witness/config.ts";
import { WitnessServer } from "../src/witness/server.ts";
import { WitnessState, WitnessStateError } from "../src/witness/state.ts";
import { rejectUnknownFlags, valueFlags } from "./_args.ts";
import { parseListen } from "./_listen.ts";
import { print } from "./_out.ts";

const args = {
  key: {
    type: "string",
    description:
      "the witness's private key file (from seam keygen, Ed25519 or --alg ml-dsa-44; its name is the witness's name)",
    valueHint: "FILE",
    required: true,
  },
  config: {
    type: "string",
    description: 'the logs to witness: lines "log <origin> <verifier key>"',
    valueHint: "FILE",
    required: true,
  },
  state: {
    type: "string",
    description: "directory of the latest checkpoint cosigned per log (made if missing; never rolled back)",
    valueHint: "DIR",
    required: true,
  },
  listen: {
    type: "string",
    description: "address to listen on (default 127.0.0.1:0, any free port; the URL is printed)",
    valueHint: "HOST:PORT",
  },
  "allow-remote": {
    type: "boolean",
    description: "allow --listen on an address that is not loopback",
  },
} as const;

const USAGE = "seam witness --key witness.key --config logs.txt --state DIR";

/**
 * stdout: the URL to submit to (POST <URL>/add-checkpoint), once listening;
 * stderr: the cosigner's verifier key, which clients pin. Runs until SIGINT or SIGTERM.
 */
export default defineCommand({
  meta: {
    name: "witness",
    description:
      "cosign checkpoints of the logs it is configured for, as a C2SP tlog-witness HTTP server (POST /add-checkpoint)",
  },
  args,
  async run({ rawArgs, args: a }) {
    rejectUnknownFlags(rawArgs, args, "witness");
    const valued = valueFlags(args);
    const stray = rawArgs.find((w, i) => !w.startsWith("-") && !valued.has(rawArgs[i - 1] ?? ""));
    if (stray !== undefined) throw new UsageError(`unexpected argument ${JSON.stringify(stray)}`, USAGE);
    for (const f of ["key", "config", "state"] as const) if (!a[f]) throw new UsageError(`--${f} is required`, USAGE);
    const listen = parseListen((a.listen as string | undefined) ?? "127.0.0.1:0");
    if (!isLoopbackHost(listen.host) && !a.allowRemote)
      throw new UsageError(
        `--listen ${listen.host} is not a loopback address`,
        "add --allow-remote to listen where other machines can reach the witness",
      );
    const log = createLog();
    let server: WitnessServer;
    let state: WitnessState | undefined;
    let cosignerKey: string;
    let count: number;
    try {
      const { cosigner, warning } = await readCosignerKey(a.key as string);
      if (warning) log.warn(warning);
      cosignerKey = cosigner.verifierKey;
      const logs = readWitnessConfig(a.config as string);
      count = logs.size;
      state = WitnessState.open(a.state as string, logs.keys());
      const now = () => Math.floor(Date.now() / 1000);
      server = await WitnessServer.start(http, listen.host, listen.port, { logs, state, cosigner, now }, log);
    } catch (e) {
      state?.close();
      if (e instanceof KeyFileError || e instanceof WitnessConfigError || e instanceof WitnessStateError) {
        log.error(e.message, e.hint);
        return EXIT.FAIL;
      }
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "EADDRINUSE" || code === "EACCES" || code === "EADDRNOTAVAIL") {
        log.error(
          `cannot listen on ${listen.host}:${listen.port}: ${code === "EADDRINUSE" ? "address in use" : code === "EACCES" ? "permission denied" : "address not available"}`,
          code === "EADDRINUSE" ? "pick another port with --listen 127.0.0.1:PORT (0: any free port)" : undefined,
        );
        return EXIT.FAIL;
      }
      throw e;
    }
    let wake: () => void = () => {};
    const stopped = new Promise<void>((r) => {
      wake = r;
    });
    const off = runtime.onSignals(["SIGINT", "SIGTERM"], () => wake());
    log.info(
      `witnessing ${count} log${count === 1 ? "" : "s"} at ${server.url}/add-checkpoint; its cosignature key: ${cosignerKey}`,
    );
    await print(`${server.url}\n`);
    await stopped;
    off();
    await server.close();
    state.close();
    return EXIT.OK;
  },
});
