/**
 * Forged tails on the fleet stream, against a real nats-server: someone
 * with publish rights on a host's subject appends correctly chained rows
 * after the host's signed lines. `seam verify nats:// --key` does not call
 * them ok, and the host's `seam ship` stops, naming the first foreign line.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { jetstream } from "@nats-io/jetstream";
import { connect, headers } from "@nats-io/transport-node";
import { getField, parseJson } from "../../src/core/json.ts";
import { KEY, linesOf, writeCheckpointed } from "../helpers/checkpoint-helpers.ts";
import { seamArgv } from "../helpers/cli.ts";
import { freePort, HAVE_NATS, startNats } from "../helpers/fleet-nats.ts";
import { run, start, tempDir } from "../helpers/proc.ts";
import { LedgerBuilder, sessionRows } from "../helpers/verify-helpers.ts";

const seam = seamArgv("bun");
const FOREIGN =
  " a line this shipper did not write (someone else published to this origin, or the file was changed after it was shipped)";

async function verifyJson(target: string, extra: string[] = []) {
  const r = await run([...seam, "verify", "--json", target, ...extra]);
  const reports = r.stdout
    .toString()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { code: r.code, stderr: r.stderr, reports };
}

/** A complete session that calls wire_transfer, chained on from the file's last line. */
function forgedRows(file: string): string[] {
  const last = linesOf(file).at(-1)!;
  const b = new LedgerBuilder();
  b.prev = getField(parseJson(last), "chain") as string;
  for (const row of sessionRows({ id: "forged", calls: [["wire_transfer", 1, "ok"]] })) b.add(row);
  return b.lines;
}

/** Publishes `lines` on `subject` as lines first, first+1, … with the headers a shipper sets; their stream sequences. */
async function publishAs(url: string, subject: string, origin: string, first: number, lines: string[], idTag = "") {
  const nc = await connect({ servers: url });
  const js = jetstream(nc);
  const seqs: number[] = [];
  for (let i = 0; i < lines.length; i++) {
    const h = headers();
    h.set("Nats-Msg-Id", `${origin}:${first + i}${idTag}`);
    h.set("Seam-Line", String(first + i));
    h.set("Seam-Host", "forger");
    seqs.push((await js.publish(subject, new TextEncoder().encode(`${lines[i]}\n`), { headers: h })).seq);
  }
  await nc.close();
  return seqs;
}

/** A signed ledger shipped to a fresh server: its file, origin and line count. */
async function shippedSigned(prefix: string) {
  const dir = tempDir(prefix);
  const nats = await startNats(join(dir, "js"));
  const file = join(dir, "host.jsonl");
  await writeCheckpointed(file, { calls: 6, every: 4 });
  const shipped = await run([...seam, "ship", file, "--to", nats.url, "--create-stream"]);
  expect([shipped.code, shipped.stderr]).toEqual([0, ""]);
  const ok = await verifyJson(`${nats.url}/SEAM_LEDGERS`, ["--key", KEY.verifierKey]);
  expect(ok.code).toBe(0);
  const origin = ok.reports[0]!.origin as string;
  return { dir, nats, file, origin, lines: linesOf(file).length };
}

