import { readFileSync } from "node:fs";
import { defineCommand } from "citty";
import type { ActionRecorder } from "../src/wrap/actions.ts";
import { actionsUrl } from "../src/wrap/endpoint.ts";
import { intFlag, rejectUnknownFlags } from "./_args.ts";
import { UsageError } from "../src/base/exit.ts";
import { FAULT_ENV, parseFault } from "../src/selftest/faults.ts";
import { serverLabel } from "../src/wrap/label.ts";
import { type FsyncPolicy, describeWriteError } from "../src/ledger/writer.ts";
import { type Log, createLog } from "../src/base/log.ts";
import { runtime } from "../src/runtime/index.ts";
import { runWrap } from "../src/wrap/session.ts";
import { repeatedFlag, serverEnv } from "../src/wrap/env.ts";
import { KeyFileError, readSignerFile } from "../src/checkpoint/keys.ts";
import { DEFAULT_CHECKPOINT_EVERY, DEFAULT_CHECKPOINT_INTERVAL_MS, type SealConfig } from "../src/checkpoint/writer.ts";

const args = {
  ledger: { type: "string", description: "ledger file to append rows to (created if missing)", valueHint: "PATH" },
  server: {
    type: "string",
    description: "label for the server in every row (default: derived from the command)",
    valueHint: "NAME",
  },
  session: { type: "string", description: "session id (default: a fresh UUIDv4)", valueHint: "ID" },
  raw: { type: "boolean", description: "also record tool arguments and results, not only their digests" },
  "max-frame": {
    type: "string",
    description: "largest frame observed, in bytes; larger ones are forwarded, counted, not logged (default 67108864)",
    valueHint: "BYTES",
  },
  fsync: {
    type: "enum",
    options: ["batch", "always", "never"] as string[],
    description: "when rows are fsynced (default batch: at most every 100 ms)",
  },
  "write-ahead": {
    type: "boolean",
    description: "make each tools/call's intent row durable before forwarding the call",
  },
  "fail-closed": {
    type: "boolean",
    description: "refuse a tools/call whose record cannot be made durable (implies --write-ahead)",
  },
  map: {
    type: "string",
    description:
      "action mapping (JSON or YAML): mapped tools/calls become actions, recorded (and posted) before forwarding (default: $COMMITLAYER_RECORDER_MAP)",
    valueHint: "FILE",
  },
  "api-url": {
    type: "string",
    description: "post each action to URL/v1/actions with $COMMITLAYER_API_KEY (default: $COMMITLAYER_API_URL)",
    valueHint: "URL",
  },
  "agent-id": { type: "string", description: "agent_id of every action (overrides the mapping's)", valueHint: "ID" },
  "workflow-id": {
    type: "string",
    description: "workflow_id of every action (overrides the mapping's)",
    valueHint: "ID",
  },
  timeout: {
    type: "string",
    description: "seconds to wait for the endpoint before a call goes on without its action posted (default 5)",
    valueHint: "SECONDS",
  },
  "no-fail-open": {
    type: "boolean",
    description:
      "refuse a call whose action could not be posted (JSON-RPC error -32000); by default it is forwarded after a warning",
  },
  "warn-unmapped": { type: "boolean", description: "warn once for each called tool the mapping does not name" },
  sign: {
    type: "string",
    description:
      "sign checkpoints of the ledger's Merkle root with this private key (from seam keygen): every --checkpoint-every rows, every 60 s while rows come, and at session end",
    valueHint: "KEYFILE",
  },
  "checkpoint-every": {
    type: "string",
    description: "rows between signed checkpoints (default 1000; needs --sign)",
    valueHint: "N",
  },
  witness: {
    type: "string",
    description:
      "also append each checkpoint to this file, kept where the ledger's writer cannot roll it back (needs --sign)",
    valueHint: "PATH",
  },
  "strip-env": {
    type: "string",
    description: "remove this variable from the server's environment (repeatable; COMMITLAYER_API_KEY always is)",
    valueHint: "NAME",
  },
  "pass-env": {
    type: "string",
    description: "keep this variable in the server's environment although it would be removed (repeatable)",
    valueHint: "NAME",
  },
  "allow-foreign-ledger": {
    type: "boolean",
    description:
      "append to a ledger that is a symlink, belongs to another user or is writable by others (refused by default)",
  },
} as const;

