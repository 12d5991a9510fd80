import { EXIT, UsageError } from "../src/base/exit.ts";
import { createLog } from "../src/base/log.ts";
import { terminalText } from "../src/base/terminal-text.ts";
import type { CheckpointSetup } from "../src/checkpoint/verify-file.ts";
import type { Json } from "../src/core/json.ts";
import { type StreamFinding, verifyStreamLedgers } from "../src/fleet/central.ts";
import { messageFetcher, replay } from "../src/fleet/jetstream.ts";
import { connectNats, parseNatsUrl, scrubNats, showNats, subjectFor } from "../src/fleet/nats.ts";
import { threadVerifier, verifySource } from "../src/fleet/verify-thread.ts";
import { jsonText } from "../src/read/format.ts";
import { runtime } from "../src/runtime/index.ts";
import type { VerifyReport } from "../src/verify/ledger-verifier.ts";
import { exitCodeFor, humanReport, jsonReport, worstExit } from "../src/verify/verify-report.ts";

/**
 * `seam verify nats://HOST:PORT/STREAM`: one report per origin, in the
 * words and JSON of a local `seam verify`, with the stream's own findings
 * (gaps, conflicting re-publishes, unknown origins) as breaks; one exit
 * status for the whole stream. Writers are never judged alive from here:
 * an origin whose last session has no end is a finding, as for a copy.
 */
export async function verifyNatsStream(
  url: string,
  o: {
    strict: boolean;
    allowUnparsed: boolean;
    json: boolean;
    quiet: boolean;
    origins: string[];
    setup: CheckpointSetup | null;
    allowUnsealed: boolean;
  },
): Promise<number> {
  const target = parseNatsUrl(url);
  if ("error" in target) throw new UsageError(`${url.replace(/\/\/[^@/]*@/, "//")}: ${target.error}`);
  if (target.stream === undefined)
    throw new UsageError("name the stream: nats://HOST:PORT/STREAM", "seam verify nats://127.0.0.1:4222/SEAM_LEDGERS");
  if (o.setup?.witness !== undefined || o.setup?.state !== undefined)
    throw new UsageError("--witness and --state check a local file; a stream is checked with --key alone");
  const shown = showNats(target);
  const log = createLog();
  let nc: Awaited<ReturnType<typeof connectNats>> | undefined;
  let threaded: ReturnType<typeof threadVerifier> = null;
  try {
    nc = await connectNats(target, { name: "seam verify" });
    const only = o.origins.length > 0 ? new Set(o.origins) : undefined;
    // Each origin's subject without a host, and under any host.
    const subjects = only ? [...only].flatMap((x) => [subjectFor(x), subjectFor(x, "*")]) : undefined;
    const setup = o.setup;
    const vopts = { strict: o.strict, allowUnparsed: o.allowUnparsed };
    // The replay on this thread, the verification on another when this build can start one.
    threaded = threadVerifier(runtime, { vopts, keys: setup === null ? null : setup.keys.map((k) => k.text) });
    const verify = threaded?.verify ?? ((name, source) => verifySource(name, source, vopts, setup));
    const { origins, findings } = await verifyStreamLedgers(
      replay(nc, target.stream, subjects),
      (name, source) => verify(`${shown}#${name}`, source),
      await messageFetcher(nc, target.stream),
      only,
    );
    await threaded?.close();
    await nc.close();
    const out = runtime.stdout();
    const enc = new TextEncoder();
    const codes: number[] = [];
    for (const r of origins) {
      const report = withUnsealedTail(withStreamFindings(r.report, r.findings), r.json, o.setup, o.allowUnsealed);
      codes.push(exitCodeFor(report));
      if (o.quiet) continue;
      const name = `${shown} ${r.host === null ? "" : `${r.host}/`}${r.origin}`;
      const text = o.json
        ? `${jsonText({
            ...jsonReport(name, report),
            origin: r.origin,
            ...(r.host === null ? {} : { host: r.host }),
            stream_findings: r.findings as unknown as Json,
            ...(r.json ? { seal: r.json } : {}),
          } as unknown as Json)}\n`
        : humanReport(name, report, {
            strict: o.strict,
            color: process.stdout.isTTY === true && !process.env.NO_COLOR,
            extra: [...(r.extra ?? []), ...r.findings.map((f) => `stream    ${f.message}`)],
          });
      await out.write(enc.encode(text));
    }
    for (const f of findings) {
      codes.push(EXIT.FAIL);
      if (!o.quiet)
        await out.write(
          enc.encode(
            o.json
              ? `${jsonText({ stream: shown, finding: f } as unknown as Json)}\n`
              : `${terminalText(`${shown}: broken: ${f.message}`)}\n`,
          ),
        );
    }
    if (only)
      for (const x of only)
        if (!origins.some((r) => r.origin === x)) {
          codes.push(EXIT.INCONCLUSIVE);
          if (!o.quiet)
            await out.write(
              enc.encode(
                o.json
                  ? `${jsonText({ stream: shown, origin: x, found: false })}\n`
                  : `${terminalText(`${shown} ${x}`)}: inconclusive: no line of this origin is in the stream\n`,
              ),
            );
        }
    await out.end();
    return codes.length === 0 ? EXIT.INCONCLUSIVE : worstExit(codes);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    log.error(scrubNats(`cannot read ${shown}: ${(err as Error)?.message ?? String(err)}`, target));
    await threaded?.close().catch(() => {});
    await nc?.close().catch(() => {});
    return EXIT.INCONCLUSIVE;
  }
}

