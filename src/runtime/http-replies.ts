/** seam's own HTTP replies, sent whole (an error, a refusal, a proxy that is stopping, a witness's answer). */
import type { HeaderPairs, Reply } from "./http-types.ts";

const encoder = new TextEncoder();

export function sendWhole(reply: Reply, status: number, type: string, body: Uint8Array, more: HeaderPairs = []): void {
  reply.head(status, [["Content-Type", type], ["Content-Length", String(body.length)], ...more]);
  void reply.write(body);
  void reply.end();
}

export function plain(reply: Reply, status: number, text: string, more: HeaderPairs = []): void {
  sendWhole(reply, status, "text/plain; charset=utf-8", encoder.encode(text), more);
}
