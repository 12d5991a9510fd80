/**
 * seam ship and seam verify nats:// against a real NATS server (Debian's
 * nats-server, started here on loopback ports with JetStream in a temp dir):
 * live shipping of concurrent wraps, a server killed mid-ship, a shipper
 * killed mid-batch, a 3-node cluster losing a node, and a rogue publisher.
 */
import { describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, headers } from "@nats-io/transport-node";
import { replay } from "../../src/fleet/jetstream.ts";
import { KEY, OTHER, writeCheckpointed } from "../helpers/checkpoint-helpers.ts";
import { built, seamArgv, VIAS, type Via } from "../helpers/cli.ts";
import { freePort, HAVE_NATS, type Nats, startNats } from "../helpers/fleet-nats.ts";
import { run, start, tempDir, until } from "../helpers/proc.ts";
import { LedgerBuilder, resetClock, sessionRows } from "../helpers/verify-helpers.ts";

/** A fresh server in a temp dir, with a connection to it and its JetStream manager. */
async function natsWithManager(prefix: string) {
  const dir = tempDir(prefix);
  const nats = await startNats(join(dir, "js"));
  const nc = await connect({ servers: nats.url });
  return { dir, nats, nc, jsm: await jetstreamManager(nc) };
}

function restart(n: Nats): Promise<Nats> {
  const dir = n.args[n.args.indexOf("-sd") + 1]!;
  const extra = n.args.slice(n.args.indexOf("-sd") + 2);
  return startNats(dir, extra, n.port);
}

function ledger(sessions: number, calls: number, tag = ""): string {
  resetClock();
  const b = new LedgerBuilder();
  for (let s = 0; s < sessions; s++) {
    const plan = { id: `${tag}s${s}`, calls: [] as [string, number, string][] };
    for (let c = 0; c < calls; c++) plan.calls.push(["echo", c, "ok"]);
    for (const row of sessionRows(plan)) b.add(row);
  }
  return b.text();
}

async function streamCount(url: string, stream = "SEAM_LEDGERS"): Promise<number> {
  const nc = await connect({ servers: url });
  try {
    const jsm = await jetstreamManager(nc);
    return (await jsm.streams.info(stream)).state.messages;
  } finally {
    await nc.close();
  }
}

