import { defineCommand } from "citty";
import { EXIT, UsageError } from "../src/base/exit.ts";
import { describeIoError } from "../src/base/io-error.ts";
import { createLog } from "../src/base/log.ts";
import { KeyFileError, readVerifierKeys } from "../src/checkpoint/keys.ts";
import { loadPolicy, type Policy, PolicyError } from "../src/checkpoint/policy.ts";
import { StateDir, StateDirError } from "../src/checkpoint/state.ts";
import {
  type CheckpointSetup,
  checkProofFile,
  proveFile,
  verifyCheckpointedSource,
} from "../src/checkpoint/verify-file.ts";
import type { Json } from "../src/core/json.ts";
import { jsonText } from "../src/read/format.ts";
import { isWriterAlive } from "../src/runtime/alive.ts";
import { runtime } from "../src/runtime/index.ts";
import { readSmallFile } from "../src/runtime/small-file.ts";
import { DEFAULT_MAX_LINE_BYTES, fileChunks, type VerifyReport } from "../src/verify/ledger-verifier.ts";
import type { VerifyOptions } from "../src/verify/options.ts";
import { PayloadCheck, type PayloadSource, withPayloads } from "../src/verify/payload-check.ts";
import { verifyLedger } from "../src/verify/verify-ledger.ts";
import { exitCodeFor, humanReport, jsonReport, worstExit } from "../src/verify/verify-report.ts";
import { intFlag, rejectEmptyValues, rejectUnknownFlags } from "./_args.ts";
import { existingPayloadStore } from "./_payloads.ts";
import { requireReadable } from "./_read.ts";

/** The signed-checkpoint flags: what is sealed, the proofs, the witness and state. */
const CHECKPOINT_ARGS = {
  key: {
    type: "string",
    description: "check every signed checkpoint with this verifier key (or a file of them) and report what is sealed",
    valueHint: "VKEY",
  },
  witness: {
    type: "string",
    description: "require the ledger to extend every checkpoint in this witness file (needs --key)",
    valueHint: "PATH",
  },
  state: {
    type: "string",
    description: "remember the highest checkpoint per ledger here and refuse to go backwards (needs --key)",
    valueHint: "DIR",
  },
  prove: {
    type: "string",
    description:
      "print a C2SP tlog-proof that ledger line LINE is under a checkpoint, with the cosignatures the ledger holds for it: the smallest covering checkpoint cosigned by the most witnesses (with --policy: by its quorum), else the latest",
    valueHint: "LINE",
  },
  "check-proof": {
    type: "string",
    description: "check a tlog-proof (from --prove) without the ledger; '-' reads stdin",
    valueHint: "FILE",
  },
  policy: {
    type: "string",
    description:
      "a C2SP tlog-policy (log keys, witness keys, quorum): report how far checkpoints cosigned by the quorum cover the ledger (in place of --key)",
    valueHint: "FILE",
  },
  cosignatures: {
    type: "string",
    description:
      "with --policy: cosigned checkpoints, in the witness file's form; the ledger must extend each (as with --witness)",
    valueHint: "FILE",
  },
} as const;

const args = {
  path: {
    type: "positional",
    description:
      "ledger file(s) to check; '-' reads stdin; nats://HOST:PORT/STREAM checks every ledger shipped there (required, but for --check-proof)",
    required: false,
    valueHint: "PATH…",
  },
  strict: { type: "boolean", description: "reject leading rows without a chain instead of skipping them" },
  json: { type: "boolean", description: "print one JSON object per file, one per line" },
  quiet: { type: "boolean", description: "print nothing; the exit status is the verdict" },
  "max-line": {
    type: "string",
    description: "longest line parsed, in bytes; a longer one is a finding, read without being held (default 67108864)",
    valueHint: "BYTES",
  },
  "allow-unparsed": {
    type: "boolean",
    description: "client frames seam could not read as the server did are notes, not findings",
  },
  ...CHECKPOINT_ARGS,
  payloads: {
    type: "string",
    description:
      "also check each payload this store holds (seam wrap --payloads) against the digest its row names; count those erased or absent",
    valueHint: "DIR",
  },
  origin: {
    type: "string",
    description: "with a nats:// stream: verify only these origins (comma-separated)",
    valueHint: "ORIGIN",
  },
  "allow-unsealed": {
    type: "boolean",
    description:
      "with a nats:// stream and --key: rows after the last checkpoint signed by the key do not make it inconclusive",
  },
} as const;

