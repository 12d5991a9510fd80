/**
 * The core of `seam verify`: checks a ledger's hash chain the way the format's
 * reference verifier does, then checks what seam's own rows promise about
 * their sessions. Takes bytes, never a path or `process`; never throws on any
 * input; memory stays flat however large the file (one line at a time, split
 * on "\n" bytes only, so U+2028 and friends inside a row never split it).
 *
 * The rules (lines, chain walk, torn and repaired lines, session
 * completeness, breaks and findings) are docs/ledger-format.md; the line and
 * chain rules themselves are src/format/line.ts, shared with the writer.
 * Where seam knowingly differs from the reference verifier: a torn final
 * line is a finding, not a break; a torn line the next row declares
 * repaired is a note; a ledger_repair row that records the tail its writer
 * cut off is a note when its torn_text agrees with torn_bytes and
 * torn_digest (else `repair_mismatch`); a line over the limit that ends with
 * its chain is a finding (`line_too_long`) whose claimed chain is carried
 * on; session completeness gives findings;
 * a row with a
 * repeated key is the break duplicate_key (readers disagree about which
 * value a duplicate means: SQLite's json_extract takes the first, jq and
 * Python the last, while the chain hashes only the last, so such a row
 * cannot vouch for what it says; its chain is still checked); client frames
 * rowed as unparsed_frame or ambiguous_frame make the session inconclusive
 * (findings unparsed_client_frame, ambiguous_client_frame) unless
 * `allowUnparsed`.
 */
import { open } from "node:fs/promises";
import { describeIoError } from "../base/io-error.ts";
import { CanonicalError, lineForm } from "../core/canonical.ts";
import { GENESIS } from "../core/chain.ts";
import { StreamDigest, digestBytes } from "../core/digest.ts";
import { unescapeBytes } from "../core/escape.ts";
import { type Json, type JsonObject, JsonFloat, getField, isObject } from "../core/json.ts";
import { LineSplitter } from "../core/lines.ts";
import {
  CHAIN_TAIL_BYTES,
  MAX_LINE_BYTES,
  chainClaim,
  chainFromTail,
  classifyLine,
  expectedChain,
} from "../format/line.ts";
import { type TornLine, repairs } from "../format/row.ts";
import type { Break, BreakKind, FindingKind } from "../format/kinds.ts";
import { OperationCheck, type OperationsSummary } from "./operations.ts";

export type Verdict = "ok" | "broken" | "inconclusive";
export type VerifiedScope = "full" | "bounded_prechain_skipped" | "empty";

export type { Break } from "../format/kinds.ts";
export { REFERENCE_MAX_DEPTH } from "../format/line.ts";

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
  /** Present when the session holds 2026-07-28 operations (src/verify/operations.ts). */
  operations?: OperationsSummary;
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
  /** Bytes read and physical lines seen (progress and the human report). */
  bytes: number;
  lines: number;
}

