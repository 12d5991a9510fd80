/**
 * A C2SP transparency log witness (c2sp.org/tlog-witness): one endpoint,
 *
 *   POST /add-checkpoint
 *     old <size the client believes the witness has>\n
 *     <base64 hash>\n                     zero to 63: the RFC 9162 consistency proof from old to the new size
 *     \n
 *     <the checkpoint note, signed by the log>
 *
 * answered with the witness's cosignature line (c2sp.org/tlog-cosignature)
 * once the checkpoint is signed by a key configured for its origin and
 * extends, consistently, the latest checkpoint the witness cosigned for that
 * origin. The answers the spec gives: 200 the cosignature; 400 a body that
 * is not the format, or an old size above the new; 403 no signature by a
 * configured key (or a bad one); 404 an origin not configured, or any other
 * path; 409 an old size that is not the witness's (the body is its size, as
 * text/x.tlog.size), or the same size with another root (a fork); 422 a
 * consistency proof that does not hold. Also 405 another method, 413 a body
 * over MAX_BODY, 500 state that cannot be written (nothing cosigned).
 *
 * The check against the remembered size and the state's update run with no
 * await between them, so two requests can never both pass the check on one
 * size and roll the state back (the race the spec warns of).
 */
import type { Log } from "../base/log.ts";
import { type Checkpoint, parseCheckpointText, parseDecimal } from "../checkpoint/checkpoint.ts";
import type { Cosigner } from "../checkpoint/cosignature.ts";
import { EMPTY_ROOT, equalHash, HASH_BYTES, type Hash, verifyConsistency } from "../checkpoint/merkle.ts";
import { decodeBase64, keyLabel, NoteError, openNote, parseNote } from "../checkpoint/note.ts";
import { ADD_CHECKPOINT, SIZE_TYPE } from "../checkpoint/submit.ts";
import { plain, readWholeBody, sendWhole } from "../runtime/http-replies.ts";
import type { HttpRuntime, Listener } from "../runtime/http-types.ts";
import type { WitnessedLogs } from "./config.ts";
import type { WitnessState } from "./state.ts";

/** A request is an old size, at most 63 hashes and a checkpoint note: far below this. */
export const MAX_BODY = 64 * 1024;
/** A body not whole by then is dropped (a client that trickles it ties up nothing for long). */
const BODY_MS = 10_000;
const MAX_PROOF = 63;

export type AddKind =
  | "cosigned"
  | "malformed"
  | "unknown-log"
  | "bad-signature"
  | "old-size-mismatch"
  | "fork"
  | "bad-proof"
  | "state-unwritable";

export interface AddOutcome {
  status: number;
  kind: AddKind;
  /** The answer's body and Content-Type. */
  body: string;
  type: string;
  /** What was wrong, in words (empty when cosigned). */
  problem: string;
  /** The checkpoint, once its text parsed. */
  checkpoint: Checkpoint | null;
}

export interface WitnessOptions {
  logs: WitnessedLogs;
  state: WitnessState;
  cosigner: Cosigner;
  /** POSIX seconds now. */
  now: () => number;
}

// The request's form and the 409's type are the client's too (src/checkpoint/submit.ts): one definition.
export { ADD_CHECKPOINT, formatAddCheckpoint, SIZE_TYPE } from "../checkpoint/submit.ts";

const TEXT = "text/plain; charset=utf-8";
const utf8 = new TextDecoder("utf-8", { fatal: true });

function refuse(status: number, kind: AddKind, problem: string, checkpoint: Checkpoint | null = null): AddOutcome {
  return { status, kind, body: `${problem}\n`, type: TEXT, problem, checkpoint };
}

/** Splits a request body into its old size, proof and note; a string says what is malformed. */
function parseRequest(body: Uint8Array): { old: number; proof: Hash[]; note: string } | string {
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    return "the body is not UTF-8";
  }
  const blank = text.indexOf("\n\n");
  if (blank < 0) return "no blank line before the checkpoint";
  const lines = text.slice(0, blank).split("\n");
  const old = lines[0]!.startsWith("old ") ? parseDecimal(lines[0]!.slice(4)) : null;
  if (old === null) return 'the first line is not "old <size>"';
  if (lines.length - 1 > MAX_PROOF) return `more than ${MAX_PROOF} consistency proof lines`;
  const proof: Hash[] = [];
  for (let i = 1; i < lines.length; i++) {
    const h = decodeBase64(lines[i]!);
    if (h === null || h.length !== HASH_BYTES) return `line ${i + 1} is not the base64 of a 32-byte hash`;
    proof.push(h);
  }
  return { old, proof, note: text.slice(blank + 2) };
}

