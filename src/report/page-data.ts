/**
 * What the report page is given: one entry per operation, file, session end
 * and tool, as src/report/generate.ts gathers them and src/report/html.ts
 * writes them into the page's data blocks.
 */

/** Bit flags of an operation in the page. */
export const FLAG = { NOT_VOUCHED: 1, SEALED: 2 } as const;

/** One operation as the page shows it (one table row, one timeline mark). */
export interface PageOp {
  /** Index into the report's files. */
  file: number;
  /** The line that shows it in ledger order (the row that completes it). */
  line: number;
  /** Epoch milliseconds, or null when its rows carry no readable time. */
  ts: number | null;
  session: string | null;
  server: string | null;
  /** The operation's kind, e.g. tool_call, initialize, session_begin. */
  kind: string;
  /** Tool name, uri, prompt or method. */
  name: string | null;
  status: string | null;
  ms: number | null;
  /** The JSON-RPC id as the ledger writes it (exact, so a 2^64 id stays exact). */
  rpcId: string | null;
  vouched: boolean;
  sealed: boolean;
  /** The ledger lines it joins, in file order. */
  lines: number[];
  /**
   * Its rows, one per line of `lines`: each line's bytes as the file holds
   * them, or, for a line the reader no longer had, the parsed row written
   * out again without its chain (a string).
   */
  rows: (Uint8Array | string)[];
}

/** What the banner says about one ledger file: verify's own words. */
export interface PageFile {
  path: string;
  verdict: "ok" | "broken" | "inconclusive";
  /** `seam verify`'s rows line, e.g. "9 (9 chained)". */
  rows_line: string;
  /** e.g. "1 (1 complete)". */
  sessions_line: string;
  first_break: { line: number | null; message: string } | null;
  breaks: number;
  head: string | null;
  /** The checkpoint line of `seam verify --key` ("through line 40; unsealed tail: …"), null without --key. */
  sealed: string | null;
  /** The command that checks the file again. */
  reverify: string;
  /** `seam verify`'s whole human report for the file. */
  verify: string;
}

export interface PageSessionEnd {
  reason: string | null;
  /** The exit code as written in the ledger. */
  exit: string | null;
  /** Epoch ms of its session_end, null when it has none. */
  end: number | null;
}

/** The per-tool figures of `seam stats`. */
export interface PageTool {
  server: string | null;
  tool: string | null;
  calls: number;
  statuses: Record<string, number>;
  error_rate: number;
  p50: number | null;
  p95: number | null;
  p99: number | null;
  max: number | null;
  /** Calls the chain vouches for. */
  vouched: number;
}

export interface PageHeader {
  title: string;
  /** e.g. "seam 0.1.0". */
  seam: string;
  /** The filters given, as on the command line; "" for none. */
  filters: string;
  generated: string;
}
