/**
 * Operations: one user-visible call across its round trips.
 *
 * Under MCP 2026-07-28 a `tools/call` (or `prompts/get`, `resources/read`) may be answered with
 * `resultType: "input_required"` (`inputRequests` and an opaque
 * `requestState`); the client then sends the call again, under a new JSON-RPC
 * id, with `inputResponses` and the same `requestState`
 * (https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr).
 * With the tasks extension (`io.modelcontextprotocol/tasks`) it may instead
 * be answered with `resultType: "task"` and a `taskId`, after which
 * `tasks/get`, `tasks/update` and `tasks/cancel` (and the server's
 * `notifications/tasks`) carry the call on until the task reaches
 * `completed`, `failed` or `cancelled`.
 *
 * How an operation's rows are written (`op`, `round`, `operation_end`, an
 * abandoned operation) is docs/ledger-format.md, "Operations"; this book is
 * that rule as the recorder applies it. Rounds are linked by a digest of
 * `requestState`, never by the state itself: it is the server's, and may be
 * large or sensitive (--raw records it).
 */
import { digestJson } from "../core/digest.ts";
import { getField, isObject, type Json } from "../core/json.ts";
import { msFloat } from "../format/row.ts";

type Fields = Record<string, Json | undefined>;

/** Task statuses after which a task changes no more (tasks extension, "Task Status"). */
const TERMINAL_TASK = new Set(["completed", "failed", "cancelled"]);

/** Requests that may be answered input_required, and what names their target in operation_end. */
const MULTI_ROUND: Record<string, "tool" | "prompt" | "uri"> = {
  "tools/call": "tool",
  "prompts/get": "prompt",
  "resources/read": "uri",
};

interface Op {
  /** The seq of the first round's row. */
  id: number;
  /** The request's method (a key of MULTI_ROUND). */
  method: string;
  /** The tool, prompt or resource it calls. */
  tool: string | undefined;
  rounds: number;
  /** When the first round's request was seen (monotonic ms). */
  started: number;
  /** The key a retry must bring to continue it, while it waits for one. */
  waiting?: string;
  /** A retry has been sent and not yet answered. */
  retrying: boolean;
  taskId?: string;
  cancelRequested: boolean;
  ended: boolean;
}

/** What a request brings to an operation, taken from its params when it is seen. */
export interface RoundInfo {
  /** The operation a retry continues (set when it is seen). */
  op?: Op;
  round?: number;
  /** Digest of params.requestState (a retry). */
  stateDigest?: string;
  /** params.requestState itself, kept only under --raw. */
  state?: Json;
  /** Digest of params.inputResponses (a retry, or tasks/update). */
  responsesDigest?: string;
  /** tasks/*: the task named. */
  taskId?: string;
}

export interface OperationCounts {
  /** operation_end rows written. */
  operations: number;
  /** Operations whose last answer asked for input the client never sent. */
  abandoned: number;
  /** Tasks not finished when the session ended. */
  tasks_open: number;
}

export interface OperationsOptions {
  /** Test-only defect (selftest fault `unlinked-rounds`): retries are never linked to their operation. */
  unlinked?: boolean;
  row(evt: string, fields: Fields): void;
  /** The seq the next row will get (the id of an operation that starts with it). */
  nextId(): number;
  raw: boolean;
}

/** The outcomes with which a call in no operation starts one: a retry is to come (input_required), or a task. */
const OPENS_OPERATION: ReadonlySet<string> = new Set(["input_required", "task"]);

/**
 * Whether OperationBook.call has nothing to add for a call's answer: the
 * request brought nothing to an operation (no RoundInfo) and the outcome
 * starts none. Its row then needs no call to it.
 */
export function outsideOperations(info: RoundInfo | undefined, outcome: string): boolean {
  return info === undefined && !OPENS_OPERATION.has(outcome);
}

export class OperationBook {
  readonly counts: OperationCounts = { operations: 0, abandoned: 0, tasks_open: 0 };
  /** Operations waiting for a retry, by the key it must bring (see `retryKey`). */
  private readonly byState = new Map<string, Op>();
  private readonly byTask = new Map<string, Op>();
  /** Every operation not yet ended, in order of start. */
  private readonly live = new Set<Op>();

  constructor(private readonly o: OperationsOptions) {}