export default defineCommand({
  meta: {
    name: "wrap",
    description:
      "run an MCP stdio server and record what crosses its stdin and stdout: seam wrap --ledger PATH -- CMD [ARGS…]",
  },
  args,
  async run({ rawArgs, args: a }) {
    rejectUnknownFlags(rawArgs, args, "wrap");
    const dd = rawArgs.indexOf("--");
    const argv = dd < 0 ? [] : rawArgs.slice(dd + 1);
    if (argv.length === 0) {
      throw new UsageError(
        "no server command given",
        "put the server's command after '--': seam wrap --ledger seam.jsonl -- npx -y @modelcontextprotocol/server-everything",
      );
    }
    const before = dd < 0 ? rawArgs : rawArgs.slice(0, dd);
    const stray = positionals(before);
    if (stray.length > 0)
      throw new UsageError(
        `unexpected argument ${JSON.stringify(stray[0])} before '--'`,
        "the server's command goes after '--'",
      );
    const ledger = a.ledger as string | undefined;
    if (!ledger) throw new UsageError("--ledger is required", "seam wrap --ledger seam.jsonl -- <server command>");
    const fault = parseFault(process.env[FAULT_ENV]);
    if (fault === null) throw new UsageError(`${FAULT_ENV} names no known fault`);
    const fsync = (a.fsync as FsyncPolicy | undefined) ?? "batch";
    if (!["batch", "always", "never"].includes(fsync))
      throw new UsageError(`--fsync takes batch, always or never, not ${JSON.stringify(fsync)}`);
    const session = a.session as string | undefined;
    if (session !== undefined && session === "") throw new UsageError("--session must not be empty");
    const log = createLog();
    const actions = await actionFlags(rawArgs, a as Record<string, unknown>, log);
    const seal = sealFlags(a as Record<string, unknown>, log);
    const strip = repeatedFlag(before, "strip-env");
    const pass = repeatedFlag(before, "pass-env");
    const badName = [...strip, ...pass].find((n) => !/^[^=\0]+$/.test(n));
    if (badName !== undefined)
      throw new UsageError(`--strip-env and --pass-env take a variable name, not ${JSON.stringify(badName)}`);
    return runWrap(
      runtime,
      {
        ledger,
        argv,
        server: (a.server as string | undefined) || serverLabel(argv),
        session,
        raw: Boolean(a.raw),
        maxFrame: intFlag(a.maxFrame as string | undefined, "--max-frame", 64 * 1024 * 1024, 1),
        fsync,
        writeAhead: Boolean(a.writeAhead),
        failClosed: Boolean(a.failClosed),
        cwd: process.cwd(),
        env: serverEnv(process.env, { strip, pass }),
        allowForeignLedger: Boolean(a.allowForeignLedger),
        fault,
        actions,
        seal,
      },
      log,
    );
  },
});

/** Words before '--' that are not flags or flag values. */
function positionals(words: string[]): string[] {
  const valued = new Set([
    "--ledger",
    "--server",
    "--session",
    "--max-frame",
    "--fsync",
    ...ACTION_VALUED,
    "--sign",
    "--checkpoint-every",
    "--witness",
    "--strip-env",
    "--pass-env",
  ]);
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (valued.has(w)) i++;
    else if (!w.startsWith("-")) out.push(w);
  }
  return out;
}

const ACTION_VALUED = ["--map", "--api-url", "--agent-id", "--workflow-id", "--timeout"];

