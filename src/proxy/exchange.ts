/**
 * One HTTP exchange through `seam proxy` (src/proxy/server.ts): the request's
 * body streamed upstream while a copy is kept (up to --max-frame) for the
 * observer, the answer's head passed back at once and its body streamed back
 * chunk by chunk while SSE events (or a JSON body) are split off for the
 * observer; then its `http_exchange` row. Under --write-ahead/--fail-closed/
 * --map a POST is read whole and forwarded only once its tools/call intent
 * rows are durable (or refused, as `seam wrap` refuses: a JSON-RPC error, here
 * in an HTTP 200 JSON body). A POST longer than --max-frame is rowed as an
 * unparsed_frame (length, digest, first bytes) once it has ended; under
 * --write-ahead/--fail-closed none of it is forwarded: it is read to its end,
 * none of it kept, and refused with a 413.
 */
import { sleep } from "../base/sleep.ts";
import { concatBytes } from "../core/bytes.ts";
import { StreamDigest } from "../core/digest.ts";
import { msFloat, streamFields } from "../format/row.ts";
import { HEAD_BYTES, type LongFrame } from "../observe/frames.ts";
import type { Fields } from "../observe/observer-options.ts";
import { redactTarget } from "../redact/http.ts";
import { plain, sendWhole } from "../runtime/http-replies.ts";
import {
  Cut,
  type HeaderPairs,
  type InboundRequest,
  type PipedBody,
  type Reply,
  UpstreamError,
  type UpstreamResponse,
} from "../runtime/http-types.ts";
import { endToEnd, field, headerSummary, upstreamRequestHeaders } from "./headers.ts";
import { BUSY_RETRY_S, type ProxyHost } from "./options.ts";
import { errorAnswers, firstByte, requestIds, requestMeta } from "./request-bodies.ts";
import { type Moment, moment, type ProxySession } from "./session.ts";
import { BodyCollector, type BodySink, bodyKind, contentCodings, DecodedBody, SseSplitter } from "./sse.ts";

const encoder = new TextEncoder();

