/**
 * Credentials out of the server command line before it is written to the
 * ledger (`session_begin.command`). Only the secret part of an argument is
 * replaced by the placeholder, so the row still shows how the server was
 * started:
 *
 *   --api-key X                  → --api-key <redacted>
 *   --token=X                    → --token=<redacted>
 *   OPENAI_API_KEY=X             → OPENAI_API_KEY=<redacted>
 *   Authorization: Bearer X      → Authorization: <redacted>
 *   https://user:pw@host/?sig=X  → https://<redacted>@host/?sig=<redacted>
 *   … sk-… ghp_… AKIA… xoxb-… eyJ….eyJ….…  → … <redacted> …
 *
 * The ledger also keeps `command_digest` of the original argv, so a holder of
 * the real command can still prove it was the one run. Erring towards
 * redaction is cheap (a placeholder in one field); a leaked key is not.
 */

export const REDACTED = "<redacted>";

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
const SECRET_LAST_WORDS = new Set(["pass", "pw", "key", "keys"]);
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
const SECRET_PARAM_WORDS = new Set(["sig", "signature"]);

function words(name: string): string[] {
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

/** Well-known credential shapes, found anywhere inside an argument. */
const TOKEN_SHAPES: RegExp[] = [
  /(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{20,}/g, // OpenAI, Anthropic (sk-ant-…), sk-proj-…
  /(?<![A-Za-z0-9])[sr]k_(?:live|test)_[A-Za-z0-9]{10,}/g, // Stripe secret / restricted keys
  /(?<![A-Za-z0-9])gh[pousr]_[A-Za-z0-9]{30,}/g, // GitHub tokens
  /(?<![A-Za-z0-9])github_pat_[A-Za-z0-9_]{20,}/g, // GitHub fine-grained tokens
  /(?<![A-Za-z0-9])glpat-[A-Za-z0-9_-]{20,}/g, // GitLab
  /(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])/g, // AWS access key ids
  /(?<![A-Za-z0-9])AIza[A-Za-z0-9_-]{35}/g, // Google API keys
  /(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9-]{10,}/g, // Slack
  /(?<![A-Za-z0-9])npm_[A-Za-z0-9]{36}/g, // npm
  /(?<![A-Za-z0-9])hf_[A-Za-z0-9]{30,}/g, // Hugging Face
  /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g, // JWT
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g,
];

/** Redacts the secret parts of one argument that is not itself a secret-named flag. */
class Redactor {
  count = 0;

  hide(secret: string): string {
    if (secret === "" || secret === REDACTED) return secret;
    this.count++;
    return REDACTED;
  }

  value(s: string): string {
    // NAME=VALUE as a whole argument (env, docker -e): the value is everything after "=".
    const assign = /^([A-Za-z_][A-Za-z0-9_.-]*)=([\s\S]*)$/.exec(s);
    if (assign && isSecretName(assign[1]!)) return `${assign[1]}=${this.hide(assign[2]!)}`;
    // A header as one argument (curl-style -H): keep the name, hide the whole value.
    const header = /^(\s*([A-Za-z][A-Za-z0-9_-]*)\s*:\s*)(\S[\s\S]*)$/.exec(s);
    if (header && isSecretName(header[2]!)) return `${header[1]}${this.hide(header[3]!)}`;

    let out = s;
    out = out.replace(/\b(Bearer\s+)([^\s"',;]+)/gi, (_, pre: string, tok: string) => pre + this.hide(tok));
    out = out.replace(/\b(Basic\s+)([A-Za-z0-9+/=]{8,})/g, (_, pre: string, tok: string) => pre + this.hide(tok));
    // URL userinfo: always when it holds a password, else only when the user part is token-sized (not `git@`).
    out = out.replace(
      /(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^/?#\s]*)@/g,
      (m, scheme: string, userinfo: string) =>
        userinfo.includes(":") || userinfo.length >= 20 ? `${scheme}${this.hide(userinfo)}@` : m,
    );
    // key=value inside a longer argument: query strings, fragments, connection strings, option lists.
    out = out.replace(/(?<=[?&#;,\s])([A-Za-z_][A-Za-z0-9_.-]*)=([^&#;,\s]*)/g, (m, key: string, val: string) =>
      isSecretName(key) || SECRET_PARAM_WORDS.has(words(key).at(-1) ?? "") ? `${key}=${this.hide(val)}` : m,
    );
    // "key": "value" inside JSON given on the command line.
    out = out.replace(/("([^"\\]+)"\s*:\s*")((?:[^"\\]|\\.)*)"/g, (m, pre: string, key: string, val: string) =>
      isSecretName(key) ? `${pre}${this.hide(val)}"` : m,
    );
    for (const shape of TOKEN_SHAPES) out = out.replace(shape, (tok) => this.hide(tok));
    return out;
  }
}

/**
 * Returns argv with credentials replaced by `<redacted>` and how many were
 * replaced. A secret-named flag (`--api-key`, `-token`, `--client-secret`, …;
 * not `--tokenizer`, `--max-tokens`, `--token-file`, `--no-auth`) hides its
 * `=value` or, without one, the next argument unless that starts with `--`.
 * Every other argument (and the value of any other `--flag=value`) is searched
 * for assignments, headers, URLs and token shapes.
 */
export function redactArgv(argv: readonly string[]): { argv: string[]; redactions: number } {
  const r = new Redactor();
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const flag = /^(-{1,2}([A-Za-z][A-Za-z0-9_.-]*))(?:=([\s\S]*))?$/.exec(arg);
    if (!flag) {
      out.push(r.value(arg));
      continue;
    }
    const [, head, name, val] = flag as unknown as [string, string, string, string | undefined];
    if (!isSecretName(name)) {
      out.push(val === undefined ? r.value(arg) : `${r.value(head)}=${r.value(val)}`);
      continue;
    }
    if (val !== undefined) {
      out.push(`${head}=${r.hide(val)}`);
      continue;
    }
    out.push(arg);
    const next = argv[i + 1];
    if (next !== undefined && !next.startsWith("--")) {
      out.push(r.hide(next));
      i++;
    }
  }
  return { argv: out, redactions: r.count };
}
