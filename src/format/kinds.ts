/**
 * The machine names of what `seam verify` can report (docs/ledger-format.md,
 * "Breaks and findings"). A break makes a ledger broken, a finding makes it
 * inconclusive. The kind is stable; the message beside it is for people and
 * may say more (line numbers, values).
 */

export const BREAK_KINDS = {
  unreadable: "the ledger could not be read to its end",
  unparseable: "a line is not strict UTF-8 JSON (and no ledger_repair row declares it torn)",
  not_object: "a line is JSON but not an object",
  unchained_after_chain: "a row without a chain after a chained row",
  prechain_rejected: "a leading row without a chain, under --strict",
  duplicate_key: "a row with a repeated key (readers disagree about which value it means)",
  non_string_chain: "a row whose chain is truthy but not a string",
  unhashable: "a row whose chain form cannot be computed",
  chain_mismatch: "a row's chain is not chainOf(previous chain, the row without its chain)",
  checkpoint_no_note: "a checkpoint row without a note",
  checkpoint_signature: "a checkpoint note that does not open: malformed, or not (validly) signed by the given key",
  checkpoint_not_checkpoint: "a checkpoint note whose text is not a checkpoint",
  checkpoint_fields: "a checkpoint row's size or root differ from its note's",
  checkpoint_before_lines: "a checkpoint row on the ledger's first line",
  checkpoint_origin: "a checkpoint for another ledger's origin",
  checkpoint_size: "a checkpoint whose size is not the number of lines before it",
  checkpoint_root: "a checkpoint whose root is not the root of the lines before it",
  cosignature_fork:
    "with --policy: a policy witness's valid cosignature, in a cosignature row, of a root that is not the ledger's own at its size (or of more lines than the ledger has)",
  witness_entry: "a witness file line that is not a witness line, or whose checkpoint does not open",
  witness_rolled_back: "the ledger is shorter than a witnessed checkpoint",
  witness_forked: "the ledger's lines do not hash to a witnessed root, or give another origin",
  state_entry: "the checkpoint remembered under --state does not open",
  state_rolled_back: "the ledger is shorter than the remembered checkpoint",
  state_forked: "the ledger's lines do not hash to the remembered root, or its origin changed",
  stream_gap: "seam verify nats://: a line number of an origin never arrived in the stream (later ones did)",
  stream_conflict: "seam verify nats://: a line number published twice with different bytes",
  stream_unknown_origin: "seam verify nats://: a subject off seam's, or whose line 1 does not hash to its origin",
  stream_no_line: "seam verify nats://: a message without a valid Seam-Line header",
  payload_mismatch:
    "seam verify --payloads: a stored payload whose bytes do not give the digest its row holds (or that is no regular file)",
} as const;

export const FINDING_KINDS = {
  torn_final_line: "the last line is unparseable and has no newline: a crash mid-write",
  repair_mismatch:
    "a ledger_repair row that does not match the line before it, or whose torn_text does not match its torn_bytes and torn_digest",
  line_too_long: "a row longer than the line limit (--max-line): not parsed, its chain taken as claimed from its end",
  session_id_missing: "a seam row without a session id",
  row_after_end: "a session row after its session_end",
  first_not_begin: "a session whose first row is not session_begin",
  begin_not_first: "a session_begin that is not its session's first row",
  seq_invalid: "a seq missing or not a positive integer",
  seq_gap: "seq skips numbers (rows not written)",
  seq_repeat: "seq repeats or goes back",
  ts_backwards: "a row whose ts is earlier than its session's row before it (rows not in the order they happened)",
  end_rows_mismatch: "session_end's rows_before_end differs from the rows in the file",
  end_calls_mismatch: "session_end's calls differs from the tool_call rows in the file",
  intent_without_result: "a tool_call_intent without its tool_call",
  unparsed_client_frame: "a client frame seam could not parse (unless --allow-unparsed)",
  ambiguous_client_frame: "a client frame JSON parsers read differently (unless --allow-unparsed)",
  answer_ambiguous: "an answer SDK clients read differently: by id rule, or by shape (dropped by both or one)",
  answer_duplicate: "a second answer to a request already answered (exactly or under an SDK client's id rule)",
  sse_ambiguous: "an SSE event (or stream start) EventSource readers and the SDK clients read differently",
  body_ambiguous: "an answer body whose Content-Type the SDK clients read differently",
  body_undecoded: "a compressed answer body seam could not decode to observe",
  unrowed_unparsed_frames: "session_end counts more unparsed frames than the file rows (unless --allow-unparsed)",
  session_missing_end: "a session without session_end whose writer is not running",
  no_checkpoint_holds: "with --key: no checkpoint signed by the key holds",
  session_checkpoint_missing: "a session that announces checkpoints without one of its own holding",
  no_quorum_checkpoint: "with --policy: no checkpoint that holds is cosigned by the policy's quorum",
  operation_id_mismatch: "a first round whose op is not its own row's seq",
  operation_duplicate: "two operations that start with the same op",
  operation_unknown: "a row naming an operation that never started",
  operation_unlinked: "a retry bringing an operation's requestState that the recorder did not link to it",
  operation_round_gap: "rounds of an operation that do not go 1, 2, 3…",
  operation_round_unasked: "a round after one that asked for no input",
  operation_after_end: "a round after its operation's operation_end",
  operation_end_twice: "an operation with two operation_end rows",
  operation_rounds_mismatch: "operation_end's rounds differ from the rounds in the file",
  operation_unended: "an operation neither ended nor abandoned by session_end",
  operation_count_mismatch: "session_end's operations or abandoned_operations differ from the file",
  stream_unsealed_tail:
    "seam verify nats:// --key: rows after the last checkpoint signed by the key (unless --allow-unsealed)",
} as const;

export type BreakKind = keyof typeof BREAK_KINDS;
export type FindingKind = keyof typeof FINDING_KINDS;

/** A break: `line` is null for one that is about no line (unreadable, witness and state). */
export interface Break {
  line: number | null;
  kind: BreakKind;
  message: string;
}