const seam = seamArgv("bun");
const verifyJson = async (target: string, extra: string[] = [], via: Via = "bun") => {
  const r = await run([...seamArgv(via), "verify", "--json", target, ...extra]);
  return {
    code: r.code,
    stderr: r.stderr,
    reports: r.stdout
      .toString()
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
};

describe.skipIf(!HAVE_NATS)("seam ship / seam verify nats://", () => {
  test.each(VIAS.filter(built))(
    "via %s: three live wraps shipped with --follow; central verify equals local verify, row for row",
    async (via) => {
      const dir = tempDir("seam-fleet-");
      const nats = await startNats(join(dir, "js"));
      const ledgers = [0, 1, 2].map((i) => join(dir, `l${i}.jsonl`));
      const shipper = start([...seamArgv(via), "ship", ...ledgers, "--to", nats.url, "--create-stream", "--follow"]);
      const fixture = [...seam, "fixture"];
      const wraps = ledgers.map((l) =>
        run([
          ...fixture,
          "client",
          "--script",
          "awkward",
          "--",
          ...seamArgv(via),
          "wrap",
          "--ledger",
          l,
          "--",
          ...fixture,
          "server",
        ]),
      );
      for (const w of await Promise.all(wraps)) expect(w.code).toBe(0);
      const total = ledgers.reduce((n, l) => n + readFileSync(l, "utf8").split("\n").length - 1, 0);
      const t0 = Date.now();
      while ((await streamCount(nats.url)) < total && Date.now() - t0 < 15000) await Bun.sleep(100);
      expect(await streamCount(nats.url)).toBe(total);
      shipper.child.kill("SIGTERM");
      const done = await shipper.done;
      expect([done.code, done.stderr]).toEqual([0, ""]);
      // The awkward script's deliberate non-JSON client lines are rowed: allowed, as in selftest.
      const central = await verifyJson(`${nats.url}/SEAM_LEDGERS`, ["--allow-unparsed"], via);
      expect(central.code).toBe(0);
      expect(central.reports).toHaveLength(3);
      for (const l of ledgers) {
        const local = (await verifyJson(l, ["--allow-unparsed"])).reports[0]!;
        const mine = central.reports.find((r) => r.head === local.head)!;
        expect(mine).toBeDefined();
        for (const k of ["ok", "rows", "chained", "breaks", "head", "sessions", "findings"])
          expect([k, mine[k]]).toEqual([k, local[k]]);
        expect(mine.stream_findings).toEqual([]);
      }
      nats.proc.kill("SIGKILL");
    },
    90_000,
  );

  test.each(VIAS.filter(built))(
    "via %s: --key: a checkpointed ledger's seal reads the same from the stream as from the file",
    async (via) => {
      const dir = tempDir("seam-fleet-key-");
      const nats = await startNats(join(dir, "js"));
      const file = join(dir, "sealed.jsonl");
      await writeCheckpointed(file, { calls: 40, every: 7 });
      const shipped = await run([...seamArgv(via), "ship", file, "--to", nats.url, "--create-stream"]);
      expect([shipped.code, shipped.stderr]).toEqual([0, ""]);
      for (const key of [KEY.verifierKey, OTHER.verifierKey]) {
        const local = await verifyJson(file, ["--key", key], via);
        const central = await verifyJson(`${nats.url}/SEAM_LEDGERS`, ["--key", key], via);
        expect(central.code).toBe(local.code);
        const [l, c] = [local.reports[0]!, central.reports[0]!];
        expect(c.seal).toBeDefined();
        for (const k of ["ok", "rows", "head", "breaks", "findings", "seal"]) expect([k, c[k]]).toEqual([k, l[k]]);
      }
      nats.proc.kill("SIGKILL");
    },
    60_000,
  );

  test("kill -9 the server mid-ship, restart it; kill the shipper mid-batch, restart it: every line once", async () => {
    const dir = tempDir("seam-fleet-kill-");
    let nats = await startNats(join(dir, "js"));
    const file = join(dir, "big.jsonl");
    writeFileSync(file, ledger(40, 500));
    const lines = readFileSync(file, "utf8").split("\n").length - 1;
    const shipper = start([...seam, "ship", file, "--to", nats.url, "--create-stream", "--follow"]);
    await until(() => existsSync(join(dir, "js", "jetstream")), 10000, "stream created");
    const t0 = Date.now();
    while ((await streamCount(nats.url).catch(() => 0)) < 2000 && Date.now() - t0 < 15000) await Bun.sleep(20);
    nats.proc.kill("SIGKILL");
    await Bun.sleep(700);
    nats = await restart(nats);
    const t1 = Date.now();
    while ((await streamCount(nats.url).catch(() => 0)) < lines && Date.now() - t1 < 30000) await Bun.sleep(100);
    shipper.child.kill("SIGTERM");
    const done = await shipper.done;
    expect(done.code).toBe(0);
    expect(done.stderr).toContain("seam: warning: disconnected from nats://127.0.0.1:");
    expect(await streamCount(nats.url)).toBe(lines);
    // Now the shipper dies mid-batch on more lines, and starts again.
    appendFileSync(file, `${ledger(20, 500, "more-").split("\n").slice(0, 6000).join("\n")}\n`);
    const more = readFileSync(file, "utf8").split("\n").length - 1;
    const second = start([...seam, "ship", file, "--to", nats.url]);
    const t2 = Date.now();
    while ((await streamCount(nats.url)) <= lines && Date.now() - t2 < 15000) await Bun.sleep(5);
    second.child.kill("SIGKILL");
    await second.done;
    const again = await run([...seam, "ship", file, "--to", nats.url]);
    expect([again.code, again.stderr]).toEqual([0, ""]);
    expect(await streamCount(nats.url)).toBe(more);
    const central = await verifyJson(`${nats.url}/SEAM_LEDGERS`);
    expect(central.reports[0]!.rows).toBe(more);
    expect(central.reports[0]!.stream_findings).toEqual([]);
    nats.proc.kill("SIGKILL");
  }, 120_000);

  test("a rogue publisher and a rewritten host are caught; deleting from the stream is refused", async () => {
    const dir = tempDir("seam-fleet-rogue-");
    const nats = await startNats(join(dir, "js"));
    const file = join(dir, "l.jsonl");
    writeFileSync(file, ledger(2, 3));
    const shipped = await run([...seam, "ship", file, "--to", nats.url, "--create-stream"]);
    expect([shipped.code, shipped.stderr]).toEqual([0, ""]);
    const ok = await verifyJson(`${nats.url}/SEAM_LEDGERS`);
    expect(ok.code).toBe(0);
    const origin = ok.reports[0]!.origin as string;
    const nc = await connect({ servers: nats.url });
    const js = jetstream(nc);
    const jsm = await jetstreamManager(nc);
    // Deleting or purging what a host shipped is refused by the stream itself.
    await expect(jsm.streams.deleteMessage("SEAM_LEDGERS", 3)).rejects.toThrow();
    await expect(jsm.streams.purge("SEAM_LEDGERS")).rejects.toThrow();
    // A second, different line 4 under the origin.
    const h = headers();
    h.set("Seam-Line", "4");
    const text = readFileSync(file, "utf8");
    await js.publish(
      `seam.ledger.${origin}`,
      new TextEncoder().encode(`${text.split("\n")[3]!.replace(`"ok"`, `"error"`)}\n`),
      {
        headers: h,
      },
    );
    const caught = await verifyJson(`${nats.url}/SEAM_LEDGERS`);
    expect(caught.code).toBe(1);
    expect(caught.reports[0]!.stream_findings).toEqual([
      { kind: "stream_conflict", message: expect.stringContaining("line 4 was published twice with different bytes") },
    ]);
    // A forged next line: its chain does not continue the host's.
    const h2 = headers();
    const n = text.split("\n").length;
    h2.set("Seam-Line", String(n));
    await js.publish(`seam.ledger.${origin}`, new TextEncoder().encode(`{"evt": "tool_call", "chain": "0000"}\n`), {
      headers: h2,
    });
    const forged = await verifyJson(`${nats.url}/SEAM_LEDGERS`);
    expect(forged.code).toBe(1);
    expect(forged.reports[0]!.first_break as string).toMatch(/^line \d+: /);
    await nc.close();
    // The stream now holds lines the host never wrote: the shipper names the first and will not add to it.
    const longer = await run([...seam, "ship", file, "--to", nats.url]);
    expect(longer.code).toBe(1);
    expect(longer.stderr).toContain(
      `the stream's message ${(ok.reports[0]!.rows as number) + 1} on seam.ledger.${origin} is line 4, which differs from this file's line 4`,
    );
    // A host that rewrites its own history after shipping (its last session): refused too.
    const file2 = join(dir, "l2.jsonl");
    writeFileSync(file2, ledger(2, 4, "b-"));
    expect((await run([...seam, "ship", file2, "--to", nats.url])).code).toBe(0);
    writeFileSync(file2, readFileSync(file2, "utf8").replaceAll(`"b-s1"`, `"b-sX"`));
    const refused = await run([...seam, "ship", file2, "--to", nats.url]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/ is line (\d+), which differs from this file's line \1: /);
    // --origin: one origin, several (read off the whole stream where the server filters one subject only), an unknown one.
    const origin2 = (await verifyJson(`${nats.url}/SEAM_LEDGERS`)).reports.find((r) => r.origin !== origin)!
      .origin as string;
    const none = "seam-ledger/00000000000000000000000000000000";
    const picks: [string, number, [string, boolean | string][]][] = [
      [origin2, 0, [[origin2, true]]],
      [origin, 1, [[origin, false]]],
      [
        `${origin},${origin2}`,
        1,
        [
          [origin, false],
          [origin2, true],
        ],
      ],
      [
        `${origin2},${none}`,
        3,
        [
          [origin2, true],
          [none, "not found"],
        ],
      ],
    ];
    for (const [pick, code, reports] of picks) {
      const r = await verifyJson(`${nats.url}/SEAM_LEDGERS`, ["--origin", pick]);
      expect([pick, r.code]).toEqual([pick, code]);
      expect(r.reports.map((x) => [x.origin, x.found === false ? "not found" : x.ok])).toEqual(reports);
    }
    nats.proc.kill("SIGKILL");
  }, 60_000);

  test("a line the stream refuses while later ones are stored is shipped again once it can be: no gap", async () => {
    const { dir, nats, nc, jsm } = await natsWithManager("seam-fleet-refused-");
    // An append-only stream whose size limit refuses a few long lines in the middle of a batch.
    await jsm.streams.add({
      name: "SEAM_LEDGERS",
      subjects: ["seam.ledger.>"],
      deny_delete: true,
      deny_purge: true,
      max_msg_size: 1000,
    });
    resetClock();
    const b = new LedgerBuilder();
    const calls: [string, number, string][] = [];
    for (let c = 0; c < 40; c++) calls.push([c === 17 ? "t".repeat(1200) : "echo", c, "ok"]);
    for (const row of sessionRows({ id: "s0", calls })) b.add(row);
    const file = join(dir, "l.jsonl");
    writeFileSync(file, b.text());
    const lines = b.lines.length;
    const long = b.lines.findIndex((l) => l.length > 1000) + 1;
    expect(long).toBeGreaterThan(1);
    const first = await run([...seam, "ship", file, "--to", nats.url]);
    expect(first.code).toBe(1);
    expect(first.stderr).toContain(`seam: error: ${file}: the stream refused line ${long}: `);
    // The lines after it went through: the stream's last line is the file's last.
    expect(await streamCount(nats.url)).toBe(lines - 1);
    // A follower starts from the missing line, says once that it is refused, and keeps trying.
    const follower = start([...seam, "ship", file, "--to", nats.url, "--follow"]);
    await until(() => follower.stderrSoFar().includes("retrying"), 15000, "the refusal said");
    await jsm.streams.update("SEAM_LEDGERS", { max_msg_size: -1 });
    const t0 = Date.now();
    while ((await streamCount(nats.url)) < lines && Date.now() - t0 < 15000) await Bun.sleep(100);
    follower.child.kill("SIGTERM");
    const done = await follower.done;
    expect(done.code).toBe(0);
    expect(done.stderr.match(/retrying/g)).toEqual(["retrying"]);
    expect(done.stderr).toContain(`l.jsonl: the stream refused line ${long}: `);
    // Each line once (the re-sent ones were dropped by their Nats-Msg-Id), and nothing missing.
    expect(await streamCount(nats.url)).toBe(lines);
    const central = await verifyJson(`${nats.url}/SEAM_LEDGERS`);
    expect([central.code, central.reports[0]!.rows, central.reports[0]!.stream_findings]).toEqual([0, lines, []]);
    await nc.close();
    nats.proc.kill("SIGKILL");
  }, 60_000);

  test("Seam-Line is read from the header block as the client's own header decoding reads it", async () => {
    const { nats, nc, jsm } = await natsWithManager("seam-fleet-headers-");
    await jsm.streams.add({ name: "H", subjects: ["h.>"] });
    const js = jetstream(nc);
    const cases: [string, string][][] = [
      [["Seam-Line", "7"]],
      [["Seam-Line", " 8 "]],
      [["seam-line", "9"]],
      [["Seam-Lines", "10"]],
      [["X-Seam-Line", "11"]],
      [
        ["Seam-Host", "h"],
        ["Seam-Line", "12"],
        ["Seam-Line", "13"],
      ],
      [["Nats-Msg-Id", "Seam-Line: 14"]],
      [["Seam-Line", ""]],
      [],
    ];
    for (const c of cases) {
      const h = headers();
      for (const [k, v] of c) h.append(k, v);
      await js.publish("h.x", new Uint8Array([1]), c.length > 0 ? { headers: h } : {});
    }
    const consumer = await js.consumers.get("H");
    const theirs: (string | null)[] = [];
    for await (const m of await consumer.fetch({ max_messages: cases.length })) {
      theirs.push(m.headers?.get("Seam-Line") ?? null);
      if (theirs.length === cases.length) break;
    }
    const got: [string | null, string | null][] = [];
    for await (const batch of replay(nc, "H")) for (const m of batch) got.push([m.line, theirs[m.seq - 1]!]);
    expect(got.map(([mine]) => mine)).toEqual(["7", "8", null, null, null, "12", null, "", null]);
    for (const [mine, theirs] of got) expect(mine ?? "").toBe(theirs ?? "");
    await nc.close();
    nats.proc.kill("SIGKILL");
  }, 30_000);

  test("a replay in pulls smaller than the stream: every message once, in order, filtered, headers only; no consumer left", async () => {
    const { nats, nc, jsm } = await natsWithManager("seam-fleet-replay-");
    await jsm.streams.add({ name: "R", subjects: ["r.>"] });
    const js = jetstream(nc);
    const sent: { subject: string; line: string; data: string }[] = [];
    for (let i = 1; i <= 300; i++) {
      const subject = i % 3 === 0 ? "r.b" : "r.a";
      const h = headers();
      h.set("Seam-Line", String(i));
      const data = `${subject} ${i} ${"x".repeat(i % 50)}\n`;
      await js.publish(subject, new TextEncoder().encode(data), { headers: h });
      sent.push({ subject, line: String(i), data });
    }
    await js.publish("r.c", new Uint8Array([1]));
    const read = async (subjects: string[] | undefined, headersOnly: boolean, pull: number) => {
      const got: { seq: number; subject: string; line: string | null; data: string }[] = [];
      let batches = 0;
      for await (const batch of replay(nc, "R", subjects, headersOnly, pull)) {
        batches++;
        for (const m of batch)
          got.push({ seq: m.seq, subject: m.subject, line: m.line, data: new TextDecoder().decode(m.data) });
      }
      expect((await jsm.consumers.list("R").next()).length).toBe(0);
      return { got, batches };
    };
    const want = (keep: (s: (typeof sent)[number]) => boolean, headersOnly = false) =>
      sent.flatMap((s, i) =>
        keep(s) ? [{ seq: i + 1, subject: s.subject, line: s.line, data: headersOnly ? "" : s.data }] : [],
      );
    const all = await read(undefined, false, 16);
    expect(all.got).toEqual([...want(() => true), { seq: 301, subject: "r.c", line: null, data: "\u0001" }]);
    expect(all.batches).toBeGreaterThan(300 / 16);
    expect((await read(["r.b"], false, 7)).got).toEqual(want((s) => s.subject === "r.b"));
    expect((await read(["r.a"], true, 5)).got).toEqual(want((s) => s.subject === "r.a", true));
    // Several subjects: the stream up to the last of theirs (the caller keeps theirs).
    expect((await read(["r.a", "r.b"], false, 64)).got).toEqual(want(() => true));
    expect((await read(["r.none"], false, 64)).got).toEqual([]);
    // The consumer gone mid-replay: the replay says so rather than end short or wait.
    const stopped = (async () => {
      let n = 0;
      let deleted = false;
      for await (const batch of replay(nc, "R", undefined, false, 4)) {
        n += batch.length;
        // Once, from the eighth message on: on a busy machine a batch may carry more than one pull's worth.
        if (n >= 8 && !deleted) {
          deleted = true;
          for (const c of await jsm.consumers.list("R").next()) await jsm.consumers.delete("R", c.name);
        }
      }
      return n;
    })();
    await expect(stopped).rejects.toThrow(
      /^the replay of R stopped(: | before its last message \(301\): the server answered nothing)/,
    );
    await nc.close();
    nats.proc.kill("SIGKILL");
  }, 30_000);

  test("the fast reading of frames stays on a connection through a server restart", async () => {
    const { nats, nc, jsm } = await natsWithManager("seam-fleet-frames-");
    const { Parser } = await import("@nats-io/nats-core/internal");
    const parser = () => (nc as unknown as { protocol: { parser: InstanceType<typeof Parser> } }).protocol.parser;
    await jsm.streams.add({ name: "F", subjects: ["f.>"] });
    await jetstream(nc).publish("f.x", new Uint8Array([7]));
    expect(Object.hasOwn(parser(), "parse")).toBe(false);
    const lines = async () => {
      const out: number[] = [];
      for await (const batch of replay(nc, "F")) for (const m of batch) out.push(m.seq, m.data[0]!);
      return out;
    };
    expect(await lines()).toEqual([1, 7]);
    const first = parser();
    expect(Object.hasOwn(first, "parse")).toBe(true);
    nats.proc.kill("SIGKILL");
    const again = await restart(nats);
    await until(() => parser() !== first && !nc.isClosed(), 15000, "reconnected");
    for (let i = 0; i < 100 && (await jsm.streams.info("F").catch(() => null)) === null; i++) await Bun.sleep(100);
    expect(Object.hasOwn(parser(), "parse")).toBe(true);
    expect(await lines()).toEqual([1, 7]);
    await nc.close();
    again.proc.kill("SIGKILL");
  }, 60_000);

  test("a 3-node cluster with --replicas 3 loses a node during shipping: nothing lost, central verify ok", async () => {
    const dir = tempDir("seam-fleet-cluster-");
    const ports = await Promise.all([0, 1, 2].map(() => freePort()));
    const routes = ports.map((p) => `nats://127.0.0.1:${p}`).join(",");
    const nodes = await Promise.all(
      [0, 1, 2].map((i) =>
        startNats(join(dir, `n${i}`), [
          "-n",
          `n${i}`,
          "--cluster_name",
          "seam",
          "--cluster",
          `nats://127.0.0.1:${ports[i]}`,
          "--routes",
          routes,
        ]),
      ),
    );
    const urls = nodes.map((n) => `127.0.0.1:${n.port}`).join(",");
    const file = join(dir, "l.jsonl");
    writeFileSync(file, ledger(20, 300));
    const lines = readFileSync(file, "utf8").split("\n").length - 1;
    // JetStream's meta leader is elected a moment after the routes form.
    let created = { code: 1 as number | null, stderr: "" };
    for (let i = 0; i < 40 && created.code !== 0; i++) {
      created = await run([
        ...seam,
        "ship",
        "/dev/null",
        "--to",
        `nats://${urls}`,
        "--create-stream",
        "--replicas",
        "3",
      ]);
      if (created.code !== 0) await Bun.sleep(500);
    }
    expect(created).toEqual({ code: 0, stderr: "", signal: null, stdout: expect.anything() } as never);
    const shipper = start([...seam, "ship", file, "--to", `nats://${urls}`, "--follow"]);
    const t0 = Date.now();
    while ((await streamCount(nodes[0]!.url).catch(() => 0)) < 1000 && Date.now() - t0 < 20000) await Bun.sleep(20);
    nodes[2]!.proc.kill("SIGKILL");
    const t1 = Date.now();
    while ((await streamCount(nodes[0]!.url).catch(() => 0)) < lines && Date.now() - t1 < 60000) await Bun.sleep(200);
    shipper.child.kill("SIGTERM");
    const shipped = await shipper.done;
    if (shipped.code !== 0) console.error(shipped.stderr);
    expect(shipped.code).toBe(0);
    // With a node gone the stream's leader may still be moving: the replay is retried while the servers cannot answer it.
    const target = `nats://${nodes[0]!.url.slice(7)},${nodes[1]!.url.slice(7)}/SEAM_LEDGERS`;
    let central = await verifyJson(target);
    for (let i = 0; i < 20 && central.code === 3; i++) {
      await Bun.sleep(1000);
      central = await verifyJson(target);
    }
    expect([central.code, central.stderr]).toEqual([0, ""]);
    expect(central.reports[0]!.rows).toBe(lines);
    for (const n of nodes) n.proc.kill("SIGKILL");
  }, 150_000);

  test("usage: --to is needed, a stream that allows purge is refused, credentials are never echoed", async () => {
    const dir = tempDir("seam-fleet-usage-");
    const nats = await startNats(join(dir, "js"));
    const nc = await connect({ servers: nats.url });
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: "MUTABLE", subjects: ["seam.ledger.>"] });
    await nc.close();
    const file = join(dir, "l.jsonl");
    writeFileSync(file, ledger(1, 1));
    const cases: [string[], number, string][] = [
      [["ship", file], 2, "seam: error: --to nats://HOST:PORT is required\n"],
      [
        ["ship", file, "--to", "http://x"],
        2,
        "seam: error: --to: not a nats://HOST:PORT[,HOST:PORT…][/STREAM] address\n",
      ],
      [
        ["ship", file, "--to", nats.url, "--stream", "MUTABLE"],
        1,
        "seam: error: stream MUTABLE allows delete: a host could erase what it shipped; use an append-only stream (deny_delete, deny_purge) or --allow-mutable-stream\n",
      ],
      [["verify", nats.url], 2, "seam: error: name the stream: nats://HOST:PORT/STREAM\n"],
      ...["a.b", "web*", ">", ""].map((host): [string[], number, string] => [
        ["ship", file, "--to", nats.url, "--host", host],
        2,
        "seam: error: --host takes a name of letters, digits, '-' and '_' (one NATS subject token)\n",
      ]),
    ];
    for (const [argv, code, err] of cases) {
      const r = await run([...seam, ...argv]);
      expect([r.code, r.stderr.split("seam: hint")[0]]).toEqual([code, err]);
    }
    const secret = await run([...seam, "ship", file, "--to", `nats://alice:hunter2@127.0.0.1:${nats.port}`]);
    expect(secret.code).toBe(1);
    expect(secret.stderr).not.toContain("hunter2");
    expect(secret.stderr).not.toContain("alice");
    nats.proc.kill("SIGKILL");
  }, 60_000);
});
