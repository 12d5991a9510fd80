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
 *   sh -c "srv --password X"     → sh -c "srv --password <redacted>"   (words inside an argument)
 *   -u admin:X  --user=admin:X   → -u admin:<redacted>
 *   -pX  -p X  -k X              → -p<redacted>  -p <redacted>  -k <redacted>   (not ports, paths, URLs, npx -p PKG)
 *   -eGH_PAT=X                   → -eGH_PAT=<redacted>
 *   {"pwd": X}  Pwd=X;           → {"pwd": <redacted>}  Pwd=<redacted>;
 *   https://hooks.slack.com/services/X → https://hooks.slack.com/services/<redacted>
 *
 * `command_digest` in session_begin is the digest of this redacted argv, not
 * of the original: an unsalted digest of the original would give back a
 * redacted password to anyone who tries a dictionary of likely ones. Erring
 * towards redaction is cheap (a placeholder in one field); a leaked key is not.
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
  /(?<![A-Za-z0-9])xapp-[A-Za-z0-9-]{10,}/g, // Slack app-level tokens
  /(?<=hooks\.slack\.com\/(?:services|workflows|triggers)\/)[A-Za-z0-9_/-]+/g, // Slack webhook URLs: the path is the secret
  /(?<=discord(?:app)?\.com\/api\/webhooks\/)[A-Za-z0-9_/-]+/g, // Discord webhook URLs
  /(?<![A-Za-z0-9])SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}/g, // SendGrid
  /(?<![A-Za-z0-9])dop_v1_[a-f0-9]{40,}/g, // DigitalOcean
  /(?<![A-Za-z0-9])shp(?:at|ss|ca|pa)_[a-fA-F0-9]{20,}/g, // Shopify
  /(?<![A-Za-z0-9])pypi-[A-Za-z0-9_-]{40,}/g, // PyPI
  /(?<![A-Za-z0-9])ya29\.[A-Za-z0-9_-]{20,}/g, // Google OAuth access tokens
  /(?<![A-Za-z0-9])(?:lin|glrt|gldt)_[A-Za-z0-9_-]{20,}/g, // Linear, GitLab runner/deploy tokens
  /(?<![A-Za-z0-9])[sr]k-(?:live|test)-[A-Za-z0-9]{20,}/g,
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

  /** NAME=VALUE as a whole argument (env, docker -e): the value is everything after "=". */
  assignment(s: string): string {
    const assign = /^([A-Za-z_][A-Za-z0-9_.-]*)=([\s\S]*)$/.exec(s);
    if (assign && isSecretName(assign[1]!)) return `${assign[1]}=${this.hide(assign[2]!)}`;
    return s;
  }

  value(s: string): string {
    const assigned = this.assignment(s);
    if (assigned !== s) return assigned;
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
      embeddedSecret(key) || SECRET_PARAM_WORDS.has(words(key).at(-1) ?? "") ? `${key}=${this.hide(val)}` : m,
    );
    // "key": "value" inside JSON given on the command line.
    out = out.replace(/("([^"\\]+)"\s*:\s*")((?:[^"\\]|\\.)*)"/g, (m, pre: string, key: string, val: string) =>
      embeddedSecret(key) ? `${pre}${this.hide(val)}"` : m,
    );
    // "key": 1234 (a number, true, …) inside JSON.
    out = out.replace(
      /("([^"\\]+)"\s*:\s*)([-A-Za-z0-9_.+]+)(?=\s*[,}\]])/g,
      (m, pre: string, key: string, val: string) =>
        embeddedSecret(key) && val !== "null" ? `${pre}${this.hide(val)}` : m,
    );
    for (const shape of TOKEN_SHAPES) out = out.replace(shape, (tok) => this.hide(tok));
    return out;
  }
}

function embeddedSecret(key: string): boolean {
  return isSecretName(key) || EMBEDDED_SECRET_NAMES.has(key.toLowerCase());
}