export interface VerifyOptions {
  /** Reject leading unchained rows as breaks instead of skipping them. */
  strict?: boolean;
  /**
   * Is the writer of a session without session_end still running? Asked with
   * the pid, host and process start time (`pid_start`, undefined when not
   * recorded) its session_begin recorded; a throw counts as no. Without it
   * every unfinished session is a finding.
   */
  isWriterAlive?: (pid: number, host: string, start?: Json) => boolean;
  /**
   * A longer line is not parsed nor held whole (only its length, digest and
   * last CHAIN_TAIL_BYTES are kept): when it ends with a `"chain": "…"}` key,
   * as every seam row does, it is a finding (kind `line_too_long`: its chain
   * is taken as claimed, unchecked, so the rows after it are still checked);
   * otherwise it counts as unparseable, with a note. Default
   * DEFAULT_MAX_LINE_BYTES (MAX_LINE_BYTES, 64 MiB), the limit the ledger
   * writer reads the file's last row with. Memory: a line under the limit
   * costs a few times its size while it is parsed (bench/memory.ts).
   */
  maxLineBytes?: number;
  /**
   * Every pushed chunk is a buffer of its own that the source never reuses
   * (fileChunks): a line spanning chunks keeps them as they are instead of a
   * copy (LineSplitter's freshChunks).
   */
  freshChunks?: boolean;
  /** Findings listed at most (the rest are counted in a note). Default 1000. */
  maxFindings?: number;
  /**
   * Sees each object row once checked (its `chain` taken out) with its line number, and whether it carried a
   * chain that was checked: where src/checkpoint/verifier.ts checks checkpoint rows.
   */
  onRow?: (row: JsonObject | { readonly [k: string]: Json }, line: number, chained: boolean) => void;
  /** Sees each break as it is found, before the row it is on reaches onRow: where `seam log` marks what the chain no longer vouches for. */
  onBreak?: (b: Break) => void;
  /**
   * "reference": a row with a repeated key is read as the reference verifier
   * reads it (the last value), without the duplicate_key break; only for
   * comparing with it. Default "break".
   */
  duplicateKeys?: "break" | "reference";
  /** Client frames rowed as unparsed or ambiguous are notes, not findings (`seam verify --allow-unparsed`). */
  allowUnparsed?: boolean;
}

export const DEFAULT_MAX_LINE_BYTES = MAX_LINE_BYTES;

/** A line too long to parse: only its length, digest and end are kept. */
interface LongLine {
  length: number;
  digest: string;
  /** Its last CHAIN_TAIL_BYTES bytes. */
  tail: Uint8Array;
}

interface Finding {
  line: number;
  /** seq_gap is worded "declared lost" when session_end declares rows_unlogged. */
  kind: FindingKind;
  text: string;
}

interface Intent {
  line: number;
  id: string;
  tool: string | null;
}

interface Session {
  id: string;
  server: string | null;
  rows: number;
  calls: number;
  /** Made on the session's first tool_call (most sessions' state is kept small: a million of them fit). */
  statuses: Map<string, number> | null;
  /** Rows with a seq (everything but ledger_repair). */
  counted: number;
  nextSeq: number;
  pid: Json | undefined;
  host: Json | undefined;
  /** The writer's process start time (`pid_start`). */
  start: Json | undefined;
  endLine: number | null;
  unlogged: number;
  /** Made on the first tool_call_intent. */
  intents: Map<string, Intent[]> | null;
  /** Made on the first finding. */
  findings: Finding[] | null;
  dropped: number;
  /** Made at the first row about an operation (or at session_end). */
  ops?: OperationCheck;
  /** unparsed_frame rows (either direction). */
  unparsedRows: number;
}

/**
 * Push-style verifier: `push` chunks as they arrive, then `end()` (or
 * `fail(reason)` when the source broke). Neither throws.
 */
export class LedgerVerifier {
  private readonly strict: boolean;
  private readonly maxLine: number;
  private readonly maxFindings: number;
  private readonly isWriterAlive: VerifyOptions["isWriterAlive"];
  private readonly onRow: VerifyOptions["onRow"];
  private readonly onBreak: VerifyOptions["onBreak"];
  private readonly allowUnparsed: boolean;
  private readonly duplicateBreaks: boolean;
  /** The first repeated key of the line being parsed. */
  private dupKey: string | undefined;
  private readonly onDuplicate = (key: string) => {
    this.dupKey ??= key;
  };

  private readonly lines: LineSplitter;
  /** The digest so far of a line too long to keep, and its last bytes. */
  private longDigest: StreamDigest | null = null;
  private longTail: Uint8Array = new Uint8Array(0);
  private bytes = 0;
  private lineNo = 0;

