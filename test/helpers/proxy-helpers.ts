/** Helpers for the `seam proxy` tests: real upstreams, the proxy as a real process, raw HTTP. */
import { type ChildProcess, spawn } from "node:child_process";
import http from "node:http";
import { type AddressInfo, connect, createServer } from "node:net";
import { ROOT, seamArgv, type Via } from "./cli.ts";

/** A port nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** Reads a child's stream until `pattern` matches its text so far. */
function waitFor(stream: NodeJS.ReadableStream, pattern: RegExp, ms: number): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    let text = "";
    const t = setTimeout(() => reject(new Error(`timed out waiting for ${pattern}: ${text}`)), ms);
    stream.on("data", (d: Buffer) => {
      text += d.toString("utf8");
      const m = text.match(pattern);
      if (m) {
        clearTimeout(t);
        resolve(m);
      }
    });
  });
}

export interface Running {
  child: ChildProcess;
  url: string;
  stderr: () => string;
  /** Sends SIGINT (or `signal`) and resolves with the exit code once it has exited. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

function running(child: ChildProcess, url: string, err: string[]): Running {
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  return {
    child,
    url,
    stderr: () => err.join(""),
    async stop(signal: NodeJS.Signals = "SIGINT") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** @modelcontextprotocol/server-everything in its Streamable HTTP mode on a loopback port; url ends in /mcp. */
export async function startEverything(): Promise<Running> {
  const port = await freePort();
  const child = spawn(
    "node",
    [`${ROOT}node_modules/@modelcontextprotocol/server-everything/dist/index.js`, "streamableHttp"],
    { env: { ...process.env, PORT: String(port) }, stdio: ["ignore", "pipe", "pipe"] },
  );
  const err: string[] = [];
  child.stderr!.on("data", (d: Buffer) => err.push(d.toString("utf8")));
  child.stdout!.resume();
  await waitFor(child.stderr!, /listening on port/, 20_000);
  return running(child, `http://127.0.0.1:${port}/mcp`, err);
}

/** `seam proxy` as a process; resolves once it printed the URL clients use. */
export function startProxy(via: Via, args: string[], env: Record<string, string> = {}): Promise<Running> {
  return startServing(via, ["proxy", ...args], env);
}

/** A seam command that serves HTTP (proxy, witness) as a process; resolves once it printed its URL on stdout. */
export async function startServing(via: Via, args: string[], env: Record<string, string> = {}): Promise<Running> {
  const [cmd, ...pre] = seamArgv(via);
  const child = spawn(cmd!, [...pre, ...args], {
    env: { ...process.env, NO_COLOR: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const err: string[] = [];
  child.stderr!.on("data", (d: Buffer) => err.push(d.toString("utf8")));
  const exitedEarly = new Promise<never>((_, reject) =>
    child.on("exit", (code) => reject(new Error(`seam ${args[0]} exited ${code}: ${err.join("")}`))),
  );
  const m = await Promise.race([waitFor(child.stdout!, /^(http:\/\/\S+)\n/, 20_000), exitedEarly]);
  return running(child, m[1]!, err);
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  rawHeaders: string[];
  body: Buffer;
}

/** One HTTP request with node:http (no decompression, any Host header); the whole answer. */
export function rawRequest(
  url: string,
  opts: {
    method?: string;
    headers?: Record<string, string>;
    body?: Uint8Array | string;
    /** Sends the body's first `at` bytes (units of a string), then the rest `ms` later. */
    pause?: { at: number; ms: number };
  } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: opts.method ?? "GET", headers: opts.headers, agent: false }, (res) => {
      const parts: Buffer[] = [];
      res.on("data", (d: Buffer) => parts.push(d));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          rawHeaders: res.rawHeaders,
          body: Buffer.concat(parts),
        }),
      );
      res.on("error", reject);
    });
    req.on("error", reject);
    const { body, pause } = opts;
    if (pause === undefined || body === undefined) {
      req.end(body);
      return;
    }
    req.flushHeaders();
    req.write(body.slice(0, pause.at));
    setTimeout(() => req.end(body.slice(pause.at)), pause.ms);
  });
}

/** A hand-written upstream for the hostile cases (an HTTP server, not an MCP one). */
export async function upstream(
  handler: (req: http.IncomingMessage, res: http.ServerResponse) => void,
): Promise<{ url: string; port: number; close: () => Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Peak resident memory of a process (Linux), in bytes. */
export function peakRss(pid: number): number {
  const status = require("node:fs").readFileSync(`/proc/${pid}/status`, "utf8") as string;
  const m = /VmHWM:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) * 1024 : 0;
}

/** A head's field lines as [name, value] pairs, as they are on the wire. */
export type WireFields = [string, string][];

function parseHead(head: string): { start: string; fields: WireFields } {
  const [start, ...lines] = head.split("\r\n");
  return {
    start: start ?? "",
    fields: lines.map((l) => {
      const c = l.indexOf(":");
      return [l.slice(0, c), l.slice(c + 1).trim()] as [string, string];
    }),
  };
}

/**
 * An upstream that speaks HTTP/1.1 by hand on a TCP socket: what it receives
 * and what it answers are exact bytes, whatever runtime runs the test. Each
 * request's head is kept; `answer` is written as it is, then the connection closes.
 */
export async function wireUpstream(
  answer: string,
): Promise<{ url: string; heads: { start: string; fields: WireFields }[]; close: () => Promise<void> }> {
  const heads: { start: string; fields: WireFields }[] = [];
  const server = createServer((s) => {
    let buf = Buffer.alloc(0);
    s.on("data", (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const at = buf.indexOf("\r\n\r\n");
      if (at < 0) return;
      const head = parseHead(buf.subarray(0, at).toString("latin1"));
      const len = Number(head.fields.find(([k]) => k.toLowerCase() === "content-length")?.[1] ?? 0);
      if (buf.length < at + 4 + len) return;
      heads.push(head);
      s.end(answer);
    });
    s.on("error", () => {});
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    heads,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** Sends `head` (with its final CRLF CRLF) and `body` as they are on a TCP socket; the answer's head and body. */
export function wireRequest(
  url: string,
  head: string,
  body: string,
): Promise<{ start: string; fields: WireFields; body: Buffer }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const s = connect(Number(u.port), u.hostname, () => s.write(head + body));
    const parts: Buffer[] = [];
    s.on("data", (d: Buffer) => parts.push(d));
    s.on("error", reject);
    s.on("close", () => {
      const all = Buffer.concat(parts);
      const at = all.indexOf("\r\n\r\n");
      resolve({ ...parseHead(all.subarray(0, at).toString("latin1")), body: all.subarray(at + 4) });
    });
  });
}