/** The stream's findings are breaks of the origin's report: what it shows is not what the host wrote. */
function withStreamFindings(r: VerifyReport, findings: readonly StreamFinding[]): VerifyReport {
  if (findings.length === 0) return r;
  return {
    ...r,
    verdict: "broken",
    ok: false,
    breaks: r.breaks + findings.length,
    first_break: r.first_break ?? { line: null, kind: findings[0]!.kind, message: findings[0]!.message },
  };
}

/**
 * With --key, a stream's rows are vouched for by the key, not by the subject
 * they came on: anyone with publish rights there can append correctly
 * chained rows. Rows after the last checkpoint that opens with the key are
 * an unsealed tail, which makes an otherwise ok report inconclusive; with
 * --allow-unsealed they are taken as before, and a note says so.
 */
export function withUnsealedTail(
  r: VerifyReport,
  seal: Record<string, unknown> | undefined,
  setup: CheckpointSetup | null,
  allowUnsealed: boolean,
): VerifyReport {
  const tail = seal?.unsealed_rows;
  // The line of the last checkpoint that holds; none: nothing is sealed, a finding of its own (no_checkpoint_holds).
  const at = (seal?.latest as { line?: unknown } | null | undefined)?.line;
  if (setup === null || setup.keys.length === 0 || typeof tail !== "number" || tail === 0) return r;
  if (typeof at !== "number") return r;
  const rows = `${tail} row${tail === 1 ? "" : "s"} after the checkpoint on line ${at}`;
  if (allowUnsealed)
    return {
      ...r,
      notes: [
        ...r.notes,
        `unsealed tail allowed (--allow-unsealed): ${rows} are vouched for by the stream's subject alone, not by the key`,
      ],
    };
  return {
    ...r,
    verdict: r.verdict === "broken" ? "broken" : "inconclusive",
    ok: r.verdict === "broken" ? false : null,
    findings: [
      ...r.findings,
      `unsealed tail: ${rows} lie under no checkpoint signed by the key; anyone with publish rights on the subject could have written them (--allow-unsealed takes them)`,
    ],
    finding_kinds: [...r.finding_kinds, "stream_unsealed_tail"],
  };
}

/** Serves `role` when it is the stream verifier's (src/fleet/verify-thread.ts); false for another role. */
