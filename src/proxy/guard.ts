/**
 * The listener's address rules. seam proxy binds to loopback unless told
 * otherwise, and a loopback listener refuses requests whose Host or Origin
 * name anything but loopback: a web page on another site can make a browser
 * send requests to 127.0.0.1 (DNS rebinding), and the MCP specification asks
 * local Streamable HTTP servers to validate Origin and bind to localhost
 * (https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#security-warning).
 */
import { isIP } from "node:net";
import { memo } from "../base/memo.ts";

/** Whether a listen host is a loopback address (or localhost). */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (h === "localhost" || h.endsWith(".localhost")) return true;
  if (isIP(h) === 4) return h.startsWith("127.");
  if (isIP(h) === 6) return h === "::1" || h === "0:0:0:0:0:0:0:1" || /^::ffff:127\./.test(h);
  return false;
}

/** Splits `host[:port]` (IPv6 in brackets); null when it is not a host and optional port. */
export function splitHostPort(s: string): { host: string; port: string | undefined } | null {
  const m = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~%-]+)(?::(\d{1,5}))?$/.exec(s);
  if (!m) return null;
  return { host: m[1]!, port: m[2] };
}

/**
 * For a loopback listener on `port`: why a request must be refused (403), or
 * null when its Host and Origin are loopback. Host must name a loopback
 * address or localhost, with this port or none; Origin, when sent, must be an
 * http(s) origin on a loopback host (any port: a local tool's page).
 */
export function foreignRequest(host: string | undefined, origin: string | undefined, port: number): string | null {
  // Every request of a client sends the same Host and Origin: the verdict is kept per pair (a
  // verdict of null is kept as "").
  if (host === undefined) return "no Host header";
  const key = `${port} ${host}\n${origin ?? "\n"}`;
  return memo(verdicts, key, () => judge(host, origin, port) ?? "") || null;
}

const verdicts = new Map<string, string>();

function judge(host: string, origin: string | undefined, port: number): string | null {
  const hp = splitHostPort(host.trim());
  if (!hp || !isLoopbackHost(hp.host)) return "Host is not a loopback name";
  if (hp.port !== undefined && Number(hp.port) !== port) return "Host names another port";
  if (origin === undefined) return null;
  let u: URL;
  try {
    u = new URL(origin.trim());
  } catch {
    return "Origin is not a URL";
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return "Origin is not http(s)";
  if (!isLoopbackHost(u.hostname)) return "Origin is not a loopback origin";
  return null;
}
