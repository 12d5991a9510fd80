/**
 * The default `--server` label: a short name for what the command runs, so
 * rows of several servers sharing one ledger can be told apart.
 *
 *   python -m pkg.mod …                 → pkg.mod      (also python3 -u -m x, python -mx, py -3 -m x)
 *   npx -y @scope/pkg@1.2 …             → @scope/pkg   (version stripped)
 *   npx pkg · bunx pkg · bun x pkg · pnpm dlx pkg · pnpx pkg · yarn dlx pkg · npm exec pkg
 *   uvx pkg@1.0 · uvx pkg==1.0 · uv tool run pkg · pipx run pkg  → pkg
 *   env A=1 npx pkg · cmd /c npx pkg    → what follows the wrapper
 *   /usr/bin/node server.js             → node         (basename of the executable)
 */

/** Options that take a value (as the next argument) per launcher; any other option is a switch. */
const PYTHON_VALUE_OPTS = new Set(["-W", "-X", "--check-hash-based-pycs"]);
const NODE_LAUNCHER_VALUE_OPTS = new Set([
  "-p",
  "--package",
  "-c",
  "--call",
  "--cache",
  "--userconfig",
  "--registry",
  "-w",
  "--workspace",
  "--node-options",
  "--shell",
  "--script-shell",
  "--loglevel",
  "--prefix",
  "-C",
  "--dir",
]);
const UV_VALUE_OPTS = new Set([
  "--from",
  "--with",
  "--with-editable",
  "--with-requirements",
  "-w",
  "-p",
  "--python",
  "--index",
  "--default-index",
  "-i",
  "--index-url",
  "--extra-index-url",
  "-f",
  "--find-links",
  "--index-strategy",
  "-c",
  "--constraints",
  "-b",
  "--build-constraints",
  "--overrides",
  "--directory",
  "--project",
  "--config-file",
  "--cache-dir",
  "--env-file",
  "--python-preference",
  "--resolution",
  "--prerelease",
  "--exclude-newer",
  "--keyring-provider",
  "--link-mode",
  "--color",
  "--allow-insecure-host",
  "--spec",
]);
/** Options whose value is the package itself. */
const NODE_PACKAGE_OPTS = new Set(["-p", "--package"]);
const UV_PACKAGE_OPTS = new Set(["--from", "--spec"]);

function basename(path: string): string {
  const base =
    path
      .split(/[\\/]/)
      .filter((p) => p !== "")
      .pop() ?? path;
  return base.replace(/\.(exe|cmd|bat)$/i, "");
}

/** `@scope/pkg@1.2` → `@scope/pkg`, `pkg@latest` → `pkg`. */
function npmPackage(spec: string): string {
  const at = spec.indexOf("@", 1);
  return at > 0 ? spec.slice(0, at) : spec;
}

/** `pkg@1.0`, `pkg==1.0`, `pkg[extra]>=2` → `pkg`. */
function pyPackage(spec: string): string {
  return spec.split(/[@=<>!~;[\s]/)[0] || spec;
}

/**
 * The first positional argument after `start`, skipping options (and the
 * values of those in `valueOpts`), or the value of a package option when one
 * comes first.
 */
function firstPositional(
  args: readonly string[],
  start: number,
  valueOpts: Set<string>,
  packageOpts: Set<string>,
): string | undefined {
  for (let i = start; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--") return args[i + 1];
    if (!a.startsWith("-") || a === "-") return a;
    const eq = a.indexOf("=");
    const opt = eq > 0 ? a.slice(0, eq) : a;
    if (packageOpts.has(opt)) return eq > 0 ? a.slice(eq + 1) : args[i + 1];
    if (eq < 0 && valueOpts.has(opt)) i++;
  }
  return undefined;
}

/** The module after `-m` in a Python command line (`-m x`, `-mx`, `-um x`), if any. */
function pythonModule(args: readonly string[]): string | undefined {
  for (let i = 1; i < args.length; i++) {
    const a = args[i]!;
    if (a === "-" || !a.startsWith("-") || a === "--") return undefined; // script, stdin or end of options: no -m
    if (a.startsWith("--")) {
      if (PYTHON_VALUE_OPTS.has(a)) i++;
      continue;
    }
    // A cluster of one-letter switches, possibly ending in m (module), c (command) or W/X (value).
    for (let j = 1; j < a.length; j++) {
      const c = a[j]!;
      if (c === "m") return a.slice(j + 1) || args[i + 1];
      if (c === "c") return undefined;
      if (c === "W" || c === "X") {
        if (j === a.length - 1) i++;
        break;
      }
    }
  }
  return undefined;
}

export function serverLabel(argv: readonly string[]): string {
  if (argv.length === 0) return "";
  const exe = basename(argv[0]!);
  const name = exe.toLowerCase();
  const rest = (start: number): string => (start < argv.length ? serverLabel(argv.slice(start)) : exe);

  if (/^(python|pythonw|pypy|py)(\d+(\.\d+)*)?$/.test(name)) {
    const mod = pythonModule(argv);
    return mod || exe;
  }
  if (name === "env") {
    let i = 1;
    while (i < argv.length && (argv[i]!.startsWith("-") || /^[A-Za-z_][A-Za-z0-9_]*=/.test(argv[i]!))) {
      i += argv[i] === "-u" || argv[i] === "--unset" || argv[i] === "-C" || argv[i] === "--chdir" ? 2 : 1;
    }
    return rest(i);
  }
  if (name === "cmd" && argv[1]?.toLowerCase() === "/c") return rest(2);

  const node = (start: number): string =>
    npmPackage(firstPositional(argv, start, NODE_LAUNCHER_VALUE_OPTS, NODE_PACKAGE_OPTS) ?? "") || exe;
  const python = (start: number): string =>
    pyPackage(firstPositional(argv, start, UV_VALUE_OPTS, UV_PACKAGE_OPTS) ?? "") || exe;
  const [a1, a2] = [argv[1], argv[2]];
  if (name === "npx" || name === "bunx" || name === "pnpx") return node(1);
  if (name === "bun" && a1 === "x") return node(2);
  if ((name === "pnpm" || name === "yarn") && a1 === "dlx") return node(2);
  if (name === "npm" && (a1 === "exec" || a1 === "x")) return node(2);
  if (name === "uvx") return python(1);
  if (name === "uv" && a1 === "tool" && a2 === "run") return python(3);
  if (name === "pipx" && a1 === "run") return python(2);
  return exe;
}