  /**
   * A client request is seen (full params). For tools/call, prompts/get and
   * resources/read: is it a retry, and of which operation? For tasks/*:
   * which task, and its operation. `tool` is the tool, prompt or resource
   * named; `argsDigest` the digest of its arguments.
   */
  request(method: string, params: Json | undefined, tool: string | undefined, argsDigest: string | undefined) {
    const full = params ?? null;
    if (MULTI_ROUND[method] !== undefined) {
      const state = getField(full, "requestState");
      const responses = getField(full, "inputResponses");
      if (state === undefined && responses === undefined) return undefined;
      const info: RoundInfo = {
        stateDigest: state === undefined ? undefined : digestJson(state),
        state: this.o.raw ? state : undefined,
        responsesDigest: responses === undefined ? undefined : digestJson(responses),
      };
      const key = retryKey(method, info.stateDigest, tool, argsDigest);
      const op = this.o.unlinked ? undefined : this.byState.get(key);
      if (op !== undefined && !op.ended) {
        this.byState.delete(key);
        op.waiting = undefined;
        op.retrying = true;
        op.rounds++;
        info.op = op;
        info.round = op.rounds;
      }
      return info;
    }
    if (method === "tasks/get" || method === "tasks/update" || method === "tasks/cancel") {
      const taskId = getField(full, "taskId");
      const responses = method === "tasks/update" ? getField(full, "inputResponses") : undefined;
      const info: RoundInfo = {
        taskId: typeof taskId === "string" ? taskId : undefined,
        responsesDigest: responses === undefined ? undefined : digestJson(responses),
      };
      info.op = info.taskId === undefined ? undefined : this.byTask.get(info.taskId);
      return info;
    }
    return undefined;
  }

  /** Fields of a retry's write-ahead intent row. */
  intentFields(info: RoundInfo | undefined): Fields {
    if (info?.op === undefined) return {};
    return { op: info.op.id, round: info.round };
  }

  /**
   * The answer (or end) of a tools/call (prompts/get, resources/read): the fields its row adds, and the
   * operation_end to write after it, if the operation ends with it. A call
   * that starts an operation (answered input_required or task) takes the
   * next seq as its id, so this is called just before its row is written.
   */
  call(
    info: RoundInfo | undefined,
    a: {
      method: string;
      tool: string | undefined;
      argsDigest: string | undefined;
      outcome: string;
      result: Json | undefined;
      seen: number;
      now: number;
      /** Why a call closed without an answer (cancelled, unanswered, refused). */
      reason?: string;
      /** The digest its row gives the answer (the result, or the error). */
      resultDigest?: string;
    },
  ): { fields: Fields; end?: () => void } {
    let op = info?.op;
    const fields: Fields = {};
    const continues = OPENS_OPERATION.has(a.outcome);
    if (op === undefined && continues) {
      op = {
        id: this.o.nextId(),
        method: a.method,
        tool: a.tool,
        rounds: 1,
        started: a.seen,
        retrying: false,
        cancelRequested: false,
        ended: false,
      };
      this.live.add(op);
    }
    if (op !== undefined) {
      op.retrying = false;
      fields.op = op.id;
      fields.round = info?.op === op ? info.round : 1;
    }
    fields.request_state_digest = info?.stateDigest;
    fields.input_responses_digest = info?.responsesDigest;
    if (this.o.raw && info?.state !== undefined) fields.request_state = info.state;
    const result = a.result;
    if (op === undefined) return { fields };
    if (a.outcome === "input_required") {
      const requests = result === undefined ? undefined : getField(result, "inputRequests");
      const state = result === undefined ? undefined : getField(result, "requestState");
      fields.input_requests_digest = requests === undefined ? undefined : digestJson(requests);
      const stateDigest = state === undefined ? undefined : digestJson(state);
      // The state the retry must bring: recorded (as a digest) so that `seam
      // verify` can tell a retry this recorder failed to link.
      fields.result_state_digest = stateDigest;
      const key = retryKey(a.method, stateDigest, a.tool, a.argsDigest);
      op.waiting = key;
      this.byState.set(key, op);
      return { fields };
    }
    if (a.outcome === "task") {
      const taskId = result === undefined ? undefined : getField(result, "taskId");
      if (typeof taskId === "string") {
        op.taskId = taskId;
        this.byTask.set(taskId, op);
        fields.task_id = taskId;
        const status = getField(result!, "status");
        if (typeof status === "string") fields.task_status = status;
        // A task may be created already finished.
        if (typeof status === "string" && TERMINAL_TASK.has(status)) {
          const o = op;
          return { fields, end: () => this.end(o, status, a.now, taskOutcomeDigest(result!)) };
        }
        return { fields };
      }
      // A task handle without a task id cannot be followed: the operation ends here.
    }
    const o = op;
    return { fields, end: () => this.end(o, a.outcome, a.now, a.resultDigest, a.reason) };
  }

