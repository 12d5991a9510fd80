/**
 * What `seam verify` concludes about a ledger: the verdict, and the counts,
 * breaks, findings, notes and sessions behind it (src/verify/verify-report.ts shows it).
 */
import type { Break, BreakKind, FindingKind } from "../format/kinds.ts";
import type { OperationsSummary } from "./operation-check.ts";

export type Verdict = "ok" | "broken" | "inconclusive";
export type VerifiedScope = "full" | "bounded_prechain_skipped" | "empty";

export interface SessionReport {
  id: string;
  server: string | null;
  /** Rows of this session in the file (ledger_repair rows it wrote included). */
  rows: number;
  /** Its tool_call rows. */
  calls: number;
  /** tool_call rows by status, in order of first appearance. */
  statuses: Record<string, number>;
  /** session_begin first, session_end last, and not one finding about it. */
  complete: boolean;
  /** Present when the session holds 2026-07-28 operations (src/verify/operation-check.ts). */
  operations?: OperationsSummary;
}

/** What `seam verify --payloads` found of the payloads rows name (src/verify/payload-check.ts) (`seam verify --json`: `payloads`). */
export interface PayloadSummary {
  /** Payloads present and checked (each digest once). */
  checked: number;
  /** Present and not giving their digest (each a break). */
  mismatched: number;
  /** Not present, named by an erasure row. */
  erased: number;
  /** Not present, named by no erasure row. */
  absent: number;
}

export interface VerifyReport {
  verdict: Verdict;
  /** true = ok, false = broken, null = inconclusive. */
  ok: boolean | null;
  /** Non-blank lines, less torn ones (a torn final line or a repaired torn line is no row). */
  rows: number;
  /** Rows that carried a string chain and were checked against it. */
  chained: number;
  /** Leading rows without a chain (skipped, or breaks with strict). */
  prechain: number;
  /** The break on the earliest line; `line` is null for `unreadable: <reason>`. */
  first_break: Break | null;
  breaks: number;
  /** Breaks counted by kind. */
  break_kinds: Partial<Record<BreakKind, number>>;
  verified_scope: VerifiedScope;
  /** The last chain value claimed by a row: what the next row must continue from. */
  head: string | null;
  sessions: SessionReport[];
  findings: string[];
  /** The kind of each listed finding, in the same order. */
  finding_kinds: FindingKind[];
  notes: string[];
  /** With --payloads: what the payload store holds of the digests rows name (src/verify/payload-check.ts). */
  payloads?: PayloadSummary;
  /** Bytes read and physical lines seen (progress and the human report). */
  bytes: number;
  lines: number;
}