/**
 * One add-checkpoint request, decided; on success the state is updated
 * (durably) before the cosignature is made. Never throws for any body.
 */
export function addCheckpoint(body: Uint8Array, o: WitnessOptions): AddOutcome {
  const req = parseRequest(body);
  if (typeof req === "string") return refuse(400, "malformed", req);
  let c: Checkpoint;
  let text: string;
  try {
    text = parseNote(req.note).text;
    c = parseCheckpointText(text);
  } catch (e) {
    return refuse(400, "malformed", `the checkpoint: ${e instanceof Error ? e.message : String(e)}`);
  }
  const keys = o.logs.get(c.origin);
  if (keys === undefined) return refuse(404, "unknown-log", `no log ${c.origin} is witnessed here`, c);
  try {
    openNote(req.note, keys);
  } catch (e) {
    const why =
      e instanceof NoteError && e.kind === "unverified"
        ? `not signed by ${keys.map((k) => keyLabel(k.name, k.id)).join(" or ")}`
        : e instanceof Error
          ? e.message
          : String(e);
    return refuse(403, "bad-signature", `the checkpoint is ${why.startsWith("not ") ? why : `refused: ${why}`}`, c);
  }
  if (req.old > c.size) return refuse(400, "malformed", `old size ${req.old} is above the checkpoint's ${c.size}`, c);
  const had = o.state.get(c.origin);
  const hadSize = had?.size ?? 0;
  if (req.old !== hadSize)
    return {
      status: 409,
      kind: "old-size-mismatch",
      body: `${hadSize}\n`,
      type: SIZE_TYPE,
      problem: `old size ${req.old} is not the witnessed size ${hadSize}`,
      checkpoint: c,
    };
  if (had !== null && had.size === c.size && !equalHash(had.root, c.root))
    return {
      status: 409,
      kind: "fork",
      body: `${hadSize}\n`,
      type: SIZE_TYPE,
      problem: `a fork: size ${c.size} was cosigned with another root`,
      checkpoint: c,
    };
  if (req.old === 0 && c.size > 0) {
    if (req.proof.length > 0) return refuse(422, "bad-proof", "a proof from size 0 must be empty", c);
  } else {
    const v = verifyConsistency(req.old, c.size, req.proof, had?.root ?? EMPTY_ROOT, c.root);
    if (!v.ok) return refuse(422, "bad-proof", `the consistency proof does not hold: ${v.reason}`, c);
  }
  try {
    o.state.put(c);
  } catch (e) {
    return refuse(500, "state-unwritable", (e as Error).message, c);
  }
  return {
    status: 200,
    kind: "cosigned",
    body: o.cosigner.cosign(text, o.now()),
    type: TEXT,
    problem: "",
    checkpoint: c,
  };
}

export class WitnessServer {
  private constructor(
    private readonly listener: Listener,
    readonly url: string,
  ) {}

  static async start(
    http: HttpRuntime,
    host: string,
    port: number,
    o: WitnessOptions,
    log: Log,
  ): Promise<WitnessServer> {
    const listener = await http.listen(host, port, async (req, reply) => {
      const path = req.target.split("?")[0];
      if (path !== ADD_CHECKPOINT) return plain(reply, 404, "not found: a witness answers POST /add-checkpoint\n");
      if (req.method !== "POST") return plain(reply, 405, "add-checkpoint takes POST\n", [["Allow", "POST"]]);
      const body = await readWholeBody(req, reply, MAX_BODY, BODY_MS);
      if (body === null) return;
      if (body === "too-large")
        return plain(reply, 413, `a request body is at most ${MAX_BODY} bytes\n`, [["Connection", "close"]]);
      const out = addCheckpoint(body, o);
      if (out.kind === "fork" || out.kind === "bad-proof" || out.kind === "state-unwritable")
        log.warn(`refused a checkpoint of ${out.checkpoint?.origin} at size ${out.checkpoint?.size}: ${out.problem}`);
      sendWhole(reply, out.status, out.type, new TextEncoder().encode(out.body));
    });
    const h = listener.host.includes(":") ? `[${listener.host}]` : listener.host;
    return new WitnessServer(listener, `http://${h}:${listener.port}`);
  }

  close(): Promise<void> {
    return this.listener.close();
  }
}
