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
]);
/** Words that make a name secret only as its last word (`DB_PASS`, `--pw`, `STRIPE_KEY`, not `--pass-through`). */
const SECRET_LAST_WORDS = new Set(["pass", "pw", "key", "keys", "pat"]);
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
  if (ws.some((w) => SECRET_WORDS.has(w))) return true;
  if (!SECRET_LAST_WORDS.has(last)) return false;
  return ws.length === 1 || !PUBLIC_KEY_PREFIXES.has(ws[ws.length - 2]!);
}

export function embeddedSecret(key: string): boolean {
  return isSecretName(key) || EMBEDDED_SECRET_NAMES.has(key.toLowerCase());
}