/** A value a short flag like -p or -k takes that is no secret: a port or number, a path, a URL, an npm package. */
function plainShortValue(v: string): boolean {
  return (
    /^[\d.:/-]+(?:\/(?:tcp|udp))?$/i.test(v) ||
    /^(?:\/|\.{1,2}\/|~)/.test(v) ||
    /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(v) ||
    v.startsWith("@") ||
    v === REDACTED
  );
}

/** Short flags whose value is a password or key where they take one (`mysql -pX`, `-p X`, `-k X`). */
const SECRET_SHORT = new Set(["p", "k"]);
/** Flags whose `user:password` value hides what follows the first ":" (curl -u, --user). */
const USER_FLAGS = new Set(["u", "user", "proxy-user", "basic-auth"]);
/** Commands where -p names a package, not a password. */
const PACKAGE_RUNNERS = /(?:^|\/)(?:npx|npm|pnpm|pnpx|bunx|yarn|uvx|pipx)$/;
/** How deep words inside words (sh -c "env X=… srv --token …") are looked into. */
const MAX_DEPTH = 3;

/** `user:password` → `user:<redacted>`; a numeric uid:gid (docker -u 1000:1000) is left alone. */
function userValue(r: Redactor, v: string): string {
  const i = v.indexOf(":");
  if (i < 0 || /^\d+:\d+$/.test(v)) return r.value(v);
  return `${v.slice(0, i + 1)}${r.hide(v.slice(i + 1))}`;
}

/**
 * The words of an argument as a shell would split it (quotes kept in the
 * word, unquoted whitespace between), each with where it starts.
 */
