import { describe, expect, test } from "bun:test";
import { redactArgv } from "../../src/redact/argv.ts";
import { isSecretName } from "../../src/redact/secret-names.ts";

const R = "<redacted>";
// Shapes built by concatenation so this file holds no literal that looks like a live credential.
const SK = "sk-" + "proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2";
const SK_ANT = `sk-ant-api03-${"a".repeat(40)}`;
const GHP = `ghp_${"A".repeat(36)}`;
const GHO = `gho_${"b".repeat(36)}`;
const GH_PAT = `github_pat_11AAAAAAA0${"x".repeat(50)}`;
const AKIA = "AKIA" + "IOSFODNN7EXAMPLE";
const XOXB = "xoxb-" + "123456789012-1234567890123-abcdefghij";
const XOXP = "xoxp-" + "123456789012-abcdefghijklmnop";
const JWT = "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0" + ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
const STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc";
const GOOGLE = "AIza" + "SyA-abcdefghijklmnopqrstuvwxyz01234";

// [argv, redacted argv, redactions]
const CASES: [string[], string[], number][] = [
  // secret-named flags: the value, whether after "=" or as the next argument
  [["srv", "--api-key", "abc123"], ["srv", "--api-key", R], 1],
  [["srv", "--api-key=abc123"], ["srv", `--api-key=${R}`], 1],
  [["srv", "--token=abc"], ["srv", `--token=${R}`], 1],
  [["srv", "--token", "abc"], ["srv", "--token", R], 1],
  [["srv", "--password", "hunter2"], ["srv", "--password", R], 1],
  [["srv", "--password=hunter2", "--port", "80"], ["srv", `--password=${R}`, "--port", "80"], 1],
  [["srv", "-token", "abc"], ["srv", "-token", R], 1],
  [["srv", "-password=abc"], ["srv", `-password=${R}`], 1],
  [["srv", "--apiKey", "abc"], ["srv", "--apiKey", R], 1],
  [["srv", "--authToken=abc"], ["srv", `--authToken=${R}`], 1],
  [["srv", "--client-secret", "s3"], ["srv", "--client-secret", R], 1],
  [["srv", "--access-token", "x"], ["srv", "--access-token", R], 1],
  [["srv", "--private-key", "k"], ["srv", "--private-key", R], 1],
  [["srv", "--secret", "a b c"], ["srv", "--secret", R], 1],
  [["srv", "--auth", "user:pass"], ["srv", "--auth", R], 1],
  [["srv", "--key", "abc"], ["srv", "--key", R], 1],
  [["srv", "--db-pass", "abc"], ["srv", "--db-pass", R], 1],
  [["srv", "--openai-key", "abc"], ["srv", "--openai-key", R], 1],
  [["srv", "--passphrase=abc"], ["srv", `--passphrase=${R}`], 1],
  [["srv", "--token", "-starts-with-dash"], ["srv", "--token", R], 1],
  // a secret flag with nothing after it, an empty value, or another flag next: nothing to hide
  [["srv", "--token"], ["srv", "--token"], 0],
  [["srv", "--token="], ["srv", "--token="], 0],
  [["srv", "--token", ""], ["srv", "--token", ""], 0],
  [["srv", "--auth", "--port", "80"], ["srv", "--auth", "--port", "80"], 0],
  // env-style assignments
  [["env", "API_KEY=abc", "node", "s.js"], ["env", `API_KEY=${R}`, "node", "s.js"], 1],
  [["OPENAI_API_KEY=sk-x", "node"], [`OPENAI_API_KEY=${R}`, "node"], 1],
  [
    ["docker", "run", "-e", "GITHUB_TOKEN=abc", "-e", "FOO=bar"],
    ["docker", "run", "-e", `GITHUB_TOKEN=${R}`, "-e", "FOO=bar"],
    1,
  ],
  [["x", "--env=AWS_SECRET_ACCESS_KEY=abc"], ["x", `--env=AWS_SECRET_ACCESS_KEY=${R}`], 1],
  [["x", "DB_PASSWORD=a b"], ["x", `DB_PASSWORD=${R}`], 1],
  // headers and bearer tokens
  [["curl", "-H", "Authorization: Bearer abc.def"], ["curl", "-H", `Authorization: ${R}`], 1],
  [["curl", "--header=Authorization: Basic dXNlcjpwYXNz"], ["curl", `--header=Authorization: ${R}`], 1],
  [["x", "--header", "X-API-Key: abc"], ["x", "--header", `X-API-Key: ${R}`], 1],
  [["x", "Cookie: sid=1"], ["x", `Cookie: ${R}`], 1],
  [["x", "use Bearer abc123 here"], ["x", `use Bearer ${R} here`], 1],
  // URLs: userinfo and secret query / fragment keys
  [["x", "postgres://user:pw@db:5432/app"], ["x", `postgres://${R}@db:5432/app`], 1],
  [["x", "--db=postgres://user:p@ss@db/app"], ["x", `--db=postgres://${R}@db/app`], 1],
  [["x", "https://x-access-token:abc@github.com/o/r"], ["x", `https://${R}@github.com/o/r`], 1],
  [["x", "https://api.example.com/v1?token=abc&page=2"], ["x", `https://api.example.com/v1?token=${R}&page=2`], 1],
  [
    ["x", "https://h/p?access_token=a&api_key=b&sig=c&key=d"],
    ["x", `https://h/p?access_token=${R}&api_key=${R}&sig=${R}&key=${R}`],
    4,
  ],
  [["x", "https://h/cb#access_token=abc&state=1"], ["x", `https://h/cb#access_token=${R}&state=1`], 1],
  [
    ["x", "https://h/?X-Amz-Signature=ab&X-Amz-Credential=cd&X-Amz-Date=1"],
    ["x", `https://h/?X-Amz-Signature=${R}&X-Amz-Credential=${R}&X-Amz-Date=1`],
    2,
  ],
  [["x", "Server=db;User Id=sa;Password=abc;"], ["x", `Server=db;User Id=sa;Password=${R};`], 1],
  // well-known token shapes, anywhere in an argument
  [["x", SK], ["x", R], 1],
  [["x", `--model-key-is-${SK_ANT}`], ["x", `--model-key-is-${R}`], 1],
  [["x", GHP, GHO, GH_PAT], ["x", R, R, R], 3],
  [["x", `aws:${AKIA}`], ["x", `aws:${R}`], 1],
  [["x", XOXB, XOXP], ["x", R, R], 2],
  [["x", JWT], ["x", R], 1],
  [["x", `--config={"url":"u","apiKey":"abc"}`], ["x", `--config={"url":"u","apiKey":"${R}"}`], 1],
  [["x", `{"openai":"${SK}"}`], ["x", `{"openai":"${R}"}`], 1],
  [["x", STRIPE, GOOGLE], ["x", R, R], 2],
  [["x", "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----"], ["x", R], 1],
  // a secret-named flag hides the whole value, counted once even when it has a token shape
  [["x", `--token=${GHP}`], ["x", `--token=${R}`], 1],
  [["x", "--token", GHP], ["x", "--token", R], 1],
  // the placeholder itself is not a new redaction
  [["x", `--token=${R}`, `API_KEY=${R}`], ["x", `--token=${R}`, `API_KEY=${R}`], 0],
];