/** One HTTP exchange through the proxy. */
export class Exchange {
  /** When the exchange began (its request's head had come). */
  private readonly started = moment();
  private readonly t0 = this.started.perf;
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
  private readonly req = {
    digest: new StreamDigest(true),
    bytes: 0,
    frame: null as Uint8Array | null,
    oversize: 0,
    /** The body's first bytes (what a row of a body too long to read shows of it). */
    head: new Uint8Array(0) as Uint8Array,
  };
  /** The request body's digest, once taken (a digest is taken once; the body has ended by then). */
  private reqDigest: string | undefined;
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
  /** When the client went away before the answer ended. */
  private goneAt: Moment | undefined;
  /** Bytes of the request body this exchange holds for a decision (counted in the proxy's bound). */
  private held = 0;
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
    this.reply.onGone(() => {
      this.goneAt = moment();
      this.cut.cut();
    });
    try {
      await this.exchange();
    } finally {
      dropAborter();
      this.letGo();
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
    this.proxySessionP ??= this.p.resolveSession(this.sid, this.req.frame, this.started);
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
              // A body longer than --max-frame is rowed (its length, digest and first bytes), as seam wrap
              // rows a long frame; under --write-ahead the hold refuses it, its bytes never forwarded.
              if (this.req.oversize > 0) hold = s.observer.longFrame(this.longFrame());
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

  /** Holds `n` more bytes of the request body, if the proxy's bound on held bodies allows it. */
  private holdMore(n: number): boolean {
    if (!this.p.holdBytes(n, this.held)) return false;
    this.held += n;
    return true;
  }

  /** The held body is forwarded or refused: its bytes no longer count. */
  private letGo(): void {
    if (this.held === 0) return;
    this.p.releaseBytes(this.held);
    this.held = 0;
  }

  /**
   * The bodies held for a decision are at their bound (--max-held): this one is not held, recorded nor
   * forwarded. Its rest is read and dropped (a client still sending gets the answer once it has sent
   * it all), and the client told to try again: 503 with Retry-After.
   */
  private async busy(): Promise<void> {
    this.letGo();
    try {
      while (!this.bodyEnded && (await this.nextChunk()) !== null) {}
    } catch {
      return; // the client went away
    }
    plain(this.reply, 503, "seam proxy: too many request bodies held for recording at once; retry\n", [
      ["Retry-After", String(BUSY_RETRY_S)],
    ]);
  }

  /** What is known of a request body too long to read, once it has ended. */
  private longFrame(): LongFrame {
    return { length: this.req.oversize, digest: this.requestDigest(), head: this.req.head };
  }

  private requestDigest(): string {
    this.reqDigest ??= this.req.digest.digest();
    return this.reqDigest;
  }

  /** Keeps a body's first bytes as they pass. */
  private keepHead(c: Uint8Array): void {
    const h = this.req.head;
    if (h.length >= HEAD_BYTES) return;
    this.req.head = concatBytes([h, c.subarray(0, HEAD_BYTES - h.length)]);
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
    this.keepHead(r.value);
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
    if (observeBody && !holdMode) this.keepFrame();
    // A request naming its session holds it open from its first byte (not idle while its body uploads).
    // Its failure to open a ledger session is met again where the session is awaited.
    if (this.sid !== undefined) this.resolve().catch(() => {});

    if (holdMode) {
      // Read the POST whole (up to --max-frame), record, then forward or refuse. The chunks read are its
      // only copy (no collector): what the observer reads and what is forwarded are the same bytes.
      const read: Uint8Array[] = [];
      let len = 0;
      try {
        for (;;) {
          const chunk = await this.nextChunk();
          if (chunk === null) break;
          len += chunk.length;
          if (len > o.maxFrame) {
            read.push(chunk);
            break;
          }
          if (!this.holdMore(chunk.length)) {
            read.length = 0;
            await this.busy();
            return;
          }
          read.push(chunk);
        }
      } catch {
        return; // the client went away mid-upload: nothing was forwarded, nothing to record
      }
      if (this.bodyEnded) this.req.frame = concatBytes(read, len);
      else if (o.writeAhead || o.failClosed) {
        // Too long to read: none of it is forwarded. Read to its end (none of it kept) for the length and
        // digest its row gives, then refused, as seam wrap refuses a long frame under --write-ahead.
        read.length = 0;
        this.letGo();
        try {
          while ((await this.nextChunk()) !== null) {}
        } catch {
          return; // the client went away mid-upload: nothing was forwarded, nothing to record
        }
        this.req.oversize = this.req.bytes;
      }
      const s = await this.resolve();
      let verdict = true;
      // A body too long to read under --map alone streams on and is rowed once it has ended (streamBody).
      const whole = this.bodyEnded;
      // The observer holds one client frame at a time: held POSTs of one session take turns here.
      const turn = s.holdChain.then(async () => {
        if (!whole) return;
        const { hold } = await this.observed();
        if (hold !== undefined) verdict = await hold;
      });
      s.holdChain = turn.catch(() => {});
      await turn;
      if (!verdict) {
        this.letGo();
        this.refuse();
        return;
      }
      body = this.req.frame ?? this.streamBody(read);
    } else if (hasBody) {
      body = this.pipedBody();
    } else {
      this.bodyEnded = true;
      await this.observed();
    }

    let res: UpstreamResponse;
    let headAt: Moment;
    try {
      res = await this.p.runtime.request({
        url: this.url,
        method: this.inbound.method,
        headers,
        body,
        cut: this.cut,
      });
      headAt = moment();
      this.letGo();
    } catch (e) {
      this.letGo();
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
    // What the head does to the session (an mcp_session row) is dated when it came, not when the session opened.
    const afterHead = (s: ProxySession): string | undefined => {
      let endAfter: string | undefined;
      s.at(headAt, () => {
        endAfter = this.p.afterHead(s, this.sid, this.method, res);
      });
      return endAfter;
    };
    const bound =
      this.session === undefined && this.p.routeEarly(this.proxySessionP!, this.sid, res)
        ? sessionP.then(afterHead)
        : undefined;
    // Awaited once the answer has been passed on; a session that fails to open fails the exchange there.
    bound?.catch(() => {});
    const endAfterP = bound ?? Promise.resolve(afterHead(await sessionP));
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
      other: (why, type, view, n) => {
        const t = type.slice();
        const data = view?.slice();
        const at = this.chunkAt;
        this.observe(() => this.session!.at(at, () => this.session!.observer.sseEvent(why, t, data, n)));
      },
      mojibake: () => {
        const at = this.chunkAt;
        this.observe(() => this.session!.at(at, () => this.session!.observer.sseMojibake()));
      },
    };
    let undecoded = false;
    sink.undecoded = (why, n) => {
      undecoded = true;
      const at = this.chunkAt;
      this.observe(() => this.session!.at(at, () => this.session!.observer.undecodedBody(why, n)));
    };
    // A JSON body is read as Response.json() reads it (a leading BOM dropped).
    // Read as the SDK clients read it (src/proxy/sse.ts, bodyKind); where they differ, a body_ambiguous row.
    const kind = bodyKind(field(res.headers, "content-type"));
    if (kind.disputed)
      this.recordLater(0, () => {
        const at = this.chunkAt;
        this.observe(() => this.session!.at(at, () => this.session!.observer.ambiguousBody(type)));
      });
    const reader =
      kind.kind === "sse"
        ? new SseSplitter(o.maxFrame, sink)
        : kind.kind === "json"
          ? new BodyCollector(o.maxFrame, sink, true)
          : null;
    let splitter: SseSplitter | BodyCollector | DecodedBody | null = reader;
    // A compressed body is decoded as the client's fetch decodes it, for observing only (src/proxy/sse.ts).
    const codings = compressed && reader !== null ? contentCodings(encoding!) : null;
    if (compressed && reader !== null && codings !== null)
      splitter = new DecodedBody(o.maxFrame, codings, sink, reader);
    else if (compressed && reader !== null) {
      splitter = null;
      this.recordLater(0, () => sink.undecoded!(`content-encoding ${encoding}`, 0));
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
    this.fields.response_content_type = field(res.headers, "content-type");
    this.fields.response_content_encoding = encoding;
    this.responseHeaders(res.headers);
    if (failure !== undefined) {
      this.fields.http_error = failure;
      this.fields.error_phase = "response_body";
    }
    await this.recorded();
    if (compressed && this.res.bytes > 0 && (codings === null || undecoded)) {
      s.unobservedBodies++;
      this.fields.observed = false;
    }
    if (reader instanceof SseSplitter) this.fields.sse_events = reader.events;
    await this.observed();
    this.abandonIfGone(s);
    await this.done(endAfter, ended);
  }

  /** The request body, passed on as it arrives, each chunk then tapped and kept (up to --max-frame) for the observer. */
  private pipedBody(): PipedBody {
    this.piped = true;
    return {
      from: this.inbound,
      chunk: (c) => {
        this.req.bytes += c.length;
        this.keepHead(c);
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
    this.letGo();
    for (;;) {
      const chunk = await this.nextChunk();
      if (chunk === null) break;
      yield chunk;
    }
    this.req.oversize = this.req.bytes;
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

  /**
   * The client cut this exchange's answer stream. Where no MCP session can carry an answer after it
   * (no session id: the sessionless 2026-07-28 revision, a stateless server), that is how a client
   * cancels (the SDKs abort the request rather than send notifications/cancelled): the body's
   * requests still open are cancelled, as of when the client went away, rather than left open until
   * the proxy stops.
   */
  private abandonIfGone(s: ProxySession): void {
    const at = this.goneAt;
    if (at === undefined || s.mcpId !== undefined) return;
    const ids = requestIds(this.req.frame);
    if (ids.length > 0) s.at(at, () => s.observer.abandoned(ids, "client_gone"));
  }

  /** The upstream could not be reached (or the exchange was cut before its answer's head). */
  private failedBeforeHead(e: unknown): void {
    const code = e instanceof UpstreamError ? e.code : "EIO";
    const s = this.session!;
    // An initialize that never reached the upstream opened no MCP session: its ledger session ends with it.
    const endAfter = this.p.provisional(s) ? "upstream_unreachable" : undefined;
    if (this.reply.gone) {
      this.fields.client_gone = true;
      this.abandonIfGone(s);
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

  /**
   * --fail-closed or --map --no-fail-open refused the POST's calls: answer them in an HTTP 200 JSON body
   * (--write-ahead or --fail-closed refused a body too long to read: in a 413).
   */
  private refuse(): void {
    const s = this.session!;
    const lines = s.observer.refuse().map((l) => new TextDecoder().decode(l).trimEnd());
    const frame = this.req.frame;
    const batch = frame !== null && firstByte(frame) === 0x5b;
    const text = batch || lines.length !== 1 ? `[${lines.join(",")}]` : lines[0]!;
    const body = encoder.encode(text);
    // A body too long to read has no id seam could answer: 413 (Content Too Large), seam's -32600 in it.
    const status = this.req.oversize > 0 ? 413 : 200;
    sendWhole(this.reply, status, "application/json", body);
    this.res.digest.update(body);
    this.res.bytes += body.length;
    this.fields.http_status = status;
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
          ["request", this.req.bytes, this.requestDigest()],
          ["response", this.res.bytes, this.res.digest.digest()],
        ]),
      }),
    );
    this.leave();
    if (endAfter !== undefined) await this.p.finish(s, endAfter);
  }
}
