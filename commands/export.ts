import { defineCommand } from "citty";
import { EXIT, UsageError } from "../src/base/exit.ts";
import { createLog } from "../src/base/log.ts";
import { getField, type Json, parseJson } from "../src/core/json.ts";
import { readLines } from "../src/fleet/lines.ts";
import {
  logOf,
  logsRequest,
  type OtlpLogRecord,
  type OtlpSpan,
  postOtlp,
  spanOf,
  tracesRequest,
} from "../src/fleet/otlp.ts";
import { originOf } from "../src/fleet/ship.ts";
import { readLedger } from "../src/read/stream.ts";
import { rejectUnknownFlags } from "./_args.ts";

const args = {
  ledger: { type: "positional", description: "ledger file(s) to export", required: true, valueHint: "LEDGER…" },
  otlp: {
    type: "string",
    description: "an OTLP/HTTP endpoint (e.g. http://127.0.0.1:4318): spans go to URL/v1/traces, rows to URL/v1/logs",
    valueHint: "URL",
    required: true,
  },
  follow: {
    type: "boolean",
    description: "keep exporting operations as writers append them (one ledger; stop with SIGINT)",
  },
  "otlp-payloads": {
    type: "boolean",
    description: "also send arguments and results as span attributes (only a --raw ledger has them)",
  },
} as const;

const BATCH = 512;

/**
 * Best effort: the ledger stays the evidence. A batch the endpoint does not
 * take is said once per cause on stderr and not retried; exit 1 when any
 * batch was lost, 0 otherwise. Nothing of this touches a running `seam wrap`.
 */
export default defineCommand({
  meta: { name: "export", description: "send each operation as an OTLP span and each row as an OTLP log record" },
  args,
  async run({ rawArgs, args: a }) {
    rejectUnknownFlags(rawArgs, args, "export");
    const log = createLog();
    const paths = a._.map(String);
    if (!a.otlp) throw new UsageError("--otlp URL is required", "seam export --otlp http://127.0.0.1:4318 LEDGER");
    let base: URL;
    try {
      base = new URL(a.otlp);
    } catch {
      throw new UsageError(`--otlp: ${JSON.stringify(a.otlp)} is not a URL`);
    }
    if (base.protocol !== "http:" && base.protocol !== "https:") throw new UsageError("--otlp takes an http(s) URL");
    if (a.follow && paths.length !== 1) throw new UsageError("--follow follows one ledger file");
    const root = a.otlp.replace(/\/+$/, "");
    const said = new Set<string>();
    let lost = 0;
    const send = async (path: "traces" | "logs", body: unknown, n: number) => {
      const why = await postOtlp(`${root}/v1/${path}`, body);
      if (why === null) return;
      lost += n;
      if (!said.has(why)) {
        said.add(why);
        log.warn(`${why}: ${path} not exported (the ledger is unchanged)`);
      }
    };
    const abort = new AbortController();
    const stop = () => abort.abort();
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
    try {
      for (const p of paths)
        await exportOne(
          p,
          { follow: a.follow === true, payloads: a["otlp-payloads"] === true, signal: abort.signal },
          send,
        );
    } finally {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
    }
    if (lost > 0) {
      log.error(`${lost} spans and log records were not exported`);
      return EXIT.FAIL;
    }
    return EXIT.OK;
  },
});

async function exportOne(
  path: string,
  o: { follow: boolean; payloads: boolean; signal: AbortSignal },
  send: (path: "traces" | "logs", body: unknown, n: number) => Promise<void>,
): Promise<void> {
  // The rows pass: log records, each line's chain, the origin. It runs
  // ahead of the operations that need a line's chain.
  const chains: (string | null)[] = [];
  let origin = "";
  let offset = 0;
  let logs: OtlpLogRecord[] = [];
  const dec = new TextDecoder();
  const advanceTo = async (line: number) => {
    while (chains.length < line) {
      const b = await readLines(path, offset, BATCH, 8 << 20);
      if (b.lines.length === 0) return;
      offset = b.next;
      for (const raw of b.lines) {
        const text = dec.decode(raw.subarray(0, -1));
        if (chains.length === 0) origin = originOf(raw.subarray(0, -1));
        let row: Json = null;
        try {
          row = parseJson(text);
        } catch {}
        const chain = getField(row, "chain");
        chains.push(typeof chain === "string" ? chain : null);
        logs.push(logOf(row, chains.length, text, origin, chains[chains.length - 1]!, BigInt(Date.now()) * 1_000_000n));
      }
      if (logs.length >= BATCH) await flush();
    }
  };
  const protocols = new Map<string | null, string>();
  let spans: OtlpSpan[] = [];
  // One flush at a time, each taking what is buffered when it starts (the follow timer and the loop both flush).
  let flushing = Promise.resolve();
  const flush = () => {
    flushing = flushing.then(async () => {
      const l = logs;
      const sp = spans;
      logs = [];
      spans = [];
      if (l.length > 0) await send("logs", logsRequest(l), l.length);
      if (sp.length > 0) await send("traces", tracesRequest(sp), sp.length);
    });
    return flushing;
  };
  let idle: ReturnType<typeof setTimeout> | undefined;
  for await (const ev of readLedger(path, { follow: o.follow, signal: o.signal })) {
    if (ev.type !== "op") continue;
    const op = ev.op;
    await advanceTo(Math.max(...op.lines));
    if (op.kind === "initialize") {
      const v = getField(op.row, "protocol_version");
      if (typeof v === "string") protocols.set(op.session, v);
    }
    const span = spanOf(op, {
      origin,
      chainOf: (l) => chains[l - 1] ?? null,
      protocolOf: (s) => protocols.get(s) ?? null,
      payloads: o.payloads,
    });
    if (span !== null) spans.push(span);
    if (spans.length >= BATCH) await flush();
    if (o.follow) {
      clearTimeout(idle);
      idle = setTimeout(() => void flush(), 500);
    }
  }
  clearTimeout(idle);
  await advanceTo(Number.MAX_SAFE_INTEGER);
  await flush();
}
