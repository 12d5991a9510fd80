/**
 * One HTTP exchange through `seam proxy` (src/proxy/server.ts): the request's
 * body streamed upstream while a copy is kept (up to --max-frame) for the
 * observer, the answer's head passed back at once and its body streamed back
 * chunk by chunk while SSE events (or a JSON body) are split off for the
 * observer; then its `http_exchange` row. Under --write-ahead/--fail-closed/
 * --map a POST is read whole and forwarded only once its tools/call intent
 * rows are durable (or refused, as `seam wrap` refuses: a JSON-RPC error, here
 * in an HTTP 200 JSON body).
 */
import { sleep } from "../base/sleep.ts";
import { concatBytes } from "../core/bytes.ts";
import { StreamDigest } from "../core/digest.ts";
import { msFloat, streamFields } from "../format/row.ts";
import type { HeaderPairs, InboundRequest, PipedBody, Reply, UpstreamResponse } from "../runtime/http-types.ts";
import { Cut, UpstreamError } from "../runtime/http-types.ts";
import type { Fields } from "../observe/observer-options.ts";
import { redactTarget } from "../redact/http.ts";
import { endToEnd, field, headerSummary, upstreamRequestHeaders } from "./headers.ts";
import type { ProxyHost } from "./options.ts";
import { sendWhole } from "./replies.ts";
import { errorAnswers, firstByte, requestMeta } from "./request-bodies.ts";
import { type Moment, type ProxySession, moment } from "./session.ts";
import { BodyCollector, type BodySink, SseSplitter } from "./sse.ts";

const encoder = new TextEncoder();

/** One HTTP exchange through the proxy. */
export class Exchange {
  private readonly t0 = performance.now();
  private readonly method: string;
  private readonly sid: string | undefined;
  private readonly cut = new Cut();
  private session: ProxySession | undefined;
  private sessionP: Promise<ProxySession> | undefined;
  /** The proxy's own promise of the session (resolveSession's), which routeEarly knows it by. */
  private proxySessionP: Promise<ProxySession> | undefined;
  private observedP: Promise<{ hold?: Promise<boolean> }> | undefined;
  /** Observations waiting for the request to be observed first (pairing needs it). */
  private queue: (() => void)[] = [];
  private ready = false;
  // Each chunk is kept as it came until it is recorded: a body of one chunk is hashed in one shot.
  private readonly req = { digest: new StreamDigest(true), bytes: 0, frame: null as Uint8Array | null, oversize: 0 };
  private readonly res = { digest: new StreamDigest(true), bytes: 0 };
  private fields: Fields = {};
  /** The request body pulled chunk by chunk (a held POST), made when first read. */
  private inboundIt: AsyncIterator<Uint8Array> | undefined;
  /** The request body is passed on as it arrives (a PipedBody) rather than pulled. */
  private piped = false;
  /** Called when a piped body has ended or the observer's copy of it is full (drainForObserver waits for it). */
  private drained: (() => void) | null = null;
  /** A piped body has ended or broken off. */
  private pipeOver = false;
  private bodyEnded = false;
  /** When the request's body ended: the moment its frame crossed. */
  private reqAt: Moment | undefined;
  private readonly bodyEnd: Promise<void>;
  private markBodyEnd!: () => void;
  private collector: BodyCollector | null = null;
  /** Chunks whose recording is queued (recordLater) and not done yet. */
  private pending = 0;
  /** When the chunk being recorded crossed. */
  private chunkAt: Moment = moment();
  /** Whether this exchange counts in its session's open exchanges; `over` once it has returned. */
  private entered = false;
  private over = false;

  constructor(
    private readonly p: ProxyHost,
    private readonly inbound: InboundRequest,
    private readonly reply: Reply,
    private readonly url: URL,
  ) {
    this.method = inbound.method.toUpperCase();
    this.sid = field(inbound.headers, "mcp-session-id");
    this.bodyEnd = new Promise<void>((r) => {
      this.markBodyEnd = r;
    });
  }

