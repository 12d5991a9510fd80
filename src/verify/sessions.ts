/**
 * Completeness of seam sessions, checked row by row beside the chain walk
 * (src/verify/ledger-verifier.ts) and judged at the end of the file.
 *
 * Per session (rows with seam == "mcp-stdio" or "mcp-http"): seq dense from 1 in file
 * order (ledger_repair, checkpoint and cosignature rows have none and are exempt), session_begin first,
 * session_end present and last, its rows_before_end and calls equal to the
 * rows and tool_call rows before it, and every tool_call_intent followed by
 * a tool_call with the same rpc_id (exactly: 1 and "1" differ).
 */
import { getField, type Json, JsonFloat, type JsonObject } from "../core/json.ts";
import type { FindingKind } from "../format/kinds.ts";
import { OperationCheck } from "./operation-check.ts";
import type { VerifyOptions } from "./options.ts";
import { show } from "./show.ts";
import type { SessionReport } from "./verdict.ts";

export interface Finding {
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
  /** The ts of the session's last row that had a readable one (ms since the epoch), its text and line. */
  lastTs: number;
  lastTsText: string;
  lastTsLine: number;
}

export class SessionCheck {
  private sessions = new Map<string, Session>();
  private last: Session | null = null;

  constructor(
    private readonly maxFindings: number,
    private readonly allowUnparsed: boolean,
    private readonly isWriterAlive: VerifyOptions["isWriterAlive"],
    /** The verifier's notes: what is noted here goes in among its own. */
    private readonly notes: string[],
    /** A finding about the file, not one session (a seam row without a session id). */
    private readonly fileFinding: (line: number, kind: FindingKind, text: string) => void,
  ) {}

  /** A seam row of the session it names (`evt` already read from it). */
  observe(row: JsonObject | { readonly [k: string]: Json }, evt: Json | undefined, n: number): void {
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
        lastTs: Number.NEGATIVE_INFINITY,
        lastTsText: "",
        lastTsLine: 0,
      };
      this.sessions.set(id, s);
    }
    this.last = s;
    s.rows++;
    if (evt === "ledger_repair" || evt === "checkpoint" || evt === "cosignature") return;

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
    else if (ANSWER_ROWS.has(evt as string)) this.answerRow(s, row, evt as string, n);
    this.timeOrder(s, getField(row, "ts"), n);

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

  /**
   * A session's rows are written in the order they happened, each dated when
   * it happened: a ts earlier than the row before it says the rows are out of order (or the clock was
   * set back), and the ledger does not show what happened when. Each step back is a finding; a ts
   * that cannot be read is no step.
   */
  private timeOrder(s: Session, ts: Json | undefined, n: number): void {
    if (typeof ts !== "string") return;
    const t = Date.parse(ts);
    if (Number.isNaN(t)) return;
    if (t < s.lastTs)
      this.find(
        s,
        n,
        "ts_backwards",
        `line ${n}: ts ${ts} is earlier than the ts of its session's row before it (line ${s.lastTsLine}, ${s.lastTsText})`,
      );
    s.lastTs = t;
    s.lastTsText = ts;
    s.lastTsLine = n;
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

  /**
   * An answer clients could pair differently from seam (answer_ambiguous), a
   * second answer to one request (answer_duplicate), or an SSE event readers
   * differ on (sse_ambiguous), or a compressed answer seam could not decode
   * (body_undecoded), or a body whose type they read differently
   * (body_ambiguous): which result the client used is not vouched
   * for, so the session is inconclusive.
   */
  private answerRow(s: Session, row: JsonObject | { readonly [k: string]: Json }, evt: string, n: number): void {
    const id = `rpc_id ${show(getField(row, "rpc_id"))}, answer id ${show(getField(row, "answer_id"))}`;
    if (evt === "answer_ambiguous")
      this.find(
        s,
        n,
        "answer_ambiguous",
        `line ${n}: an answer SDK clients read differently (${show(getField(row, "reason"))}, ${id})`,
      );
    else if (evt === "answer_duplicate")
      this.find(s, n, "answer_duplicate", `line ${n}: a second answer to one request (${id})`);
    else if (evt === "body_ambiguous")
      this.find(
        s,
        n,
        "body_ambiguous",
        `line ${n}: an answer body whose Content-Type SDK clients read differently (${show(getField(row, "content_type"))})`,
      );
    else if (evt === "body_undecoded")
      this.find(
        s,
        n,
        "body_undecoded",
        `line ${n}: a compressed answer seam could not decode (${show(getField(row, "reason"))})`,
      );
    else
      this.find(
        s,
        n,
        "sse_ambiguous",
        `line ${n}: an SSE event readers differ on (${show(getField(row, "reason"))}, event ${show(getField(row, "event"))})`,
      );
  }

  private unparsedFinding(s: Session, n: number, kind: FindingKind, text: string): void {
    if (this.allowUnparsed) this.notes.push(`session ${s.id}: ${text} (allowed by --allow-unparsed)`);
    else this.find(s, n, kind, text);
  }

  /** Judges what only the end of the file can show; `judged` is false when reading stopped early. */
  finish(judged: boolean): SessionReport[] {
    const out: SessionReport[] = [];
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

  /** The findings listed, session by session. */
  findings(): Finding[] {
    const all: Finding[] = [];
    for (const s of this.sessions.values()) if (s.findings) all.push(...s.findings);
    return all;
  }

  /** Findings past the limit, counted but not listed. */
  dropped(): number {
    let dropped = 0;
    for (const s of this.sessions.values()) dropped += s.dropped;
    return dropped;
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

/** Rows about answers whose reading is not vouched for (answerRow). */
const ANSWER_ROWS = new Set([
  "answer_ambiguous",
  "answer_duplicate",
  "sse_ambiguous",
  "body_undecoded",
  "body_ambiguous",
]);

/** A key under which rpc ids compare exactly: 1, 1.0 and "1" differ; big ints by their digits. */
function exactIdKey(v: Json | undefined): string {
  if (typeof v === "string") return `s${v}`;
  if (typeof v === "number") return Number.isInteger(v) ? `i${v}` : `f${v}`;
  if (typeof v === "bigint") return `i${v}`;
  if (v instanceof JsonFloat) return `f${v.value}`;
  return `j${show(v)}`;
}

function evtName(evt: Json | undefined): string {
  return typeof evt === "string" ? evt : evt === undefined ? "a row without evt" : `evt ${show(evt)}`;
}
