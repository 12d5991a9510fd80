/** seam's own HTTP replies, sent whole (an error, a refusal, a proxy that is stopping, a witness's answer). */
import type { HeaderPairs, InboundRequest, Reply } from "./http-types.ts";

const encoder = new TextEncoder();

export function sendWhole(reply: Reply, status: number, type: string, body: Uint8Array, more: HeaderPairs = []): void {
  reply.head(status, [["Content-Type", type], ["Content-Length", String(body.length)], ...more]);
  void reply.write(body);
  void reply.end();
}

export function plain(reply: Reply, status: number, text: string, more: HeaderPairs = []): void {
  sendWhole(reply, status, "text/plain; charset=utf-8", encoder.encode(text), more);
}

/**
 * Reads a request body of at most `maxBytes` within `ms`; null when the
 * client broke off or ran out of time. A larger one is read to its end and
 * dropped, so that the 413 is read: a client still sending when the answer
 * comes sees the connection reset, not the answer.
 */
export async function readWholeBody(
  req: InboundRequest,
  reply: Reply,
  maxBytes: number,
  ms: number,
): Promise<Uint8Array | "too-large" | null> {
  const parts: Uint8Array[] = [];
  let total = 0;
  const timer = setTimeout(() => reply.abort(), ms);
  try {
    for await (const chunk of req.body) {
      total += chunk.length;
      if (total <= maxBytes) parts.push(chunk);
    }
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
  if (reply.gone) return null;
  return total > maxBytes ? "too-large" : Buffer.concat(parts, total);
}
