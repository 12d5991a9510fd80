/**
 * Forged tails on the fleet stream, against a real nats-server: someone
 * with publish rights on a host's subject appends correctly chained rows
 * after the host's signed lines. `seam verify nats:// --key` does not call
 * them ok, and the host's `seam ship` stops, naming the first foreign line.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { jetstream } from "@nats-io/jetstream";
import { connect, headers } from "@nats-io/transport-node";
import { getField, parseJson } from "../src/core/json.ts";
import { KEY, linesOf, writeCheckpointed } from "./checkpoint-helpers.ts";
import { seamArgv } from "./cli.ts";
import { HAVE_NATS, startNats } from "./fleet-nats.ts";
import { run, start, tempDir } from "./proc.ts";
import { LedgerBuilder, sessionRows } from "./verify-helpers.ts";

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
    expect(same.stderr).toContain("seam: hint: ");
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
