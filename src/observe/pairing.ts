/**
 * Which answer belongs to which request. Client requests and server requests
 * live in separate id spaces, since an SDK client and an SDK server both
 * count from 0; an answer is matched by (direction, exact id): 1 and "1"
 * differ, integers of any size compare exactly; a duplicate id still open
 * pairs first in, first out.
 *
 * The official SDKs match more loosely than that, so an answer seam would
 * leave unmatched can be the one a client uses: the TypeScript SDK looks its
 * handler up by `Number(response.id)` ("7", " 7 ", "0x7", 7.0 and "" for 0
 * all name a request it sent as a number); the Python SDK turns a string id
 * into `int(id)` when it can (" 7 ", "+7", "0_7"). `coercedKeys` gives the
 * keys an answer's id reaches under those rules; docs/ledger-format.md says
 * what the observer writes when they are needed (answer_ambiguous) and when
 * a request is answered twice (answer_duplicate).
 */
import { type Json, JsonFloat } from "../core/json.ts";
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
 * forbids null; an integer written as a float, 113.0, is that integer): the
 * string itself, or the integer, as a number when it is a
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
  // 113.0 or 1E2: a client or server reading JSON numbers as doubles (JavaScript, Go, pydantic's lax
  // int) takes it for the integer, and so do the call and its answer here.
  if (id instanceof JsonFloat && Number.isInteger(id.value))
    return Number.isSafeInteger(id.value) ? id.value + 0 : BigInt(id.value);
  return null;
}

/** Python's int() of a string: surrounding whitespace, a sign, ASCII digits with single underscores between them. */
const PY_INT = /^\s*[+-]?\d+(?:_\d+)*\s*$/;

/**
 * The keys other than its exact one under which an SDK client could take an
 * answer's id for a request's (see the top of this file); empty for most ids.
 */
export function coercedKeys(id: Json | undefined): RequestKey[] {
  const exact = requestKey(id);
  const keys: RequestKey[] = [];
  const add = (k: RequestKey | null) => {
    if (k !== null && k !== exact && !keys.includes(k)) keys.push(k);
  };
  if (typeof id === "string") {
    const n = Number(id);
    if (Number.isSafeInteger(n)) add(n + 0);
    if (PY_INT.test(id)) add(requestKey(BigInt(id.trim().replaceAll("_", ""))));
  } else if (id instanceof JsonFloat && Number.isInteger(id.value)) {
    add(requestKey(id.value));
  }
  return keys;
}

/** What is kept of an answered request, to tell a second answer from an unmatched one. */
export interface Answered {
  id: Json;
  method: string;
  /** The digest of the result (or error) its row recorded. */
  digest: string | undefined;
}

/** Answered requests remembered per side, newest kept: a second answer later than this many others is counted unmatched. */
const MAX_ANSWERED = 1024;

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = -MAX_SAFE;

/** The requests each side sent that the other has not answered yet. */
export class RequestTable {
  /** Keyed by requestKey. */
  private readonly open: Record<Dir, Map<RequestKey, OpenRequest[]>>;
  /** Requests answered lately, by key, oldest first (bounded by MAX_ANSWERED). */
  private readonly answered: Record<Dir, Map<RequestKey, Answered>> = { c2s: new Map(), s2c: new Map() };
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

  /** The first open request of `dir`'s that `id` names, exactly or under an SDK client's rule, left open. */
  peek(dir: Dir, id: Json | undefined): OpenRequest | undefined {
    const exact = requestKey(id);
    for (const k of exact === null ? coercedKeys(id) : [exact, ...coercedKeys(id)]) {
      const p = this.open[dir].get(k)?.[0];
      if (p !== undefined) return p;
    }
    return undefined;
  }

  /**
   * The first open request of `dir`'s that `id` names under an SDK client's
   * rule but not exactly (see coercedKeys); undefined when there is none.
   */
  takeCoerced(dir: Dir, id: Json | undefined): OpenRequest | undefined {
    for (const k of coercedKeys(id)) {
      const p = this.take(dir, k);
      if (p !== undefined) return p;
    }
    return undefined;
  }

  /** `dir`'s request `p` got its answer (`digest`): a later answer to it is a second one. */
  answer(p: OpenRequest, digest: string | undefined): void {
    const key = requestKey(p.id);
    if (key === null) return;
    const done = this.answered[p.from];
    done.delete(key);
    done.set(key, { id: p.id, method: p.method, digest });
    if (done.size > MAX_ANSWERED) done.delete(done.keys().next().value!);
  }

  /** The answered request of `dir`'s that `id` names exactly or under an SDK client's rule, if one is remembered. */
  answeredBefore(dir: Dir, id: Json | undefined): Answered | undefined {
    const exact = requestKey(id);
    const done = this.answered[dir];
    const a = exact === null ? undefined : done.get(exact);
    if (a !== undefined) return a;
    for (const k of coercedKeys(id)) {
      const b = done.get(k);
      if (b !== undefined) return b;
    }
    return undefined;
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
