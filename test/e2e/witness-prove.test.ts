/**
 * `seam verify --prove` on a ledger whose checkpoints real `seam witness`
 * processes cosigned (from source under Bun, as the Node bundle and as the
 * compiled executable): the proof's checkpoint note carries the cosignature
 * rows' lines, so `--check-proof --policy` finds the quorum with nothing
 * added by hand. The checkpoint is the smallest covering one cosigned by the
 * most witnesses, or with `--policy` the smallest its quorum cosigned.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { parseTlogProof } from "../../src/checkpoint/checkpoint.ts";
import { parseNote } from "../../src/checkpoint/note.ts";
import { getField } from "../../src/core/json.ts";
import { built, runCli, VIAS } from "../helpers/cli.ts";
import { evt, rowsOf, witnessKit } from "../helpers/witness-kit.ts";

describe.each(VIAS.filter(built))("via %s", (via) => {
  test("--prove puts the cosignature rows' lines on its checkpoint; --check-proof --policy finds the quorum", async () => {
    const { p, keygen, wrapDemo, configureLog, startWitness } = witnessKit(via);
    const wrap = (urls: string[]) => wrapDemo("l.jsonl", urls);
    const logKey = await keygen("log.test", "log.key");
    await keygen("w1.test", "w1.key");
    await keygen("w2.test", "w2.key");
    // Session 1 unwitnessed (it gives the origin the witnesses are configured with), session 2 cosigned by
    // both witnesses, session 3 by W1 alone.
    expect((await wrap([])).code).toBe(0);
    const firstSession = rowsOf(p("l.jsonl")).length;
    configureLog(logKey);
    const w1 = await startWitness("w1");
    const w2 = await startWitness("w2");
    let keys: string[];
    try {
      expect((await wrap([w1.url, w2.url])).code).toBe(0);
      const secondSession = rowsOf(p("l.jsonl")).length;
      expect((await wrap([w1.url])).code).toBe(0);
      keys = [w1, w2].map((w) => /its cosignature key: (\S+)\n/.exec(w.stderr())![1]!);
      const rows = rowsOf(p("l.jsonl"));
      const cosigs = rows.filter((r) => evt(r) === "cosignature");
      const by = (size: number) =>
        cosigs
          .filter((c) => getField(c, "size") === size)
          .map((c) => getField(c, "witness") as string)
          .sort();
      const sizes = [...new Set(cosigs.map((c) => getField(c, "size") as number))].sort((a, b) => a - b);
      // What the proofs must pick, from the rows: the smallest size both cosigned, and the smallest past session 2.
      const bothFirst = sizes.find((s) => by(s).length === 2)!;
      const w1Only = sizes.find((s) => s > secondSession)!;
      expect([bothFirst > firstSession, bothFirst <= secondSession, by(w1Only)]).toEqual([true, true, ["w1.test"]]);

      const policy = `log ${logKey}\nwitness W1 ${keys[0]}\nwitness W2 ${keys[1]}\n`;
      writeFileSync(p("both"), `${policy}group both all W1 W2\nquorum both\n`);
      writeFileSync(p("one"), `${policy}quorum W1\n`);
      const prove = async (line: number, pol?: string) => {
        const r = await runCli(via, [
          "verify",
          p("l.jsonl"),
          "--prove",
          String(line),
          ...(pol ? ["--policy", p(pol)] : []),
        ]);
        return { code: r.code, stderr: r.stderr, proof: r.stdout.toString() };
      };
      const check = async (proof: string, pol: string) => {
        writeFileSync(p("proof"), proof);
        const r = await runCli(via, ["verify", "--json", "--check-proof", p("proof"), "--policy", p(pol)]);
        const j = JSON.parse(r.stdout.toString());
        return [r.code, j.size, j.witnessed];
      };
      const witnessesOn = (proof: string) =>
        parseNote(parseTlogProof(proof).checkpoint)
          .sigs.map((s) => s.name)
          .filter((n) => n !== "log.test")
          .sort();

      // Line 2 (session 1): the smallest checkpoint both witnesses cosigned, without a policy and with one.
      const plain = await prove(2);
      expect([plain.code, plain.stderr, witnessesOn(plain.proof)]).toEqual([0, "", ["w1.test", "w2.test"]]);
      expect(await check(plain.proof, "both")).toEqual([0, bothFirst, { quorum: "both", ok: true, by: ["W1", "W2"] }]);
      const withPolicy = await prove(2, "both");
      expect([withPolicy.code, withPolicy.proof]).toEqual([0, plain.proof]);

      // A line of session 3: W1 alone cosigned what covers it.
      const late = secondSession + 2;
      const lone = await prove(late);
      expect([lone.code, witnessesOn(lone.proof)]).toEqual([0, ["w1.test"]]);
      expect(await check(lone.proof, "one")).toEqual([0, w1Only, { quorum: "W1", ok: true, by: ["W1"] }]);
      expect(await check(lone.proof, "both")).toEqual([3, w1Only, { quorum: "both", ok: false, by: ["W1"] }]);
      expect((await prove(late, "one")).proof).toBe(lone.proof);
      const none = await prove(late, "both");
      expect([none.code, none.proof, none.stderr]).toEqual([
        1,
        "",
        expect.stringContaining(`no checkpoint covering line ${late} is cosigned by quorum both`),
      ]);

      // A cosignature row whose line does not verify: left out under the policy (it would spoil the note).
      const lines = readFileSync(p("l.jsonl"), "utf8").split("\n");
      const at = lines.findIndex((l) => l.includes('"evt": "cosignature"') && l.includes('"witness": "w2.test"'));
      const b64 = (JSON.parse(lines[at]!).cosignature as string).split(" ")[2]!;
      const raw = Buffer.from(b64, "base64");
      raw[20] = raw[20]! ^ 1;
      expect(lines[at]).toContain(b64);
      lines[at] = lines[at]!.replace(b64, raw.toString("base64"));
      writeFileSync(p("l.jsonl"), lines.join("\n"));
      const spoiled = await prove(2, "one");
      expect([spoiled.code, await check(spoiled.proof, "one")]).toEqual([
        0,
        [0, expect.any(Number), { quorum: "W1", ok: true, by: ["W1"] }],
      ]);
      // The proof is of the ledger alone: the companions of verifying one are refused with it.
      const mixed = await runCli(via, [
        "verify",
        p("l.jsonl"),
        "--prove",
        "2",
        "--policy",
        p("one"),
        "--state",
        p("st"),
      ]);
      expect([mixed.code, mixed.stderr]).toEqual([
        2,
        "seam: error: --prove --policy takes the ledger alone: no --witness, --cosignatures or --state\nseam: hint: seam verify LEDGER --prove LINE --policy FILE\n",
      ]);
    } finally {
      await w1.stop();
      await w2.stop();
    }
  }, 180_000);
});
