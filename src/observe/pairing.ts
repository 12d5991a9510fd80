/**
 * Which answer belongs to which request. Client requests and server requests
 * live in separate id spaces, since an SDK client and an SDK server both
 * count from 0; an answer is matched by (direction, exact id): 1 and "1"
 * differ, integers of any size compare exactly; a duplicate id still open
 * pairs first in, first out.
 */
import type { Json } from "../core/json.ts";
import type { ActionMade, ActionPosting } from "./observer-options.ts";
import type { RoundInfo } from "./operation-book.ts";

export type Dir = "c2s" | "s2c";

export interface OpenRequest {
  /** Who sent the request. */
  from: Dir;
  method: string;
  id: Json;
  /**
   * What the row will need of the request's params, taken when it is seen
   * (see `keepOf`): never the whole params once the request is queued, so a
   * client that leaves many large requests unanswered cannot make seam hold them.
   */
  params: Json | undefined;
  /** Digest of params.arguments (tools/call, prompts/get) or of the params (server requests). */
  digest?: string;
  seen: number;
  /** --map: the call's action (or why none was made) and how posting it went. */
  action?: ActionMade;
  posting?: ActionPosting;
  /** Why the call is refused, once it is. */
  refusal?: string;
  /** 2026-07-28: the protocol version the request's _meta declares. */
  era?: string;
  /** 2026-07-28: what the request brings to an operation (a retry's state, a task id). */
  round?: RoundInfo;
  /** --raw: the arguments have no line form (read leniently: too deep, or an over-long integer), so the row omits them. */
  argsUnrecorded?: boolean;
}

/**
 * The exact identity of a JSON-RPC id, or null when it is not a valid one
 * (JSON-RPC 2.0 §4: a string or a number; MCP narrows numbers to integers and
 * forbids null): the string itself, or the integer, as a number when it is a
 * safe one and as a bigint past that, so that one integer has one key
 * however it was read. A Map tells 1 from "1" by type; a string key made
 * for each message (a prefix and the id) cost a recorded call more than its
 * table did (bench/micro.bench.ts, "record, per call").
 */
export type RequestKey = string | number | bigint;

export function requestKey(id: Json | undefined): RequestKey | null {
  if (typeof id === "string") return id;
  if (typeof id === "number") {
    if (!Number.isInteger(id)) return null;
    return Number.isSafeInteger(id) ? id + 0 : BigInt(id);
  }
  if (typeof id === "bigint") return id >= MIN_SAFE && id <= MAX_SAFE ? Number(id) : id;
  return null;
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = -MAX_SAFE;

/** The requests each side sent that the other has not answered yet. */
export class RequestTable {
  /** Keyed by requestKey. */
  private readonly open: Record<Dir, Map<RequestKey, OpenRequest[]>>;
  /** Ids of cancelled requests whose answer may still arrive. */
  private readonly cancelledIds: Record<Dir, Map<RequestKey, number>> = { c2s: new Map(), s2c: new Map() };

  /** `shared`: one table for both directions (a selftest defect: a server request can complete a client call). */
  constructor(shared: boolean) {
    const c2s = new Map<RequestKey, OpenRequest[]>();
    this.open = { c2s, s2c: shared ? c2s : new Map() };
  }

  /** A request `p.from` sent under `key`: open until it is answered, cancelled or withdrawn. */
  add(key: RequestKey, p: OpenRequest): void {
    const table = this.open[p.from];
    const q = table.get(key);
    if (q) q.push(p);
    else table.set(key, [p]);
  }

  /** The first request `dir` sent under `key` that is still open, no longer open; undefined when there is none. */
  take(dir: Dir, key: RequestKey): OpenRequest | undefined {
    const q = this.open[dir].get(key);
    const p = q?.shift();
    if (q && q.length === 0) this.open[dir].delete(key);
    return p;
  }

  /** The client request `p` is closed without an answer (seam refused it); false when it was no longer open. */
  withdraw(p: OpenRequest): boolean {
    const key = requestKey(p.id)!;
    const q = this.open.c2s.get(key);
    const at = q?.indexOf(p) ?? -1;
    if (at < 0) return false;
    q!.splice(at, 1);
    if (q!.length === 0) this.open.c2s.delete(key);
    return true;
  }

  /** `dir`'s request under `key` was cancelled: an answer to it may still come. */
  cancelled(dir: Dir, key: RequestKey): void {
    this.cancelledIds[dir].set(key, (this.cancelledIds[dir].get(key) ?? 0) + 1);
  }

  /** Whether an answer under `key` that opens nothing answers a request of `dir`'s that was cancelled (each counts once). */
  late(dir: Dir, key: RequestKey | null): boolean {
    const late = key === null ? 0 : (this.cancelledIds[dir].get(key) ?? 0);
    if (late <= 0) return false;
    if (late === 1) this.cancelledIds[dir].delete(key!);
    else this.cancelledIds[dir].set(key!, late - 1);
    return true;
  }

  /** Hands every request still open to `each`, the client's first, each side's in the order seen; none is open after. */
  drain(each: (p: OpenRequest) => void): void {
    for (const dir of ["c2s", "s2c"] as const) {
      if (dir === "s2c" && this.open.s2c === this.open.c2s) break;
      for (const queue of this.open[dir].values()) {
        for (const p of queue) each(p);
      }
      this.open[dir].clear();
    }
  }
}
