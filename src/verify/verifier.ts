/**
 * The core of `seam verify`: checks a ledger's hash chain the way the format's
 * reference verifier does, then checks what seam's own rows promise about
 * their sessions. Takes bytes, never a path or `process`; never throws on any
 * input; memory stays flat however large the file (one line at a time, split
 * on "\n" bytes only, so U+2028 and friends inside a row never split it).
 *
 * Chain walk (compatible with the format's reference verifier):
 *   - physical lines are numbered from 1; a line of nothing but ASCII
 *     whitespace (space, \t, \r, \v, \f — Python's bytes.strip()) is blank:
 *     counted, skipped;
 *   - a line must be strict UTF-8 and parse as JSON (parseJson, Python's
 *     json.loads rules), else `line N: unparseable`; it must be an object,
 *     else `line N: not a JSON object`; either way the chain carries on from
 *     the last row that had one;
 *   - `chain` is taken out; a falsy value (Python falsiness: missing, null, "",
 *     false, 0, 0.0, [], {}) makes a prechain row before any chained row
 *     (skipped; a break with strict) or `line N: unchained row after chain
 *     began` after one, and the next chained row still continues from the
 *     last claimed chain (one removed chain is one break, as for the
 *     format's reference); a truthy non-string is `line N: non-string chain value`;
 *   - a string chain is compared with chainOf(prev, row without chain), where
 *     prev is the previous row's *claimed* chain ("genesis" at first), so one
 *     edited row is one break, not a cascade: `line N: chain mismatch`.
 *
 * seam's own additions, where it knowingly differs from the reference:
 *   - a row with a repeated key is `line N: duplicate key "K"` (kind
 *     duplicate_key): readers disagree about which value a duplicate means
 *     (SQLite's json_extract takes the first, jq and Python the last) while the
 *     chain hashes only the last, so such a row cannot vouch for what it says;
 *     the chain is still checked (it hashes what Python reads);
 *   - client frames rowed as unparsed_frame or ambiguous_frame make the
 *     session's verdict inconclusive (findings unparsed_client_frame,
 *     ambiguous_client_frame) unless `allowUnparsed`;
 *   - an unparseable last line with no "\n" after it is what a crash mid-write
 *     leaves: a finding `line N: torn final line` (inconclusive), not a break;
 *   - an unparseable line that the very next line declares repaired (a
 *     `ledger_repair` row whose torn_line, torn_bytes and torn_digest match it)
 *     is a note, not a break, and is not counted as a row;
 *   - completeness of seam sessions (see `observe`): findings that make the
 *     verdict inconclusive unless the chain is broken.
 */
import { open } from "node:fs/promises";
import { CanonicalError, lineForm } from "../core/canonical.ts";
import { GENESIS, chainOf } from "../core/chain.ts";
import { StreamDigest, digestBytes } from "../core/digest.ts";
import { type Json, type JsonObject, JsonFloat, getField, isObject, parseJson } from "../core/json.ts";

export type Verdict = "ok" | "broken" | "inconclusive";
export type VerifiedScope = "full" | "bounded_prechain_skipped" | "empty";

/** The first break: `line` is null for `unreadable: <reason>`. */
export interface Break {
  line: number | null;
  message: string;
  /** A stable machine name (set on the kinds that have one). */
  kind?: string;
}

/**
 * The deepest nesting the format's reference verifier reads: CPython 3.11's
 * json.loads, called from the reference script, parses a row nested 993
 * levels deep and raises RecursionError at 994 (measured). Rows up to this
 * deep must verify as they do there; deeper ones are unparseable there too.
 */
