import { jsonText } from "../src/read/format.ts";
import { EXIT, UsageError } from "../src/base/exit.ts";
import { createLog } from "../src/base/log.ts";
import type { Json } from "../src/core/json.ts";
import type { CheckpointSetup } from "../src/checkpoint/verify-file.ts";
import { type StreamFinding, verifyStreamLedgers } from "../src/fleet/central.ts";
import { messageFetcher, replay } from "../src/fleet/jetstream.ts";
import { SUBJECT_PREFIX, connectNats, parseNatsUrl, scrubNats, showNats } from "../src/fleet/nats.ts";
import {
  VERIFIER_ROLE,
  type VerifierData,
  serveVerifier,
  threadVerifier,
  verifySource,
} from "../src/fleet/verify-thread.ts";
import type { ThreadRole } from "../src/runtime/thread.ts";
import { runtime } from "../src/runtime/index.ts";
import { exitCodeFor, humanReport, jsonReport, worstExit } from "../src/verify/report.ts";
import type { VerifyReport } from "../src/verify/verifier.ts";

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
    const subjects = only ? [...only].map((x) => SUBJECT_PREFIX + x) : undefined;
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
      const report = withStreamFindings(r.report, r.findings);
      codes.push(exitCodeFor(report));
      if (o.quiet) continue;
      const name = `${shown} ${r.origin}`;
      const text = o.json
        ? `${jsonText({
            ...jsonReport(name, report),
            origin: r.origin,
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
              : `${shown}: broken: ${f.message}\n`,
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
                  : `${shown} ${x}: inconclusive: no line of this origin is in the stream\n`,
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

/** Serves `role` when it is the stream verifier's (src/fleet/verify-thread.ts); false for another role. */
export function serveThread(role: ThreadRole): boolean {
  if (role.role !== VERIFIER_ROLE) return false;
  serveVerifier(role.port, role.data as VerifierData);
  return true;
}
