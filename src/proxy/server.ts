/**
 * `seam proxy`: a reverse proxy in front of one Streamable HTTP MCP endpoint
 * (https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#streamable-http)
 * that forwards every body byte for byte, as it arrives, and records the
 * same rows as `seam wrap` plus one `http_exchange` row per HTTP exchange.
 *
 * Each exchange: the request's head is checked (Host/Origin on a loopback
 * listener), its body streamed upstream while a copy is kept (up to
 * --max-frame) for the observer, the answer's head passed back at once and
 * its body streamed back chunk by chunk while SSE events (or a JSON body) are
 * split off for the observer. Observation never waits on the client or the
 * upstream, and the forwarding never waits on observation, except that under
 * --write-ahead/--fail-closed/--map a POST is read whole and forwarded only
 * once its tools/call intent rows are durable (or refused, as `seam wrap`
 * refuses: a JSON-RPC error, here in an HTTP 200 JSON body).
 */
import type { Log } from "../base/log.ts";
import { sleep } from "../base/sleep.ts";
import type { CheckpointSeeds } from "../checkpoint/checkpoint-writer.ts";
import { sharedLock } from "../ledger/shared-lock.ts";
import { plain } from "../runtime/http-replies.ts";
import type { Cut, HttpRuntime, InboundRequest, Listener, Reply, UpstreamResponse } from "../runtime/http-types.ts";
import { delayed, type Later, soon } from "./deferred-recording.ts";
import { Exchange } from "./exchange.ts";
import { foreignRequest } from "./guard.ts";
import { field } from "./headers.ts";
import { MAX_HELD_BYTES, type ProxyHost, type ProxyOptions } from "./options.ts";
import { holdsInitialize } from "./request-bodies.ts";
import { type Moment, ProxySession, type SessionKind } from "./session.ts";
import { type OpenAppend, sharingOpen } from "./shared-files.ts";

/** How long a session that ends waits for its other exchanges (a GET stream the upstream closes) to finish. */
const END_GRACE_MS = 2000;
/** How long stop waits for open exchanges to write their rows. */
const STOP_GRACE_MS = 3000;
/** How many idle-ended MCP sessions are remembered, so that a client coming back is recorded as continuing one. */
const EXPIRED_KEPT = 10_000;

export class McpProxy implements ProxyHost {
  private listener!: Listener;
  private readonly bySid = new Map<string, Promise<ProxySession>>();
  private sessionless: Promise<ProxySession> | null = null;
  /** The session an initialize opened that became the sessionless one (the upstream gave it no id). */
  private adopted: ProxySession | null = null;
  /** The upstream answered an initialize without a session id: it keeps no sessions. */
  private stateless = false;
  /** Sessions an initialize is opening (their ledger not yet open): routeEarly may bind the id an answer gives them. */
  private readonly opening = new WeakSet<Promise<ProxySession>>();
  private readonly sessions = new Set<ProxySession>();
  /** MCP session id → the ledger session this proxy ended as idle (oldest first, at most EXPIRED_KEPT). */
  private readonly expired = new Map<string, string>();
  private readonly inflight = new Set<Promise<void>>();
  private readonly aborters = new Set<Cut>();
  private readonly endings = new Set<Promise<void>>();
  /** Sessions whose end is under way (it may wait for their other exchanges). */
  private readonly ending = new WeakSet<ProxySession>();
  private stopping = false;
  private refusedForeign = 0;
  /** Bytes of request bodies held for a decision now (ProxyHost.holdBytes), and POSTs turned away at the bound. */
  private held = 0;
  private refusedBusy = 0;
  /** Rows that could not be written, and the sessions they were of (said when the proxy stops). */
  private readonly unlogged = { rows: 0, sessions: 0 };
  private readonly lock = sharedLock({ pid: process.pid });
  /** How sessions open the ledger: one descriptor for all that write the same file (src/proxy/shared-files.ts). */
  private readonly openShared: OpenAppend;
  /** Where a new session's checkpoints start from, under --sign: not the ledger's first byte. */
  private readonly checkpointSeeds: CheckpointSeeds = new Map();
  /** When exchanges record (src/proxy/deferred-recording.ts): at once where a call waits for its rows, else a moment later. */
  readonly later: Later;

  private constructor(
    private readonly http: HttpRuntime,
    private readonly o: ProxyOptions,
    private readonly log: Log,
  ) {
    this.later = o.writeAhead || o.failClosed || o.actions !== undefined ? soon : delayed(o.recordDelayMs);
    this.openShared = sharingOpen(o.openAppend);
  }

  static async start(http: HttpRuntime, o: ProxyOptions, log: Log): Promise<McpProxy> {
    const p = new McpProxy(http, o, log);
    p.listener = await http.listen(o.listenHost, o.listenPort, (req, reply) => p.track(req, reply));
    o.begin = { ...o.begin, listen: p.origin };
    return p;
  }

  get port(): number {
    return this.listener.port;
  }

  /** The address clients use (no path). */
  get origin(): string {
    const h = this.listener.host.includes(":") ? `[${this.listener.host}]` : this.listener.host;
    return `http://${h}:${this.listener.port}`;
  }

