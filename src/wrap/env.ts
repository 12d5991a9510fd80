/**
 * The environment the wrapped server gets: seam's own, less the variables
 * that are seam's secrets. The server is the very process being audited; with
 * COMMITLAYER_API_KEY it could post actions of its own to the endpoint seam
 * records them in. `--strip-env NAME` removes more, `--pass-env NAME` keeps
 * one that would be removed.
 */

/** Removed from the server's environment unless passed on by name. */
export const SECRET_ENV = ["COMMITLAYER_API_KEY"] as const;

export function serverEnv(
  env: Record<string, string | undefined>,
  opts: { strip?: readonly string[]; pass?: readonly string[] } = {},
): Record<string, string | undefined> {
  const pass = new Set(opts.pass ?? []);
  const out: Record<string, string | undefined> = { ...env };
  for (const name of [...SECRET_ENV, ...(opts.strip ?? [])]) if (!pass.has(name)) delete out[name];
  return out;
}

/** Every value of a repeatable flag `--NAME VALUE` / `--NAME=VALUE` among seam's own arguments. */
export function repeatedFlag(own: readonly string[], name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < own.length; i++) {
    const w = own[i]!;
    if (w === `--${name}` && i + 1 < own.length) out.push(own[++i]!);
    else if (w.startsWith(`--${name}=`)) out.push(w.slice(name.length + 3));
  }
  return out;
}
