/**
 * HTTP for `seam proxy`: a listener and an upstream client that both stream
 * bodies chunk by chunk, with headers as raw name/value pairs in the order
 * they came (so repeated fields such as Set-Cookie stay separate and nothing
 * is merged or re-cased on the way through).
 */

/** Header fields as received: [name, value] pairs, names as the peer spelled them. */
export type HeaderPairs = [string, string][];

/** A request as the listener received it. */
export interface InboundRequest {
  method: string;
  /** The request-target as sent: path and query. */
  target: string;
  headers: HeaderPairs;
  /** The body, chunk by chunk as it arrives (empty for a request without one). */
  body: AsyncIterable<Uint8Array>;
  /** The client's address. */
  remote: string;
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

export interface UpstreamRequest {
  url: URL;
  method: string;
  headers: HeaderPairs;
  /** null: no body. */
  body: AsyncIterable<Uint8Array> | Uint8Array | null;
  /** Aborting cuts the exchange (request and response). */
  signal: AbortSignal;
}

export interface UpstreamResponse {
  status: number;
  statusText: string;
  headers: HeaderPairs;
  /** The body as received, never decoded (no decompression). Throws if the upstream breaks off. */
  body: AsyncIterable<Uint8Array>;
}

/** A transport failure: a short stable code (ECONNREFUSED, ECONNRESET, ETIMEDOUT, EPROTO…) and a message. */
export class UpstreamError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "UpstreamError";
  }
}

export interface HttpRuntime {
  /** Listens on host:port; `handler` gets every request. Rejects if the address cannot be bound. */
  listen(host: string, port: number, handler: Handler): Promise<Listener>;
  /** Sends a request upstream; resolves at the response's head; rejects with UpstreamError. */
  request(r: UpstreamRequest): Promise<UpstreamResponse>;
}
