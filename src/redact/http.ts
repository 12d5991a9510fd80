/**
 * What of an HTTP message's fields and request-target may reach a row: the
 * credential-bearing header names, and values and targets searched for
 * credentials by the argv rules (src/redact/argv.ts).
 */
import { memo } from "../base/memo.ts";
import { redactArgv } from "./argv.ts";
import { isSecretName, querySecret } from "./secret-names.ts";
import { REDACTED } from "./secret-values.ts";

/** Fields recorded only as present, whatever their value: credentials and session cookies. */
export const SECRET_HEADERS: readonly string[] = [
  "authorization",
  "proxy-authorization",
  "cookie",
  "set-cookie",
  "x-api-key",
  "api-key",
];

// The answers of the functions below are kept (memo): every exchange of a session sends the same few
// names, values and targets, and searching them again for credential shapes cost more than the rest of
// an exchange's row.

const secretNames = new WeakMap<ReadonlySet<string>, Map<string, boolean>>();
export function isSecretHeader(name: string, extraSecret: ReadonlySet<string>): boolean {
  let cache = secretNames.get(extraSecret);
  if (cache === undefined) {
    cache = new Map();
    secretNames.set(extraSecret, cache);
  }
  return memo(cache, name.toLowerCase(), (n) => SECRET_HEADERS.includes(n) || extraSecret.has(n) || isSecretName(n));
}

const redactedValues = new Map<string, string>();
/** A value searched for credential shapes (tokens, Bearer …, key=value pairs), as argv is. */
export function redactValue(v: string): string {
  return memo(redactedValues, v, (x) => redactArgv([x]).argv[0] ?? "");
}

/**
 * A WWW-Authenticate challenge: its scheme and parameters (realm, scope,
 * resource_metadata, error) say what credential is wanted and hold none, so
 * only the credential shapes the argv rules know are searched for.
 */
export function redactChallenge(v: string): string {
  const m = /^(\s*[A-Za-z][\w!#$%&'*+.^`|~-]*\s+)([\s\S]*)$/.exec(v);
  return m ? m[1]! + redactValue(m[2]!) : redactValue(v);
}

const redactedTargets = new Map<string, Readonly<{ target: string; redactions: number }>>();

/**
 * A request-target as a row records it: the path, and the query with the
 * value of each credential-like parameter (by the argv rules: `token`,
 * `api_key`, `sig`, `X-Amz-Signature`, …, or a value shaped like a known token)
 * replaced by `<redacted>`. Returns how many values were replaced.
 */
export function redactTarget(target: string): Readonly<{ target: string; redactions: number }> {
  return memo(redactedTargets, target, redactTargetOnce);
}

function redactTargetOnce(target: string): { target: string; redactions: number } {
  const q = target.indexOf("?");
  if (q < 0) {
    const r = redactArgv([target]);
    return { target: r.argv[0] ?? "", redactions: r.redactions };
  }
  const path = redactArgv([target.slice(0, q)]);
  let redactions = path.redactions;
  const parts = target
    .slice(q + 1)
    .split("&")
    .map((p) => {
      const eq = p.indexOf("=");
      const rawKey = eq < 0 ? p : p.slice(0, eq);
      let key = rawKey;
      try {
        key = decodeURIComponent(rawKey.replace(/\+/g, " "));
      } catch {}
      if (eq >= 0 && (querySecret(key) || /(?:^|[^a-z])(?:sig|signature)$/i.test(key))) {
        if (p.length > eq + 1) redactions++;
        return `${rawKey}=${p.length > eq + 1 ? REDACTED : ""}`;
      }
      const r = redactArgv([p]);
      redactions += r.redactions;
      return r.argv[0] ?? "";
    });
  return { target: `${path.argv[0] ?? ""}?${parts.join("&")}`, redactions };
}
