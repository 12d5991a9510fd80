/**
 * The recording flags `seam wrap` and `seam proxy` share: what is recorded
 * (--raw, --max-frame, --fsync), when a call may go on (--write-ahead,
 * --fail-closed), business actions (--map and its family) and signed
 * checkpoints (--sign and its companions).
 */
import { closeSync, mkdirSync, readSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { ActionRecorder } from "../src/actions/recorder.ts";
import { UsageError } from "../src/base/exit.ts";
import { describeIoError } from "../src/base/io-error.ts";
import type { Log } from "../src/base/log.ts";
import { terminalText } from "../src/base/terminal-text.ts";
import type { CheckpointConfig } from "../src/checkpoint/checkpoint-writer.ts";
import { FSYNC_POLICIES, type FsyncPolicy } from "../src/ledger/file-sync.ts";
import { readSmallFile } from "../src/runtime/small-file.ts";
import { booleanFlags, intFlag, rejectEmptyValues, repeated, valueFlags } from "./_args.ts";

/** --map and its companions, each of which needs a mapping. */
const ACTION_ARGS = {
  map: {
    type: "string",
    description:
      "action mapping (JSON or YAML): mapped tools/calls become actions, recorded (and posted) before forwarding (default: $COMMITLAYER_RECORDER_MAP)",
    valueHint: "FILE",
  },
  "api-url": {
    type: "string",
    description:
      "post each action to URL/v1/actions with $COMMITLAYER_API_KEY (default: $COMMITLAYER_API_URL, else https://api.commitlayer.ai)",
    valueHint: "URL",
  },
  "api-key-fd": {
    type: "string",
    description:
      "read the endpoint's key from this open file descriptor (3 or more) and close it, instead of $COMMITLAYER_API_KEY, which the server could read in seam's environment",
    valueHint: "FD",
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
} as const;

export const RECORD_ARGS = {
  raw: { type: "boolean", description: "also record tool arguments and results, not only their digests" },
  payloads: {
    type: "string",
    description:
      "keep each argument, result, params and tools-list value whose digest a row holds in this directory, as the bytes that crossed, named by its digest (DIR/sha256/<hex>)",
    valueHint: "DIR",
  },
  "max-frame": {
    type: "string",
    description:
      "largest frame read, in bytes (default 67108864); a longer client frame is rowed and, under --write-ahead, refused; a longer server frame is counted",
    valueHint: "BYTES",
  },
  fsync: {
    type: "enum",
    options: [...FSYNC_POLICIES] as string[],
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
  ...ACTION_ARGS,
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
  "witness-url": {
    type: "string",
    description:
      "send each checkpoint to this C2SP tlog-witness (its URL, without /add-checkpoint; repeatable) in the background; its cosignatures become cosignature rows (needs --sign)",
    valueHint: "URL",
  },
} as const;

/** --fsync: one of FSYNC_POLICIES (default batch). */
/**
 * The ledger's own directory, made when it is missing and its parent is
 * there (said on stderr), before anything is spawned or listened on. A
 * missing parent is a usage error: a typo in a path (`/nonexistent/dir/x.jsonl`)
 * must not become a tree of directories.
 */
export function ledgerDirectory(ledger: string, log: Log): void {
  const dir = dirname(resolve(ledger));
  const st = statSync(dir, { throwIfNoEntry: false });
  if (st !== undefined) return;
  try {
    mkdirSync(dir);
  } catch (e) {
    throw new UsageError(
      `cannot make the ledger's directory ${terminalText(dir)}: ${describeIoError(e)}`,
      (e as NodeJS.ErrnoException).code === "ENOENT"
        ? `seam makes only the ledger's own directory: make ${terminalText(dirname(dir))} first, or choose another --ledger`
        : "choose another --ledger",
    );
  }
  log.info(`made the directory ${terminalText(dir)} for the ledger`);
}

export function fsyncFlag(value: string | undefined): FsyncPolicy {
  const fsync = (value ?? "batch") as FsyncPolicy;
  if (!FSYNC_POLICIES.includes(fsync))
    throw new UsageError(
      `--fsync takes ${FSYNC_POLICIES.slice(0, -1).join(", ")} or ${FSYNC_POLICIES.at(-1)}, not ${JSON.stringify(fsync)}`,
    );
  return fsync;
}

/**
 * --sign and its companions; a key file that cannot be used stops seam
 * before the server starts. With --witness-url, `submitter` sends
 * checkpoints to the witnesses (a recorder thread makes its own from
 * `witnessUrls`).
 */
export async function checkpointFlags(
  rawArgs: readonly string[],
  a: Record<string, unknown>,
  log: Log,
): Promise<(CheckpointConfig & { keyText: string; witnessUrls: string[] }) | undefined> {
  const sign = a.sign as string | undefined;
  const every = a.checkpointEvery as string | undefined;
  const witness = a.witness as string | undefined;
  const witnessUrls = repeated(rawArgs, "witness-url");
  if (sign === "" || witness === "") throw new UsageError(`--${sign === "" ? "sign" : "witness"} must not be empty`);
  if (sign === undefined) {
    if (every !== undefined || witness !== undefined || witnessUrls.length > 0)
      throw new UsageError(
        `--${every !== undefined ? "checkpoint-every" : witness !== undefined ? "witness" : "witness-url"} needs --sign KEYFILE`,
        "make a key with: seam keygen --out seam.key",
      );
    return undefined;
  }
  for (const u of witnessUrls) {
    let url: URL | null = null;
    try {
      url = new URL(u);
    } catch {}
    if (url === null || (url.protocol !== "http:" && url.protocol !== "https:") || url.search !== "" || url.hash !== "")
      throw new UsageError(
        `--witness-url takes a witness's http:// or https:// URL, not ${JSON.stringify(u)}`,
        "give the URL seam witness prints (requests go to URL/add-checkpoint)",
      );
  }
  if (new Set(witnessUrls).size !== witnessUrls.length) throw new UsageError("--witness-url names a witness twice");
  // The URL goes into stderr and every cosignature row.
  if (witnessUrls.some((u) => new URL(u).username !== "" || new URL(u).password !== ""))
    throw new UsageError("--witness-url must not carry credentials (user:password@): it is written into the ledger");
  // Loaded only to sign: a session without --sign starts its server without them.
  const { KeyFileError, readSignerFile } = await import("../src/checkpoint/keys.ts");
  const { DEFAULT_CHECKPOINT_EVERY, DEFAULT_CHECKPOINT_INTERVAL_MS } = await import(
    "../src/checkpoint/checkpoint-writer.ts"
  );
  const { WitnessSubmitter } = await import("../src/checkpoint/submit.ts");
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
    // A recorder thread makes its own signer from it (a signer cannot cross between threads).
    keyText: key.text,
    every: intFlag(every, "--checkpoint-every", DEFAULT_CHECKPOINT_EVERY, 1),
    intervalMs: DEFAULT_CHECKPOINT_INTERVAL_MS,
    witness,
    witnessUrls,
    // The submitter of --witness-url (one per process: every writer's checkpoints go through it).
    submitter:
      witnessUrls.length > 0
        ? new WitnessSubmitter(witnessUrls, { warn: (m) => log.warn(m), info: (m) => log.info(m) })
        : undefined,
  };
}

/**
 * The --map family. A flag of it without a mapping is a usage error; the
 * environment (COMMITLAYER_RECORDER_MAP, COMMITLAYER_API_URL,
 * COMMITLAYER_API_KEY) is read only when a mapping is given, and the key
 * never leaves the endpoint's header. The mapping is loaded and validated
 * here, so a bad one stops seam before the server starts.
 */
export async function actionFlags(
  rawArgs: string[],
  a: Record<string, unknown>,
  log: Log,
  spawnsServer = false,
): Promise<ActionRecorder | undefined> {
  rejectEmptyValues(a, ACTION_ARGS);
  const env = process.env;
  const given = (name: string) => (a[name] as string | undefined) || undefined;
  const mapPath = given("map") ?? (env.COMMITLAYER_RECORDER_MAP || undefined);
  const own = rawArgs.slice(0, rawArgs.includes("--") ? rawArgs.indexOf("--") : rawArgs.length);
  if (mapPath === undefined) {
    const companions = new Set([...valueFlags(ACTION_ARGS), ...booleanFlags(ACTION_ARGS)]);
    companions.delete("--map");
    const stray = own.find((w) => companions.has(w.split("=")[0]!));
    if (stray !== undefined)
      throw new UsageError(
        `${stray.split("=")[0]} needs an action mapping`,
        "give one with --map FILE (or COMMITLAYER_RECORDER_MAP)",
      );
    return undefined;
  }
  const { ActionRecorder } = await import("../src/actions/recorder.ts");
  const { chooseEndpoint } = await import("../src/actions/endpoint.ts");
  const { parseActionMap } = await import("../src/actions/map.ts");
  let text: string;
  try {
    text = readSmallFile(mapPath).toString("utf8");
  } catch (err) {
    throw new UsageError(`cannot read mapping ${mapPath}: ${describeIoError(err)}`);
  }
  const map = await parseActionMap(text, mapPath);
  const timeout = timeoutMs(given("timeout"));
  const fromFd = keyFromFd(given("apiKeyFd"));
  const chosen = chooseEndpoint(given("apiUrl"), env.COMMITLAYER_API_URL, fromFd ?? env.COMMITLAYER_API_KEY);
  if ("error" in chosen) throw new UsageError(chosen.error);
  // seam cannot take a variable out of its own environment block: a server it starts, as the same user,
  // reads it there (docs/threat-model-secrets.md).
  if (spawnsServer && fromFd === undefined && env.COMMITLAYER_API_KEY)
    log.warn(
      "COMMITLAYER_API_KEY is in seam's environment, where the wrapped server can read it: pass the key with --api-key-fd FD instead",
    );
  const endpoint = chosen.url === undefined ? undefined : { url: chosen.url, key: chosen.key, timeoutMs: timeout };

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
    { warn: (m) => log.warn(m), info: (m) => log.info(m) },
  );
}

/**
 * --api-key-fd FD: the key read to the end of that descriptor (one trailing
 * newline dropped), which is then closed, all before the server starts. The
 * key is then in seam's memory only: not in its environment or command line
 * (/proc/PID/environ and cmdline, which a server of the same user can read),
 * nor in a descriptor the server could open through /proc/PID/fd
 * (docs/threat-model-secrets.md).
 */
function keyFromFd(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const fd = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(fd) || fd < 3)
    throw new UsageError(`--api-key-fd takes a descriptor number of 3 or more, not ${JSON.stringify(value)}`);
  try {
    return readLine(fd);
  } catch (err) {
    throw new UsageError(`cannot read the key from descriptor ${fd}: ${describeIoError(err)}`);
  } finally {
    try {
      closeSync(fd);
    } catch {}
  }
}

/**
 * The descriptor's first line (or all of it, to its end), at most 64 KiB: a line ends the read, so
 * a pipe whose writer keeps it open still gives the key. A descriptor set non-blocking is waited on
 * for a few seconds at most.
 */
function readLine(fd: number): string {
  const buf = Buffer.alloc(1 << 16);
  let got = 0;
  const deadline = Date.now() + 5000;
  while (got < buf.length) {
    let n: number;
    try {
      n = readSync(fd, buf, got, buf.length - got, null);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EAGAIN" || Date.now() > deadline) throw e;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
      continue;
    }
    if (n === 0) break;
    got += n;
    if (buf.subarray(got - n, got).includes(10)) break;
  }
  const text = buf.subarray(0, got).toString("utf8");
  const nl = text.indexOf("\n");
  return (nl < 0 ? text : text.slice(0, nl)).replace(/\r$/, "");
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