  async life(): Promise<void> {
    const dropAborter = this.p.addAborter(this.cut);
    this.reply.onGone(() => this.cut.cut());
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

  /**
   * Records a chunk (its digest, the frames it completes) when the proxy
   * records (ProxyHost.later: a moment later, or at the end of this turn of
   * the event loop), in order: the chunk has been written on already, and its
   * recording waits rather than delaying it. `chunkAt` says when it crossed,
   * the time its frames are observed at.
   */
  private recordLater(bytes: number, f: () => void): void {
    const at = moment();
    this.pending++;
    this.p.later(() => {
      this.pending--;
      this.chunkAt = at;
      f();
    }, bytes);
  }

  /** Every chunk queued in recordLater recorded (the request's that came after it was observed too). */
  private async recorded(): Promise<void> {
    while (this.pending > 0) await new Promise<void>((r) => this.p.later(r));
  }

  /** The request's session (found once). */
  private resolve(): Promise<ProxySession> {
    this.proxySessionP ??= this.p.resolveSession(this.sid, this.req.frame);
    this.sessionP ??= this.proxySessionP.then((s) => {
      this.session = s;
      if (!this.over) {
        s.enter();
        this.entered = true;
      }
      return s;
    });
    return this.sessionP;
  }

  /**
   * Observes the request (once), then lets queued observations of the answer
   * run; returns the observer's hold. As the answer's (recordLater), the observing
   * waits for ProxyHost.later, so that what the turn wrote upstream goes out
   * first, and is recorded at the moment it was due.
   */
  private observed(): Promise<{ hold?: Promise<boolean> }> {
    if (this.observedP !== undefined) return this.observedP;
    // The request crossed when its body ended (a request without one, or whose body never ended: now),
    // not once its session is found: opening a session's ledger takes a while, and the call's ms would
    // then leave that out.
    const at = this.reqAt ?? moment();
    this.observedP = this.resolve().then(
      (s) =>
        new Promise<{ hold?: Promise<boolean> }>((done) =>
          this.p.later(() => {
            let hold: Promise<boolean> | undefined;
            s.at(at, () => {
              if (this.req.oversize > 0) s.observer.oversize("c2s", this.req.oversize);
              else if (this.req.frame !== null) hold = s.observer.fromClient(this.req.frame);
            });
            this.ready = true;
            for (const f of this.queue.splice(0)) f();
            done({ hold });
          }),
        ),
    );
    return this.observedP;
  }

  /**
   * Starts observing the request without waiting for it. A session whose ledger cannot be opened (the
   * file replaced by a symbolic link while the proxy runs) fails the exchange where the session is
   * awaited, once; left unheld here as well, its rejection would end the whole proxy.
   */
  private observedLater(): void {
    this.observed().catch(() => {});
  }

  /** The request's body ended (read whole or piped through): its frame crossed now. */
  private bodyDone(): void {
    this.reqAt = moment();
    this.bodyEnded = true;
    this.collector?.end();
    this.markBodyEnd();
  }

  /** The next chunk of the request body (tapped and kept for the observer), or null at its end. */
  private async nextChunk(): Promise<Uint8Array | null> {
    if (this.bodyEnded) return null;
    this.inboundIt ??= this.inbound.body[Symbol.asyncIterator]();
    const r = await this.inboundIt.next();
    if (r.done) {
      this.bodyDone();
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
    let body: PipedBody | AsyncIterable<Uint8Array> | Uint8Array | null = null;
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
      body = this.pipedBody();
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
        cut: this.cut,
      });
    } catch (e) {
      await this.drainForObserver();
      await this.observed();
      await this.recorded();
      this.failedBeforeHead(e);
      return;
    }
    // An upstream may answer before the request body ended (an early error): its session is then found by headers.
    if (!this.bodyEnded) await Promise.race([this.bodyEnd, sleep(100)]);
    // The head goes on without waiting for a session that is still opening when the answer names the
    // new session's id (routeEarly); otherwise the session is found first, as the head may bind it.
    const sessionP = this.resolve();
    const bound =
      this.session === undefined && this.p.routeEarly(this.proxySessionP!, this.sid, res)
        ? sessionP.then((s) => this.p.afterHead(s, this.sid, this.method, res))
        : undefined;
    // Awaited once the answer has been passed on; a session that fails to open fails the exchange there.
    bound?.catch(() => {});
    const endAfterP = bound ?? Promise.resolve(this.p.afterHead(await sessionP, this.sid, this.method, res));
    this.observedLater();
    this.reply.head(res.status, endToEnd(res.headers), res.statusText);
    this.fields.http_status = res.status;

