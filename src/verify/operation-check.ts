/**
 * Completeness of operations (src/observe/operation-book.ts) within one seam session.
 *
 * An operation is one user-visible call across its round trips: tool_call
 * (prompt_get, resource_read) rows sharing `op` and numbered by `round`, task_get/task_update/task_cancel rows
 * naming the same `op`, and at most one `operation_end`. What must hold, and
 * the finding kind of each rule, is docs/ledger-format.md, "Operations": an
 * operation the client abandoned after asking for input is reported, not a
 * finding, because it is no recording fault.
 */
import { getField, type Json } from "../core/json.ts";

type Row = Parameters<typeof getField>[0];

interface Op {
  line: number;
  tool: string | null;
  rounds: number;
  /** Status of its latest tool_call round. */
  last: string | null;
  /** result_state_digest of its latest round, while it waits for a retry. */
  waiting: string | null;
  ended: boolean;
}

export interface OperationsSummary {
  /** operation_end rows. */
  ended: number;
  /**
   * Operations the client left after an input_required round: no recording
   * fault, so said here (not as a finding or a note, which would make an old
   * session that merely left a question unanswered read differently).
   */
  abandoned: number;
  /** Their ids (the seq of each one's first row). */
  abandoned_ops: number[];
}

/** Reports a finding: `kind` is stable snake_case, `text` says it for a person. */
export type Find = (line: number, kind: string, text: string) => void;

const TASK_ROWS = new Set(["task_get", "task_update", "task_cancel"]);
/** Rows of a request that may take several rounds. */
const ROUND_ROWS = new Set(["tool_call", "prompt_get", "resource_read"]);

export class OperationCheck {
  private readonly ops = new Map<number, Op>();
  /** Operations waiting for a retry, by the digest of the requestState it must bring. */
  private readonly byState = new Map<string, number>();
  private ended = 0;
  /** Operations found abandoned at session_end (line of their last round). */
  readonly abandoned: { op: number; tool: string | null; line: number; rounds: number }[] = [];

  constructor(private readonly find: Find) {}

  /** Does this row concern operations at all? (Cheap: most rows do not.) */
  static concerns(evt: Json | undefined, row: Row): boolean {
    return (
      evt === "operation_end" ||
      getField(row, "op") !== undefined ||
      getField(row, "request_state_digest") !== undefined
    );
  }

  row(evt: Json | undefined, row: Row, line: number): void {
    const op = getField(row, "op");
    if (typeof evt === "string" && ROUND_ROWS.has(evt)) return this.round(evt, row, line, op);
    if (evt === "operation_end") return this.end(row, line, op);
    // task rows, and any other row naming an operation, must name a known one.
    this.known(op, line, typeof evt === "string" && TASK_ROWS.has(evt) ? evt : "row");
  }

  /** At session_end: ops not ended, and the counts it declares. */
  sessionEnd(row: Row, line: number): void {
    for (const [id, o] of this.ops) {
      if (o.ended) continue;
      if (o.last === "input_required") this.abandoned.push({ op: id, tool: o.tool, line: o.line, rounds: o.rounds });
      else
        this.find(
          o.line,
          "operation_unended",
          `line ${o.line}: operation ${id}${tool(o.tool)} has no operation_end, and its last round (${o.last ?? "?"}) asked for nothing`,
        );
    }
    const said = getField(row, "operations") ?? 0;
    if (said !== this.ended)
      this.find(
        line,
        "operation_count_mismatch",
        `line ${line}: session_end says operations ${String(said)}, the file holds ${this.ended} operation_end rows`,
      );
    const saidAbandoned = getField(row, "abandoned_operations") ?? 0;
    if (saidAbandoned !== this.abandoned.length)
      this.find(
        line,
        "operation_count_mismatch",
        `line ${line}: session_end says abandoned_operations ${String(saidAbandoned)}, the file holds ${this.abandoned.length}`,
      );
  }

  summary(): OperationsSummary {
    return { ended: this.ended, abandoned: this.abandoned.length, abandoned_ops: this.abandoned.map((a) => a.op) };
  }

