/**
 * Which header fields cross the proxy, and what of them reaches the ledger.
 *
 * seam proxy is a gateway in the sense of RFC 9110 §3.7 (a reverse proxy: to
 * the client it is the origin). It passes every end-to-end field on as it
 * came, in order, and drops the hop-by-hop ones (RFC 9110 §7.6.1): Connection
 * and every field it names, Proxy-Connection, Keep-Alive, TE, Transfer-Encoding
 * and Upgrade. Each hop frames its own body (the runtime picks chunked or a
 * Content-Length); a Content-Length is end-to-end and passed on, since the
 * body passes unchanged. `Expect: 100-continue` is answered by the listener
 * and not sent on. Two fields are set for the upstream: Host (its own
 * authority: the client named the proxy) and Accept-Encoding: identity (seam
 * reads what it records; an upstream that compresses anyway is forwarded
 * untouched and counted as unobserved).
 */

import { isSecretHeader, redactChallenge, redactValue } from "../redact/http.ts";
import type { HeaderPairs } from "../runtime/http-types.ts";

const HOP_BY_HOP = new Set(["connection", "proxy-connection", "keep-alive", "te", "transfer-encoding", "upgrade"]);
const HOP_BY_HOP_LENGTHS = new Set([...HOP_BY_HOP].map((n) => n.length));

/**
 * Whether field name `k` is `lower` (given lower-cased), case-insensitively. The
 * lengths are compared first: every exchange looks fields up several times, and
 * lower-casing each name it passes was a string made per field per lookup.
 */
function named(k: string, lower: string): boolean {
  return k.length === lower.length && (k === lower || k.toLowerCase() === lower);
}

/** The lower-cased names a message's Connection fields list (RFC 9110 §7.6.1). */
function connectionOptions(h: HeaderPairs): Set<string> | null {
  let out: Set<string> | null = null;
  for (const [k, v] of h) {
    if (!named(k, "connection")) continue;
    out ??= new Set<string>();
    for (const name of v.split(",")) {
      const n = name.trim().toLowerCase();
      if (n !== "") out.add(n);
    }
  }
  return out;
}

/** The end-to-end fields of a message, in order (hop-by-hop ones and those its Connection names dropped). */
export function endToEnd(h: HeaderPairs): HeaderPairs {
  const listed = connectionOptions(h);
  return h.filter(([k]) => {
    // Most fields are neither hop-by-hop nor listed: their length says so without lower-casing them.
    if (listed === null && !HOP_BY_HOP_LENGTHS.has(k.length)) return true;
    const n = k.toLowerCase();
    return !HOP_BY_HOP.has(n) && !listed?.has(n);
  });
}

/** The fields sent upstream: end-to-end ones, Host replaced by the upstream's, Accept-Encoding: identity. */
export function upstreamRequestHeaders(h: HeaderPairs, upstream: URL): HeaderPairs {
  const out: HeaderPairs = [["Host", upstream.host]];
  for (const [k, v] of endToEnd(h)) {
    // Expect: 100-continue was answered by this hop's server already; the body follows regardless.
    if (named(k, "host") || named(k, "accept-encoding") || named(k, "expect")) continue;
    out.push([k, v]);
  }
  out.push(["Accept-Encoding", "identity"]);
  return out;
}

/** The first value of a field (names compare case-insensitively), or undefined. */
export function field(h: HeaderPairs, name: string): string | undefined {
  const n = name.toLowerCase();
  for (const [k, v] of h) if (named(k, n)) return v;
  return undefined;
}

/** Fields whose value a row records (after redaction); every other field is recorded by name only. */
const RECORDED_VALUES = new Set([
  "content-type",
  "content-encoding",
  "mcp-protocol-version",
  "mcp-method",
  "mcp-name",
  "last-event-id",
  "accept",
  "user-agent",
  "www-authenticate",
  "location",
  "retry-after",
]);

/**
 * What a row says about a message's fields (headerSummary). One summary may
 * serve many rows, so its lists are frozen (typed as the rows' JSON arrays).
 */
export interface HeaderSummary {
  readonly names: string[];
  readonly values: ReadonlyMap<string, string>;
  /** Of `names`, those recorded only as present (isSecretHeader). */
  readonly withheld: string[];
}

/**
 * What a row says about a message's fields: a sorted list of the names
 * present (lower-cased, each once), and the values of the few fields that
 * describe the exchange. A name that is secret (SECRET_HEADERS, the user's
 * --redact-header, or any name the argv rules call secret) never has its
 * value recorded; a recorded value is itself searched for credential shapes.
 */
export function headerSummary(h: HeaderPairs, extraSecret: ReadonlySet<string>): HeaderSummary {
  for (const known of recentSummaries) if (known.fits(h, extraSecret)) return known.summary;
  const made = new KnownSummary(h, extraSecret);
  recentSummaries[nextSummary] = made;
  nextSummary = (nextSummary + 1) % RECENT_SUMMARIES;
  return made.summary;
}

/**
 * A summary made once, and what it was made from. A client sends the same
 * fields in the same order with every request, and an upstream answers with
 * the same ones: only the values a summary records (and the names, in their
 * spelling and order) need to be the same for it to be the same, which costs
 * a comparison per field where a new summary costs lower-casing, a set, a map
 * and a sort.
 */
class KnownSummary {
  readonly summary: HeaderSummary;
  private readonly names: string[];
  /** The value of each field whose value the summary records (the first of its name), else null. */
  private readonly values: (string | null)[];

  constructor(
    h: HeaderPairs,
    private readonly extraSecret: ReadonlySet<string>,
  ) {
    const names = new Set<string>();
    const values = new Map<string, string>();
    this.names = [];
    this.values = [];
    for (const [k, v] of h) {
      const n = k.toLowerCase();
      names.add(n);
      this.names.push(k);
      const recorded = RECORDED_VALUES.has(n) && !values.has(n) && !isSecretHeader(n, extraSecret);
      this.values.push(recorded ? v : null);
      if (recorded) values.set(n, n === "www-authenticate" ? redactChallenge(v) : redactValue(v));
    }
    const sorted = [...names].sort();
    const withheld = sorted.filter((n) => isSecretHeader(n, extraSecret));
    Object.freeze(sorted);
    Object.freeze(withheld);
    this.summary = Object.freeze({ names: sorted, values, withheld });
  }

  fits(h: HeaderPairs, extraSecret: ReadonlySet<string>): boolean {
    if (h.length !== this.names.length || extraSecret !== this.extraSecret) return false;
    for (let i = 0; i < h.length; i++) {
      const pair = h[i]!;
      if (pair[0] !== this.names[i]) return false;
      const recorded = this.values[i];
      if (recorded !== null && pair[1] !== recorded) return false;
    }
    return true;
  }
}

/** Request and answer fields of a few clients and upstreams; a new summary takes the oldest's place. */
const RECENT_SUMMARIES = 4;
const recentSummaries: KnownSummary[] = [];
let nextSummary = 0;
