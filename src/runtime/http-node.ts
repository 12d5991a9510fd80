/**
 * HTTP for the commands that serve it (proxy, mock, witness) on node:http,
 * which only they load, used under Node and under Bun alike:
 * Bun implements node:http on its own server and client, and the same code
 * passes the proxy's tests (streaming, back-pressure, aborts, 64 MiB bodies)
 * in both runtimes, so one implementation serves both. Bodies are passed as
 * the sockets deliver them: no decompression, no re-chunking, no buffering.
 *
 * Bun.serve and fetch are not used because their Headers cannot carry a
 * message's fields through unchanged (Bun 1.4.5, seen on the wire): a request
 * reaching Bun.serve has its field names lower-cased, sorted, repeats joined
 * into one line ("X-Multi: 1, 2", "Cookie: a=1; b=2"); fetch sends a
 * request's fields sorted and joined the same way and adds User-Agent and
 * Accept the client never sent; a Response's repeated fields are joined
 * (Set-Cookie aside) and its reason phrase replaced by the standard one.
 * Bun's node:http keeps every line, its spelling and order, except that its
 * server writes the repeats of one name together, in the first one's spelling
 * (their values still in order, which is what carries meaning: RFC 9110 §5.3).
 */
import type * as http from "node:http";
import type * as https from "node:https";
import type { AddressInfo } from "node:net";
import { nodeBuiltin } from "./builtin.ts";
import {
  type Handler,
  type HeaderPairs,
  type HttpRuntime,
  type InboundRequest,
  type Listener,
  type PipedBody,
  type Reply,
  UpstreamError,
  type UpstreamRequest,
  type UpstreamResponse,
} from "./http-types.ts";

function pairs(raw: string[]): HeaderPairs {
  const out: HeaderPairs = [];
  for (let i = 0; i + 1 < raw.length; i += 2) out.push([raw[i]!, raw[i + 1]!]);
  return out;
}

function flat(h: HeaderPairs): string[] {
  const out: string[] = [];
  for (const [k, v] of h) out.push(k, v);
  return out;
}

/** Node's error code, or a word for what happened. */
function codeOf(err: unknown): string {
  const e = err as NodeJS.ErrnoException | undefined;
  if (typeof e?.code === "string" && e.code !== "") return e.code;
  return "EIO";
}

/** The node:http message behind each inbound request this runtime made (a PipedBody names the request). */
const messages = new WeakMap<InboundRequest, http.IncomingMessage>();

class NodeReply implements Reply {
  private goneFlag = false;
  private finished = false;
  private headFlushed = false;
  /** A body chunk has been written (it carries the head if the head had not gone yet). */
  wrote = false;
  private readonly goneHandlers: (() => void)[] = [];

  constructor(readonly res: http.ServerResponse) {
    res.on("close", () => {
      if (this.finished && res.writableFinished) return;
      this.goneFlag = true;
      for (const f of this.goneHandlers.splice(0)) f();
    });
  }

  get gone(): boolean {
    return this.goneFlag;
  }

  onGone(f: () => void): void {
    if (this.goneFlag) f();
    else this.goneHandlers.push(f);
  }

  head(status: number, headers: HeaderPairs, statusText?: string): void {
    if (this.res.headersSent) return;
    if (statusText) this.res.writeHead(status, statusText, flat(headers));
    else this.res.writeHead(status, flat(headers));
    // An SSE answer's head must reach the client before its first event, which may come much later: it
    // goes at the end of this turn of the event loop, unless a chunk written in this turn (the body the
    // upstream sent with its head, usually) takes it along, in one write instead of two.
    setImmediate(() => {
      if (!this.wrote && !this.finished && !this.goneFlag) this.flushHead();
    });
  }

  /**
   * Sends the head (once) ahead of the first chunk written with pipeResponse.
   * Under Bun, ServerResponse.write for a reply whose head has not gone writes
   * head and chunk inside a cork callback of its native handle, which sends at
   * once: an answer the upstream wrote in two pieces went out in two writes
   * (strace: three sendto a call against the bare proxy's two). With the head
   * flushed first, what the turn writes goes out together. Under Node the head
   * joins the corked writes of the turn.
   */
  flushHead(): void {
    if (this.headFlushed) return;
    this.headFlushed = true;
    this.res.flushHeaders();
  }