export const REFERENCE_MAX_DEPTH = 993;

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
  first_break: Break | null;
  breaks: number;
  verified_scope: VerifiedScope;
  /** The last chain value claimed by a row: what the next row must continue from. */
  head: string | null;
  sessions: SessionReport[];
  findings: string[];
  /** The kinds of the listed findings that have one, with how many (e.g. unparsed_client_frame: 2). */
  finding_kinds: Record<string, number>;
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
   * the pid and host its session_begin recorded; a throw counts as no. Without
   * it every unfinished session is a finding.
   */
  isWriterAlive?: (pid: number, host: string) => boolean;
  /**
   * A longer line is not parsed (its model would not fit; a JS string cannot
   * hold twice as much): it counts as unparseable, with a note. Default
   * DEFAULT_MAX_LINE_BYTES, 256 MiB, the limit the ledger writer reads the
   * file's last row with.
   */
  maxLineBytes?: number;
  /** Findings listed at most (the rest are counted in a note). Default 1000. */
  maxFindings?: number;
  /**
   * "reference": a row with a repeated key is read as the reference verifier
   * reads it (the last value), without the duplicate_key break; only for
   * comparing with it. Default "break".
   */
  duplicateKeys?: "break" | "reference";
  /** Client frames rowed as unparsed or ambiguous are notes, not findings (`seam verify --allow-unparsed`). */
  allowUnparsed?: boolean;
  /** Sees each object row once checked (its `chain` taken out) with its line number: where src/checkpoint/verifier.ts checks checkpoint rows. */
  onRow?: (row: JsonObject | { readonly [k: string]: Json }, line: number) => void;
}

export const DEFAULT_MAX_LINE_BYTES = 256 * 1024 * 1024;
const NL = 0x0a;

/** A line too long to parse: only its length and digest are kept. */
interface LongLine {
  length: number;
  digest: string;
}

interface Pending {
  line: number;
  length: number;
  digest: string;
}

interface Finding {
  line: number;
  text: string;
  /** A seq gap: worded "declared lost" when session_end declares rows_unlogged. */
  gap?: boolean;
  kind?: string;
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
  statuses: Map<string, number>;
  /** Rows with a seq (everything but ledger_repair). */
  counted: number;
  nextSeq: number;
  pid: Json | undefined;
  host: Json | undefined;
  endLine: number | null;
  unlogged: number;
  intents: Map<string, Intent[]>;
  findings: Finding[];
  dropped: number;
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
  private readonly isWriterAlive: ((pid: number, host: string) => boolean) | undefined;
  private readonly onRow: VerifyOptions["onRow"];
  private readonly allowUnparsed: boolean;
  private readonly duplicateBreaks: boolean;
  /** The first repeated key of the line being parsed. */
  private dupKey: string | undefined;
  private readonly onDuplicate = (key: string) => {
    this.dupKey ??= key;
  };
  private readonly decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