  private round(evt: string, row: Row, line: number, op: Json | undefined): void {
    const brought = getField(row, "request_state_digest");
    const awaited = typeof brought === "string" ? this.byState.get(brought) : undefined;
    if (awaited !== undefined) {
      this.byState.delete(brought as string);
      if (op !== awaited)
        this.find(
          line,
          "operation_unlinked",
          `line ${line}: ${evt} brings the requestState operation ${awaited} was given, but is ${op === undefined ? "in no operation" : `in operation ${String(op)}`}`,
        );
    }
    if (op === undefined) return;
    const round = getField(row, "round");
    const status = getField(row, "status");
    const st = typeof status === "string" ? status : null;
    if (typeof round !== "number" || !Number.isSafeInteger(round) || round < 1) {
      this.find(line, "operation_round_gap", `line ${line}: ${evt} of operation ${String(op)} has no valid round`);
      return;
    }
    if (round === 1) {
      const seq = getField(row, "seq");
      if (op !== seq) {
        this.find(
          line,
          "operation_id_mismatch",
          `line ${line}: operation ${String(op)} starts in a row whose seq is ${String(seq)}`,
        );
        return;
      }
      if (typeof op !== "number" || this.ops.has(op)) {
        this.find(line, "operation_duplicate", `line ${line}: operation ${String(op)} starts twice`);
        return;
      }
      const name = getField(row, "tool") ?? getField(row, "prompt") ?? getField(row, "uri");
      const o: Op = {
        line,
        tool: typeof name === "string" ? name : null,
        rounds: 1,
        last: st,
        waiting: null,
        ended: false,
      };
      this.ops.set(op, o);
      this.await(o, op, row);
      return;
    }
    const o = this.known(op, line, evt);
    if (o === undefined) return;
    if (o.ended) {
      this.find(line, "operation_after_end", `line ${line}: round ${round} of operation ${String(op)} after its end`);
      return;
    }
    if (round !== o.rounds + 1)
      this.find(
        line,
        "operation_round_gap",
        `line ${line}: operation ${String(op)} goes from round ${o.rounds} to round ${round}`,
      );
    else if (o.last !== "input_required")
      this.find(
        line,
        "operation_round_unasked",
        `line ${line}: round ${round} of operation ${String(op)} follows a round that asked for nothing (${o.last ?? "?"})`,
      );
    o.rounds = round;
    o.last = st;
    o.line = line;
    this.await(o, op as number, row);
  }

  /** After a round: if it asked for input with a requestState, a retry must bring it. */
  private await(o: Op, id: number, row: Row): void {
    if (o.waiting !== null && this.byState.get(o.waiting) === id) this.byState.delete(o.waiting);
    const state = getField(row, "result_state_digest");
    o.waiting = o.last === "input_required" && typeof state === "string" ? state : null;
    if (o.waiting !== null) this.byState.set(o.waiting, id);
  }

  private end(row: Row, line: number, op: Json | undefined): void {
    this.ended++;
    const o = this.known(op, line, "operation_end");
    if (o === undefined) return;
    if (o.ended) {
      this.find(line, "operation_end_twice", `line ${line}: operation ${String(op)} ends twice`);
      return;
    }
    o.ended = true;
    const rounds = getField(row, "rounds");
    if (rounds !== o.rounds)
      this.find(
        line,
        "operation_rounds_mismatch",
        `line ${line}: operation_end of ${String(op)} says rounds ${String(rounds)}, the file holds ${o.rounds}`,
      );
  }

  private known(op: Json | undefined, line: number, what: string): Op | undefined {
    const o = typeof op === "number" ? this.ops.get(op) : undefined;
    if (o === undefined && op !== undefined)
      this.find(line, "operation_unknown", `line ${line}: ${what} names operation ${String(op)}, which never started`);
    return o;
  }
}

function tool(t: string | null): string {
  return t === null ? "" : ` (tool ${JSON.stringify(t)})`;
}