  private prev: string = GENESIS;
  private began = false;
  private head: string | null = null;
  private rows = 0;
  private chained = 0;
  private prechain = 0;
  private breaks = 0;
  private firstBreak: Break | null = null;
  private breakKinds: Partial<Record<BreakKind, number>> = {};
  /** An unparseable line, judged once the next line shows whether it declares it repaired. */
  private unjudged: TornLine | null = null;
  private repairLine = 0;

  private fileFindings: Finding[] = [];
  private fileDropped = 0;
  private notes: string[] = [];
  private sessions = new Map<string, Session>();
  private last: Session | null = null;
  private failed: string | null = null;
  private report: VerifyReport | null = null;

  constructor(opts: VerifyOptions = {}) {
    this.strict = opts.strict === true;
    this.maxLine = opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    this.lines = new LineSplitter(this.maxLine, opts.freshChunks === true);
    this.maxFindings = opts.maxFindings ?? 1000;
    this.isWriterAlive = opts.isWriterAlive;
    this.onRow = opts.onRow;
    this.onBreak = opts.onBreak;
    this.allowUnparsed = opts.allowUnparsed === true;
    this.duplicateBreaks = opts.duplicateKeys !== "reference";
  }

  get progress(): { bytes: number; rows: number } {
    return { bytes: this.bytes, rows: this.rows };
  }

  push(chunk: Uint8Array): void {
    if (this.failed !== null || this.report !== null) return;
    this.bytes += chunk.length;
    this.lines.feed(chunk);
    this.drain();
  }

  /** The source broke: `unreadable: <reason>` is a break, and what was not read is not judged. */
  fail(reason: string): VerifyReport {
    if (this.report !== null) return this.report;
    if (this.failed === null) {
      this.failed = reason;
      this.settleUnjudged(null);
      this.addBreak(null, "unreadable", `unreadable: ${reason}`);
      if (this.bytes > 0) this.notes.push(`reading stopped after ${this.bytes} bytes; completeness not checked`);
    }
    return this.end();
  }

  end(): VerifyReport {
    if (this.report !== null) return this.report;
    if (this.failed === null) {
      this.lines.end();
      this.drain();
      this.settleUnjudged(null);
    }
    const sessions = this.finishSessions();
    const all = [...this.fileFindings];
    for (const s of this.sessions.values()) if (s.findings) all.push(...s.findings);
    const findings = all.map((f) => f.text);
    let dropped = this.fileDropped;
    for (const s of this.sessions.values()) dropped += s.dropped;
    const findingCount = findings.length + dropped;
    const listed = findings.slice(0, this.maxFindings);
    if (findingCount > listed.length) this.notes.push(`${findingCount - listed.length} more findings not listed`);

    const verdict: Verdict =
      this.breaks > 0 ? "broken" : this.rows === 0 || this.prechain > 0 || findingCount > 0 ? "inconclusive" : "ok";
    this.report = {
      verdict,
      ok: verdict === "ok" ? true : verdict === "broken" ? false : null,
      rows: this.rows,
      chained: this.chained,
      prechain: this.prechain,
      first_break: this.firstBreak,
      breaks: this.breaks,
      break_kinds: this.breakKinds,
      verified_scope:
        this.rows === 0 ? "empty" : this.prechain > 0 && !this.strict ? "bounded_prechain_skipped" : "full",
      head: this.head,
      sessions,
      findings: listed,
      finding_kinds: all.slice(0, listed.length).map((f) => f.kind),
      notes: this.notes,
      bytes: this.bytes,
      lines: this.lineNo,
    };
    return this.report;
  }

  // ---- lines ----

  /** Judges every line the splitter has; a line over maxLine keeps only its length, digest and last bytes. */
  private drain(): void {
    for (let p = this.lines.next(); p !== null; p = this.lines.next()) {
      if (p.kind === "line" && p.length <= this.maxLine) {
        this.line(p.bytes, p.ends);
        continue;
      }
      this.longDigest ??= new StreamDigest();
      this.longDigest.update(p.bytes);
      this.keepTail(p.bytes);
      if (p.kind === "over") continue;
      this.line({ length: p.length, digest: this.longDigest.digest(), tail: this.longTail }, p.ends);
      this.longDigest = null;
      this.longTail = new Uint8Array(0);
    }
  }

