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
 * The body is written by the caller (src/actions/recorder.ts). A 2xx answer counts
 * as posted, and so does 409: a retried call reuses its `action_id`, and the
 * API's answer that the action already exists means it is recorded there
 * (an upsert answers 200). The answer's body is never read (it is not
 * evidence of anything). Redirects are not followed, so the key is never sent to a
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

/**
 * Where CommitLayer's recorder posts when it has a key and no URL: its
 * documented default, so a key alone switches posting on, as it does there.
 */
export const DEFAULT_API_URL = "https://api.commitlayer.ai";

/** 409: the API already holds an action with this `action_id` (a retried call). */
export const ALREADY_RECORDED = 409;

/** Whether an answer means the action is on record at the endpoint: 2xx, or 409 (it already was). */
export function isRecordedStatus(status: number): boolean {
  return (status >= 200 && status < 300) || status === ALREADY_RECORDED;
}

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

export interface EndpointChoice {
  /** `{api_url}/v1/actions`; absent when there is no key and no URL (actions go to the ledger only). */
  url?: string;
  key?: string;
  /** Where the URL came from, for messages. */
  from?: "--api-url" | "COMMITLAYER_API_URL" | "default";
}

/**
 * CommitLayer's recorder contract: the key is the switch. With a key, actions
 * are posted to --api-url, else COMMITLAYER_API_URL, else the documented
 * default; without one, nothing is posted (a URL alone only names where a key
 * would post to).
 */
export function chooseEndpoint(flagUrl?: string, envUrl?: string, key?: string): EndpointChoice | { error: string } {
  const from = flagUrl ? "--api-url" : envUrl ? "COMMITLAYER_API_URL" : key ? "default" : undefined;
  if (from === undefined) return {};
  const u = actionsUrl(flagUrl || envUrl || DEFAULT_API_URL);
  if ("error" in u) return { error: `${from}: ${u.error}` };
  return { url: u.url, key: key || undefined, from };
}

/** Posts `body` (JSON text); resolves with the outcome, never rejects, never waits longer than the timeout. */
export async function postAction(ep: Endpoint, body: string, fetchFn: Fetch = fetch): Promise<PostResult> {
  // A key no header can carry is refused here, not by fetch: fetch's error quotes the value, and a
  // message cut at a line break keeps the key's first line where no scrub of the whole key finds it.
  if (!HEADER_VALUE.test(ep.key))
    return {
      ok: false,
      reason: "COMMITLAYER_API_KEY cannot be sent in a header (it holds a line break or another control character)",
    };
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
    if ((res.status >= 200 && res.status < 300) || res.status === ALREADY_RECORDED)
      return { ok: true, status: res.status };
    return { ok: false, reason: `endpoint answered ${res.status}` };
  } catch (err) {
    if (timedOut) return { ok: false, reason: `no answer within ${ep.timeoutMs / 1000} s` };
    return { ok: false, reason: `endpoint unreachable (${describeFetchError(err, ep.key)})` };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `ECONNREFUSED`, `ENOTFOUND`, … as Bun (err.code) and Node (err.cause.code) each report it, with
 * the key scrubbed before the message is cut to one line, so no part of it survives the cut.
 */
function describeFetchError(err: unknown, key: string): string {
  const e = err as { code?: unknown; message?: unknown; cause?: { code?: unknown; message?: unknown } } | undefined;
  for (const c of [e?.code, e?.cause?.code, e?.cause?.message, e?.message]) {
    if (typeof c === "string" && c !== "")
      return scrub(c, key)
        .split(/[\r\n]/)[0]!
        .slice(0, 200);
  }
  return "unknown error";
}

/** A field value fetch sends as it is (RFC 9110 field-value: visible ASCII, space, tab and obs-text). */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** `text` without the key, nor any piece of it between line breaks, quotes or escapes (a runtime may quote it that way). */
function scrub(text: string, key: string): string {
  let out = text;
  const pieces = [key, JSON.stringify(key).slice(1, -1), ...key.split(/[\s"\\]+/)].filter((p) => p.length >= 4);
  for (const p of pieces.sort((a, b) => b.length - a.length)) out = out.split(p).join("<redacted>");
  return out;
}