describe.skipIf(!HAVE_NATS)("forged tails on the fleet stream", () => {
  test("verify --key: rows after the last signed checkpoint are inconclusive, unless --allow-unsealed", async () => {
    const { nats, file, origin, lines } = await shippedSigned("seam-forged-verify-");
    const stream = `${nats.url}/SEAM_LEDGERS`;
    const forged = forgedRows(file);
    await publishAs(nats.url, `seam.ledger.${origin}`, origin, lines + 1, forged);
    // Without a key nothing vouches for any row: the chain holds, as before.
    const plain = await verifyJson(stream);
    expect([plain.code, plain.reports[0]!.findings]).toEqual([0, []]);
    const cases: [string[], number, boolean][] = [
      [["--key", KEY.verifierKey], 3, false],
      [["--key", KEY.verifierKey, "--allow-unsealed"], 0, true],
    ];
    for (const [flags, code, allowed] of cases) {
      const r = await verifyJson(stream, flags);
      expect([flags, r.code, r.stderr]).toEqual([flags, code, ""]);
      const rep = r.reports[0]!;
      expect((rep.sessions as { id: string }[]).map((s) => s.id)).toEqual(["s1", "forged"]);
      expect((rep.seal as { unsealed_rows: number }).unsealed_rows).toBe(forged.length);
      expect(rep.finding_kinds).toEqual(allowed ? [] : ["stream_unsealed_tail"]);
      expect(rep.ok).toBe(allowed ? true : null);
      const said = allowed ? (rep.notes as string[]) : (rep.findings as string[]);
      expect(said).toContainEqual(
        expect.stringContaining(`${forged.length} rows after the checkpoint on line ${lines}`),
      );
      if (allowed) expect(said).toContainEqual(expect.stringContaining("--allow-unsealed"));
    }
    const human = await run([...seam, "verify", stream, "--key", KEY.verifierKey]);
    expect(human.code).toBe(3);
    expect(human.stdout.toString()).toContain(`SEAM_LEDGERS ${origin}: inconclusive`);
    expect(human.stdout.toString()).toContain(
      `unsealed tail: ${forged.length} rows after the checkpoint on line ${lines}`,
    );
    // --allow-unsealed belongs to a stream with --key.
    for (const argv of [
      ["verify", stream, "--allow-unsealed"],
      ["verify", file, "--key", KEY.verifierKey, "--allow-unsealed"],
    ]) {
      const r = await run([...seam, ...argv]);
      expect([r.code, r.stderr.split("\n")[0]]).toEqual([
        2,
        expect.stringMatching(/^seam: error: --allow-unsealed goes with/),
      ]);
    }
    nats.proc.kill("SIGKILL");
  }, 60_000);

  /** The host's own next session, appended to its ledger as its writer would. */
  const hostGoesOn = (file: string, session: string) => writeCheckpointed(file, { calls: 3, every: 4, session });

  test("ship: a forged tail after the host's lines stops it, naming the first foreign line (file as shipped, and grown)", async () => {
    const { nats, file, origin, lines } = await shippedSigned("seam-forged-ship-");
    const subject = `seam.ledger.${origin}`;
    const seqs = await publishAs(nats.url, subject, origin, lines + 1, forgedRows(file));
    const first = `message ${seqs[0]} on ${subject} is line ${lines + 1}`;
    const same = await run([...seam, "ship", file, "--to", nats.url]);
    expect([same.code, same.stderr.split("\n")[0]]).toEqual([
      1,
      `seam: error: ${file}: the stream's ${first}, which this file does not have:${FOREIGN}`,
    ]);
    expect(same.stderr).toContain(
      `\nseam: hint: \`seam verify nats://HOST:PORT/STREAM --origin ${origin} --key VKEY\` shows`,
    );
    await hostGoesOn(file, "s2");
    expect(linesOf(file).length).toBeGreaterThan(lines + seqs.length);
    const grown = await run([...seam, "ship", file, "--to", nats.url]);
    expect([grown.code, grown.stderr.split("\n")[0]]).toEqual([
      1,
      `seam: error: ${file}: the stream's ${first}, which differs from this file's line ${lines + 1}:${FOREIGN}`,
    ]);
    nats.proc.kill("SIGKILL");
  }, 60_000);

  test("ship: a forged next line under the host's own message id is not taken for the host's line", async () => {
    const { nats, file, origin, lines } = await shippedSigned("seam-forged-dup-");
    const subject = `seam.ledger.${origin}`;
    // One forged line with the id the host's next line will have: the stream drops the host's as a duplicate.
    const [seq] = await publishAs(nats.url, subject, origin, lines + 1, forgedRows(file).slice(0, 1));
    await hostGoesOn(file, "s2");
    const r = await run([...seam, "ship", file, "--to", nats.url]);
    expect([r.code, r.stderr.split("\n")[0]]).toEqual([
      1,
      `seam: error: ${file}: the stream's message ${seq} on ${subject} is line ${lines + 1}, which differs from this file's line ${lines + 1}:${FOREIGN}`,
    ]);
    nats.proc.kill("SIGKILL");
  }, 60_000);

  test("ship: the host's next message id taken on another subject stops it: the stream dropped its line", async () => {
    const { nats, file, origin, lines } = await shippedSigned("seam-forged-elsewhere-");
    // Message ids are the stream's: one on a subject of the forger's own drops the host's line as a duplicate.
    await publishAs(nats.url, "seam.ledger.forger", origin, lines + 1, forgedRows(file).slice(0, 1));
    await hostGoesOn(file, "s2");
    const r = await run([...seam, "ship", file, "--to", nats.url]);
    expect([r.code, r.stderr.split("\n")[0]]).toEqual([
      1,
      `seam: error: ${file}: the stream took line ${lines + 1} for a duplicate and does not hold it on seam.ledger.${origin}: someone else published a message with its id (${origin}:${lines + 1})`,
    ]);
    nats.proc.kill("SIGKILL");
  }, 60_000);

  test.each([
    ["the host's next message id", ""],
    ["another message id", ":forged"],
  ])(
    "ship --follow: a line forged while it runs (under %s) stops it once it ships again",
    async (_, idTag) => {
      const { nats, file, origin, lines } = await shippedSigned("seam-forged-follow-");
      const subject = `seam.ledger.${origin}`;
      const follower = start([...seam, "ship", file, "--to", nats.url, "--follow"]);
      await Bun.sleep(1500);
      const [seq] = await publishAs(nats.url, subject, origin, lines + 1, forgedRows(file).slice(0, 1), idTag);
      await hostGoesOn(file, "s2");
      const done = await Promise.race([follower.done, Bun.sleep(15_000).then(() => null)]);
      if (done === null) {
        follower.child.kill("SIGKILL");
        console.error(follower.stderrSoFar());
      }
      expect(done?.code).toBe(1);
      // Forged before its first look at the stream (a slow start), it is caught there, as a line the file lacks.
      expect(done?.stderr.split("\n")[0]).toMatch(
        new RegExp(
          `^seam: error: .*: the stream's message ${seq} on seam\\.ledger\\.${origin} is line ${lines + 1}, which (differs from this file's line ${lines + 1}|this file does not have): a line this shipper did not write`,
        ),
      );
      nats.proc.kill("SIGKILL");
    },
    60_000,
  );
});

