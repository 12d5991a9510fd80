/**
 * The environment the wrapped server gets: seam's own, less the variables
 * that are seam's secrets. The server is the very process being audited; with
 * COMMITLAYER_API_KEY it could post actions of its own to the endpoint seam
 * records them in. `--strip-env NAME` removes more, `--pass-env NAME` keeps
 * one that would be removed.
 */

/** Removed from the server's environment unless passed on by name. */
export const SECRET_ENV = ["COMMITLAYER_API_KEY"] as const;

/**
 * `env` less SECRET_ENV and `strip`, but for `pass`. Names are compared as
 * the server's OS compares them: exactly on Linux and macOS, regardless of
 * case on Windows, where `CommitLayer_Api_Key` is the same variable (a copy
 * of the environment keeps whichever spelling it was set with, and a
 * server's lookup of any spelling finds it).
 */
export function serverEnv(
  env: Record<string, string | undefined>,
  opts: { strip?: readonly string[]; pass?: readonly string[] } = {},
  platform: NodeJS.Platform = process.platform,
): Record<string, string | undefined> {
  const key = platform === "win32" ? (n: string) => n.toUpperCase() : (n: string) => n;
  const pass = new Set((opts.pass ?? []).map(key));
  const strip = new Set([...SECRET_ENV, ...(opts.strip ?? [])].map(key).filter((n) => !pass.has(n)));
  const out: Record<string, string | undefined> = { ...env };
  for (const name of Object.keys(out)) if (strip.has(key(name))) delete out[name];
  return out;
}
