#!/usr/bin/env node
/**
 * The floor any HTTP proxy pays: a bare streaming reverse proxy that records
 * nothing, on node:http as seam proxy is (so under Bun it is Bun's node:http,
 * under Node Node's), in plain JavaScript so that the same file runs under both:
 *   bun bench/bare-http-proxy.mjs UPSTREAM_URL      node bench/bare-http-proxy.mjs UPSTREAM_URL
 * Listens on 127.0.0.1 on a free port and prints its origin on stdout.
 * Request and answer bodies are piped as they come; hop-by-hop fields are
 * dropped, Host is the upstream's.
 */
import http from "node:http";

const upstream = new URL(process.argv[2] ?? "");
const HOP = new Set(["connection", "proxy-connection", "keep-alive", "te", "transfer-encoding", "upgrade", "host"]);
const agent = new http.Agent({ keepAlive: true });

function pass(raw) {
  const out = [];
  for (let i = 0; i < raw.length; i += 2) if (!HOP.has(raw[i].toLowerCase())) out.push(raw[i], raw[i + 1]);
  return out;
}

const server = http.createServer({ noDelay: true }, (req, res) => {
  req.socket.setNoDelay(true);
  const up = http.request(
    new URL(upstream.origin + req.url),
    { method: req.method, headers: [...pass(req.rawHeaders), "Host", upstream.host], agent, setHost: false },
    (ures) => {
      res.writeHead(ures.statusCode ?? 502, pass(ures.rawHeaders));
      res.flushHeaders();
      ures.pipe(res);
    },
  );
  up.on("socket", (s) => s.setNoDelay(true));
  up.on("error", () => {
    if (!res.headersSent) res.writeHead(502);
    res.end();
  });
  res.on("close", () => up.destroy());
  req.pipe(up);
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`http://127.0.0.1:${server.address().port}\n`);
});
for (const s of ["SIGINT", "SIGTERM"]) process.on(s, () => process.exit(0));
