/**
 * The recording endpoint (CommitLayer's API contract): one POST per action,
 * before the call it describes is forwarded.
 *
 *   POST {api_url}/v1/actions
 *   content-type: application/json
 *   x-api-key: <COMMITLAYER_API_KEY>
 *
 *   {"action_id":"refund:o-1","agent_id":"support-bot","channel":"mcp",…}
 *
 * The body is written by the caller (src/wrap/actions.ts). Only a 2xx answer counts
 * as posted; the answer's body is never read (it is not evidence of
 * anything). Redirects are not followed, so the key is never sent to a
 * second address. The key appears in the header and nowhere else: every
 * reason this module gives has it scrubbed.
 */
import type { Result } from "../base/result.ts";

export interface Endpoint {
  /** `{api_url}/v1/actions`, from actionsUrl. */
  url: string;
  key: string;
  timeoutMs: number;
}

export type PostResult = Result<{ status: number }>;

export type Fetch = (url: string, init: RequestInit) => Promise<Response>;

/**
 * `{api_url}/v1/actions` for an http(s) base URL, or an error message. A base
 * with credentials, a query or a fragment is refused: the key travels only in
 * its header, and `/v1/actions` must extend the path.
 */
export function actionsUrl(apiUrl: string): { url: string } | { error: string } {
  let u: URL;
  try {
    u = new URL(apiUrl);
  } catch {
    return { error: `${JSON.stringify(apiUrl)} is not a URL` };
  }
  if (u.protocol !== "http:" && u.protocol !== "https:")
    return { error: `${JSON.stringify(u.protocol)} is not http: or https:` };
  if (u.username || u.password)
    return { error: "a URL with credentials in it is refused; the key goes in COMMITLAYER_API_KEY" };
  if (u.search || u.hash || apiUrl.includes("?") || apiUrl.includes("#"))
    return { error: "a URL with a query or a fragment is refused" };
  return { url: `${u.origin}${u.pathname.replace(/\/+$/, "")}/v1/actions` };
}

/** Posts `body` (JSON text); resolves with the outcome, never rejects, never waits longer than the timeout. */
export async function postAction(ep: Endpoint, body: string, fetchFn: Fetch = fetch): Promise<PostResult> {
  const abort = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    abort.abort();
  }, ep.timeoutMs);
  try {
    const res = await Promise.race([
      fetchFn(ep.url, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": ep.key },
        body,
        redirect: "manual",
        signal: abort.signal,
      }),
      // Some fetch implementations ignore the signal while connecting; the timeout still holds.
      new Promise<never>((_, reject) =>
        abort.signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true }),
      ),
    ]);
    void res.body?.cancel().catch(() => {});
    if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status };
    return { ok: false, reason: `endpoint answered ${res.status}` };
  } catch (err) {
    if (timedOut) return { ok: false, reason: `no answer within ${ep.timeoutMs / 1000} s` };
    return { ok: false, reason: scrub(`endpoint unreachable (${describeFetchError(err)})`, ep.key) };
  } finally {
    clearTimeout(timer);
  }
}

/** `ECONNREFUSED`, `ENOTFOUND`, … as Bun (err.code) and Node (err.cause.code) each report it. */
function describeFetchError(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown; cause?: { code?: unknown; message?: unknown } } | undefined;
  for (const c of [e?.code, e?.cause?.code, e?.cause?.message, e?.message]) {
    if (typeof c === "string" && c !== "") return c.split("\n")[0]!.slice(0, 200);
  }
  return "unknown error";
}

function scrub(text: string, key: string): string {
  return key === "" ? text : text.split(key).join("<redacted>");
}
