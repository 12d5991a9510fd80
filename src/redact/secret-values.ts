/**
 * The secret parts of one argument that is not itself a secret-named flag:
 * assignments, headers, Bearer and Basic credentials, URL userinfo, secret
 * keys inside query strings, connection strings and JSON, and well-known
 * token shapes, each replaced by REDACTED (src/redact/argv.ts walks the argv).
 */
import { embeddedSecret, isSecretName, querySecret } from "./secret-names.ts";

export const REDACTED = "<redacted>";

/** Well-known credential shapes, found anywhere inside an argument. */
const TOKEN_SHAPES: RegExp[] = [
  /(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{20,}/g, // OpenAI, Anthropic (sk-ant-…), sk-proj-…
  /(?<![A-Za-z0-9])[sr]k_(?:live|test)_[A-Za-z0-9]{10,}/g, // Stripe secret / restricted keys
  /(?<![A-Za-z0-9])gh[pousr]_[A-Za-z0-9]{30,}/g, // GitHub tokens
  /(?<![A-Za-z0-9])github_pat_[A-Za-z0-9_]{20,}/g, // GitHub fine-grained tokens
  /(?<![A-Za-z0-9])glpat-[A-Za-z0-9_.-]{16,}/g, // GitLab
  /(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])/g, // AWS access key ids
  /(?<![A-Za-z0-9])AIza[A-Za-z0-9_-]{30,}/g, // Google API keys
  /(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9-]{10,}/g, // Slack
  /(?<![A-Za-z0-9])npm_[A-Za-z0-9]{30,}/g, // npm
  /(?<![A-Za-z0-9])hf_[A-Za-z0-9]{30,}/g, // Hugging Face
  /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g, // JWT
  /(?<![A-Za-z0-9])xapp-[A-Za-z0-9-]{10,}/g, // Slack app-level tokens
  /(?<=hooks\.slack\.com\/(?:services|workflows|triggers)\/)[A-Za-z0-9_/-]+/g, // Slack webhook URLs: the path is the secret
  /(?<=discord(?:app)?\.com\/api\/webhooks\/)[A-Za-z0-9_/-]+/g, // Discord webhook URLs
  /(?<![A-Za-z0-9])SG\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/g, // SendGrid
  /(?<![A-Za-z0-9:])\d{5,12}:AA[A-Za-z0-9_-]{30,}/g, // Telegram bot tokens
  /(?<=\/bot)\d{5,12}:[A-Za-z0-9_-]{30,}/g, // a Telegram bot token in a Bot API URL path (/bot<id>:<token>/method)
  /(?<![A-Za-z0-9])dop_v1_[a-f0-9]{40,}/g, // DigitalOcean
  /(?<![A-Za-z0-9])shp(?:at|ss|ca|pa)_[a-fA-F0-9]{20,}/g, // Shopify
  /(?<![A-Za-z0-9])pypi-[A-Za-z0-9_-]{40,}/g, // PyPI
  /(?<![A-Za-z0-9])ya29\.[A-Za-z0-9_-]{20,}/g, // Google OAuth access tokens
  /(?<![A-Za-z0-9])(?:lin|glrt|gldt)_[A-Za-z0-9_-]{20,}/g, // Linear, GitLab runner/deploy tokens
  /(?<![A-Za-z0-9])[sr]k-(?:live|test)-[A-Za-z0-9]{20,}/g,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g,
];

/** Redacts the secret parts of one argument that is not itself a secret-named flag. */
export class Redactor {
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
    out = out.replace(
      /(?<=([?&#;,\s]))([A-Za-z_][A-Za-z0-9_.-]*)=([^&#;,\s]*)/g,
      (m, sep: string, key: string, val: string) =>
        (/[?&#;]/.test(sep) ? querySecret(key) : embeddedSecret(key)) ? `${key}=${this.hide(val)}` : m,
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
