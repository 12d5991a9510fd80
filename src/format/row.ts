/**
 * The row envelope of the ledger format (docs/ledger-format.md, "Rows"):
 * the keys every seam row starts and ends with, in their order, and the
 * ledger_repair row that declares a torn line.
 */
import { escapeBytes } from "../core/byte-escape.ts";
import { getField, isObject, type Json, JsonFloat, type JsonObject } from "../core/json.ts";

/** The `seam` value of every row seam writes. */
export const SEAM = "mcp-stdio";
/** The `seam` value of the rows `seam proxy` writes (traffic reached over Streamable HTTP). */
export const SEAM_HTTP = "mcp-http";

/**
 * Whether a row's `seam` value is one seam writes: "mcp-stdio" (`seam wrap`)
 * or "mcp-http" (`seam proxy`). Rows with any other value are another
 * producer's: chained and shown, not read as sessions or operations.
 */
export function isSeamsOwn(seam: unknown): boolean {
  return seam === SEAM || seam === SEAM_HTTP;
}

/** Keys the envelope sets; an event field of the same name is dropped. */
export const ENVELOPE_KEYS: ReadonlySet<string> = new Set([
  "evt",
  "seam",
  "seam_impl",
  "session",
  "seq",
  "server",
  "ts",
  "chain",
]);

export interface Envelope {
  evt: string;
  /** How the traffic was reached: "mcp-stdio" (the default, `seam wrap`) or "mcp-http" (`seam proxy`). */
  seam?: string;
  /** `seam/<version>`. */
  impl: string;
  session: string;
  /** null: a row in no session's sequence (ledger_repair, checkpoint). */
  seq: number | null;
  server: string;
  ts: string;
}

/** An event's fields: pairs, or an object literal (its keys in their order). */
export type FieldsIn = Iterable<[string, Json | undefined]> | { readonly [k: string]: Json | undefined };

/** Fields given as pairs, rather than as an object literal. */
export function isPairs(f: FieldsIn): f is Iterable<[string, Json | undefined]> {
  return typeof (f as { [Symbol.iterator]?: unknown })[Symbol.iterator] === "function";
}

/**
 * A row in the format's key order: evt, seam, seam_impl, session, seq (when
 * given), server, the event's fields in their order (undefined ones left
 * out), ts. `chain` comes last, set by chainedLine (src/format/line.ts).
 */
export function buildRow(env: Envelope, fields: FieldsIn): JsonObject {
  // Set one by one: a Map made from pairs costs an array per pair, and rows are made per call.
  const row: JsonObject = new Map<string, Json>();
  row.set("evt", env.evt);
  row.set("seam", env.seam ?? SEAM);
  row.set("seam_impl", env.impl);
  row.set("session", env.session);
  if (env.seq !== null) row.set("seq", env.seq);
  row.set("server", env.server);
  if (isPairs(fields)) {
    for (const [k, v] of fields) if (v !== undefined && !ENVELOPE_KEYS.has(k)) row.set(k, v);
  } else {
    // An object literal seam wrote: its own keys in their order (no entries array made per row).
    for (const k in fields) {
      const v = fields[k];
      if (v !== undefined && !ENVELOPE_KEYS.has(k)) row.set(k, v);
    }
  }
  row.set("ts", env.ts);
  return row;
}

/** Bytes of a cut-off line kept in its ledger_repair row (torn_bytes and torn_digest count all of them). */
export const TORN_TEXT_BYTES = 4096;

/** An unparseable line as a ledger_repair row names it: its line number, length and raw-bytes digest. */
export interface TornLine {
  line: number;
  bytes: number;
  /** `sha256:raw-bytes:v1:<hex>` of the line's bytes (without "\n"). */
  digest: string;
  /**
   * Set when the writer cut the line off: its first TORN_TEXT_BYTES bytes (all
   * of it when shorter), kept in the row as `torn_text`.
   */
  cut?: Uint8Array;
}

/**
 * The fields of the ledger_repair row that declares `torn`: torn_line,
 * torn_bytes, torn_digest and, for a line cut off, torn_text (escapeBytes of
 * its first bytes) and torn_text_capped (true when those are not all of it).
 */
export function repairFields(torn: TornLine): [string, Json][] {
  const fields: [string, Json][] = [
    ["torn_line", torn.line],
    ["torn_bytes", torn.bytes],
    ["torn_digest", torn.digest],
  ];
  if (torn.cut !== undefined) {
    fields.push(["torn_text", escapeBytes(torn.cut)]);
    if (torn.cut.length < torn.bytes) fields.push(["torn_text_capped", true]);
  }
  return fields;
}

/** Does `row` (the line right after `torn`) declare it repaired? */
export function repairs(row: Json, torn: TornLine): boolean {
  return (
    isObject(row) &&
    getField(row, "evt") === "ledger_repair" &&
    getField(row, "torn_line") === torn.line &&
    getField(row, "torn_bytes") === torn.bytes &&
    getField(row, "torn_digest") === torn.digest
  );
}

/**
 * session_end's fields with the writer's counters placed among them: a
 * counter goes where `fields` has its key, else `rows_before_end` before
 * `calls` and `rows_unlogged` before `bytes`/`stream_digests`, else last.
 */
export function sessionEndFields(
  fields: Record<string, Json | undefined>,
  counters: Record<string, Json | undefined>,
): [string, Json | undefined][] {
  const given = Object.entries(fields);
  const pending = new Set(Object.keys(counters).filter((k) => !Object.hasOwn(fields, k)));
  const entries: [string, Json | undefined][] = [];
  const place = (k: string) => {
    if (pending.delete(k)) entries.push([k, counters[k]]);
  };
  for (const [k, v] of given) {
    if (k === "calls") place("rows_before_end");
    if (k === "bytes" || k === "stream_digests") {
      place("rows_unlogged");
      place("witness_cosigned");
      place("witness_failed");
    }
    entries.push([k, k in counters ? counters[k] : v]);
  }
  for (const k of pending) entries.push([k, counters[k]]);
  return entries;
}

/**
 * A row's `bytes` and `stream_digests`: each side's byte count and the
 * digest of its stream, sides in the order given (c2s and s2c for a
 * session's end, request and response for an HTTP exchange).
 */
export function streamFields(sides: readonly (readonly [side: string, bytes: number, digest: string])[]): {
  bytes: Map<string, Json>;
  stream_digests: Map<string, Json>;
} {
  return {
    bytes: new Map(sides.map(([side, n]) => [side, n])),
    stream_digests: new Map(sides.map(([side, , digest]) => [side, digest])),
  };
}

/** An `ms` field: milliseconds kept to the microsecond, always written as a float (an integral one too). */
export function msFloat(ms: number): JsonFloat | number {
  const v = Math.round(ms * 1000) / 1000;
  return Number.isInteger(v) ? new JsonFloat(v) : v;
}