// Arguments that must pass through untouched.
const UNTOUCHED: string[][] = [
  ["python", "-m", "pkg.mod", "--tokenizer", "bert", "--max-tokens", "100", "--max-tokens=5"],
  ["/usr/local/bin/node", "/home/u/keys/server.js", "./tokens/list.txt"],
  ["npx", "-y", "@modelcontextprotocol/server-filesystem@1.2.3", "/tmp", "~/Documents"],
  ["uvx", "mcp-server-fetch", "--port", "8080", "--host=127.0.0.1"],
  ["x", "--token-file", "/run/secrets/t", "--password-stdin", "--key-file=k.pem", "--token-limit", "9"],
  ["x", "--no-auth", "--public-key", "pub.pem", "--sort-keys", "name", "--auth-type", "basic"],
  ["x", "--secret-name", "prod/db", "--api-key-env", "OPENAI_API_KEY", "--token-url=https://h/t"],
  ["x", "hello world", "Basic mode", "task-1234567890123456789012345", "sk-short", "desk-abcdefghijklmnopqrstuvwxyz"],
  ["x", "https://example.com/path?page=2&q=token", "git+ssh://git@github.com/o/r.git", "git@github.com:o/r.git"],
  ["x", "FOO=bar", "PATH=/usr/bin", "PWD=/home/u", "C:\\Program Files\\x", "localhost:8080"],
  ["x", "--", "--", "-", "", "=", "--=x", "-1", "é€🔒"],
  ["x", "--keyboard", "us", "AKIAshort", "eyJnotajwt", "ghp_short"],
];

describe("redactArgv", () => {
  test.each(CASES)("%j", (argv, expected, n) => {
    expect(redactArgv(argv)).toEqual({ argv: expected, redactions: n });
  });
  test.each(UNTOUCHED)("leaves %j untouched", (...argv) => {
    expect(redactArgv(argv)).toEqual({ argv, redactions: 0 });
  });
  test("does not modify its input", () => {
    const argv = ["x", "--token", "abc"];
    redactArgv(argv);
    expect(argv).toEqual(["x", "--token", "abc"]);
  });
});

describe("isSecretName", () => {
  const secret = [
    "token",
    "API_KEY",
    "apiKey",
    "x-api-key",
    "Authorization",
    "GITHUB_TOKEN",
    "AWS_SECRET_ACCESS_KEY",
    "db_pass",
    "key",
    "STRIPE_KEY",
    "client_secret",
    "Private-Token",
  ];
  const plain = [
    "tokenizer",
    "max_tokens",
    "tokens",
    "token_file",
    "public_key",
    "sort_keys",
    "no_auth",
    "pass_through",
    "keyboard",
    "monkey",
    "PWD",
    "passenger",
    "author",
    "authority",
  ];
  test.each(secret)("%s is secret", (name) => expect(isSecretName(name)).toBe(true));
  test.each(plain)("%s is not", (name) => expect(isSecretName(name)).toBe(false));
});

test("hostile long arguments take linear time (no regex backtracking blow-up)", () => {
  const n = 200_000;
  const hostile = [
    "a".repeat(n),
    `https://${"a".repeat(n)}`,
    "eyJaaaa.".repeat(n / 8),
    `"a":"x`.repeat(n / 6),
    "a=".repeat(n / 2),
    "Bearer ".repeat(n / 7),
    `sk-${"a".repeat(n)}`,
    "a:".repeat(n / 2),
    `${"x ".repeat(n / 2)}=`,
    "a.b-c+".repeat(n / 6),
  ];
  for (const s of hostile) {
    const t = performance.now();
    redactArgv(["x", s, `--${s}`, `--x=${s}`]);
    expect({ s: s.slice(0, 12), slow: performance.now() - t > 500 }).toEqual({ s: s.slice(0, 12), slow: false });
  }
});