  /** Keeps the last CHAIN_TAIL_BYTES of a long line (copied: the piece is a view the splitter reuses). */
  private keepTail(piece: Uint8Array): void {
    if (piece.length >= CHAIN_TAIL_BYTES) {
      this.longTail = piece.slice(-CHAIN_TAIL_BYTES);
      return;
    }
    const joined = new Uint8Array(Math.min(CHAIN_TAIL_BYTES, this.longTail.length + piece.length));
    const keep = joined.length - piece.length;
    joined.set(this.longTail.subarray(this.longTail.length - keep), 0);
    joined.set(piece, keep);
    this.longTail = joined;
  }

  /** One physical line, without its "\n"; `terminated` is false only for a last line with no "\n" after it. */
  private line(input: Uint8Array | LongLine, terminated: boolean): void {
    const n = ++this.lineNo;
    let row: Json | undefined;
    if (input instanceof Uint8Array) {
      this.dupKey = undefined;
      const line = classifyLine(input, this.onDuplicate);
      if (line.kind === "blank") {
        this.settleUnjudged(null);
        return;
      }
      if (line.kind === "row") row = line.row;
    } else {
      const claimed = terminated ? chainFromTail(input.tail) : null;
      if (claimed !== null) {
        // Not parsed, not held: its chain is taken as claimed so that the rows after it are still checked.
        this.settleUnjudged(null);
        this.rows++;
        this.fileFinding(
          n,
          "line_too_long",
          `line ${n}: ${input.length} bytes, longer than the ${this.maxLine}-byte limit (--max-line): not parsed, its chain not checked`,
        );
        this.began = true;
        this.prev = claimed;
        this.head = claimed;
        return;
      }
      this.notes.push(`line ${n}: ${input.length} bytes, longer than the ${this.maxLine}-byte limit, not parsed`);
    }
    if (row === undefined) {
      this.settleUnjudged(null);
      if (!terminated) {
        this.fileFinding(n, "torn_final_line", `line ${n}: torn final line`);
        return;
      }
      // Judged when the next line is seen: it may declare this one repaired.
      this.unjudged = {
        line: n,
        bytes: input.length,
        digest: input instanceof Uint8Array ? digestBytes(input) : input.digest,
      };
      return;
    }
    this.settleUnjudged(row);
    this.row(row, n, this.dupKey);
  }

  /** Resolves an unparseable line against the line after it (`next`, or null when that is no row). */
  private settleUnjudged(next: Json | null): void {
    const p = this.unjudged;
    if (p === null) return;
    this.unjudged = null;
    if (next !== null && repairs(next, p)) {
      this.repairLine = p.line + 1;
      this.notes.push(
        `line ${p.line}: torn line (${p.bytes} bytes) repaired by the ledger_repair row at line ${p.line + 1}`,
      );
      return;
    }
    this.rows++;
    this.addBreak(p.line, "unparseable", `line ${p.line}: unparseable`);
  }

