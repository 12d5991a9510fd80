#!/usr/bin/env node
/**
 * The floor any stdio proxy pays: a bare byte relay with no observation and no
 * recording, written the way the runtime it runs on relays bytes best, in
 * plain JavaScript so that the same file runs under Node 20 and Bun:
 *   bun bench/bare-relay.mjs -- CMD [ARGS…]      node bench/bare-relay.mjs -- CMD [ARGS…]
 *
 * stdin → the child's stdin, the child's stdout → stdout, the child's stderr
 * inherited; stdin EOF closes the child's stdin; exits with the child's status.
 * Under Bun: Bun.spawn, FileSink writes to the child, flushed per chunk.
 * Under Node: child_process.spawn and stream.pipe both ways.
 */
const dd = process.argv.indexOf("--");
const argv = dd < 0 ? process.argv.slice(2) : process.argv.slice(dd + 1);
if (argv.length === 0) {
  process.stderr.write("usage: bare-relay.mjs -- CMD [ARGS…]\n");
  process.exit(2);
}

if (typeof Bun !== "undefined") {
  const proc = Bun.spawn({ cmd: argv, stdin: "pipe", stdout: "pipe", stderr: "inherit" });
  const c2s = (async () => {
    try {
      for await (const chunk of Bun.stdin.stream()) {
        proc.stdin.write(chunk);
        const r = proc.stdin.flush();
        if (r instanceof Promise) await r;
      }
    } catch {}
    try {
      await proc.stdin.end();
    } catch {}
  })();
  const s2c = (async () => {
    for await (const chunk of proc.stdout) {
      if (!process.stdout.write(chunk)) await new Promise((r) => process.stdout.once("drain", r));
    }
  })();
  const code = await proc.exited;
  await s2c;
  void c2s;
  process.exitCode = proc.signalCode ? 128 : code;
} else {
  const { spawn } = await import("node:child_process");
  const child = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
  child.stdin.on("error", () => {});
  process.stdin.pipe(child.stdin);
  child.stdout.pipe(process.stdout);
  child.on("close", (code, signal) => {
    process.exitCode = signal ? 128 : (code ?? 1);
  });
}
