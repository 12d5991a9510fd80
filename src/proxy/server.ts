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
import { concatBytes } from "../core/bytes.ts";
import { StreamDigest } from "../core/digest.ts";
import { type Json, JsonFloat, getField, isObject, parseJson } from "../core/json.ts";
import type { Log } from "../base/log.ts";
import { sharedLock } from "../ledger/shared-lock.ts";
import type {
  HeaderPairs,
  HttpRuntime,
  InboundRequest,
  Listener,
  Reply,
  UpstreamResponse,
} from "../runtime/http-types.ts";
import { UpstreamError } from "../runtime/http-types.ts";
import { requestKey } from "../wrap/pairing.ts";
import { idJson } from "../wrap/seam-answers.ts";
import type { Fields } from "../wrap/observer-options.ts";
import { foreignRequest } from "./guard.ts";
import { endToEnd, field, headerSummary, isSecretHeader, redactTarget, upstreamRequestHeaders } from "./headers.ts";
import { ProxySession, type RecordOptions, type SessionKind } from "./session.ts";
import { BodyCollector, type BodySink, SseSplitter } from "./sse.ts";

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
}

/** The JSON-RPC error code of seam's answer when the upstream cannot be reached. */
export const UPSTREAM_ERROR_CODE = -32000;
/** How long a session that ends waits for its other exchanges (a GET stream the upstream closes) to finish. */
const END_GRACE_MS = 2000;
/** How long stop waits for open exchanges to write their rows. */
const STOP_GRACE_MS = 3000;
/** How many idle-ended MCP sessions are remembered, so that a client coming back is recorded as continuing one. */
const EXPIRED_KEPT = 10_000;

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

export class McpProxy {
  private listener!: Listener;
  private readonly bySid = new Map<string, Promise<ProxySession>>();
  private sessionless: Promise<ProxySession> | null = null;
  /** The session an initialize opened that became the sessionless one (the upstream gave it no id). */
  private adopted: ProxySession | null = null;
  /** The upstream answered an initialize without a session id: it keeps no sessions. */
  private stateless = false;
  private readonly sessions = new Set<ProxySession>();
  /** MCP session id → the ledger session this proxy ended as idle (oldest first, at most EXPIRED_KEPT). */
  private readonly expired = new Map<string, string>();
  private readonly inflight = new Set<Promise<void>>();
  private readonly aborters = new Set<AbortController>();
  private readonly endings = new Set<Promise<void>>();
  /** Sessions whose end is under way (it may wait for their other exchanges). */
  private readonly ending = new WeakSet<ProxySession>();
  private stopping = false;
  private refusedForeign = 0;
  private readonly lock = sharedLock({ pid: process.pid });

  private constructor(
    private readonly http: HttpRuntime,
    private readonly o: ProxyOptions,
    private readonly log: Log,
  ) {}

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
    for (const a of this.aborters) a.abort();
    await closed;
    await Promise.race([Promise.allSettled([...this.inflight]), sleep(STOP_GRACE_MS)]);
    await Promise.allSettled([...this.endings]);
    await Promise.allSettled([...this.sessions].map((s) => s.end(reason)));
    if (this.refusedForeign > 1)
      this.log.warn(`refused ${this.refusedForeign} requests whose Host or Origin was not loopback`);
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

  private openSession(kind: SessionKind, mcpId?: string, continues?: string): Promise<ProxySession> {
    const p = ProxySession.open(this.o, kind, this.lock, this.log, mcpId, continues);
    void p.then((s) => this.sessions.add(s));
    return p;
  }