export default defineCommand({
  meta: {
    name: "verify",
    description: "check a ledger's hash chain and its sessions (exit 0 ok, 1 broken, 3 inconclusive)",
    usage: ["[OPTIONS] PATH…", "--check-proof FILE [--key VKEY] [--json|--quiet]"],
  },
  args,
  async run({ args: a, rawArgs }) {
    rejectUnknownFlags(rawArgs, args, "verify");
    if (a.json && a.quiet) throw new UsageError("--json and --quiet do not go together");
    const paths = a._.map(String);
    const checkProof = a["check-proof"];
    if (a.payloads !== undefined && (checkProof !== undefined || a.prove !== undefined || paths.some(isStream)))
      throw new UsageError("--payloads goes with ledger files", "seam verify LEDGER --payloads DIR");
    const setup = await checkpointSetup({ ...a, checkProof }, paths);
    if (checkProof !== undefined) return checkProofCommand(checkProof, setup?.keys ?? [], a, setup?.policy);
    // citty's own wording, as when PATH was a required positional (it is optional for --check-proof).
    if (paths.length === 0) throw new UsageError("missing required positional argument: PATH");
    if (a.prove !== undefined) return proveCommand(paths, a.prove, a.strict === true, setup ?? { keys: [] });
    if (paths.some(isStream)) {
      if (paths.length !== 1) throw new UsageError("a nats:// stream is verified on its own, without files");
      if (a.policy !== undefined) throw new UsageError("--policy goes with ledger files, not a nats:// stream");
      const { verifyNatsStream } = await import("./_verify-stream.ts");
      const origins = (a.origin ?? "").split(",").filter(Boolean);
      if (a["allow-unsealed"] && setup === null)
        throw new UsageError("--allow-unsealed goes with --key", "seam verify nats://HOST:PORT/STREAM --key VKEY");
      return verifyNatsStream(paths[0]!, {
        strict: a.strict === true,
        allowUnparsed: a["allow-unparsed"] === true,
        json: a.json === true,
        quiet: a.quiet === true,
        origins,
        setup,
        allowUnsealed: a["allow-unsealed"] === true,
      });
    }
    if (a.origin !== undefined) throw new UsageError("--origin goes with a nats:// stream");
    const store = await existingPayloadStore(a.payloads, true);
    if (a["allow-unsealed"]) throw new UsageError("--allow-unsealed goes with a nats:// stream");
    const maxLineBytes = intFlag(a.maxLine as string | undefined, "--max-line", DEFAULT_MAX_LINE_BYTES, 1);
    requireReadable(paths);
    const color = process.stdout.isTTY === true && !process.env.NO_COLOR;
    // A reader that goes away (`seam verify … | head -1`) only stops the
    // output: every file is still verified, so the exit status stays true.
    const out = runtime.stdout();
    const encoder = new TextEncoder();
    const codes: number[] = [];
    for (const path of paths) {
      const { report, extra, json } = await verifyOne(
        path,
        a.strict === true,
        process.stderr.isTTY === true && !a.quiet,
        setup,
        maxLineBytes,
        a["allow-unparsed"] === true,
        store,
      );
      codes.push(exitCodeFor(report));
      if (a.quiet || out.broken) continue;
      const text = a.json
        ? jsonText((json ? { ...jsonReport(path, report), seal: json } : jsonReport(path, report)) as unknown as Json) +
          "\n"
        : humanReport(path, report, { color, strict: a.strict === true, extra });
      await out.write(encoder.encode(text));
    }
    await out.end();
    return worstExit(codes);
  },
});

const isStream = (p: string) => p.startsWith("nats://");

