/**
 * Which names say their value is a credential: flags, environment variables,
 * headers, and keys inside JSON, query strings and connection strings, by the
 * words they are made of (`--api-key`, `OPENAI_API_KEY`, `X-Auth-Token`; not
 * `--tokenizer`, `--max-tokens`, `--token-file`, `--no-auth`, `sort_key`).
 */

/** Words that make a flag, variable, header or key name secret wherever they stand. */
const SECRET_WORDS = new Set([
  "token",
  "secret",
  "password",
  "passwd",
  "passphrase",
  "apikey",
  "auth",
  "authorization",
  "credential",
  "credentials",
  "bearer",
  "cookie",
  "privatekey",
  "accesskey",
  "secretkey",
  "jwt",
  "creds",
  "otp",
  "passcode",
]);
/** A name written as one word that ends in one of these is a password (`PGPASSWORD`, `SSHPASS`, `DBPASSWD`). */
const SECRET_SUFFIXES = /(?:password|passwd|passphrase)$|^sshpass$/;
/** Words that make a name secret only as its last word (`DB_PASS`, `--pw`, `STRIPE_KEY`, not `--pass-through`). */
const SECRET_LAST_WORDS = new Set(["pass", "pw", "key", "keys", "pat", "pin"]);
/** Words that make a name secret as the last of several (`MYSQL_PWD`, `--db-pwd`; `PWD` alone is the working directory). */
const SECRET_LAST_OF_SEVERAL = new Set(["pwd"]);
/** Flags secret as flags only (`--pwd X`, `--refresh X`), where the variable or word alone says something else. */
const SECRET_FLAGS = new Set(["pwd", "refresh"]);
/** Query-string keys that carry a credential although their name alone says little (OAuth's `code`, session ids, `jwt`). */
const SECRET_QUERY_KEYS = new Set([
  "code",
  "codeverifier",
  "sessionid",
  "sessid",
  "jsessionid",
  "phpsessid",
  "sid",
  "jwt",
  "ticket",
  "otp",
]);
/** Names secret inside JSON, query strings and connection strings only (`PWD=/home/u` as a variable is the working directory). */
const EMBEDDED_SECRET_NAMES = new Set(["pwd"]);
/** `…_key` names that are not credentials. */
const PUBLIC_KEY_PREFIXES = new Set([
  "public",
  "pub",
  "sort",
  "primary",
  "partition",
  "foreign",
  "group",
  "cache",
  "idempotency",
  "routing",
  "object",
  "row",
  "lookup",
  "map",
  "index",
  "hot",
  "shortcut",
  "unique",
  "dedupe",
]);
/** A last word that says the value is about the secret, not the secret (`--token-file`, `--password-stdin`). */
const ABOUT_WORDS = new Set([
  "file",
  "path",
  "dir",
  "directory",
  "name",
  "env",
  "var",
  "type",
  "kind",
  "length",
  "len",
  "size",
  "limit",
  "max",
  "min",
  "count",
  "budget",
  "mode",
  "ttl",
  "expiry",
  "expires",
  "expiration",
  "url",
  "uri",
  "endpoint",
  "host",
  "server",
  "port",
  "header",
  "method",
  "provider",
  "scheme",
  "id",
  "stdin",
  "cmd",
  "command",
  "helper",
  "store",
  "format",
  "field",
  "location",
  "prefix",
  "source",
  "issuer",
  "audience",
  "algorithm",
  "alg",
  "digits",
  "interval",
  "timeout",
  "version",
]);
/** A first word that makes a boolean switch of it (`--no-auth`, `--skip-auth`). */
const SWITCH_WORDS = new Set([
  "no",
  "disable",
  "enable",
  "skip",
  "without",
  "use",
  "require",
  "allow",
  "show",
  "print",
]);
/** Last words of query and fragment keys that are secret although the name alone says little (`sig`, `X-Amz-Signature`). */
export const SECRET_PARAM_WORDS = new Set(["sig", "signature"]);

export function words(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== "");
}

/** Whether a flag, variable, header or key name says its value is a credential. */
export function isSecretName(name: string): boolean {
  const ws = words(name);
  if (ws.length === 0) return false;
  const last = ws[ws.length - 1]!;
  if (ws.length > 1 && (ABOUT_WORDS.has(last) || SWITCH_WORDS.has(ws[0]!))) return false;
  if (ws.some((w) => SECRET_WORDS.has(w) || SECRET_SUFFIXES.test(w))) return true;
  if (ws.length > 1 && SECRET_LAST_OF_SEVERAL.has(last)) return true;
  if (!SECRET_LAST_WORDS.has(last)) return false;
  return ws.length === 1 || !PUBLIC_KEY_PREFIXES.has(ws[ws.length - 2]!);
}

export function embeddedSecret(key: string): boolean {
  return isSecretName(key) || EMBEDDED_SECRET_NAMES.has(key.toLowerCase());
}

/** Whether a flag's value is a credential: a secret name, or one of the names secret as flags only. */
export function isSecretFlag(name: string): boolean {
  return isSecretName(name) || SECRET_FLAGS.has(name.toLowerCase());
}

/** Whether a flag is secret as a flag only, so a plain value (a number, a path, a URL) after it is no secret. */
export function isFlagOnlySecret(name: string): boolean {
  return !isSecretName(name) && SECRET_FLAGS.has(name.toLowerCase());
}

/** Whether a key inside a query string or fragment names a credential. */
export function querySecret(key: string): boolean {
  return (
    embeddedSecret(key) ||
    SECRET_PARAM_WORDS.has(words(key).at(-1) ?? "") ||
    SECRET_QUERY_KEYS.has(key.toLowerCase().replace(/[^a-z0-9]/g, ""))
  );
}