  private row(row: Json, n: number, dupKey?: string): void {
    this.rows++;
    const claim = chainClaim(row);
    if (claim.kind === "not_object" || !isObject(row)) {
      this.addBreak(n, "not_object", `line ${n}: not a JSON object`);
      return;
    }
    if (dupKey !== undefined && this.duplicateBreaks)
      this.addBreak(n, "duplicate_key", `line ${n}: duplicate key ${JSON.stringify(dupKey)}`);
    if (claim.kind === "unchained") {
      if (this.began) this.addBreak(n, "unchained_after_chain", `line ${n}: unchained row after chain began`);
      else {
        this.prechain++;
        if (this.strict)
          this.addBreak(n, "prechain_rejected", `line ${n}: unchained (prechain) row rejected in strict mode`);
      }
    } else if (claim.kind === "non_string_chain") {
      this.addBreak(n, "non_string_chain", `line ${n}: non-string chain value`);
    } else {
      this.began = true;
      this.chained++;
      let computed: string | null = null;
      try {
        computed = expectedChain(this.prev, row);
      } catch (err) {
        // Python can fail to serialize a row it parsed (RecursionError just
        // under its own parse limit), hence the message. Here it cannot
        // happen to a parsed row: chainForm takes NaN and lone surrogates,
        // and parseJson stops at 900 levels and 4300-digit ints, well inside
        // what chainForm writes. Kept so a failure would be a break, not a throw.
        this.addBreak(n, "unhashable", `line ${n}: unhashable row (${failureName(err)})`);
      }
      if (computed !== null && computed !== claim.chain)
        this.addBreak(n, "chain_mismatch", `line ${n}: chain mismatch`);
      this.prev = claim.chain;
      this.head = claim.chain;
    }
    this.observe(row, n);
    this.onRow?.(row, n, claim.kind === "chained");
  }

  private addBreak(line: number | null, kind: BreakKind, message: string): void {
    this.breaks++;
    this.breakKinds[kind] = (this.breakKinds[kind] ?? 0) + 1;
    const b: Break = { line, kind, message };
    if (this.firstBreak === null) this.firstBreak = b;
    this.onBreak?.(b);
  }

  private fileFinding(line: number, kind: FindingKind, text: string): void {
    if (this.fileFindings.length >= this.maxFindings) this.fileDropped++;
    else this.fileFindings.push({ line, kind, text });
  }

  /** A ledger_repair row of the kind that records a cut-off tail (its own line as torn_line): does it hold together? */
  private checkCutRepair(row: JsonObject | { readonly [k: string]: Json }, n: number): boolean {
    const text = getField(row, "torn_text");
    const bytes = getField(row, "torn_bytes");
    const digest = getField(row, "torn_digest");
    if (getField(row, "torn_line") !== n || typeof text !== "string" || typeof digest !== "string") return false;
    if (typeof bytes !== "number" || !Number.isSafeInteger(bytes) || bytes < 0) return false;
    const kept = unescapeBytes(text);
    if (kept === null) return false;
    if (getField(row, "torn_text_capped") === true) return kept.length < bytes;
    return kept.length === bytes && digestBytes(kept) === digest;
  }

  // ---- completeness of seam sessions ----

