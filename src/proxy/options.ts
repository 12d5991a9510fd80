/**
 * What `seam proxy` is started with (commands/proxy.ts builds it from the
 * flags), and what each exchange (src/proxy/exchange.ts) asks of the proxy.
 */

import type { Fields } from "../observe/observer-options.ts";
import type { Cut, HttpRuntime, UpstreamResponse } from "../runtime/http-types.ts";
import type { Later } from "./deferred-recording.ts";
import type { Moment, ProxySession, RecordOptions } from "./session.ts";

/**
 * Most bytes of request bodies held at once for a decision (--max-held): under --write-ahead,
 * --fail-closed and --map a POST is read whole before it is forwarded, so held bodies are memory
 * that clients choose. Four bodies at the default --max-frame fit, and ordinary calls, far smaller,
 * by the thousand; past it a POST is answered 503 rather than the proxy growing. A body alone is
 * always held (up to --max-frame), whatever this says: each can be forwarded in turn.
 */
export const MAX_HELD_BYTES = 256 * 1024 * 1024;

/** The Retry-After of the 503 that says the held bodies are at their bound: a held body waits for a write. */
export const BUSY_RETRY_S = 1;

export interface ProxyOptions extends Omit<RecordOptions, "begin"> {
  upstream: URL;
  listenHost: string;
  listenPort: number;
  /** Refuse requests whose Host or Origin is not loopback (on for loopback listeners). */
  guardLoopback: boolean;
  /** Lower-cased names of further headers recorded only as present (--redact-header). */
  redactHeaders: ReadonlySet<string>;
  /** An MCP session with no exchange for this long is ended as `idle_expired` (0: never). */
  sessionIdleMs: number;
  /** What session_begin says about the proxy, redacted already. */
  begin: Fields;
  /** Most bytes of request bodies held at once for a decision (default MAX_HELD_BYTES). */
  maxHeld?: number;
  /** How long recording waits after the first bytes of its batch crossed (default RECORD_DELAY_MS, src/proxy/deferred-recording.ts). */
  recordDelayMs?: number;
}

/** What an exchange needs of the proxy. */
export interface ProxyHost {
  readonly opts: ProxyOptions;
  readonly runtime: HttpRuntime;
  /** Runs an exchange's recording (src/proxy/deferred-recording.ts). */
  readonly later: Later;
  /**
   * Counts `n` more bytes of a request body held for a decision, unless that would pass --max-held
   * while other exchanges hold bodies (`mine`: what the asking exchange holds already). Whether it did.
   */
  holdBytes(n: number, mine: number): boolean;
  /** Held bytes no longer held (forwarded or refused). */
  releaseBytes(n: number): void;
  /** Cut when the proxy stops; the returned function forgets it. */
  addAborter(a: Cut): () => void;
  /** The session of a request: from its Mcp-Session-Id, else by what its body holds; one it opens began `since`. */
  resolveSession(sid: string | undefined, frame: Uint8Array | null, since: Moment): Promise<ProxySession>;
  /** The head of an initialize's answer is in before its session is open: route the id it gives at once (see McpProxy). */
  routeEarly(p: Promise<ProxySession>, sid: string | undefined, res: UpstreamResponse): boolean;
  /** The answer's head is in: bind, adopt or end the session as it says. Returns the reason to end it after this exchange. */
  afterHead(s: ProxySession, sid: string | undefined, method: string, res: UpstreamResponse): string | undefined;
  /** Whether a session was opened by an initialize that no answer has bound or adopted yet. */
  provisional(s: ProxySession): boolean;
  finish(s: ProxySession, reason: string): Promise<void>;
}