  /**
   * A tasks/get, tasks/update or tasks/cancel was answered (or closed): the
   * fields its row adds, and the operation_end if the answer shows the task finished.
   */
  task(
    method: string,
    info: RoundInfo | undefined,
    a: { outcome: string; result: Json | undefined; now: number },
  ): { fields: Fields; end?: () => void } {
    const op = info?.op;
    const fields: Fields = { task_id: info?.taskId, op: op?.id, input_responses_digest: info?.responsesDigest };
    const result = a.result;
    if (method === "tasks/cancel" && op !== undefined && a.outcome === "ok") op.cancelRequested = true;
    if (method !== "tasks/get" || result === undefined || !isObject(result)) return { fields };
    const status = getField(result, "status");
    if (typeof status !== "string") return { fields };
    fields.task_status = status;
    const requests = getField(result, "inputRequests");
    if (requests !== undefined) fields.input_requests_digest = digestJson(requests);
    if (op === undefined || op.ended || !TERMINAL_TASK.has(status)) return { fields };
    return { fields, end: () => this.end(op, status, a.now, taskOutcomeDigest(result)) };
  }

  /** The server's notifications/tasks: a terminal status ends the task's operation. */
  taskNotice(params: Json | undefined, now: number): void {
    const full = params ?? null;
    const taskId = getField(full, "taskId");
    const status = getField(full, "status");
    if (typeof taskId !== "string" || typeof status !== "string" || !TERMINAL_TASK.has(status)) return;
    const op = this.byTask.get(taskId);
    if (op === undefined || op.ended) return;
    this.end(op, status, now, taskOutcomeDigest(full), "notification");
  }

  /**
   * The session is over (open requests already rowed): every operation still
   * live ends. One waiting for a retry is abandoned (counted, no row); a task
   * not finished gets an operation_end `unanswered` with reason `task_open`.
   */
  finish(now: number, reason: string): void {
    for (const op of [...this.live]) {
      if (op.taskId !== undefined) {
        this.counts.tasks_open++;
        this.end(op, "unanswered", now, undefined, "task_open");
      } else if (op.retrying) {
        this.end(op, "unanswered", now, undefined, reason);
      } else {
        // Abandoned: its last row (input_required, with op and round) already
        // says so, and `seam verify` reports it; no row is added, so a session
        // that merely leaves a question unanswered reads as it always has.
        this.counts.abandoned++;
        op.ended = true;
        this.live.delete(op);
      }
    }
  }

  private end(op: Op, status: string, now: number, resultDigest: string | undefined, reason?: string): void {
    if (op.ended) return;
    op.ended = true;
    this.live.delete(op);
    if (op.waiting !== undefined && this.byState.get(op.waiting) === op) this.byState.delete(op.waiting);
    if (op.taskId !== undefined && this.byTask.get(op.taskId) === op) this.byTask.delete(op.taskId);
    this.counts.operations++;
    this.o.row("operation_end", {
      op: op.id,
      [MULTI_ROUND[op.method] ?? "tool"]: op.tool,
      status,
      rounds: op.rounds,
      task_id: op.taskId,
      result_digest: resultDigest,
      ms: msFloat(now - op.started),
      reason,
      cancel_requested: op.cancelRequested && status !== "cancelled" ? true : undefined,
    });
  }
}

/**
 * What a retry must bring to continue an operation: the digest of the
 * requestState it was given, or, when the server gave none, the same method,
 * target and arguments.
 */
function retryKey(
  method: string,
  stateDigest: string | undefined,
  tool: string | undefined,
  argsDigest: string | undefined,
): string {
  if (stateDigest !== undefined) return `s${stateDigest}`;
  return `n${JSON.stringify([method, tool ?? null, argsDigest ?? null])}`;
}

/** Digest of a finished task's outcome: its `result` (completed), its `error` (failed), or none. */
function taskOutcomeDigest(task: Json): string | undefined {
  const r = getField(task, "result") ?? getField(task, "error");
  return r === undefined ? undefined : digestJson(r);
}
