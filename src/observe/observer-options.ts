/**
 * What the MCP observer (src/observe/observer.ts) is given and what it counts: where
 * its rows go, its options, the --map hook it asks for actions, and the
 * defects `seam selftest` switches on to prove its checks can fail.
 */
import type { Json, JsonObject } from "../core/json.ts";
import type { PayloadKeeper } from "./payloads.ts";

export type Fields = Record<string, Json | undefined>;

export interface RowSink {
  /** Queues a row; never blocks and never throws. */
  row(evt: string, fields: Fields): void;
  /** Queues a row and resolves once it is durable on disk (true) or cannot be (false). */
  durable(evt: string, fields: Fields): Promise<boolean>;
}

/** Test-only defects, switched on by `seam selftest` to prove its checks can fail. */
export interface ObserverFaults {
  /** Also write a tool_call row when the request is seen (breaks one row per call). */
  doubleRow?: boolean;
  /** Skip the rows for calls still open at the end. */
  noUnansweredFlush?: boolean;
  /** One id table for both directions (lets a server request complete a client call). */
  sharedIdTable?: boolean;
  /** Never link a multi round-trip retry to its operation (src/observe/operation-book.ts). */
  unlinkedRounds?: boolean;
  /** Read frames with the strict parser only (what a server's parser accepts then goes unread). */
  strictFrames?: boolean;
  /** Pair answers by exact id only (an answer an SDK client takes by its looser rule goes unrowed). */
  exactIdsOnly?: boolean;
}

/**
 * What the observer asks of --map (src/actions/recorder.ts), once for each tools/call
 * with a valid id, synchronously when it is seen. undefined: the tool is not
 * mapped. `skipped`: mapped, but no action could be made (the call goes on).
 * Otherwise the action and its posting, a promise that never rejects.
 */
export interface ActionHook {
  make(tool: string | undefined, id: Json, params: Json | undefined): ActionMade | undefined;
}
export type ActionMade = { skipped: string } | { action: JsonObject; posting: Promise<ActionPosting> };
export interface ActionPosting {
  /** Whether the POST succeeded; undefined when none was tried (no endpoint, or no key). */
  posted?: boolean;
  /** Why it was not posted. */
  error?: string;
  /** The endpoint's answer when it said the action already exists (409, a retried call): recorded there all the same. */
  existing?: number;
  /** The call must not be forwarded (--no-fail-open). */
  refuse?: boolean;
}

export interface ObserverOptions {
  rows: RowSink;
  raw: boolean;
  writeAhead: boolean;
  /** A call whose intent row cannot be made durable is refused (else it is forwarded anyway). */
  failClosed?: boolean;
  /** --map: actions for tools/call requests. */
  actions?: ActionHook;
  /** Monotonic milliseconds. */
  now: () => number;
  faults?: ObserverFaults;
  /** --payloads: where the values whose digests rows hold are kept (src/observe/payloads.ts). */
  payloads?: PayloadKeeper;
  /** The seq the next row will get: an operation is named by its first row's seq (else a count from 1). */
  nextSeq?: () => number;
}

/** Counters reported in session_end. */
export interface ObserverCounts {
  calls: number;
  unanswered: number;
  cancelled: number;
  late_responses: number;
  unmatched_responses: number;
  unparsed_frames: number;
  /** Client frames that JSON parsers read differently (each has an ambiguous_frame row). */
  ambiguous_frames: number;
  /** Answers whose id names a request only under an SDK client's id rule (each has an answer_ambiguous row). */
  ambiguous_answers: number;
  /** Second answers to a request (each has an answer_duplicate row). */
  duplicate_answers: number;
  /** SSE events readers differ on (each JSON-RPC one has an sse_ambiguous row). */
  sse_ambiguous: number;
  /** Compressed server bodies seam could not decode (each has a body_undecoded row). */
  undecoded_bodies: number;
  /** Server bodies whose Content-Type the SDK clients read differently (each has a body_ambiguous row). */
  ambiguous_bodies: number;
  oversize_frames_unlogged: number;
}
