/**
 * What `seam proxy` is started with (commands/proxy.ts builds it from the
 * flags), and what each exchange (src/proxy/exchange.ts) asks of the proxy.
 */
import type { Cut, HttpRuntime, UpstreamResponse } from "../runtime/http-types.ts";
import type { Fields } from "../observe/observer-options.ts";
import type { Later } from "./record-later.ts";
import type { ProxySession, RecordOptions } from "./session.ts";

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
  /** How long recording waits after the first bytes of its batch crossed (default RECORD_DELAY_MS, src/proxy/record-later.ts). */
  recordDelayMs?: number;
}

/** What an exchange needs of the proxy. */
export interface ProxyHost {
  readonly opts: ProxyOptions;
  readonly runtime: HttpRuntime;
  /** Runs an exchange's recording (src/proxy/record-later.ts). */
  readonly later: Later;
  /** Cut when the proxy stops; the returned function forgets it. */
  addAborter(a: Cut): () => void;
  /** The session of a request: from its Mcp-Session-Id, else by what its body holds. */
  resolveSession(sid: string | undefined, frame: Uint8Array | null): Promise<ProxySession>;
  /** The head of an initialize's answer is in before its session is open: route the id it gives at once (see McpProxy). */
  routeEarly(p: Promise<ProxySession>, sid: string | undefined, res: UpstreamResponse): boolean;
  /** The answer's head is in: bind, adopt or end the session as it says. Returns the reason to end it after this exchange. */
  afterHead(s: ProxySession, sid: string | undefined, method: string, res: UpstreamResponse): string | undefined;
  /** Whether a session was opened by an initialize that no answer has bound or adopted yet. */
  provisional(s: ProxySession): boolean;
  finish(s: ProxySession, reason: string): Promise<void>;
}