  /**
   * Per session (rows with seam == "mcp-stdio" or "mcp-http"): seq dense from 1 in file
   * order (ledger_repair and checkpoint rows have none and are exempt), session_begin first,
   * session_end present and last, its rows_before_end and calls equal to the
   * rows and tool_call rows before it, and every tool_call_intent followed by
   * a tool_call with the same rpc_id (exactly: 1 and "1" differ).
   */
  private observe(row: JsonObject | { readonly [k: string]: Json }, n: number): void {
    const seam = getField(row, "seam");
    if (seam !== "mcp-stdio" && seam !== "mcp-http") return;
    const evt = getField(row, "evt");
    if (evt === "ledger_repair" && this.repairLine !== n) {
      if (getField(row, "torn_text") === undefined)
        this.fileFinding(n, "repair_mismatch", `line ${n}: ledger_repair row does not match the line before it`);
      else if (this.checkCutRepair(row, n))
        this.notes.push(
          `line ${n}: torn line (${show(getField(row, "torn_bytes"))} bytes) cut off and recorded by the ledger_repair row at line ${n}`,
        );
      else
        this.fileFinding(
          n,
          "repair_mismatch",
          `line ${n}: ledger_repair row's torn_text does not match its torn_bytes and torn_digest`,
        );
    }
    const id = getField(row, "session");
    if (typeof id !== "string") {
      this.fileFinding(n, "session_id_missing", `line ${n}: seam row without a session id`);
      return;
    }
    let s = this.last !== null && this.last.id === id ? this.last : this.sessions.get(id);
    if (s === undefined) {
      const server = getField(row, "server");
      s = {
        id,
        server: typeof server === "string" ? server : null,
        rows: 0,
        calls: 0,
        statuses: null,
        counted: 0,
        nextSeq: 1,
        pid: undefined,
        host: undefined,
        start: undefined,
        endLine: null,
        unlogged: 0,
        intents: null,
        findings: null,
        dropped: 0,
        unparsedRows: 0,
      };
      this.sessions.set(id, s);
    }
    this.last = s;
    s.rows++;
    if (evt === "ledger_repair" || evt === "checkpoint") return;

    if (s.endLine !== null) this.find(s, n, "row_after_end", `line ${n}: row after session_end (line ${s.endLine})`);
    if (s.counted === 0) {
      if (evt !== "session_begin")
        this.find(s, n, "first_not_begin", `line ${n}: first row is ${evtName(evt)}, not session_begin`);
    } else if (evt === "session_begin") {
      this.find(s, n, "begin_not_first", `line ${n}: session_begin is not the first row`);
    }
    if (evt === "session_begin" && s.counted === 0) {
      s.pid = getField(row, "pid");
      s.host = getField(row, "host");
      s.start = getField(row, "pid_start");
    }

    const seq = getField(row, "seq");
    if (typeof seq !== "number" || !Number.isSafeInteger(seq) || seq < 1) {
      this.find(s, n, "seq_invalid", `line ${n}: seq is missing or not a positive integer`);
    } else if (seq > s.nextSeq) {
      const missing = seq - 1 === s.nextSeq ? `${s.nextSeq}` : `${s.nextSeq}..${seq - 1}`;
      this.find(s, n, "seq_gap", `line ${n}: seq jumps from ${s.nextSeq - 1} to ${seq} (${missing} missing`);
      s.nextSeq = seq + 1;
    } else if (seq < s.nextSeq) {
      this.find(s, n, "seq_repeat", `line ${n}: seq ${seq} repeats or goes back (expected ${s.nextSeq})`);
    } else {
      s.nextSeq++;
    }

    if (evt === "unparsed_frame" || evt === "ambiguous_frame") this.frameRow(s, row, evt, n);

    if (evt === "session_end" && s.endLine === null) {
      s.endLine = n;
      const said = getField(row, "rows_before_end") ?? 0;
      if (said !== s.counted)
        this.find(
          s,
          n,
          "end_rows_mismatch",
          `line ${n}: session_end says rows_before_end ${show(said)}, the file holds ${s.counted}`,
        );
      const calls = getField(row, "calls") ?? 0;
      if (calls !== s.calls)
        this.find(
          s,
          n,
          "end_calls_mismatch",
          `line ${n}: session_end says calls ${show(calls)}, the file holds ${s.calls} tool_call rows`,
        );
      const unlogged = getField(row, "rows_unlogged");
      if (typeof unlogged === "number" && unlogged > 0) s.unlogged = unlogged;
      this.operationsAt(s).sessionEnd(row, n);
      // Frames seam counted without rowing them (a seam that rowed none, or a server's past the cap).
      const counted = getField(row, "unparsed_frames");
      if (typeof counted === "number" && counted > s.unparsedRows)
        this.unparsedFinding(
          s,
          n,
          "unrowed_unparsed_frames",
          `line ${n}: session_end counts ${counted} unparsed frames, ${s.unparsedRows} rowed: what they asked of the server is not recorded`,
        );
    }
    s.counted++;
    if (OperationCheck.concerns(evt, row)) this.operationsAt(s).row(evt, row, n);

    if (evt === "tool_call") {
      s.calls++;
      const st = getField(row, "status");
      const key = typeof st === "string" ? st : st === undefined ? "(missing)" : "(not a string)";
      s.statuses ??= new Map();
      s.statuses.set(key, (s.statuses.get(key) ?? 0) + 1);
      const waiting = s.intents?.get(exactIdKey(getField(row, "rpc_id")));
      if (waiting !== undefined && waiting.length > 0) waiting.shift();
    } else if (evt === "tool_call_intent") {
      const rpc = getField(row, "rpc_id");
      const key = exactIdKey(rpc);
      const tool = getField(row, "tool");
      s.intents ??= new Map();
      const list = s.intents.get(key);
      const intent = { line: n, id: show(rpc), tool: typeof tool === "string" ? tool : null };
      if (list === undefined) s.intents.set(key, [intent]);
      else list.push(intent);
    }
  }