  private sessionFor(sid: string): Promise<ProxySession> {
    let p = this.bySid.get(sid);
    if (p === undefined) {
      const continues = this.expired.get(sid);
      this.expired.delete(sid);
      p = this.openSession("joined", sid, continues);
      this.bySid.set(sid, p);
      void p.then((s) => this.watchIdle(s)).catch(() => {});
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

  private sessionlessSession(): Promise<ProxySession> {
    this.sessionless ??= this.openSession("sessionless");
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
      .then(() => s.end(reason))
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
  addAborter(a: AbortController): () => void {
    this.aborters.add(a);
    if (this.stopping) a.abort();
    return () => this.aborters.delete(a);
  }
  /** The session of a request: from its Mcp-Session-Id, else by what its body holds. */
  async resolveSession(sid: string | undefined, frame: Uint8Array | null): Promise<ProxySession> {
    if (sid !== undefined) return this.sessionFor(sid);
    if (frame !== null && !this.stateless && holdsInitialize(frame)) return this.openSession("initialize");
    return this.sessionlessSession();
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

/** One HTTP exchange through the proxy. */
class Exchange {
  private readonly t0 = performance.now();
  private readonly method: string;
  private readonly sid: string | undefined;
  private readonly abort = new AbortController();
  private session: ProxySession | undefined;
  private sessionP: Promise<ProxySession> | undefined;
  private observedP: Promise<{ hold?: Promise<boolean> }> | undefined;
  /** Observations waiting for the request to be observed first (pairing needs it). */
  private queue: (() => void)[] = [];
  private ready = false;
  private readonly req = { digest: new StreamDigest(), bytes: 0, frame: null as Uint8Array | null, oversize: 0 };
  private readonly res = { digest: new StreamDigest(), bytes: 0 };
  private fields: Fields = {};
  private readonly inboundIt: AsyncIterator<Uint8Array>;
  private bodyEnded = false;
  private readonly bodyEnd: Promise<void>;
  private markBodyEnd!: () => void;
  private collector: BodyCollector | null = null;
  /** Whether this exchange counts in its session's open exchanges; `over` once it has returned. */
  private entered = false;
  private over = false;

  constructor(
    private readonly p: McpProxy,
    private readonly inbound: InboundRequest,
    private readonly reply: Reply,
    private readonly url: URL,
  ) {
    this.method = inbound.method.toUpperCase();
    this.sid = field(inbound.headers, "mcp-session-id");
    this.inboundIt = inbound.body[Symbol.asyncIterator]();
    this.bodyEnd = new Promise<void>((r) => {
      this.markBodyEnd = r;
    });
  }

  async life(): Promise<void> {
    const dropAborter = this.p.addAborter(this.abort);
    this.reply.onGone(() => this.abort.abort());
    try {
      await this.exchange();
    } finally {
      dropAborter();
      // An exchange that ended without its row (the client left mid-upload) no longer holds its session open.
      this.over = true;
      this.leave();
    }
  }

  private leave(): void {
    if (!this.entered) return;
    this.entered = false;
    this.session!.leave();
  }

  private observe(f: () => void): void {
    if (this.ready) f();
    else this.queue.push(f);
  }

  /** The request's session (found once). */
  private resolve(): Promise<ProxySession> {
    this.sessionP ??= this.p.resolveSession(this.sid, this.req.frame).then((s) => {
      this.session = s;
      if (!this.over) {
        s.enter();
        this.entered = true;
      }
      return s;
    });
    return this.sessionP;
  }

  /** Observes the request (once), then lets queued observations of the answer run; returns the observer's hold. */
  private observed(): Promise<{ hold?: Promise<boolean> }> {
    this.observedP ??= this.resolve().then((s) => {
      let hold: Promise<boolean> | undefined;
      if (this.req.oversize > 0) s.observer.oversize("c2s", this.req.oversize);
      else if (this.req.frame !== null) hold = s.observer.fromClient(this.req.frame);
      this.ready = true;
      for (const f of this.queue.splice(0)) f();
      return { hold };
    });
    return this.observedP;
  }

  /** The next chunk of the request body (tapped and kept for the observer), or null at its end. */
  private async nextChunk(): Promise<Uint8Array | null> {
    if (this.bodyEnded) return null;
    const r = await this.inboundIt.next();
    if (r.done) {
      this.bodyEnded = true;
      this.collector?.end();
      this.markBodyEnd();
      return null;
    }
    this.req.digest.update(r.value);
    this.req.bytes += r.value.length;
    this.collector?.push(r.value);
    return r.value;
  }

  private keepFrame(): void {
    this.collector = new BodyCollector(this.p.opts.maxFrame, {
      frame: (f) => {
        this.req.frame = f;
      },
      oversize: (n) => {
        this.req.oversize = n;
      },
    });
  }

  private async exchange(): Promise<void> {
    const o = this.p.opts;
    const hasBody = this.method !== "GET" && this.method !== "HEAD" && this.method !== "DELETE";
    const observeBody = this.method === "POST";
    const holdMode = observeBody && (o.writeAhead || o.failClosed || o.actions !== undefined);
    const headers = upstreamRequestHeaders(this.inbound.headers, this.url);
    let body: AsyncIterable<Uint8Array> | Uint8Array | null = null;
    if (observeBody) this.keepFrame();
    // A request naming its session holds it open from its first byte (not idle while its body uploads).
    // Its failure to open a ledger session is met again where the session is awaited.
    if (this.sid !== undefined) this.resolve().catch(() => {});

    if (holdMode) {
      // Read the POST whole (up to --max-frame), record, then forward or refuse.
      const read: Uint8Array[] = [];
      let len = 0;
      try {
        for (;;) {
          const chunk = await this.nextChunk();
          if (chunk === null) break;
          read.push(chunk);
          len += chunk.length;
          if (len > o.maxFrame) break;
        }
      } catch {
        return; // the client went away mid-upload: nothing was forwarded, nothing to record
      }
      const s = await this.resolve();
      let verdict = true;
      // The observer holds one client frame at a time: held POSTs of one session take turns here.
      const turn = s.holdChain.then(async () => {
        if (!this.bodyEnded) this.req.oversize = len;
        const { hold } = await this.observed();
        if (hold !== undefined) verdict = await hold;
      });
      s.holdChain = turn.catch(() => {});
      await turn;
      if (!verdict) {
        this.refuse();
        return;
      }
      body = this.bodyEnded ? concatBytes(read, len) : this.streamBody(read);
    } else if (hasBody) {
      body = this.streamBody([]);
    } else {
      this.bodyEnded = true;
      await this.observed();
    }

    let res: UpstreamResponse;
    try {
      res = await this.p.runtime.request({
        url: this.url,
        method: this.inbound.method,
        headers,
        body,
        signal: this.abort.signal,
      });
    } catch (e) {
      await this.drainForObserver();
      await this.observed();
      this.failedBeforeHead(e);
      return;
    }
    // An upstream may answer before the request body ended (an early error): its session is then found by headers.
    if (!this.bodyEnded) await Promise.race([this.bodyEnd, sleep(100)]);
    const s = await this.resolve();
    void this.observed();
    const endAfter = this.p.afterHead(s, this.sid, this.method, res);
    this.reply.head(res.status, endToEnd(res.headers), res.statusText);
    this.fields.http_status = res.status;

    // What of the answer can be observed.
    const encoding = field(res.headers, "content-encoding");
    const type = (field(res.headers, "content-type") ?? "").toLowerCase();
    const compressed = encoding !== undefined && encoding.trim().toLowerCase() !== "identity";
    const sink: BodySink = {
      frame: (f) => this.observe(() => s.observer.fromServer(f)),
      oversize: (n) => this.observe(() => s.observer.oversize("s2c", n)),
    };
    let splitter: SseSplitter | BodyCollector | null = null;
    if (!compressed) {
      if (type.startsWith("text/event-stream")) splitter = new SseSplitter(o.maxFrame, sink);
      else if (/^application\/(?:[\w.+-]*\+)?json\b/.test(type)) splitter = new BodyCollector(o.maxFrame, sink);
    }
    let error: string | undefined;
    try {
      for await (const chunk of res.body) {
        this.res.digest.update(chunk);
        this.res.bytes += chunk.length;
        splitter?.push(chunk);
        const w = this.reply.write(chunk);
        if (w) await w;
        if (this.reply.gone) break;
      }
    } catch (e) {
      error = e instanceof UpstreamError ? e.code : "EIO";
    }
    if (error !== undefined && !this.reply.gone) {
      if (this.abort.signal.aborted) error = "proxy_stopped";
      this.reply.abort();
    } else if (!this.reply.gone) {
      splitter?.end();
      await this.reply.end();
    }
    if (compressed && this.res.bytes > 0) {
      s.unobservedBodies++;
      this.fields.observed = false;
    }
    if (splitter instanceof SseSplitter) this.fields.sse_events = splitter.events;
    this.fields.response_content_type = field(res.headers, "content-type");
    this.fields.response_content_encoding = encoding;
    this.responseHeaders(res.headers);
    if (error !== undefined) {
      this.fields.http_error = error;
      this.fields.error_phase = "response_body";
    }
    await this.observed();
    await this.done(endAfter);
  }

  /** The request body, passed on as it arrives (after the chunks already read), a copy kept for the observer. */
  private async *streamBody(first: Uint8Array[]): AsyncIterable<Uint8Array> {
    yield* first;
    for (;;) {
      const chunk = await this.nextChunk();
      if (chunk === null) break;
      yield chunk;
    }
    await this.observed();
  }

  /**
   * The upstream failed before reading the whole body: read the rest (up to
   * --max-frame) so that the requests in it are known and answered.
   */
  private async drainForObserver(): Promise<void> {
    try {
      while (!this.bodyEnded && !(this.collector?.oversize ?? true)) {
        if ((await this.nextChunk()) === null) break;
      }
    } catch {
      // the client went away too
    }
  }

  /** The upstream could not be reached (or the exchange was cut before its answer's head). */
  private failedBeforeHead(e: unknown): void {
    const code = e instanceof UpstreamError ? e.code : "EIO";
    const s = this.session!;
    // An initialize that never reached the upstream opened no MCP session: its ledger session ends with it.
    const endAfter = this.p.provisional(s) ? "upstream_unreachable" : undefined;
    if (this.reply.gone) {
      this.fields.client_gone = true;
      void this.done(endAfter);
      return;
    }
    const stopped = this.abort.signal.aborted;
    const message = stopped
      ? "seam: the proxy is stopping; the request was not answered"
      : `seam: upstream unreachable (${code})`;
    const body = errorAnswers(this.req.frame, message);
    this.fields.http_status = 502;
    this.fields.http_error = stopped ? "proxy_stopped" : code;
    this.fields.error_phase = "connect";
    this.fields.seam_answer = "upstream_error";
    if (body !== null) {
      s.observer.fromServer(body);
      sendWhole(this.reply, 502, "application/json", body);
      this.res.digest.update(body);
      this.res.bytes += body.length;
    } else {
      sendWhole(this.reply, 502, "text/plain; charset=utf-8", encoder.encode(`${message}\n`));
    }
    void this.done(endAfter);
  }

  /** --fail-closed or --map --no-fail-open refused the POST's calls: answer them in an HTTP 200 JSON body. */
  private refuse(): void {
    const s = this.session!;
    const lines = s.observer.refuse().map((l) => new TextDecoder().decode(l).trimEnd());
    const frame = this.req.frame;
    const batch = frame !== null && firstByte(frame) === 0x5b;
    const text = batch || lines.length !== 1 ? `[${lines.join(",")}]` : lines[0]!;
    const body = encoder.encode(text);
    sendWhole(this.reply, 200, "application/json", body);
    this.res.digest.update(body);
    this.res.bytes += body.length;
    this.fields.http_status = 200;
    this.fields.seam_answer = "refused";
    void this.done(undefined);
  }

  private responseHeaders(h: HeaderPairs): void {
    const sum = headerSummary(h, this.p.opts.redactHeaders);
    this.fields.response_headers = sum.names;
    const www = sum.values.get("www-authenticate");
    if (www !== undefined) this.fields.www_authenticate = www;
  }

  /** Writes the exchange's row, then ends the session if the exchange ended it. */
  private async done(endAfter: string | undefined): Promise<void> {
    const s = this.session!;
    const o = this.p.opts;
    const t = redactTarget(this.inbound.target);
    const reqSum = headerSummary(this.inbound.headers, o.redactHeaders);
    const withheld = reqSum.names.filter((n) => isSecretHeader(n, o.redactHeaders));
    const meta = s.kind === "sessionless" || s.mcpId === undefined ? requestMeta(this.req.frame) : {};
    s.exchanges++;
    s.bytes.c2s += this.req.bytes;
    s.bytes.s2c += this.res.bytes;
    if (this.fields.http_error !== undefined && this.fields.http_error !== "proxy_stopped") s.httpErrors++;
    const f = this.fields;
    s.rows.row("http_exchange", {
      method: this.method,
      target: t.target,
      target_redactions: t.redactions || undefined,
      http_status: f.http_status,
      http_error: f.http_error,
      error_phase: f.error_phase,
      seam_answer: f.seam_answer,
      client_gone: this.reply.gone || f.client_gone || undefined,
      ms: msFloat(performance.now() - this.t0),
      request_content_type: reqSum.values.get("content-type"),
      mcp_protocol_version: reqSum.values.get("mcp-protocol-version"),
      mcp_method: reqSum.values.get("mcp-method"),
      mcp_name: reqSum.values.get("mcp-name"),
      last_event_id: reqSum.values.get("last-event-id"),
      ...meta,
      request_headers: reqSum.names,
      withheld_headers: withheld.length > 0 ? withheld : undefined,
      response_content_type: f.response_content_type,
      response_content_encoding: f.response_content_encoding,
      observed: f.observed,
      sse_events: f.sse_events,
      www_authenticate: f.www_authenticate,
      response_headers: f.response_headers,
      bytes: new Map<string, Json>([
        ["request", this.req.bytes],
        ["response", this.res.bytes],
      ]),
      stream_digests: new Map<string, Json>([
        ["request", this.req.digest.digest()],
        ["response", this.res.digest.digest()],
      ]),
    });
    this.leave();
    if (endAfter !== undefined) await this.p.finish(s, endAfter);
  }
}

/** Milliseconds kept to the microsecond, always written as a float (as the observer's `ms`). */
function msFloat(ms: number): Json {
  const v = Math.round(ms * 1000) / 1000;
  return Number.isInteger(v) ? new JsonFloat(v) : v;
}

/** Whether a request body holds an `initialize` request (alone or in a batch). */
function holdsInitialize(frame: Uint8Array): boolean {
  const msgs = messages(frame);
  return msgs.some((m) => isObject(m) && getField(m, "method") === "initialize");
}

/** The JSON-RPC messages of a body (one, or a batch's elements); [] when it is not JSON. */
function messages(frame: Uint8Array | null): Json[] {
  if (frame === null) return [];
  let v: Json;
  try {
    v = parseJson(decoder.decode(frame));
  } catch {
    return [];
  }
  return Array.isArray(v) ? v : [v];
}

/**
 * What a request of the sessionless 2026-07-28 revision says of its client
 * in `params._meta` (https://modelcontextprotocol.io/specification/2026-07-28/basic/index):
 * the protocol version and client info of its first request that has them.
 */
function requestMeta(frame: Uint8Array | null): Fields {
  if (
    frame === null ||
    !Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength).includes("io.modelcontextprotocol/")
  )
    return {};
  for (const m of messages(frame)) {
    const meta = getField(
      getField(getField(m, "params") ?? null, "_meta") ?? null,
      "io.modelcontextprotocol/protocolVersion",
    );
    if (meta === undefined) continue;
    const params = getField(m, "params") ?? null;
    const metaObj = getField(params, "_meta") ?? null;
    return {
      meta_protocol_version: meta,
      meta_client_info: getField(metaObj, "io.modelcontextprotocol/clientInfo"),
    };
  }
  return {};
}

/** seam's own error answers for the requests of a body (those with a valid id); null when it holds none. */
function errorAnswers(frame: Uint8Array | null, message: string): Uint8Array | null {
  const answers: string[] = [];
  let batch = false;
  if (frame !== null) batch = firstByte(frame) === 0x5b;
  for (const m of messages(frame)) {
    if (!isObject(m) || typeof getField(m, "method") !== "string") continue;
    const id = getField(m, "id");
    if (requestKey(id) === null) continue;
    answers.push(
      `{"jsonrpc":"2.0","id":${idJson(id)},"error":{"code":${UPSTREAM_ERROR_CODE},"message":${JSON.stringify(message)}}}`,
    );
  }
  if (answers.length === 0) return null;
  return encoder.encode(batch ? `[${answers.join(",")}]` : answers[0]!);
}

function firstByte(b: Uint8Array): number | undefined {
  let i = 0;
  while (i < b.length && (b[i] === 0x20 || b[i] === 0x09 || b[i] === 0x0a || b[i] === 0x0d)) i++;
  return b[i];
}

function sendWhole(reply: Reply, status: number, type: string, body: Uint8Array): void {
  reply.head(status, [
    ["Content-Type", type],
    ["Content-Length", String(body.length)],
  ]);
  void reply.write(body);
  void reply.end();
}

function plain(reply: Reply, status: number, text: string): void {
  sendWhole(reply, status, "text/plain; charset=utf-8", encoder.encode(text));
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref?.());
}