  /** Sessions opened so far that have not ended. */
  get openSessions(): number {
    return [...this.sessions].filter((s) => !s.ended).length;
  }

  /**
   * Stops: no new requests, open exchanges cut (each still writes its row),
   * then every open session ends with `reason`.
   */
  async stop(reason = "proxy_stopped"): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    const closed = this.listener.close();
    for (const a of this.aborters) a.cut();
    await closed;
    await Promise.race([Promise.allSettled([...this.inflight]), sleep(STOP_GRACE_MS)]);
    await Promise.allSettled([...this.endings]);
    await Promise.allSettled([...this.sessions].map((s) => this.close(s, reason)));
    if (this.refusedBusy > 0)
      this.log.warn(
        `answered ${this.refusedBusy} ${this.refusedBusy === 1 ? "POST" : "POSTs"} 503: the request bodies held for recording were at --max-held`,
      );
    if (this.refusedForeign > 1)
      this.log.warn(`refused ${this.refusedForeign} requests whose Host or Origin was not loopback`);
    const { rows, sessions } = this.unlogged;
    if (rows > 0)
      this.log.warn(
        `${rows} ${rows === 1 ? "row" : "rows"} of ${sessions} ${sessions === 1 ? "session" : "sessions"} could not be written to ${this.o.ledger} (the warnings above say why)`,
      );
  }

  /** Ends `s`, counting the rows of it that could not be written. */
  private async close(s: ProxySession, reason: string): Promise<void> {
    const lost = await s.end(reason);
    if (lost === 0) return;
    this.unlogged.rows += lost;
    this.unlogged.sessions++;
  }

  private track(req: InboundRequest, reply: Reply): Promise<void> {
    const p = this.handle(req, reply).catch((e) => {
      this.log.warn(`internal error in an exchange: ${e instanceof Error ? e.message : String(e)}`);
      reply.abort();
    });
    this.inflight.add(p);
    void p.finally(() => this.inflight.delete(p));
    return p;
  }

  // ---- sessions ----

  private openSession(kind: SessionKind, since: Moment, mcpId?: string, continues?: string): Promise<ProxySession> {
    const p = ProxySession.open(
      { ...this.o, openAppend: this.openShared, checkpointSeeds: this.checkpointSeeds },
      kind,
      this.lock,
      this.log,
      this.later,
      mcpId,
      continues,
      since,
    );
    // A ledger that cannot be opened fails the exchanges that wait for this session (each says why);
    // it must not also reject here unheld, which would end the proxy.
    void p.then(
      (s) => this.sessions.add(s),
      () => {},
    );
    return p;
  }

  private sessionFor(sid: string, since: Moment): Promise<ProxySession> {
    let p = this.bySid.get(sid);
    if (p === undefined) {
      const continues = this.expired.get(sid);
      this.expired.delete(sid);
      p = this.openSession("joined", since, sid, continues);
      this.mapSid(sid, p);
      void p.then(
        (s) => this.watchIdle(s),
        () => {},
      );
    }
    return p;
  }

  /** Ends `s` once no exchange of it has been open for --session-idle: a client gone without DELETE. */
  private watchIdle(s: ProxySession): void {
    s.expireWhenIdle(this.o.sessionIdleMs, () => {
      if (s.open > 0 || this.ending.has(s) || this.stopping || s.mcpId === undefined) return;
      this.expired.delete(s.mcpId);
      this.expired.set(s.mcpId, s.id);
      if (this.expired.size > EXPIRED_KEPT) this.expired.delete(this.expired.keys().next().value!);
      void this.endSession(s, "idle_expired");
    });
  }

  private sessionlessSession(since: Moment): Promise<ProxySession> {
    if (this.sessionless === null) {
      const opened = this.openSession("sessionless", since);
      this.sessionless = opened;
      // Not kept when its ledger could not be opened: the next sessionless request tries again.
      void opened.catch(() => {
        if (this.sessionless === opened) this.sessionless = null;
      });
    }
    return this.sessionless;
  }

  /** Ends a session once its other exchanges are done (or after a grace period). */
  private endSession(s: ProxySession, reason: string): Promise<void> {
    this.ending.add(s);
    if (s.mcpId !== undefined && this.bySid.has(s.mcpId)) {
      const mapped = this.bySid.get(s.mcpId)!;
      void mapped.then((m) => {
        if (m === s && this.bySid.get(s.mcpId!) === mapped) this.bySid.delete(s.mcpId!);
      });
    }
    // An ended session is let go: a long-running proxy keeps only the open ones.
    const p = s
      .settled(END_GRACE_MS)
      .then(() => this.close(s, reason))
      .then(() => {
        this.sessions.delete(s);
        if (this.adopted === s) this.adopted = null;
      });
    this.endings.add(p);
    void p.finally(() => this.endings.delete(p));
    return p;
  }

  // ---- one exchange ----

  private async handle(req: InboundRequest, reply: Reply): Promise<void> {
    if (this.stopping) {
      plain(reply, 503, "seam proxy is stopping\n");
      return;
    }
    if (this.o.guardLoopback) {
      const why = foreignRequest(field(req.headers, "host"), field(req.headers, "origin"), this.listener.port);
      if (why !== null) {
        if (this.refusedForeign++ === 0)
          this.log.warn(`refused a request to the loopback listener: ${why} (DNS rebinding protection)`);
        plain(reply, 403, `Forbidden: ${why}\n`);
        return;
      }
    }
    if (!req.target.startsWith("/")) {
      plain(reply, 400, "Bad Request: the request-target must be a path\n");
      return;
    }
    let upstreamUrl: URL | null = null;
    try {
      upstreamUrl = new URL(this.o.upstream.origin + req.target);
    } catch {}
    if (upstreamUrl === null || upstreamUrl.origin !== this.o.upstream.origin) {
      plain(reply, 400, "Bad Request: the request-target must be a path\n");
      return;
    }
    return new Exchange(this, req, reply, upstreamUrl).life();
  }

  // What an Exchange needs of the proxy.
  get opts(): ProxyOptions {
    return this.o;
  }
  get runtime(): HttpRuntime {
    return this.http;
  }
  holdBytes(n: number, mine: number): boolean {
    const others = this.held - mine;
    if (others > 0 && this.held + n > (this.o.maxHeld ?? MAX_HELD_BYTES)) {
      this.refusedBusy++;
      return false;
    }
    this.held += n;
    return true;
  }
  releaseBytes(n: number): void {
    this.held -= n;
  }
  addAborter(a: Cut): () => void {
    this.aborters.add(a);
    if (this.stopping) a.cut();
    return () => this.aborters.delete(a);
  }
  /** The session of a request: from its Mcp-Session-Id, else by what its body holds. */
  resolveSession(sid: string | undefined, frame: Uint8Array | null, since: Moment): Promise<ProxySession> {
    if (sid !== undefined) return this.sessionFor(sid, since);
    if (frame !== null && !this.stateless && holdsInitialize(frame)) {
      const p = this.openSession("initialize", since);
      this.opening.add(p);
      void p.then(
        () => this.opening.delete(p),
        () => this.opening.delete(p),
      );
      return p;
    }
    return this.sessionlessSession(since);
  }
  /**
   * The answer's head is in and the request's session (`p`) is still being opened by an
   * initialize: when the answer gives the new session's id, requests carrying it are routed to
   * that session from now on, so the head and body need not wait for its ledger to open. Returns
   * whether it did (afterHead then still runs, once the session is open); for any other answer
   * the exchange waits for the session first, as before.
   */
  routeEarly(p: Promise<ProxySession>, sid: string | undefined, res: UpstreamResponse): boolean {
    if (sid !== undefined || !this.opening.has(p) || res.status < 200 || res.status >= 300) return false;
    const given = field(res.headers, "mcp-session-id");
    if (given === undefined || this.bySid.has(given)) return false;
    this.mapSid(given, p);
    return true;
  }
  /** Routes requests carrying `sid` to the session `p` opens; not kept if its ledger cannot be opened (a later request tries again). */
  private mapSid(sid: string, p: Promise<ProxySession>): void {
    this.bySid.set(sid, p);
    void p.catch(() => {
      if (this.bySid.get(sid) === p) this.bySid.delete(sid);
    });
  }
  /** The answer's head is in: bind, adopt or end the session as it says. Returns the reason to end it after this exchange. */
  afterHead(s: ProxySession, sid: string | undefined, method: string, res: UpstreamResponse): string | undefined {
    const ok = res.status >= 200 && res.status < 300;
    if (s.kind === "initialize" && s.mcpId === undefined && sid === undefined && s !== this.adopted) {
      const given = field(res.headers, "mcp-session-id");
      if (given !== undefined && ok) {
        s.bind(given);
        if (!this.bySid.has(given)) this.bySid.set(given, Promise.resolve(s));
        this.watchIdle(s);
        return undefined;
      }
      if (!ok) return "initialize_rejected";
      this.stateless = true;
      if (this.sessionless === null) {
        this.sessionless = Promise.resolve(s);
        this.adopted = s;
        return undefined;
      }
      // Two first initializes raced: the other one became the sessionless session.
      return "sessionless_initialize";
    }
    if (sid !== undefined && res.status === 404) return "upstream_404";
    // A session id the upstream does not know, seen first here: no MCP session to record (and a client
    // making up ids must not hold a ledger session open for each).
    if (s.kind === "joined" && s.exchanges === 0 && s.open === 1 && res.status >= 400 && res.status < 500)
      return "unknown_session";
    if (sid !== undefined && method === "DELETE" && ok) return "client_delete";
    return undefined;
  }
  /** Whether a session was opened by an initialize that no answer has bound or adopted yet. */
  provisional(s: ProxySession): boolean {
    return s.kind === "initialize" && s.mcpId === undefined && s !== this.adopted;
  }
  finish(s: ProxySession, reason: string): Promise<void> {
    return this.endSession(s, reason);
  }
}