  private find(s: Session, line: number, kind: FindingKind, text: string): void {
    s.findings ??= [];
    if (s.findings.length >= this.maxFindings) s.dropped++;
    else s.findings.push({ line, kind, text });
  }

  private operationsAt(s: Session): OperationCheck {
    s.ops ??= new OperationCheck((line, kind, text) => this.find(s, line, kind as FindingKind, text));
    return s.ops;
  }

  /**
   * A client frame seam could not read as the server does: an
   * unparsed_frame row (dir c2s) or an ambiguous_frame row. What the server
   * did with it is not vouched for, so the session is inconclusive unless
   * allowUnparsed (then a note).
   */
  private frameRow(s: Session, row: JsonObject | { readonly [k: string]: Json }, evt: string, n: number): void {
    if (evt === "unparsed_frame") s.unparsedRows++;
    if (getField(row, "dir") !== "c2s") return;
    const refused = getField(row, "refused") === true ? ", refused by seam" : ", forwarded";
    if (evt === "unparsed_frame")
      this.unparsedFinding(
        s,
        n,
        "unparsed_client_frame",
        `line ${n}: a client frame seam could not parse (${show(getField(row, "reason"))}${refused})`,
      );
    else
      this.unparsedFinding(
        s,
        n,
        "ambiguous_client_frame",
        `line ${n}: a client frame JSON parsers read differently${refused}`,
      );
  }

  private unparsedFinding(s: Session, n: number, kind: FindingKind, text: string): void {
    if (this.allowUnparsed) this.notes.push(`session ${s.id}: ${text} (allowed by --allow-unparsed)`);
    else this.find(s, n, kind, text);
  }

  private finishSessions(): SessionReport[] {
    const out: SessionReport[] = [];
    const judged = this.failed === null;
    for (const s of this.sessions.values()) {
      for (const f of s.findings ?? []) {
        if (f.kind === "seq_gap") f.text += s.unlogged > 0 ? `, declared lost: rows_unlogged ${s.unlogged})` : ")";
        f.text = `session ${s.id}: ${f.text}`;
      }
      const open: Intent[] = [];
      for (const list of s.intents?.values() ?? []) open.push(...list);
      open.sort((a, b) => a.line - b.line);
      if (judged && s.endLine === null && this.alive(s)) {
        const inFlight = open.length > 0 ? `; ${open.length} call${open.length === 1 ? "" : "s"} in flight` : "";
        this.notes.push(
          `session ${s.id}: open (its writer, pid ${String(s.pid)} on ${String(s.host)}, is still running)${inFlight}`,
        );
      } else if (judged) {
        for (const i of open) {
          const tool = i.tool === null ? "" : ` (tool ${JSON.stringify(i.tool)})`;
          this.find(
            s,
            i.line,
            "intent_without_result",
            `session ${s.id}: line ${i.line}: tool_call_intent rpc_id ${i.id}${tool} has no tool_call: the call reached the server and left no result`,
          );
        }
        if (s.endLine === null)
          this.find(s, Infinity, "session_missing_end", `session ${s.id}: no session_end (truncated or still running)`);
      }
      out.push({
        id: s.id,
        server: s.server,
        rows: s.rows,
        calls: s.calls,
        statuses: s.statuses ? Object.fromEntries(s.statuses) : {},
        complete: s.endLine !== null && (s.findings?.length ?? 0) === 0 && s.dropped === 0,
        operations:
          s.ops === undefined || s.ops.summary().ended + s.ops.summary().abandoned === 0 ? undefined : s.ops.summary(),
      });
    }
    return out;
  }