  private parts: Uint8Array[] = [];
  private partBytes = 0;
  private longDigest: StreamDigest | null = null;
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
  private pending: Pending | null = null;
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
    this.maxFindings = opts.maxFindings ?? 1000;
    this.isWriterAlive = opts.isWriterAlive;
    this.onRow = opts.onRow;
    this.allowUnparsed = opts.allowUnparsed === true;
    this.duplicateBreaks = opts.duplicateKeys !== "reference";
  }

  get progress(): { bytes: number; rows: number } {
    return { bytes: this.bytes, rows: this.rows };
  }

  push(chunk: Uint8Array): void {
    if (this.failed !== null || this.report !== null) return;
    this.bytes += chunk.length;
    let pos = 0;
    while (pos < chunk.length) {
      const nl = chunk.indexOf(NL, pos);
      if (nl < 0) {
        this.stash(chunk.subarray(pos));
        return;
      }
      if (this.partBytes > 0 || this.longDigest !== null) {
        this.stash(chunk.subarray(pos, nl));
        this.line(this.takeStash(), true);
      } else if (nl - pos > this.maxLine) {
        const bytes = chunk.subarray(pos, nl);
        this.line({ length: bytes.length, digest: digestBytes(bytes) }, true);
      } else {
        this.line(chunk.subarray(pos, nl), true);
      }
      pos = nl + 1;
    }
  }

  /** The source broke: `unreadable: <reason>` is a break, and what was not read is not judged. */
  fail(reason: string): VerifyReport {
    if (this.report !== null) return this.report;
    if (this.failed === null) {
      this.failed = reason;
      this.settlePending(null);
      this.addBreak(null, `unreadable: ${reason}`);
      if (this.bytes > 0) this.notes.push(`reading stopped after ${this.bytes} bytes; completeness not checked`);
    }
    return this.end();
  }

  end(): VerifyReport {
    if (this.report !== null) return this.report;
    if (this.failed === null) {
      if (this.partBytes > 0 || this.longDigest !== null) this.line(this.takeStash(), false);
      this.settlePending(null);
    }
    const sessions = this.finishSessions();
    const findings = this.fileFindings.map((f) => f.text);
    const kinds: (string | undefined)[] = this.fileFindings.map((f) => f.kind);
    for (const s of this.sessions.values())
      for (const f of s.findings) {
        findings.push(f.text);
        kinds.push(f.kind);
      }
    const finding_kinds: Record<string, number> = {};
    for (const k of kinds.slice(0, this.maxFindings))
      if (k !== undefined) finding_kinds[k] = (finding_kinds[k] ?? 0) + 1;
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
      verified_scope:
        this.rows === 0 ? "empty" : this.prechain > 0 && !this.strict ? "bounded_prechain_skipped" : "full",
      head: this.head,
      sessions,
      findings: listed,
      finding_kinds,
      notes: this.notes,
      bytes: this.bytes,
      lines: this.lineNo,
    };
    return this.report;
  }

  // ---- lines ----

  private stash(piece: Uint8Array): void {
    if (piece.length === 0) return;
    if (this.longDigest === null && this.partBytes + piece.length > this.maxLine) {
      this.longDigest = new StreamDigest();
      for (const p of this.parts) this.longDigest.update(p);
      this.parts = [];
    }
    this.partBytes += piece.length;
    // Copied: a source may hand out the same buffer again.
    if (this.longDigest !== null) this.longDigest.update(piece);
    else this.parts.push(piece.slice());
  }

  private takeStash(): Uint8Array | LongLine {
    let out: Uint8Array | LongLine;
    if (this.longDigest !== null) {
      out = { length: this.partBytes, digest: this.longDigest.digest() };
    } else if (this.parts.length === 1) {
      out = this.parts[0]!;
    } else {
      const all = new Uint8Array(this.partBytes);
      let at = 0;
      for (const p of this.parts) {
        all.set(p, at);
        at += p.length;
      }
      out = all;
    }
    this.parts = [];
    this.partBytes = 0;
    this.longDigest = null;
    return out;
  }

  /** One physical line, without its "\n"; `terminated` is false only for a last line with no "\n" after it. */
  private line(input: Uint8Array | LongLine, terminated: boolean): void {
    const n = ++this.lineNo;
    let row: Json | undefined;
    if (input instanceof Uint8Array) {
      if (isBlank(input)) {
        this.settlePending(null);
        return;
      }
      this.dupKey = undefined;
      try {
        row = parseJson(this.decoder.decode(input), { maxDepth: REFERENCE_MAX_DEPTH, onDuplicate: this.onDuplicate });
      } catch {
        // Invalid UTF-8, a JSON syntax error, a >4300-digit int, nesting too
        // deep (the parser's limit, or the stack's): all unparseable, as for
        // the reference.
        row = undefined;
      }
    } else {
      this.notes.push(`line ${n}: ${input.length} bytes, longer than the ${this.maxLine}-byte limit, not parsed`);
    }
    if (row === undefined) {
      this.settlePending(null);
      const length = input instanceof Uint8Array ? input.length : input.length;
      if (!terminated) {
        this.fileFinding(n, `line ${n}: torn final line`);
        return;
      }
      // Judged when the next line is seen: it may declare this one repaired.
      this.pending = { line: n, length, digest: input instanceof Uint8Array ? digestBytes(input) : input.digest };
      return;
    }
    this.settlePending(row);
    this.row(row, n, this.dupKey);
  }

  /** Resolves an unparseable line against the line after it (`next`, or null when that is no object row). */
  private settlePending(next: Json | null): void {
    const p = this.pending;
    if (p === null) return;
    this.pending = null;
    if (
      next !== null &&
      isObject(next) &&
      getField(next, "evt") === "ledger_repair" &&
      getField(next, "torn_line") === p.line &&
      getField(next, "torn_bytes") === p.length &&
      getField(next, "torn_digest") === p.digest
    ) {
      this.repairLine = p.line + 1;
      this.notes.push(
        `line ${p.line}: torn line (${p.length} bytes) repaired by the ledger_repair row at line ${p.line + 1}`,
      );
      return;
    }
    this.rows++;
    this.addBreak(p.line, `line ${p.line}: unparseable`);
  }

  private row(row: Json, n: number, dupKey?: string): void {
    this.rows++;
    if (!isObject(row)) {
      this.addBreak(n, `line ${n}: not a JSON object`);
      return;
    }
    if (dupKey !== undefined && this.duplicateBreaks)
      this.addBreak(n, `line ${n}: duplicate key ${JSON.stringify(dupKey)}`, "duplicate_key");
    const claimed = getField(row, "chain");
    if (!pyTruthy(claimed)) {
      if (this.began) this.addBreak(n, `line ${n}: unchained row after chain began`);
      else {
        this.prechain++;
        if (this.strict) this.addBreak(n, `line ${n}: unchained (prechain) row rejected in strict mode`);
      }
    } else if (typeof claimed !== "string") {
      this.addBreak(n, `line ${n}: non-string chain value`);
    } else {
      this.began = true;
      this.chained++;
      let computed: string | null = null;
      try {
        computed = chainOf(this.prev, withoutChain(row));
      } catch (err) {
        // Python can fail to serialize a row it parsed (RecursionError just
        // under its own parse limit), hence the message. Here it cannot
        // happen to a parsed row: chainForm takes NaN and lone surrogates,
        // and parseJson stops at 900 levels and 4300-digit ints, well inside
        // what chainForm writes. Kept so a failure would be a break, not a throw.
        this.addBreak(n, `line ${n}: unhashable row (${failureName(err)})`);
      }
      if (computed !== null && computed !== claimed) this.addBreak(n, `line ${n}: chain mismatch`);
      this.prev = claimed;
      this.head = claimed;
    }
    this.observe(row, n);
    this.onRow?.(row, n);
  }

  private addBreak(line: number | null, message: string, kind?: string): void {
    this.breaks++;
    if (this.firstBreak === null) this.firstBreak = kind === undefined ? { line, message } : { line, message, kind };
  }

  private fileFinding(line: number, text: string): void {
    if (this.fileFindings.length >= this.maxFindings) this.fileDropped++;
    else this.fileFindings.push({ line, text });
  }

  // ---- completeness of seam sessions ----

  /**
   * Per session (rows with seam == "mcp-stdio"): seq dense from 1 in file
   * order (ledger_repair and checkpoint rows have none and are exempt), session_begin first,
   * session_end present and last, its rows_before_end and calls equal to the
   * rows and tool_call rows before it, and every tool_call_intent followed by
   * a tool_call with the same rpc_id (exactly: 1 and "1" differ).
   */
  private observe(row: JsonObject | { readonly [k: string]: Json }, n: number): void {
    if (getField(row, "seam") !== "mcp-stdio") return;
    const evt = getField(row, "evt");
    if (evt === "ledger_repair" && this.repairLine !== n) {
      this.fileFinding(n, `line ${n}: ledger_repair row does not match the line before it`);
    }
    const id = getField(row, "session");
    if (typeof id !== "string") {
      this.fileFinding(n, `line ${n}: seam row without a session id`);
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
        statuses: new Map(),
        counted: 0,
        nextSeq: 1,
        pid: undefined,
        host: undefined,
        endLine: null,
        unlogged: 0,
        intents: new Map(),
        findings: [],
        dropped: 0,
        unparsedRows: 0,
      };
      this.sessions.set(id, s);
    }
    this.last = s;
    s.rows++;
    if (evt === "ledger_repair" || evt === "checkpoint") return;

    if (s.endLine !== null) this.find(s, n, `line ${n}: row after session_end (line ${s.endLine})`);
    if (s.counted === 0) {
      if (evt !== "session_begin") this.find(s, n, `line ${n}: first row is ${evtName(evt)}, not session_begin`);
    } else if (evt === "session_begin") {
      this.find(s, n, `line ${n}: session_begin is not the first row`);
    }
    if (evt === "session_begin" && s.counted === 0) {
      s.pid = getField(row, "pid");
      s.host = getField(row, "host");
    }

    const seq = getField(row, "seq");
    if (typeof seq !== "number" || !Number.isSafeInteger(seq) || seq < 1) {
      this.find(s, n, `line ${n}: seq is missing or not a positive integer`);
    } else if (seq > s.nextSeq) {
      const missing = seq - 1 === s.nextSeq ? `${s.nextSeq}` : `${s.nextSeq}..${seq - 1}`;
      this.find(s, n, `line ${n}: seq jumps from ${s.nextSeq - 1} to ${seq} (${missing} missing`, true);
      s.nextSeq = seq + 1;
    } else if (seq < s.nextSeq) {
      this.find(s, n, `line ${n}: seq ${seq} repeats or goes back (expected ${s.nextSeq})`);
    } else {
      s.nextSeq++;
    }

    if (evt === "unparsed_frame" || evt === "ambiguous_frame") this.frameRow(s, row, evt, n);

    if (evt === "session_end" && s.endLine === null) {
      s.endLine = n;
      const said = getField(row, "rows_before_end") ?? 0;
      if (said !== s.counted)
        this.find(s, n, `line ${n}: session_end says rows_before_end ${show(said)}, the file holds ${s.counted}`);
      const calls = getField(row, "calls") ?? 0;
      if (calls !== s.calls)
        this.find(s, n, `line ${n}: session_end says calls ${show(calls)}, the file holds ${s.calls} tool_call rows`);
      const unlogged = getField(row, "rows_unlogged");
      if (typeof unlogged === "number" && unlogged > 0) s.unlogged = unlogged;
      // Frames seam counted without rowing them (a seam that rowed none, or a server's past the cap).
      const counted = getField(row, "unparsed_frames");
      if (typeof counted === "number" && counted > s.unparsedRows)
        this.unparsedFinding(
          s,
          n,
          `line ${n}: session_end counts ${counted} unparsed frames, ${s.unparsedRows} rowed: what they asked of the server is not recorded`,
          "unrowed_unparsed_frames",
        );
    }
    s.counted++;

    if (evt === "tool_call") {
      s.calls++;
      const st = getField(row, "status");
      const key = typeof st === "string" ? st : st === undefined ? "(missing)" : "(not a string)";
      s.statuses.set(key, (s.statuses.get(key) ?? 0) + 1);
      const waiting = s.intents.get(idKey(getField(row, "rpc_id")));
      if (waiting !== undefined && waiting.length > 0) waiting.shift();
    } else if (evt === "tool_call_intent") {
      const rpc = getField(row, "rpc_id");
      const key = idKey(rpc);
      const tool = getField(row, "tool");
      const list = s.intents.get(key);
      const intent = { line: n, id: show(rpc), tool: typeof tool === "string" ? tool : null };
      if (list === undefined) s.intents.set(key, [intent]);
      else list.push(intent);
    }
  }

  private find(s: Session, line: number, text: string, gap = false, kind?: string): void {
    if (s.findings.length >= this.maxFindings) s.dropped++;
    else s.findings.push({ line, text, gap, kind });
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
    const text =
      evt === "unparsed_frame"
        ? `line ${n}: a client frame seam could not parse (${show(getField(row, "reason"))}${refused})`
        : `line ${n}: a client frame JSON parsers read differently${refused}`;
    this.unparsedFinding(s, n, text, evt === "unparsed_frame" ? "unparsed_client_frame" : "ambiguous_client_frame");
  }

  private unparsedFinding(s: Session, n: number, text: string, kind: string): void {
    if (this.allowUnparsed) this.notes.push(`session ${s.id}: ${text} (allowed by --allow-unparsed)`);
    else this.find(s, n, text, false, kind);
  }

  private finishSessions(): SessionReport[] {
    const out: SessionReport[] = [];
    const judged = this.failed === null;
    for (const s of this.sessions.values()) {
      for (const f of s.findings) {
        if (f.gap) f.text += s.unlogged > 0 ? `, declared lost: rows_unlogged ${s.unlogged})` : ")";
        f.text = `session ${s.id}: ${f.text}`;
      }
      const open: Intent[] = [];
      for (const list of s.intents.values()) open.push(...list);
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
            `session ${s.id}: line ${i.line}: tool_call_intent rpc_id ${i.id}${tool} has no tool_call: the call reached the server and left no result`,
          );
        }
        if (s.endLine === null) this.find(s, Infinity, `session ${s.id}: no session_end (truncated or still running)`);
      }
      out.push({
        id: s.id,
        server: s.server,
        rows: s.rows,
        calls: s.calls,
        statuses: Object.fromEntries(s.statuses),
        complete: s.endLine !== null && s.findings.length === 0 && s.dropped === 0,
      });
    }
    return out;
  }

  private alive(s: Session): boolean {
    if (this.isWriterAlive === undefined) return false;
    if (typeof s.pid !== "number" || !Number.isSafeInteger(s.pid) || s.pid <= 0 || typeof s.host !== "string")
      return false;
    try {
      return this.isWriterAlive(s.pid, s.host) === true;
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
        return v.fail(describeReadError(err));
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

const READ_ERRORS: Record<string, string> = {
  ENOENT: "no such file or directory",
  EACCES: "permission denied",
  EPERM: "permission denied",
  EISDIR: "is a directory",
  ENOTDIR: "not a directory",
  ELOOP: "too many levels of symbolic links",
  ENAMETOOLONG: "file name too long",
  EIO: "input/output error",
  EMFILE: "too many open files",
};

/** The `<reason>` of `unreadable: <reason>`: strerror-like, lowercase, no path. */
export function describeReadError(err: unknown): string {
  const code = typeof err === "object" && err !== null ? (err as { code?: unknown }).code : undefined;
  if (typeof code === "string") return READ_ERRORS[code] ?? code.toLowerCase();
  if (err instanceof Error) return err.message.replace(/\.$/, "").toLowerCase();
  return String(err);
}

// ---- helpers ----

/** All ASCII whitespace, as Python's bytes.strip() sees it. */
function isBlank(b: Uint8Array): boolean {
  for (let i = 0; i < b.length; i++) {
    const c = b[i]!;
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d && c !== 0x0b && c !== 0x0c && c !== 0x0a) return false;
  }
  return true;
}

/** Python's bool(v) for a parsed JSON value (NaN is truthy, -0.0 is not). */
export function pyTruthy(v: Json | undefined): boolean {
  if (v === undefined || v === null || v === false) return false;
  if (v === true) return true;
  if (typeof v === "string") return v.length > 0;
  if (typeof v === "number") return v !== 0;
  if (typeof v === "bigint") return v !== 0n;
  if (v instanceof JsonFloat) return v.value !== 0;
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof Map) return v.size > 0;
  return Object.keys(v).length > 0;
}

/** The row minus its `chain` key; a parsed Map is ours to change, a plain object is copied. */
function withoutChain(row: JsonObject | { readonly [k: string]: Json }): Json {
  if (row instanceof Map) {
    row.delete("chain");
    return row;
  }
  const { chain: _, ...rest } = row as { [k: string]: Json };
  return rest;
}

function failureName(err: unknown): string {
  if (err instanceof CanonicalError) return err.kind;
  if (err instanceof RangeError) return "RecursionError";
  return err instanceof Error ? err.name : "Error";
}

/** A key under which rpc ids compare exactly: 1, 1.0 and "1" differ; big ints by their digits. */
function idKey(v: Json | undefined): string {
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