/** --sign and its companions; a key file that cannot be used stops seam before the server starts. */
function sealFlags(a: Record<string, unknown>, log: Log): SealConfig | undefined {
  const sign = a.sign as string | undefined;
  const every = a.checkpointEvery as string | undefined;
  const witness = a.witness as string | undefined;
  if (sign === "" || witness === "") throw new UsageError(`--${sign === "" ? "sign" : "witness"} must not be empty`);
  if (sign === undefined) {
    if (every !== undefined || witness !== undefined)
      throw new UsageError(
        `--${every !== undefined ? "checkpoint-every" : "witness"} needs --sign KEYFILE`,
        "make a key with: seam keygen --out seam.key",
      );
    return undefined;
  }
  let key: ReturnType<typeof readSignerFile>;
  try {
    key = readSignerFile(sign);
  } catch (e) {
    if (e instanceof KeyFileError) throw new UsageError(e.message, "make a key with: seam keygen --out seam.key");
    throw e;
  }
  if (key.warning) log.warn(key.warning);
  return {
    signer: key.signer,
    every: intFlag(every, "--checkpoint-every", DEFAULT_CHECKPOINT_EVERY, 1),
    intervalMs: DEFAULT_CHECKPOINT_INTERVAL_MS,
    witness,
  };
}

/**
 * The --map family. A flag of it without a mapping is a usage error; the
 * environment (COMMITLAYER_RECORDER_MAP, COMMITLAYER_API_URL,
 * COMMITLAYER_API_KEY) is read only when a mapping is given, and the key
 * never leaves the endpoint's header. The mapping is loaded and validated
 * here, so a bad one stops seam before the server starts.
 */
async function actionFlags(
  rawArgs: string[],
  a: Record<string, unknown>,
  log: Log,
): Promise<ActionRecorder | undefined> {
  for (const flag of ["map", "apiUrl", "agentId", "workflowId", "timeout"]) {
    if (a[flag] === "")
      throw new UsageError(`--${flag.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} must not be empty`);
  }
  const env = process.env;
  const given = (name: string) => (a[name] as string | undefined) || undefined;
  const mapPath = given("map") ?? (env.COMMITLAYER_RECORDER_MAP || undefined);
  const own = rawArgs.slice(0, rawArgs.includes("--") ? rawArgs.indexOf("--") : rawArgs.length);
  if (mapPath === undefined) {
    const stray = own.find((w) => /^--(api-url|agent-id|workflow-id|timeout|no-fail-open|warn-unmapped)(=|$)/.test(w));
    if (stray !== undefined)
      throw new UsageError(
        `${stray.split("=")[0]} needs an action mapping`,
        "give one with --map FILE (or COMMITLAYER_RECORDER_MAP)",
      );
    return undefined;
  }
  const { ActionRecorder, parseActionMap } = await import("../src/wrap/actions.ts");
  let text: string;
  try {
    text = readFileSync(mapPath, "utf8");
  } catch (err) {
    throw new UsageError(`cannot read mapping ${mapPath}: ${describeWriteError(err)}`);
  }
  const map = await parseActionMap(text, mapPath);
  const timeout = timeoutMs(given("timeout"));
  const apiUrl = given("apiUrl") ?? (env.COMMITLAYER_API_URL || undefined);
  let endpoint: { url: string; key?: string; timeoutMs: number } | undefined;
  if (apiUrl !== undefined) {
    const u = actionsUrl(apiUrl);
    if ("error" in u) throw new UsageError(`${given("apiUrl") ? "--api-url" : "COMMITLAYER_API_URL"}: ${u.error}`);
    endpoint = { url: u.url, key: env.COMMITLAYER_API_KEY || undefined, timeoutMs: timeout };
  }
  const failOpen = !a.noFailOpen && !own.includes("--no-fail-open");
  return new ActionRecorder(
    {
      map,
      agentId: given("agentId"),
      workflowId: given("workflowId"),
      endpoint,
      failOpen,
      warnUnmapped: Boolean(a.warnUnmapped),
    },
    { warn: (m) => log.warn(m) },
  );
}

/** --timeout SECONDS: a positive number (fractions allowed), at most an hour. */
function timeoutMs(value: string | undefined): number {
  if (value === undefined) return 5000;
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || !(n > 0) || n > 3600) {
    throw new UsageError(`--timeout takes a number of seconds above 0 and at most 3600, not ${JSON.stringify(value)}`);
  }
  return Math.round(n * 1000);
}