async function verifyOne(
  path: string,
  strict: boolean,
  progress: boolean,
  setup: CheckpointSetup | null,
  maxLineBytes: number,
  allowUnparsed: boolean,
  store?: PayloadSource,
  onRow?: VerifyOptions["onRow"],
): Promise<{ report: VerifyReport; extra?: string[]; json?: Record<string, Json> }> {
  if (store !== undefined) {
    // The payloads are checked once the whole file is read, against the digests its rows name.
    const check = new PayloadCheck();
    const done = await verifyOne(path, strict, progress, setup, maxLineBytes, allowUnparsed, undefined, (row, n) =>
      check.row(row, n),
    );
    return { ...done, report: withPayloads(done.report, check.finish(store)) };
  }
  const source = path === "-" ? (process.stdin as AsyncIterable<Uint8Array>) : fileChunks(path);
  const meter = progress ? progressMeter(path) : undefined;
  try {
    const vopts = {
      onRow,
      strict,
      allowUnparsed,
      isWriterAlive,
      onProgress: meter?.update,
      maxLineBytes,
      freshChunks: path !== "-",
    };
    if (setup !== null) return await verifyCheckpointedSource(path, source, vopts, setup);
    return { report: await verifyLedger(source, vopts) };
  } catch (e) {
    // --state that cannot be read or written: what it remembers cannot be checked or kept.
    if (e instanceof StateDirError) throw new UsageError(e.message, e.hint);
    throw e;
  } finally {
    meter?.clear();
  }
}

/** `seam: verify PATH: 12.3 MB, 145,000 rows/s` on stderr, redrawn at most 10 times a second after the first half second. */
function progressMeter(path: string) {
  const start = performance.now();
  let lastDraw = start;
  let drawn = false;
  return {
    update({ bytes, rows }: { bytes: number; rows: number }) {
      const now = performance.now();
      if (now - start < 500 || now - lastDraw < 100) return;
      lastDraw = now;
      drawn = true;
      const rate = Math.round(rows / ((now - start) / 1000)).toLocaleString("en-US");
      process.stderr.write(`\rseam: verify ${path}: ${(bytes / 1e6).toFixed(1)} MB, ${rate} rows/s\x1b[K`);
    },
    clear() {
      if (drawn) process.stderr.write("\r\x1b[K");
    },
  };
}

/** The checkpoint flags as given. */
type CheckpointFlags = {
  key?: string;
  witness?: string;
  state?: string;
  prove?: string;
  checkProof?: string;
  policy?: string;
  cosignatures?: string;
};

/** The checkpoint flags; null when none is given (a plain chain check). */
async function checkpointSetup(a: CheckpointFlags, paths: string[]): Promise<CheckpointSetup | null> {
  rejectEmptyValues(a, CHECKPOINT_ARGS);
  if (a.policy !== undefined) return policySetup({ ...a, policy: a.policy }, paths);
  if (a.cosignatures !== undefined)
    throw new UsageError("--cosignatures goes with --policy", "seam verify LEDGER --policy FILE --cosignatures FILE");
  if (
    a.checkProof !== undefined &&
    (paths.length > 0 || a.prove !== undefined || a.witness !== undefined || a.state !== undefined)
  ) {
    throw new UsageError(
      "--check-proof takes the proof alone: no ledger, --prove, --witness or --state",
      "seam verify --check-proof FILE --key VKEY",
    );
  }
  if (a.key === undefined) {
    if (a.witness !== undefined || a.state !== undefined) {
      throw new UsageError(
        `--${a.witness !== undefined ? "witness" : "state"} needs --key VKEY`,
        "give the verifier key that seam keygen printed",
      );
    }
    return a.prove !== undefined || a.checkProof !== undefined ? { keys: [] } : null;
  }
  let keys;
  try {
    keys = readVerifierKeys(a.key);
  } catch (e) {
    if (e instanceof KeyFileError)
      throw new UsageError(e.message, "give the verifier key that seam keygen printed, or a file of them");
    throw e;
  }
  const setup: CheckpointSetup = { keys };
  if (a.witness !== undefined) {
    if (paths.length !== 1) throw new UsageError("--witness checks one ledger at a time");
    try {
      setup.witness = { name: a.witness, text: readSmallFile(a.witness).toString("utf8") };
    } catch (e) {
      throw new UsageError(`cannot read witness file ${a.witness}: ${describeIoError(e)}`);
    }
  }
  if (a.state !== undefined) setup.state = new StateDir(a.state);
  return setup;
}