  private alive(s: Session): boolean {
    if (this.isWriterAlive === undefined) return false;
    if (typeof s.pid !== "number" || !Number.isSafeInteger(s.pid) || s.pid <= 0 || typeof s.host !== "string")
      return false;
    try {
      return this.isWriterAlive(s.pid, s.host, s.start) === true;
    } catch {
      return false;
    }
  }
}

/** Verifies a whole ledger from a byte source; a source that throws gives `unreadable: <reason>`. Never throws. */
export async function verifyLedger(
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  opts: VerifyOptions & { onProgress?: (p: { bytes: number; rows: number }) => void } = {},
  /** What the bytes go to: a LedgerVerifier, or one that wraps it (src/checkpoint/verifier.ts). */
  v: Pick<LedgerVerifier, "push" | "fail" | "end" | "progress"> = new LedgerVerifier(opts),
): Promise<VerifyReport> {
  const it: AsyncIterator<Uint8Array> | Iterator<Uint8Array> =
    Symbol.asyncIterator in source ? source[Symbol.asyncIterator]() : source[Symbol.iterator]();
  try {
    for (;;) {
      let step: IteratorResult<Uint8Array>;
      // Only the source's own failures are `unreadable`; nothing else here throws.
      try {
        step = await it.next();
      } catch (err) {
        return v.fail(describeIoError(err));
      }
      if (step.done) return v.end();
      v.push(step.value);
      opts.onProgress?.(v.progress);
    }
  } finally {
    await Promise.resolve(it.return?.()).catch(() => {});
  }
}

/** Verifies bytes already in memory (tests, small files). */
export function verifyBytes(bytes: Uint8Array, opts: VerifyOptions = {}): VerifyReport {
  const v = new LedgerVerifier(opts);
  v.push(bytes);
  return v.end();
}

/** A file's bytes in 1 MiB chunks; open and read errors surface from the iteration. */
export async function* fileChunks(path: string, chunkSize = 1 << 20): AsyncGenerator<Uint8Array> {
  const fh = await open(path, "r");
  try {
    for (;;) {
      const buf = new Uint8Array(chunkSize);
      const { bytesRead } = await fh.read(buf, 0, chunkSize, null);
      if (bytesRead === 0) return;
      yield bytesRead === chunkSize ? buf : buf.subarray(0, bytesRead);
    }
  } finally {
    await fh.close().catch(() => {});
  }
}

// ---- helpers ----

function failureName(err: unknown): string {
  if (err instanceof CanonicalError) return err.kind;
  if (err instanceof RangeError) return "RecursionError";
  return err instanceof Error ? err.name : "Error";
}

/** A key under which rpc ids compare exactly: 1, 1.0 and "1" differ; big ints by their digits. */
function exactIdKey(v: Json | undefined): string {
  if (typeof v === "string") return `s${v}`;
  if (typeof v === "number") return Number.isInteger(v) ? `i${v}` : `f${v}`;
  if (typeof v === "bigint") return `i${v}`;
  if (v instanceof JsonFloat) return `f${v.value}`;
  return `j${show(v)}`;
}

/** A value as it reads in the ledger line (never throws). */
function show(v: Json | undefined): string {
  if (v === undefined) return "(missing)";
  try {
    return lineForm(v);
  } catch {
    return String(v);
  }
}

function evtName(evt: Json | undefined): string {
  return typeof evt === "string" ? evt : evt === undefined ? "a row without evt" : `evt ${show(evt)}`;
}
