/**
 * HTTP for `seam proxy`: a listener and an upstream client that both stream
 * bodies chunk by chunk, with headers as raw name/value pairs in the order
 * they came (so repeated fields such as Set-Cookie stay separate and nothing
 * is merged or re-cased on the way through).
 */
import { SeamError } from "../base/error.ts";

/** Header fields as received: [name, value] pairs, names as the peer spelled them. */
export type HeaderPairs = [string, string][];

/** A request as the listener received it. */
export interface InboundRequest {
  method: string;
  /** The request-target as sent: path and query. */
  target: string;
  headers: HeaderPairs;
  /**
   * The body, chunk by chunk as it arrives (empty for a request without one),
   * for a body read before it is passed on; one passed on as it comes goes
   * upstream as a PipedBody instead. Only one of the two may be used.
   */
  readonly body: AsyncIterable<Uint8Array>;
}

/** The answer being sent to the client. */
export interface Reply {
  /** Sends the status line and headers (once). */
  head(status: number, headers: HeaderPairs, statusText?: string): void;
  /** Sends a chunk now; returns a promise when the client is not keeping up. */
  write(chunk: Uint8Array): void | Promise<void>;
  /** Ends the body. */
  end(): Promise<void>;
  /** Cuts the connection: how a proxy passes on an upstream that broke off mid-body. */
  abort(): void;
  /** Whether the client went away before the answer ended. */
  readonly gone: boolean;
  /** Calls `f` once if the client goes away before the answer ends. */
  onGone(f: () => void): void;
}

export type Handler = (req: InboundRequest, reply: Reply) => Promise<void>;

export interface Listener {
  /** The address actually bound (the port when 0 was asked for). */
  readonly host: string;
  readonly port: number;
  /** Stops accepting; open exchanges are cut. */
  close(): Promise<void>;
}

/**
 * An inbound request's body passed upstream as it arrives, the way a pipe
 * passes it (no promise per chunk; back-pressure reaches the client's socket),
 * each chunk shown to `chunk` after it was passed on. If the upstream stops
 * reading (it failed or answered early), the rest is still read and shown.
 */
export interface PipedBody {
  from: InboundRequest;
  chunk(c: Uint8Array): void;
  /** Called once: true at the body's end, false when the client broke it off. */
  end(ended: boolean): void;
}

export interface UpstreamRequest {
  url: URL;
  method: string;
  headers: HeaderPairs;
  /** null: no body; bytes: sent whole; an iterable: sent as it yields. */
  body: PipedBody | AsyncIterable<Uint8Array> | Uint8Array | null;
  /** Cutting it cuts the exchange (request and response). */
  cut: Cut;
}

export interface UpstreamResponse {
  status: number;
  statusText: string;
  headers: HeaderPairs;
  /**
   * Passes the body on to `reply` as it arrives, as received (never
   * decoded), the way a pipe does (back-pressure included), each chunk shown
   * to `tap` after it was written. Resolves once the body has ended
   * (undefined) or the client went away (undefined; `reply.gone` says so), or
   * with the error code when the upstream broke off. Does not end the reply.
   */
  pipeTo(reply: Reply, tap: (chunk: Uint8Array) => void): Promise<string | undefined>;
}

/**
 * What cuts an exchange, from outside: the proxy stopping, the client gone.
 * An AbortSignal would do, but passing one to a request costs a sizeable
 * part of what the proxy adds to a call (addAbortSignal and its listeners,
 * under Bun and Node; bench/proxy.ts measures a call); this holds one handler.
 */
export class Cut {
  private handler: (() => void) | null = null;
  done = false;

  /** Cuts, once: the handler runs now. */
  cut(): void {
    if (this.done) return;
    this.done = true;
    const h = this.handler;
    this.handler = null;
    h?.();
  }

  /** What cutting does (the last one set); runs at once if already cut. */
  onCut(h: () => void): void {
    if (this.done) h();
    else this.handler = h;
  }
}

/** A transport failure: a short stable code (ECONNREFUSED, ECONNRESET, ETIMEDOUT, EPROTO…) and a message. */
export class UpstreamError extends SeamError {
  override readonly name = "UpstreamError";
  constructor(code: string, message: string) {
    super(code, message);
  }
}

export interface HttpRuntime {
  /** Listens on host:port; `handler` gets every request. Rejects if the address cannot be bound. */
  listen(host: string, port: number, handler: Handler): Promise<Listener>;
  /** Sends a request upstream; resolves at the response's head; rejects with UpstreamError. */
  request(r: UpstreamRequest): Promise<UpstreamResponse>;
}
