/**
 * The endpoint key given with --api-key-fd is nowhere a wrapped server of
 * the same user can look: not in seam's environment or command line, not in
 * a file among seam's descriptors or its own.
 * Given in COMMITLAYER_API_KEY it is in seam's environment (the server's own
 * environment is cleared of it, seam's cannot be): the control that shows the
 * search finds what is there. In all three builds.
 */
import { describe, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { built, seamArgv, VIAS } from "../helpers/cli.ts";
import { tempDir } from "../helpers/proc.ts";

const PEEK = new URL("../fixtures/peek-parent.mjs", import.meta.url).pathname;
const KEY = `sk-SEAMFDTEST-${"q".repeat(24)}`;

interface Found {
  environ: string;
  cmdline: string;
  descriptors: { who: string; fd: string; target: string; text: string }[];
}

function wrapAndPeek(
  via: (typeof VIAS)[number],
  byFd: boolean,
): Promise<{ code: number | null; found: Found; stderr: string }> {
  const dir = tempDir();
  const map = join(dir, "map.json");
  writeFileSync(map, '{"tools": {"x.y": {"contract_id": "c", "action_type": "t", "subject": "arguments.id"}}}');
  const report = join(dir, "found.json");
  const [cmd, ...pre] = seamArgv(via);
  const args = [...pre, "wrap", "--ledger", join(dir, "l.jsonl"), "--map", map, "--api-url", "http://127.0.0.1:9"];
  if (byFd) args.push("--api-key-fd", "3");
  args.push("--", "node", PEEK, report);
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    COMMITLAYER_API_URL: "",
    COMMITLAYER_RECORDER_MAP: "",
  };
  if (byFd) delete env.COMMITLAYER_API_KEY;
  else env.COMMITLAYER_API_KEY = KEY;
  return new Promise((resolve, reject) => {
    const child = spawn(cmd!, args, { env, stdio: ["pipe", "pipe", "pipe", "pipe"] });
    let stderr = "";
    child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    child.stdout!.resume();
    child.on("error", reject);
    const keyPipe = child.stdio[3] as NodeJS.WritableStream;
    keyPipe.on("error", () => {});
    keyPipe.end(byFd ? `${KEY}\n` : "");
    child.stdin!.end();
    child.on("close", (code) => {
      try {
        resolve({ code, found: JSON.parse(readFileSync(report, "utf8")) as Found, stderr });
      } catch {
        reject(new Error(`no report (exit ${code}): ${stderr}`));
      }
    });
  });
}

const anywhere = (f: Found) => [f.environ, f.cmdline, ...f.descriptors.map((d) => d.text)].some((t) => t.includes(KEY));

describe.each(VIAS)("the endpoint key and the wrapped server via %s", (via) => {
  test.skipIf(!built(via) || process.platform !== "linux")(
    "--api-key-fd: not in seam's environment, command line or descriptors; COMMITLAYER_API_KEY: in its environment",
    async () => {
      const fd = await wrapAndPeek(via, true);
      expect(fd.stderr).not.toContain("error");
      expect(fd.found.environ).not.toContain(KEY);
      expect(fd.found.cmdline).not.toContain(KEY);
      expect(fd.found.descriptors.filter((d) => d.text.includes(KEY))).toEqual([]);
      // The search reads what it can: seam's ledger, at least, is among the descriptors it opened.
      expect(fd.found.descriptors.some((d) => d.target.endsWith("l.jsonl"))).toBe(true);
      const env = await wrapAndPeek(via, false);
      expect(anywhere(env.found)).toBe(true);
      expect(env.found.environ).toContain(KEY);
      // seam says so, and how to keep it from the server; given by descriptor, it says nothing of it.
      const warning =
        "seam: warning: COMMITLAYER_API_KEY is in seam's environment, where the wrapped server can read it";
      expect(env.stderr).toContain(warning);
      expect(env.stderr).toContain("--api-key-fd FD");
      expect(env.stderr).not.toContain(KEY);
      expect(fd.stderr).not.toContain("COMMITLAYER_API_KEY is in");
    },
    60_000,
  );
});