/** --policy FILE: its log keys check the checkpoints, its quorum the cosignatures (of rows, and of --cosignatures or --witness). */
async function policySetup(a: CheckpointFlags & { policy: string }, paths: string[]): Promise<CheckpointSetup> {
  if (a.key !== undefined)
    throw new UsageError(
      "--policy carries the log keys: give it without --key",
      "list the keys as 'log <vkey>' lines in the policy",
    );
  if (a.prove !== undefined && (a.witness !== undefined || a.cosignatures !== undefined || a.state !== undefined))
    throw new UsageError(
      "--prove --policy takes the ledger alone: no --witness, --cosignatures or --state",
      "seam verify LEDGER --prove LINE --policy FILE",
    );
  if (
    a.checkProof !== undefined &&
    (paths.length > 0 || a.witness !== undefined || a.cosignatures !== undefined || a.state !== undefined)
  )
    throw new UsageError(
      "--check-proof takes the proof alone: no ledger, --witness, --cosignatures or --state",
      "seam verify --check-proof FILE --policy FILE",
    );
  if (a.witness !== undefined && a.cosignatures !== undefined)
    throw new UsageError(
      "give --witness or --cosignatures, not both",
      "both are files of checkpoints in the same form",
    );
  let policy: Policy;
  try {
    policy = await loadPolicy(readSmallFile(a.policy, 1 << 20).toString("utf8"), a.policy);
  } catch (e) {
    if (e instanceof PolicyError) throw new UsageError(e.message);
    throw new UsageError(`cannot read policy file ${a.policy}: ${describeIoError(e)}`);
  }
  const setup: CheckpointSetup = { keys: policy.logs, policy };
  const file = a.cosignatures ?? a.witness;
  if (file !== undefined) {
    const flag = a.cosignatures !== undefined ? "--cosignatures" : "--witness";
    if (paths.length !== 1) throw new UsageError(`${flag} checks one ledger at a time`);
    try {
      setup.witness = { name: file, text: readSmallFile(file).toString("utf8") };
    } catch (e) {
      throw new UsageError(`cannot read ${flag} file ${file}: ${describeIoError(e)}`);
    }
  }
  if (a.state !== undefined) setup.state = new StateDir(a.state);
  return setup;
}

/** --prove LINE: the proof on stdout, or an error (exit 1). */
async function proveCommand(
  paths: string[],
  lineText: string,
  strict: boolean,
  setup: CheckpointSetup,
): Promise<number> {
  const line = intFlag(lineText, "--prove", 0, 1);
  if (paths.length !== 1 || paths[0] === "-")
    throw new UsageError("--prove takes one ledger file (it is read twice, so not stdin)");
  requireReadable(paths);
  const r = await proveFile(paths[0]!, line, { strict, isWriterAlive }, setup);
  if (!r.ok) {
    createLog().error(r.reason, r.hint);
    return EXIT.FAIL;
  }
  // The entry point ends stdout once everything is written (a second end() never returns under Bun when stdout is a file).
  await runtime.stdout().write(new TextEncoder().encode(r.proof));
  return EXIT.OK;
}

/** --check-proof FILE: its report (human, --json or --quiet); exit 0 ok, 1 broken, 3 inconclusive. */
async function checkProofCommand(
  file: string,
  keys: CheckpointSetup["keys"],
  a: { json?: boolean; quiet?: boolean },
  policy?: Policy,
): Promise<number> {
  let text: string;
  try {
    if (file === "-") {
      const parts: Uint8Array[] = [];
      for await (const c of process.stdin as AsyncIterable<Uint8Array>) parts.push(c);
      text = Buffer.concat(parts).toString("utf8");
    } else {
      text = readSmallFile(file).toString("utf8");
    }
  } catch (e) {
    createLog().error(`cannot read ${file}: ${describeIoError(e)}`);
    return EXIT.FAIL;
  }
  const r = checkProofFile(file, text, keys, policy);
  if (!a.quiet)
    await runtime
      .stdout()
      .write(new TextEncoder().encode(a.json ? `${jsonText(r.json as unknown as Json)}\n` : r.human));
  return r.code;
}
