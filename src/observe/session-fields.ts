/**
 * The part of session_begin that says how a session is recorded, the same for
 * `seam wrap` and `seam proxy`: who records (pid and its start time, for the
 * verifier's liveness check; host; runtime), and the recording options.
 */
import { hostname } from "node:os";
import type { CheckpointConfig } from "../checkpoint/checkpoint-writer.ts";
import { keyLabel } from "../checkpoint/note.ts";
import type { Json } from "../core/json.ts";
import type { FsyncPolicy } from "../ledger/file-sync.ts";
import { processStartTime } from "../runtime/alive.ts";
import type { ActionHook } from "./observer-options.ts";

/** The recording options that are plain data (they cross to a recording thread). */
export interface RecordingSettings {
  raw: boolean;
  maxFrame: number;
  fsync: FsyncPolicy;
  writeAhead: boolean;
  failClosed: boolean;
  /** --payloads: the payload store's directory (src/runtime/payload-store.ts). */
  payloads?: string;
}

export interface RecordingOptions extends RecordingSettings {
  runtime: string;
  /** What --map adds to session_begin (src/actions/recorder.ts). */
  actions?: ActionHook & { beginFields(): Record<string, Json | undefined> };
  checkpoints?: CheckpointConfig;
}

/** Those fields, in the format's order; an absent option is left out. */
export function recorderFields(o: RecordingOptions): Record<string, Json | undefined> {
  return {
    pid: process.pid,
    pid_start: processStartTime(process.pid) ?? undefined,
    host: hostname(),
    runtime: o.runtime,
    raw_payloads: o.raw,
    payload_store: o.payloads !== undefined || undefined,
    max_frame: o.maxFrame,
    fsync: o.fsync,
    write_ahead: o.writeAhead || o.failClosed || undefined,
    fail_closed: o.failClosed || undefined,
    ...o.actions?.beginFields(),
    checkpoint_key: o.checkpoints ? keyLabel(o.checkpoints.signer.name, o.checkpoints.signer.id) : undefined,
  };
}
