/**
 * Where a fleet's ledgers go: a NATS JetStream stream. This module turns a
 * `nats://[user:pass@]host:port[,host:port…][/STREAM]` address into
 * connection options, and says an address back without its credentials.
 * The NATS client is loaded only when a command needs it.
 */
export interface NatsTarget {
  servers: string[];
  user?: string;
  pass?: string;
  /** The stream named in the URL's path, if any. */
  stream?: string;
}

/**
 * The subjects a ledger's lines are published on: `seam.ledger.<host>.<origin>`
 * when the shipper names its host (`seam ship --host NAME`), so that a NATS
 * server can give each host's user publish rights on `seam.ledger.<host>.>`
 * alone (an origin is one ledger's, known only once its first line is
 * written, so it cannot be the permission's subject); `seam.ledger.<origin>`
 * otherwise, as before hosts were named. An origin has no dot, so a subject
 * reads one way only.
 */
export const SUBJECT_PREFIX = "seam.ledger.";
export const DEFAULT_STREAM = "SEAM_LEDGERS";

/** What `seam ship --host` takes: one subject token, no wildcard. */
export const HOST_TOKEN = /^[A-Za-z0-9_-]{1,64}$/;

/** The subject of a ledger's lines: its origin's, under its host when named. */
export function subjectFor(origin: string, host?: string): string {
  return host === undefined ? `${SUBJECT_PREFIX}${origin}` : `${SUBJECT_PREFIX}${host}.${origin}`;
}

/** The host (null: none named) and origin a subject carries; null when it is not a seam ledger subject. */
export function subjectParts(subject: string): { host: string | null; origin: string } | null {
  if (!subject.startsWith(SUBJECT_PREFIX)) return null;
  const rest = subject.slice(SUBJECT_PREFIX.length);
  const dot = rest.indexOf(".");
  if (dot < 0) return rest === "" ? null : { host: null, origin: rest };
  const host = rest.slice(0, dot);
  const origin = rest.slice(dot + 1);
  if (!HOST_TOKEN.test(host) || origin === "" || origin.includes(".")) return null;
  return { host, origin };
}

export function parseNatsUrl(text: string): NatsTarget | { error: string } {
  const m = /^nats:\/\/(?:([^:@/]*)(?::([^@/]*))?@)?([^/]+)(?:\/([^/?#]*))?$/.exec(text);
  if (m === null) return { error: "not a nats://HOST:PORT[,HOST:PORT…][/STREAM] address" };
  const servers = m[3]!.split(",").filter(Boolean);
  if (servers.length === 0 || servers.some((s) => !/^[A-Za-z0-9.[\]:-]+$/.test(s)))
    return { error: "its servers are not HOST:PORT, HOST:PORT, …" };
  const stream = m[4] ? decodeURIComponent(m[4]) : undefined;
  if (stream !== undefined && !/^[A-Za-z0-9_-]+$/.test(stream))
    return { error: "its stream name is not [A-Za-z0-9_-]+" };
  return {
    servers,
    user: m[1] ? decodeURIComponent(m[1]) : undefined,
    pass: m[2] !== undefined ? decodeURIComponent(m[2]) : undefined,
    stream,
  };
}

/** The address as it may be shown: never the user or password. */
export function showNats(t: NatsTarget): string {
  return `nats://${t.servers.join(",")}${t.stream ? `/${t.stream}` : ""}`;
}

/** Removes every credential of `t` from `text` (for messages from the client library). */
export function scrubNats(text: string, t: NatsTarget, creds?: string): string {
  let out = text;
  for (const secret of [t.pass, t.user, creds]) if (secret) out = out.split(secret).join("<redacted>");
  return out;
}

export async function connectNats(
  t: NatsTarget,
  o: { credsText?: string; name: string; onStatus?: (s: "disconnect" | "reconnect") => void },
) {
  const { connect, credsAuthenticator } = await import("@nats-io/transport-node");
  const nc = await connect({
    servers: t.servers,
    user: t.user,
    pass: t.pass,
    authenticator: o.credsText ? credsAuthenticator(new TextEncoder().encode(o.credsText)) : undefined,
    name: o.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    timeout: 5000,
  });
  if (o.onStatus) {
    const onStatus = o.onStatus;
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === "disconnect") onStatus("disconnect");
        else if (s.type === "reconnect") onStatus("reconnect");
      }
    })().catch(() => {});
  }
  return nc;
}
