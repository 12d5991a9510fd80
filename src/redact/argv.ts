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
 *
 * Which names are secret is src/redact/secret-names.ts; what is redacted inside
 * an argument, src/redact/secret-values.ts; this file walks the argv.
 */
import { isFlagOnlySecret, isSecretFlag, isSecretName, words } from "./secret-names.ts";
import { REDACTED, Redactor } from "./secret-values.ts";

/**
 * The shapes of a command line that depend on the OS the server runs on. On
 * Windows a path may also be `C:\dir`, `C:/dir`, `.\dir`, `\\host\share`
 * or `%USERPROFILE%\dir`, a program is named with `\` and often an
 * extension (`npx.cmd`, `bash.exe`), and `cmd /c SCRIPT`,
 * `powershell -Command SCRIPT` carry command lines of their own. Elsewhere
 * those are no path, no program name and no script flag (a `C:\x` value of
 * `-p` stays hidden there), so Linux and macOS share the POSIX shapes.
 */
interface Shapes {
  /** A value of -p/-k, or of a flag secret only as a flag, that is a path. */
  path: RegExp;
  /** Commands where -p names a package, not a password. */
  packageRunners: RegExp;
  /** Shells whose script flag's value is a command line of its own. */
  shells: RegExp;
  /** That script flag. */
  scriptFlag: RegExp;
}

const POSIX_SHAPES: Shapes = {
  path: /^(?:\/|\.{1,2}\/|~)/,
  packageRunners: /(?:^|\/)(?:npx|npm|pnpm|pnpx|bunx|yarn|uvx|pipx)$/,
  shells: /(?:^|\/)(?:sh|bash|zsh|dash|ash|ksh|mksh|fish|busybox)$/,
  scriptFlag: /^-[a-z]*c$/,
};

const WIN32_SHAPES: Shapes = {
  path: /^(?:\/|\.{1,2}[\\/]|~|[A-Za-z]:[\\/]|\\\\|%[A-Za-z_][A-Za-z0-9_]*%[\\/])/,
  packageRunners: /(?:^|[\\/])(?:npx|npm|pnpm|pnpx|bunx|yarn|uvx|pipx)(?:\.cmd|\.exe|\.ps1)?$/i,
  shells: /(?:^|[\\/])(?:sh|bash|zsh|dash|ash|ksh|mksh|fish|busybox|cmd|powershell|pwsh)(?:\.exe)?$/i,
  scriptFlag: /^(?:-[a-z]*c|\/[ck]|-command)$/i,
};

/** The command-line shapes of a server on `platform`. */
function shapesOf(platform: NodeJS.Platform): Shapes {
  return platform === "win32" ? WIN32_SHAPES : POSIX_SHAPES;
}

/** A value a short flag like -p or -k takes that is no secret: a port or number, a path, a URL, an npm package. */
function plainShortValue(v: string, shapes: Shapes): boolean {
  return (
    /^[\d.:/-]+(?:\/(?:tcp|udp))?$/i.test(v) ||
    shapes.path.test(v) ||
    /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(v) ||
    v.startsWith("@") ||
    v === REDACTED
  );
}

/** Short flags whose value is a password or key where they take one (`mysql -pX`, `-p X`, `-k X`). */
const SECRET_SHORT = new Set(["p", "k"]);
/** Flags whose `user:password` value hides what follows the first ":" (curl -u, --user). */
const USER_FLAGS = new Set(["u", "user", "proxy-user", "basic-auth"]);
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
function redactInside(r: Redactor, shapes: Shapes, s: string, depth: number, full = false): string {
  // Without a word that starts with "-" there is no flag to follow; value() has seen the rest.
  if (!full && !/(?:^|\s)-/.test(s)) return s;
  const ws = shellWords(s);
  if (ws.length < 2 && !full) return s;
  const redacted = redactWords(
    r,
    shapes,
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

function redactWords(
  r: Redactor,
  shapes: Shapes,
  argv: readonly string[],
  depth: number,
  full = depth === 0,
): string[] {
  const out: string[] = [];
  const packages = shapes.packageRunners.test(argv[0] ?? "");
  const shell = shapes.shells.test(argv[0] ?? "");
  /** A secret flag was followed by a short flag: the next plain value is the secret (`--token -t X`). */
  let owed = false;
  const plain = (arg: string): string => {
    // Inside an argument the whole string has been through value() already: only a
    // leading NAME=VALUE word (no space before it for value() to see) is left to look at.
    const v = full ? r.value(arg) : r.assignment(arg);
    return depth < MAX_DEPTH && /\s/.test(v) ? redactInside(r, shapes, v, depth + 1) : v;
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
    if (shell && depth < MAX_DEPTH && i > 0 && shapes.scriptFlag.test(argv[i - 1]!)) {
      out.push(redactInside(r, shapes, arg, depth + 1, true));
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
      out.push(plainShortValue(v, shapes) || v.startsWith("=") ? plain(arg) : `-${joinedShort[1]}${r.hide(v)}`);
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
      if (next !== undefined && !next.startsWith("-") && !plainShortValue(next, shapes)) {
        out.push(r.hide(next));
        i++;
      }
      continue;
    }
    // A flag secret as a flag only (`--refresh`, `--pwd`) keeps a plain value: `--refresh 30`, `--pwd /srv`.
    const plainAfter =
      isFlagOnlySecret(name) &&
      (val !== undefined
        ? plainShortValue(val, shapes)
        : next === undefined || next.startsWith("-") || plainShortValue(next, shapes));
    if (!isSecretFlag(name) || plainAfter) {
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
 * argv of its own. What is a path, a package runner or a shell follows the
 * command-line shapes of `platform` (Shapes).
 */
export function redactArgv(
  argv: readonly string[],
  platform: NodeJS.Platform = process.platform,
): { argv: string[]; redactions: number } {
  const r = new Redactor();
  const out = redactWords(r, shapesOf(platform), argv, 0);
  return { argv: out, redactions: r.count };
}