  write(chunk: Uint8Array): void | Promise<void> {
    if (this.goneFlag) return;
    this.wrote = true;
    if (this.res.write(chunk)) return;
    return new Promise<void>((resolve) => {
      const done = () => {
        this.res.off("drain", done);
        this.res.off("close", done);
        resolve();
      };
      this.res.on("drain", done);
      this.res.on("close", done);
    });
  }

  end(): Promise<void> {
    this.finished = true;
    if (this.goneFlag) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.res.end(() => resolve());
      this.res.once("close", () => resolve());
    });
  }

  abort(): void {
    this.finished = true;
    this.res.destroy();
  }
}

async function listen(host: string, port: number, handler: Handler): Promise<Listener> {
  const sockets = new Set<import("node:net").Socket>();
  // Small writes (a head flushed alone, then one SSE event) must not wait for
  // the peer's delayed ACK (Nagle's algorithm: 40 ms a round trip).
  const server = nodeBuiltin<typeof http>("node:http").createServer({ noDelay: true }, (req, res) => {
    const reply = new NodeReply(res);
    let body: AsyncIterableIterator<Uint8Array> | undefined;
    const inbound: InboundRequest = {
      method: req.method ?? "GET",
      target: req.url ?? "/",
      headers: pairs(req.rawHeaders),
      // Made when first asked for: its listeners would start the body flowing.
      get body() {
        body ??= chunksOf(req);
        return body;
      },
    };
    messages.set(inbound, req);
    handler(inbound, reply).catch(() => {
      // The handler answers its own failures; one that escapes cuts the exchange.
      reply.abort();
    });
  });
  // A long upload or a long-lived stream is not a slow-loris: MCP streams stay open.
  server.requestTimeout = 0;
  server.on("connection", (s) => {
    s.setNoDelay(true);
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  server.on("clientError", (_err, socket) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
    else socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  return {
    host: addr.address,
    port: addr.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}

/**
 * Kept-alive upstream connections are dropped after IDLE_MS unused: servers
 * close theirs after a few seconds (Node's default is 5 s), and a request sent
 * on a connection the server is closing fails with ECONNRESET. The agents'
 * own `timeout` does it (a socket timeout set once per connection; the agent
 * destroys a free socket that times out, and a request in progress is left
 * alone): a timer set and cleared for every request is a noticeable part of
 * a proxied call's CPU under Node (bench/proxy.ts measures it).
 */
const IDLE_MS = 2000;
/**
 * Sockets whose request's answer has ended and that the agent has not yet
 * been told are free. Node 20 can announce one socket free twice: when the
 * answer ends just after the request body's end() and before its 'finish'
 * (a body streamed from the client, whose end comes after the upstream has
 * answered), both the answer's end and the request's finish hand it back. The
 * second announcement destroys the socket in the pool or, worse, while a new
 * request is being given it, which then fails with ECONNRESET. So the agent
 * hears of a socket's freedom once per answer that ended on it.
 */
const freeable = new WeakSet<import("node:net").Socket>();
function pooled<A extends http.Agent>(agent: A): A {
  const emit = agent.emit.bind(agent);
  agent.emit = (event: string | symbol, ...args: unknown[]): boolean => {
    if (event === "free" && !freeable.delete(args[0] as import("node:net").Socket)) return false;
    return emit(event, ...args);
  };
  return agent;
}
/** One pool of kept-alive connections per scheme, made (and node:http loaded) at the first request. */
let agents: { http: http.Agent; https: https.Agent } | undefined;
function pools(): { http: http.Agent; https: https.Agent } {
  agents ??= {
    http: pooled(new (nodeBuiltin<typeof http>("node:http").Agent)({ keepAlive: true, timeout: IDLE_MS })),
    https: pooled(new (nodeBuiltin<typeof https>("node:https").Agent)({ keepAlive: true, timeout: IDLE_MS })),
  };
  return agents;
}

/** Errors of a kept-alive connection the server closed just as it was reused. */
const STALE = new Set(["ECONNRESET", "EPIPE", "ECONNABORTED"]);

/**
 * A request whose body is in hand (or has none) is sent again once, on a
 * fresh connection, if a reused connection failed before any answer came:
 * the server closed it, so it never saw the request.
 */
async function request(r: UpstreamRequest): Promise<UpstreamResponse> {
  try {
    return await requestOnce(r, false);
  } catch (e) {
    const stale = e instanceof UpstreamError && STALE.has(e.code) && (e as { reused?: boolean }).reused === true;
    if (!stale || r.cut.done || !(r.body === null || r.body instanceof Uint8Array)) throw e;
    return requestOnce(r, true);
  }
}

function requestOnce(r: UpstreamRequest, fresh: boolean): Promise<UpstreamResponse> {
  return new Promise<UpstreamResponse>((resolve, reject) => {
    const secure = r.url.protocol === "https:";
    const mod = secure ? nodeBuiltin<typeof https>("node:https") : nodeBuiltin<typeof http>("node:http");
    let req: http.ClientRequest;
    try {
      req = mod.request(r.url, {
        method: r.method,
        headers: flat(r.headers) as unknown as http.OutgoingHttpHeaders,
        agent: fresh ? false : secure ? pools().https : pools().http,
        setHost: false,
      });
    } catch (e) {
      reject(new UpstreamError(codeOf(e), e instanceof Error ? e.message : String(e)));
      return;
    }
    let responded = false;
    r.cut.onCut(() => req.destroy(Object.assign(new Error("the exchange was cut"), { code: "ABORT_ERR" })));
    // Once the request is over its socket may serve another one (keep-alive): a later cut must not reach it.
    req.once("close", () => r.cut.onCut(() => {}));
    let socket: import("node:net").Socket | undefined;
    req.on("socket", (s) => {
      socket = s;
      freeable.delete(s);
      s.setNoDelay(true);
    });
    req.on("error", (e) => {
      if (responded) return;
      const err = new UpstreamError(codeOf(e), e.message);
      (err as { reused?: boolean }).reused = req.reusedSocket;
      reject(err);
    });
    req.on("response", (res) => {
      responded = true;
      res.once("end", () => {
        if (socket !== undefined) freeable.add(socket);
      });
      resolve({
        status: res.statusCode ?? 502,
        statusText: res.statusMessage ?? "",
        headers: pairs(res.rawHeaders),
        pipeTo: (reply, tap) => pipeResponse(res, reply, tap),
      });
    });
    const body = r.body;
    if (body === null) req.end();
    else if (body instanceof Uint8Array) req.end(body);
    else if (Symbol.asyncIterator in body) void sendBody(req, body);
    else pipeRequest(body, req);
  });
}

/** Writes `chunk` to `dst`; when that fills its buffer, `src` pauses until 'drain' (what Readable.pipe does). */
function passOn(src: import("node:stream").Readable, dst: import("node:stream").Writable, chunk: Uint8Array): void {
  if (dst.write(chunk)) return;
  src.pause();
  dst.once("drain", () => src.resume());
}

/**
 * A PipedBody's chunks written to the upstream request as they come, the way
 * Readable.pipe does it (pause while the request's buffer is full, resume on
 * 'drain'), each shown to the tap after it was written. Once the request is
 * gone (the upstream failed or answered early) the rest is still read and
 * shown, so that the requests in it are known.
 */
function pipeRequest(body: PipedBody, req: http.ClientRequest): void {
  const src = messages.get(body.from);
  if (src === undefined) throw new TypeError("a PipedBody's request must come from this runtime's listener");
  let over = false;
  const finish = (ended: boolean) => {
    if (over) return;
    over = true;
    if (ended) {
      if (!req.destroyed) req.end();
    } else req.destroy();
    body.end(ended);
  };
  src.on("data", (chunk: Uint8Array) => {
    if (!req.destroyed) passOn(src, req, chunk);
    body.chunk(chunk);
  });
  req.once("close", () => src.resume());
  src.once("end", () => finish(true));
  src.once("error", () => finish(false));
  src.once("close", () => finish(src.complete));
}

/** An upstream answer's body written to the reply as it comes (Readable.pipe's way), each chunk then shown to `tap`. */
function pipeResponse(
  res: http.IncomingMessage,
  reply: Reply,
  tap: (chunk: Uint8Array) => void,
): Promise<string | undefined> {
  if (!(reply instanceof NodeReply)) throw new TypeError("pipeTo needs this runtime's reply");
  const out = reply.res;
  // What one turn of the event loop writes goes out in one write: the chunks the upstream sent together
  // (the head with them, NodeReply.head) and, when its end came with them, the end (end() uncorks).
  // Node's own cork lasts until the next tick, which comes before the end is known.
  let corked = false;
  const uncork = () => {
    corked = false;
    out.uncork();
  };
  return new Promise<string | undefined>((resolve) => {
    let over = false;
    const finish = (code: string | undefined) => {
      if (over) return;
      over = true;
      res.off("data", onData);
      resolve(code);
    };
    const onData = (chunk: Uint8Array) => {
      if (reply.gone) {
        // The client went away: stop reading (the exchange then cuts the upstream).
        res.pause();
        finish(undefined);
        return;
      }
      reply.wrote = true;
      if (!corked) {
        corked = true;
        out.cork();
        setImmediate(uncork);
      }
      reply.flushHead();
      passOn(res, out, chunk);
      tap(chunk);
    };
    res.on("data", onData);
    res.once("end", () => finish(res.complete ? undefined : "ECONNRESET"));
    res.once("error", (e) => finish(codeOf(e) === "EIO" ? "ECONNRESET" : codeOf(e)));
    res.once("close", () => finish(res.complete ? undefined : "ECONNRESET"));
    reply.onGone(() => finish(undefined));
  });
}

async function sendBody(req: http.ClientRequest, body: AsyncIterable<Uint8Array>): Promise<void> {
  try {
    for await (const chunk of body) {
      if (req.destroyed) return;
      if (!req.write(chunk)) {
        await new Promise<void>((resolve) => {
          const done = () => {
            req.off("drain", done);
            req.off("close", done);
            resolve();
          };
          req.on("drain", done);
          req.on("close", done);
        });
      }
    }
    req.end();
  } catch {
    // The client's upload broke off: so does ours.
    req.destroy();
  }
}

/**
 * A message body's chunks as they come, from 'data' and 'end' events: the
 * stream's own async iterator costs several times more per exchange (a
 * noticeable part of a proxied call's time). The stream is paused while a
 * chunk waits for the consumer (back-pressure reaches the socket as with
 * pipe), fails with the stream's error, or with ECONNRESET if it closes before
 * its end; a consumer that stops early destroys it.
 */
function chunksOf(s: import("node:stream").Readable): AsyncIterableIterator<Uint8Array> {
  const queue: Uint8Array[] = [];
  let ended = false;
  let failure: unknown = null;
  let wake: (() => void) | null = null;
  const poke = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  s.on("data", (chunk: Uint8Array) => {
    queue.push(chunk);
    if (wake === null) s.pause();
    poke();
  });
  s.on("end", () => {
    ended = true;
    poke();
  });
  s.on("error", (e) => {
    failure ??= e;
    poke();
  });
  s.on("close", () => {
    if (!ended)
      failure ??= Object.assign(new Error("the connection closed before the body ended"), { code: "ECONNRESET" });
    poke();
  });
  const it: AsyncIterableIterator<Uint8Array> = {
    async next() {
      for (;;) {
        const chunk = queue.shift();
        if (chunk !== undefined) {
          if (queue.length === 0 && !ended && s.isPaused()) s.resume();
          return { value: chunk, done: false };
        }
        if (failure !== null) throw failure;
        if (ended) return { value: undefined, done: true };
        if (s.isPaused()) s.resume();
        await new Promise<void>((r) => {
          wake = r;
        });
      }
    },
    async return() {
      if (!ended) s.destroy();
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]() {
      return it;
    },
  };
  return it;
}

export const nodeHttp: HttpRuntime = { listen, request };