    // What of the answer can be observed.
    const encoding = field(res.headers, "content-encoding");
    const type = (field(res.headers, "content-type") ?? "").toLowerCase();
    const compressed = encoding !== undefined && encoding.trim().toLowerCase() !== "identity";
    // The splitter runs in recordLater (below): a frame is observed at the moment of the chunk that
    // completed it, once the request has been (pairing needs it).
    // (observe runs them once the request has been observed, so its session is open by then.)
    const sink: BodySink = {
      frame: (view) => {
        const f = view.slice();
        const at = this.chunkAt;
        this.observe(() => this.session!.at(at, () => this.session!.observer.fromServer(f)));
      },
      oversize: (n) => {
        const at = this.chunkAt;
        this.observe(() => this.session!.at(at, () => this.session!.observer.oversize("s2c", n)));
      },
    };
    let splitter: SseSplitter | BodyCollector | null = null;
    if (!compressed) {
      if (type.startsWith("text/event-stream")) splitter = new SseSplitter(o.maxFrame, sink);
      else if (/^application\/(?:[\w.+-]*\+)?json\b/.test(type)) splitter = new BodyCollector(o.maxFrame, sink);
    }
    // Forwarded first: what the recording does with a chunk (its digest, the frames it completes) comes
    // when the proxy records, never before the client has it.
    let failure = await res.pipeTo(this.reply, (chunk) => {
      this.res.bytes += chunk.length;
      this.recordLater(chunk.length, () => {
        this.res.digest.update(chunk);
        splitter?.push(chunk);
      });
    });
    if (failure !== undefined && !this.reply.gone) {
      if (this.cut.done) failure = "proxy_stopped";
      this.reply.abort();
    } else if (!this.reply.gone) {
      if (splitter !== null) this.recordLater(0, () => splitter.end());
      await this.reply.end();
    }
    // The exchange is over now, whenever its recording runs: its row's ms and ts are of this moment.
    const ended = moment();
    const s = await sessionP;
    const endAfter = await endAfterP;
    if (compressed && this.res.bytes > 0) {
      s.unobservedBodies++;
      this.fields.observed = false;
    }
    this.fields.response_content_type = field(res.headers, "content-type");
    this.fields.response_content_encoding = encoding;
    this.responseHeaders(res.headers);
    if (failure !== undefined) {
      this.fields.http_error = failure;
      this.fields.error_phase = "response_body";
    }
    await this.recorded();
    if (splitter instanceof SseSplitter) this.fields.sse_events = splitter.events;
    await this.observed();
    await this.done(endAfter, ended);
  }

  /** The request body, passed on as it arrives, each chunk then tapped and kept (up to --max-frame) for the observer. */
  private pipedBody(): PipedBody {
    this.piped = true;
    return {
      from: this.inbound,
      chunk: (c) => {
        this.req.bytes += c.length;
        this.recordLater(c.length, () => this.req.digest.update(c));
        // Kept at once: which session a request without an id belongs to is read from it.
        const kept = this.collector;
        if (kept !== null) {
          kept.push(c);
          if (kept.oversize) this.wake();
        }
      },
      end: (ended) => {
        this.pipeOver = true;
        if (ended) {
          this.bodyDone();
          this.observedLater();
        }
        this.wake();
      },
    };
  }

  private wake(): void {
    const d = this.drained;
    this.drained = null;
    d?.();
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
    if (this.piped) {
      // The pipe reads on: wait for the body's end (or the client's leaving), or for the observer's copy to be full.
      if (!this.pipeOver && !(this.collector?.oversize ?? true))
        await new Promise<void>((r) => {
          this.drained = r;
        });
      return;
    }
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
    const stopped = this.cut.done;
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

  /** Writes the exchange's row, dated `end` (when it ended), then ends the session if the exchange ended it. */
  private async done(endAfter: string | undefined, end: Moment = moment()): Promise<void> {
    const s = this.session!;
    const o = this.p.opts;
    const t = redactTarget(this.inbound.target);
    const reqSum = headerSummary(this.inbound.headers, o.redactHeaders);
    const meta = s.kind === "sessionless" || s.mcpId === undefined ? requestMeta(this.req.frame) : {};
    s.exchanges++;
    s.bytes.c2s += this.req.bytes;
    s.bytes.s2c += this.res.bytes;
    if (this.fields.http_error !== undefined && this.fields.http_error !== "proxy_stopped") s.httpErrors++;
    const f = this.fields;
    s.at(end, () =>
      s.rows.row("http_exchange", {
        method: this.method,
        target: t.target,
        target_redactions: t.redactions || undefined,
        http_status: f.http_status,
        http_error: f.http_error,
        error_phase: f.error_phase,
        seam_answer: f.seam_answer,
        client_gone: this.reply.gone || f.client_gone || undefined,
        ms: msFloat(end.perf - this.t0),
        request_content_type: reqSum.values.get("content-type"),
        mcp_protocol_version: reqSum.values.get("mcp-protocol-version"),
        mcp_method: reqSum.values.get("mcp-method"),
        mcp_name: reqSum.values.get("mcp-name"),
        last_event_id: reqSum.values.get("last-event-id"),
        ...meta,
        request_headers: reqSum.names,
        withheld_headers: reqSum.withheld.length > 0 ? reqSum.withheld : undefined,
        response_content_type: f.response_content_type,
        response_content_encoding: f.response_content_encoding,
        observed: f.observed,
        sse_events: f.sse_events,
        www_authenticate: f.www_authenticate,
        response_headers: f.response_headers,
        ...streamFields([
          ["request", this.req.bytes, this.req.digest.digest()],
          ["response", this.res.bytes, this.res.digest.digest()],
        ]),
      }),
    );
    this.leave();
    if (endAfter !== undefined) await this.p.finish(s, endAfter);
  }
}
