/** A real nats-server for the fleet tests: started on a free loopback port with JetStream in a temp dir, killed at the end. */
import { afterAll } from "bun:test";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { createServer } from "node:net";
import { until } from "./proc.ts";

export const HAVE_NATS = spawnSync("nats-server", ["--version"]).status === 0;
if (!HAVE_NATS)
  console.warn("fleet tests skipped: nats-server is not installed (apt-get install nats-server; CI installs it)");

const servers: ChildProcess[] = [];
afterAll(() => {
  for (const s of servers) s.kill("SIGKILL");
});

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

export interface Nats {
  port: number;
  url: string;
  proc: ChildProcess;
  args: string[];
}

export async function startNats(dir: string, extra: string[] = [], port?: number): Promise<Nats> {
  const p = port ?? (await freePort());
  const args = ["-a", "127.0.0.1", "-p", String(p), "-js", "-sd", dir, ...extra];
  const proc = spawn("nats-server", args, { stdio: ["ignore", "ignore", "pipe"] });
  servers.push(proc);
  let log = "";
  proc.stderr!.on("data", (d: Buffer) => {
    log += d.toString();
  });
  await until(() => log.includes("Server is ready"), 15000, `nats-server on ${p} ready`);
  return { port: p, url: `nats://127.0.0.1:${p}`, proc, args };
}