function shellWords(s: string): { word: string; at: number }[] {
  const out: { word: string; at: number }[] = [];
  const re = /(?:[^\s"']+|"(?:[^"\\]|\\.)*"|'[^']*')+/g;
  for (let m = re.exec(s); m !== null; m = re.exec(s)) out.push({ word: m[0], at: m.index });
  return out;
}

/**
 * An argument that holds a command line of its own: its words redacted as an
 * argv, spaces kept. `full`: each word gets the whole value() pass too (a
 * shell's -c script, which no pass has seen as a whole yet).
 */
function redactInside(r: Redactor, s: string, depth: number, full = false): string {
  // Without a word that starts with "-" there is no flag to follow; value() has seen the rest.
  if (!full && !/(?:^|\s)-/.test(s)) return s;
  const ws = shellWords(s);
  if (ws.length < 2 && !full) return s;
  const redacted = redactWords(
    r,
    ws.map((w) => w.word),
    depth,
    full,
  );
  if (redacted.every((w, i) => w === ws[i]!.word)) return s;
  let out = "";
  let pos = 0;
  ws.forEach((w, i) => {
    out += s.slice(pos, w.at) + redacted[i]!;
    pos = w.at + w.word.length;
  });
  return out + s.slice(pos);
}

/** Shells whose `-c SCRIPT` is a command line of its own. */
const SHELLS = /(?:^|\/)(?:sh|bash|zsh|dash|ash|ksh|mksh|fish|busybox)$/;

function redactWords(r: Redactor, argv: readonly string[], depth: number, full = depth === 0): string[] {
  const out: string[] = [];
  const packages = PACKAGE_RUNNERS.test(argv[0] ?? "");
  const shell = SHELLS.test(argv[0] ?? "");
  /** A secret flag was followed by a short flag: the next plain value is the secret (`--token -t X`). */
  let owed = false;
  const plain = (arg: string): string => {
    // Inside an argument the whole string has been through value() already: only a
    // leading NAME=VALUE word (no space before it for value() to see) is left to look at.
    const v = full ? r.value(arg) : r.assignment(arg);
    return depth < MAX_DEPTH && /\s/.test(v) ? redactInside(r, v, depth + 1) : v;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (owed && !arg.startsWith("-")) {
      owed = false;
      out.push(r.hide(arg));
      continue;
    }
    // A plain word inside an argument: value() has seen it already (the common case, kept cheap).
    if (!full && arg[0] !== "-" && !arg.includes("=")) {
      out.push(arg);
      continue;
    }
    // sh -c SCRIPT: the script's words as an argv (`KEY=… exec srv --token …`).
    if (shell && depth < MAX_DEPTH && i > 0 && /^-[a-z]*c$/.test(argv[i - 1]!)) {
      out.push(redactInside(r, arg, depth + 1, true));
      continue;
    }
    // -eNAME=VALUE (docker, env): the assignment after the short flag.
    const joinedEnv = /^-e([A-Za-z_][A-Za-z0-9_.-]*=[\s\S]*)$/.exec(arg);
    if (joinedEnv) {
      out.push(`-e${plain(joinedEnv[1]!)}`);
      continue;
    }
    // -pSECRET: a short secret flag with its value joined (not -p8080).
    const joinedShort = /^-([A-Za-z])([\s\S]+)$/.exec(arg);
    const longName = /^-{1,2}([A-Za-z][A-Za-z0-9_.-]*)(?:=|$)/.exec(arg)?.[1];
    // -password is a flag named password; -pSECRET is -p with its value (the first word is one letter).
    const isLong = longName !== undefined && isSecretName(longName) && (words(longName)[0]?.length ?? 0) > 1;
    if (joinedShort && !isLong && SECRET_SHORT.has(joinedShort[1]!) && !(packages && joinedShort[1] === "p")) {
      const v = joinedShort[2]!;
      out.push(plainShortValue(v) || v.startsWith("=") ? plain(arg) : `-${joinedShort[1]}${r.hide(v)}`);
      continue;
    }
    const flag = /^(-{1,2}([A-Za-z][A-Za-z0-9_.-]*))(?:=([\s\S]*))?$/.exec(arg);
    if (!flag) {
      out.push(plain(arg));
      continue;
    }
    const [, head, name, val] = flag as unknown as [string, string, string, string | undefined];
    const next = argv[i + 1];
    if (USER_FLAGS.has(name)) {
      if (val !== undefined) out.push(`${head}=${userValue(r, val)}`);
      else {
        out.push(arg);
        if (next !== undefined && !next.startsWith("-")) {
          out.push(userValue(r, next));
          i++;
        }
      }
      continue;
    }
    if (head.length === 2 && SECRET_SHORT.has(name) && !(packages && name === "p")) {
      out.push(arg);
      if (next !== undefined && !next.startsWith("-") && !plainShortValue(next)) {
        out.push(r.hide(next));
        i++;
      }
      continue;
    }
    if (!isSecretName(name)) {
      out.push(val === undefined ? plain(arg) : `${r.value(head)}=${plain(val)}`);
      continue;
    }
    if (val !== undefined) {
      out.push(`${head}=${r.hide(val)}`);
      continue;
    }
    out.push(arg);
    if (next !== undefined && /^-[A-Za-z]$/.test(next)) {
      owed = true; // `--token -t X`: -t is no value; X is the secret whichever flag it belongs to
      continue;
    }
    if (next !== undefined && !next.startsWith("--")) {
      out.push(r.hide(next));
      i++;
    }
  }
  return out;
}

/**
 * Returns argv with credentials replaced by `<redacted>` and how many were
 * replaced. A secret-named flag (`--api-key`, `-token`, `--client-secret`, …;
 * not `--tokenizer`, `--max-tokens`, `--token-file`, `--no-auth`) hides its
 * `=value` or, without one, the next argument unless that starts with `--`
 * (after a lone short flag, `--token -t X`, it hides X). Short flags -p and
 * -k hide their value unless it is a port, number, path, URL or (npx -p) a
 * package; -u/--user hide the password of `user:password`. Every other
 * argument is searched for assignments, headers, URLs and token shapes, and
 * one with spaces in it (`sh -c "…"`) is split into words and redacted as an
 * argv of its own.
 */
export function redactArgv(argv: readonly string[]): { argv: string[]; redactions: number } {
  const r = new Redactor();
  const out = redactWords(r, argv, 0);
  return { argv: out, redactions: r.count };
}