/**
 * The server configuration docs/fleet-permissions.md shows: each host's
 * user may publish on its own ledger subjects and use the JetStream API a
 * shipper needs on the stream, nothing else; an admin creates the stream
 * and verifies.
 */
function permissionsConf(hosts: string[]): string {
  const host = (name: string) => `    {
      user: ${name}, password: ${name}-secret
      permissions: {
        publish: { allow: [
          "seam.ledger.${name}.>",
          "$JS.API.INFO",
          "$JS.API.STREAM.INFO.SEAM_LEDGERS",
          "$JS.API.STREAM.MSG.GET.SEAM_LEDGERS",
          "$JS.API.CONSUMER.CREATE.SEAM_LEDGERS",
          "$JS.API.CONSUMER.MSG.NEXT.SEAM_LEDGERS.*",
          "$JS.API.CONSUMER.DELETE.SEAM_LEDGERS.*"
        ] }
        subscribe: { allow: ["_INBOX.>"] }
      }
    }`;
  // The address and JetStream's store come from the command line here (startNats).
  return `authorization {
  users: [
    { user: admin, password: admin-secret }
${hosts.map(host).join("\n")}
  ]
}
`;
}

describe.skipIf(!HAVE_NATS)("per-host publish permissions on a real nats-server", () => {
  test("another host's user cannot publish on this host's subjects; each host ships on its own; verify reads both", async () => {
    const dir = tempDir("seam-fleet-perms-");
    const port = await freePort();
    const conf = join(dir, "nats.conf");
    writeFileSync(conf, permissionsConf(["web1", "web2"]));
    const nats = await startNats(join(dir, "js"), ["-c", conf], port);
    const as = (user: string) => `nats://${user}:${user}-secret@127.0.0.1:${port}`;
    const created = await run([...seam, "ship", "/dev/null", "--to", as("admin"), "--create-stream"]);
    expect([created.code, created.stderr]).toEqual([0, ""]);
    const a = join(dir, "a.jsonl");
    const b = join(dir, "b.jsonl");
    await writeCheckpointed(a, { calls: 5, every: 3, session: "a1" });
    await writeCheckpointed(b, { calls: 4, every: 3, session: "b1" });
    // Each host ships on its own subjects.
    for (const [file, user] of [
      [a, "web1"],
      [b, "web2"],
    ] as const) {
      const r = await run([...seam, "ship", file, "--to", as(user), "--host", user]);
      expect([user, r.code, r.stderr]).toEqual([user, 0, ""]);
    }
    const stream = `${nats.url}/SEAM_LEDGERS`;
    const admin = `${as("admin")}/SEAM_LEDGERS`;
    const both = await verifyJson(admin, ["--key", KEY.verifierKey]);
    expect([both.code, both.stderr]).toEqual([0, ""]);
    expect(both.reports.map((r) => [r.host, (r.sessions as { id: string }[])[0]!.id, r.ok])).toEqual([
      ["web1", "a1", true],
      ["web2", "b1", true],
    ]);
    const originA = both.reports[0]!.origin as string;
    // web2's credentials cannot put a line on web1's subjects, nor on the subjects without a host.
    const forged = forgedRows(a);
    for (const subject of [`seam.ledger.web1.${originA}`, `seam.ledger.${originA}`]) {
      const nc = await connect({ servers: nats.url, user: "web2", pass: "web2-secret" });
      const h = headers();
      h.set("Seam-Line", String(linesOf(a).length + 1));
      await expect(
        jetstream(nc).publish(subject, new TextEncoder().encode(`${forged[0]}\n`), { headers: h, timeout: 2000 }),
      ).rejects.toThrow(/permissions violation/i);
      await nc.close();
    }
    const ship2as1 = await run([...seam, "ship", b, "--to", as("web2"), "--host", "web1"]);
    expect(ship2as1.code).toBe(1);
    expect(ship2as1.stderr).toMatch(/^seam: error: .*not permitted to publish on seam\.ledger\.web1\./);
    // Nothing of web2's reached web1's subjects: web1 goes on shipping, and the stream verifies.
    await writeCheckpointed(a, { calls: 2, every: 3, session: "a2" });
    const more = await run([...seam, "ship", a, "--to", as("web1"), "--host", "web1"]);
    expect([more.code, more.stderr]).toEqual([0, ""]);
    const after = await verifyJson(admin, ["--key", KEY.verifierKey, "--origin", originA]);
    expect([after.code, after.reports.length, after.reports[0]!.host, after.reports[0]!.rows]).toEqual([
      0,
      1,
      "web1",
      linesOf(a).length,
    ]);
    // An address without credentials is refused by this server.
    expect((await verifyJson(stream)).code).toBe(3);
    nats.proc.kill("SIGKILL");
  }, 90_000);
});
