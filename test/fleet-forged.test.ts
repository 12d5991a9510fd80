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
import { run, tempDir } from "./proc.ts";
import { LedgerBuilder, sessionRows } from "./verify-helpers.ts";

const seam = seamArgv("bun");

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
async function publishAs(url: string, subject: string, origin: string, first: number, lines: string[]) {
  const nc = await connect({ servers: url });
  const js = jetstream(nc);
  const seqs: number[] = [];
  for (let i = 0; i < lines.length; i++) {
    const h = headers();
    h.set("Nats-Msg-Id", `${origin}:${first + i}`);
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
});
