/**
 * `seam verify --payloads DIR`: each payload the store holds for a digest a
 * row names is checked against it, the digest recomputed from the stored
 * bytes by the recipe the digest names (docs/ledger-format.md, "Payloads").
 * A payload that does not give its digest is the break `payload_mismatch`
 * on the first line naming it; one that is not there is counted, as erased
 * when an `erasure` row names it, else as absent (a store may be kept for
 * some sessions only), and is no break. The store is read through
 * `PayloadSource` (src/runtime/payload-store.ts), so this stays pure.
 */
import { digestJsonUtf8, digestParts } from "../core/digest.ts";
import { getField, type Json, type JsonObject } from "../core/json.ts";
import type { Break } from "../format/kinds.ts";
import { isSeamsOwn } from "../format/row.ts";
import type { PayloadSummary, VerifyReport } from "./verdict.ts";

/** The digest fields whose values a payload is kept for. */
export const PAYLOAD_FIELDS = [
  "args_digest",
  "result_digest",
  "params_digest",
  "first_result_digest",
  "tools_digest",
] as const;

/** What looking a payload up found (src/runtime/payload-store.ts, PayloadStore.get). */
export type PayloadFound =
  | { kind: "present"; bytes: Uint8Array }
  | { kind: "absent" }
  | { kind: "refused"; why: string };

export interface PayloadSource {
  get(digest: string): PayloadFound;
}

/** The digests a row names a payload by (seam's own rows only). */
export function payloadDigests(row: JsonObject | { readonly [k: string]: Json }): string[] {
  if (!isSeamsOwn(getField(row, "seam"))) return [];
  const out: string[] = [];
  for (const f of PAYLOAD_FIELDS) {
    const d = getField(row, f);
    if (typeof d === "string" && digestParts(d) !== null) out.push(d);
  }
  return out;
}

export class PayloadCheck {
  /** Each digest named, with the first line and field naming it. */
  private readonly named = new Map<string, { line: number; field: string }>();
  private readonly erased = new Set<string>();

  /** A row of the ledger (VerifyOptions' onRow). */
  row(row: JsonObject | { readonly [k: string]: Json }, line: number): void {
    if (!isSeamsOwn(getField(row, "seam"))) return;
    if (getField(row, "evt") === "erasure") {
      const digests = getField(row, "digests");
      if (Array.isArray(digests)) for (const d of digests) if (typeof d === "string") this.erased.add(d);
      return;
    }
    for (const f of PAYLOAD_FIELDS) {
      const d = getField(row, f);
      if (typeof d === "string" && digestParts(d) !== null && !this.named.has(d)) this.named.set(d, { line, field: f });
    }
  }

  /** Checks every payload named against the store: the summary, and a break for each that does not hold. */
  finish(store: PayloadSource): { summary: PayloadSummary; breaks: Break[] } {
    const summary: PayloadSummary = { checked: 0, mismatched: 0, erased: 0, absent: 0 };
    const breaks: Break[] = [];
    for (const [digest, at] of this.named) {
      const found = store.get(digest);
      if (found.kind === "absent") {
        if (this.erased.has(digest)) summary.erased++;
        else summary.absent++;
        continue;
      }
      summary.checked++;
      const why = found.kind === "refused" ? found.why : mismatch(found.bytes, digest);
      if (why === null) continue;
      summary.mismatched++;
      breaks.push({
        line: at.line,
        kind: "payload_mismatch",
        message: `line ${at.line}: the payload of its ${at.field} ${why}`,
      });
    }
    breaks.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
    return { summary, breaks };
  }
}

/** Why `bytes` are not the payload of `digest`, or null when they are. */
function mismatch(bytes: Uint8Array, digest: string): string | null {
  let got: string;
  try {
    got = digestJsonUtf8(bytes, digestParts(digest)!.recipe);
  } catch {
    return "is not JSON";
  }
  return got === digest ? null : `does not match its digest (the stored bytes give ${got})`;
}

/** `r` with the payload check's breaks and summary added: a mismatch makes it broken. */
export function withPayloads(r: VerifyReport, found: { summary: PayloadSummary; breaks: Break[] }): VerifyReport {
  const out: VerifyReport = { ...r, payloads: found.summary };
  if (found.breaks.length === 0) return out;
  const kinds = { ...r.break_kinds };
  kinds.payload_mismatch = (kinds.payload_mismatch ?? 0) + found.breaks.length;
  const first = found.breaks[0]!;
  const earlier = r.first_break !== null && (r.first_break.line === null || r.first_break.line <= first.line!);
  return {
    ...out,
    verdict: "broken",
    ok: false,
    breaks: r.breaks + found.breaks.length,
    break_kinds: kinds,
    first_break: earlier ? r.first_break : first,
  };
}
