/**
 * `seam witness` as real processes (from source under Bun, as the Node
 * bundle and as the compiled executable), fed the checkpoints of a real
 * `seam wrap --sign` ledger with the consistency proofs a log would send:
 * cosigned, then refused for a rollback, a fork, a bad proof, an unknown
 * log and a bad log signature; killed with SIGKILL and restarted, it keeps
 * what it cosigned; two witnesses cosign one checkpoint.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Checkpoint, checkpointText, parseWitnessLine, witnessLine } from "../../src/checkpoint/checkpoint.ts";
import { newCosignatureVerifier } from "../../src/checkpoint/cosignature.ts";
import { type Hash, leafHash } from "../../src/checkpoint/merkle.ts";
import { newSigner, openNote, signNote } from "../../src/checkpoint/note.ts";
import { formatAddCheckpoint } from "../../src/witness/server.ts";
import { built, runCli, seamArgv, VIAS } from "../helpers/cli.ts";
import { consistencyProof } from "../helpers/merkle-proofs.ts";
import { run, tempDir } from "../helpers/proc.ts";
import type { Running } from "../helpers/proxy-helpers.ts";
import { fixture, witnessKit } from "../helpers/witness-kit.ts";

interface Answer {
  status: number;
  type: string | null;
  body: string;
}

async function post(url: string, body: string): Promise<Answer> {
  const r = await fetch(`${url}/add-checkpoint`, { method: "POST", body });
  return { status: r.status, type: r.headers.get("content-type"), body: await r.text() };
}

/** The cosignature verifier key a witness announces on stderr. */
function announcedKey(w: Running): string {
  const m = /its cosignature key: (\S+)\n/.exec(w.stderr());
  if (!m) throw new Error(`no cosignature key announced: ${w.stderr()}`);
  return m[1]!;
}

describe.each(VIAS.filter(built))("via %s", (via) => {
  test("cosigns a wrap --sign ledger's checkpoints; refuses rollback, fork, bad proof, unknown log, bad signature; keeps state across SIGKILL", async () => {
    const { p, keygen, startWitness } = witnessKit(via);
    const logKey = await keygen("log.test", "log.key");
    await keygen("w1.test", "w1.key");
    await keygen("w2.test", "w2.key");
    await keygen("log.test", "stranger.key");

    const wrapped = await run([
      ...fixture,
      "client",
      "--script",
      "awkward",
      "--",
      ...seamArgv(via),
      "wrap",
      "--ledger",
      p("l.jsonl"),
      "--sign",
      p("log.key"),
      "--checkpoint-every",
      "4",
      "--witness",
      p("checkpoints.jsonl"),
      "--",
      ...fixture,
      "server",
    ]);
    expect([wrapped.code, wrapped.stderr]).toEqual([0, ""]);
    const cps = readFileSync(p("checkpoints.jsonl"), "utf8")
      .trimEnd()
      .split("\n")
      .map((l) => parseWitnessLine(l));
    expect(cps.length).toBeGreaterThan(4);
    const origin = cps[0]!.checkpoint.origin;
    const lines = readFileSync(p("l.jsonl")).toString("latin1").split("\n").slice(0, -1);
    const leaves: Hash[] = lines.map((l) => leafHash(Buffer.from(l, "latin1")));
    const [a, b, c, d] = [cps[0]!, cps[1]!, cps[2]!, cps.at(-1)!];
    const req = (old: number, to: (typeof cps)[number], proof = consistencyProof(leaves, old, to.checkpoint.size)) =>
      formatAddCheckpoint(old, proof, to.note);

    writeFileSync(p("logs.txt"), `# the ledger's checkpoints\nlog ${origin} ${logKey}\n`);
    let w1 = await startWitness("w1", "w1-state");
    const w2 = await startWitness("w2", "w2-state");
    try {
      expect(w1.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      // One witness per state directory: a second one on w1's refuses to start.
      const second = await startWitness("w1", "w1-state").then(
        async (r) => {
          await r.stop();
          return "it started";
        },
        (e: Error) => e.message,
      );
      expect(second).toContain(
        `seam: error: another seam witness (pid ${w1.child.pid}) is using --state ${p("w1-state")}\n`,
      );
      const cos1 = newCosignatureVerifier(announcedKey(w1));
      const cos2 = newCosignatureVerifier(announcedKey(w2));
      const cosigned = (note: string, answer: Answer) =>
        openNote(note + answer.body, [cos1, cos2]).verified.map((s) => s.name);

      const first = await post(w1.url, req(0, a));
      expect([first.status, cosigned(a.note, first)]).toEqual([200, ["w1.test"]]);
      const next = await post(w1.url, req(a.checkpoint.size, c));
      expect([next.status, cosigned(c.note, next)]).toEqual([200, ["w1.test"]]);

      const logSigner = newSigner(readFileSync(p("log.key"), "utf8").trim());
      const forked: Checkpoint = { ...c.checkpoint, root: leafHash(Buffer.from("another tree")) };
      const stranger = signNote(checkpointText(d.checkpoint), [
        newSigner(readFileSync(p("stranger.key"), "utf8").trim()),
      ]);
      const unknown = signNote(checkpointText({ ...d.checkpoint, origin: "seam-ledger/elsewhere" }), [logSigner]);
      const proof = consistencyProof(leaves, c.checkpoint.size, d.checkpoint.size);
      const badProof = proof.map((h, i) => (i === 0 ? leafHash(h) : h));
      const size = `${c.checkpoint.size}\n`;
      const refusals: [string, string, number, string][] = [
        ["rollback: an older checkpoint", req(c.checkpoint.size, b, []), 400, ""],
        ["rollback: a stale old size", req(a.checkpoint.size, b), 409, size],
        [
          "fork: same size, another root",
          formatAddCheckpoint(c.checkpoint.size, [], signNote(checkpointText(forked), [logSigner])),
          409,
          size,
        ],
        ["a bad proof", req(c.checkpoint.size, d, badProof), 422, ""],
        ["an unknown log", formatAddCheckpoint(0, [], unknown), 404, ""],
        ["signed by another key", formatAddCheckpoint(c.checkpoint.size, proof, stranger), 403, ""],
        ["malformed", "old x\n\n", 400, ""],
      ];
      for (const [what, body, status, sizeBody] of refusals) {
        const r = await post(w1.url, body);
        expect([what, r.status]).toEqual([what, status]);
        if (status === 409) expect([what, r.type, r.body]).toEqual([what, "text/x.tlog.size", sizeBody]);
      }
      expect(w1.stderr()).toContain(
        `seam: warning: refused a checkpoint of ${origin} at size ${c.checkpoint.size}: a fork`,
      );

      // Killed outright and started again on the same state: it still holds c, not a.
      w1.child.kill("SIGKILL");
      await w1.stop();
      w1 = await startWitness("w1", "w1-state");
      const stale = await post(w1.url, req(a.checkpoint.size, d));
      expect([stale.status, stale.type, stale.body]).toEqual([409, "text/x.tlog.size", size]);
      const on = await post(w1.url, req(c.checkpoint.size, d));
      const fresh = await post(w2.url, req(0, d));
      expect([on.status, fresh.status]).toEqual([200, 200]);
      // Two witnesses on one checkpoint: the note carries both cosignatures.
      expect(cosigned(d.note, { ...on, body: on.body + fresh.body })).toEqual(["w1.test", "w2.test"]);

      // seam verify --policy: how far checkpoints cosigned by the quorum cover the ledger.
      writeFileSync(
        p("policy"),
        `log ${logKey}\nwitness W1 ${announcedKey(w1)}\nwitness W2 ${announcedKey(w2)}\ngroup both all W1 W2\ngroup either any W1 W2\n`,
      );
      writeFileSync(p("cos-both"), witnessLine(d.checkpoint, d.note + on.body + fresh.body));
      writeFileSync(
        p("cos-one"),
        witnessLine(c.checkpoint, c.note + next.body) + witnessLine(d.checkpoint, d.note + on.body),
      );
      const verify = async (quorum: string, cos: string) => {
        writeFileSync(p(`policy-${quorum}`), `${readFileSync(p("policy"), "utf8")}quorum ${quorum}\n`);
        const v = await runCli(via, [
          "verify",
          "--allow-unparsed",
          p("l.jsonl"),
          "--policy",
          p(`policy-${quorum}`),
          "--cosignatures",
          p(cos),
        ]);
        const line = /\n {2}witnessed (.*)\n/.exec(v.stdout.toString());
        return [v.code, line?.[1]];
      };
      const all = lines.length;
      expect(await verify("both", "cos-both")).toEqual([
        0,
        `through line ${d.checkpoint.size} of ${all}; quorum both (cosigned by W1, W2)`,
      ]);
      expect(await verify("either", "cos-one")).toEqual([
        0,
        `through line ${d.checkpoint.size} of ${all}; quorum either (cosigned by W1)`,
      ]);
      expect(await verify("both", "cos-one")).toEqual([
        3,
        "nothing: no checkpoint that holds is cosigned by quorum both",
      ]);
      expect(await verify("W2", "cos-one")).toEqual([3, "nothing: no checkpoint that holds is cosigned by quorum W2"]);
      const json = await runCli(via, [
        "verify",
        "--json",
        "--allow-unparsed",
        p("l.jsonl"),
        "--policy",
        p("policy-both"),
        "--cosignatures",
        p("cos-both"),
      ]);
      expect(JSON.parse(json.stdout.toString()).seal.witnessed).toEqual({
        quorum: "both",
        through: d.checkpoint.size,
        by: ["W1", "W2"],
      });

      expect((await fetch(`${w1.url}/other`, { method: "POST", body: "x" })).status).toBe(404);
      expect((await fetch(`${w1.url}/add-checkpoint`)).status).toBe(405);
      expect((await fetch(`${w1.url}/add-checkpoint`, { method: "POST", body: "x".repeat(70_000) })).status).toBe(413);
    } finally {
      await w1.stop();
      expect(await w2.stop()).toBe(0);
      // Stopped by a signal, a witness gives its lock up.
      expect(existsSync(p("w2-state/witness.lock"))).toBe(false);
    }
  }, 120_000);

  test("refuses to start on a bad config, a missing key or a non-loopback address; verify --policy usage errors", async () => {
    const dir = tempDir();
    const p = (s: string) => join(dir, s);
    await runCli(via, ["keygen", "--name", "w", "--out", p("w.key")]);
    writeFileSync(p("bad.txt"), "log only-an-origin\n");
    const cases: [string[], number, string][] = [
      [
        ["--key", p("w.key"), "--config", p("bad.txt"), "--state", p("s")],
        1,
        `seam: error: ${p("bad.txt")} line 1 is not "log <origin> <verifier key>"\n`,
      ],
      [
        ["--key", p("nokey"), "--config", p("bad.txt"), "--state", p("s")],
        1,
        `seam: error: cannot read key file ${p("nokey")}: `,
      ],
      [
        ["--key", p("w.key"), "--config", p("bad.txt"), "--state", p("s"), "--listen", "0.0.0.0:0"],
        2,
        "seam: error: --listen 0.0.0.0 is not a loopback address\n",
      ],
      [["--config", p("bad.txt"), "--state", p("s")], 2, "seam: error: --key is required\n"],
    ];
    for (const [args, code, err] of cases) {
      const r = await runCli(via, ["witness", ...args]);
      expect([args, r.code, r.stderr.slice(0, err.length)]).toEqual([args, code, err]);
    }
    writeFileSync(p("policy"), "quorum none\n");
    const verifyCases: [string[], string][] = [
      [["--cosignatures", p("c")], "seam: error: --cosignatures goes with --policy\n"],
      [
        ["--policy", p("policy")],
        `seam: error: ${p("policy")} names no log: seam needs the key its checkpoints are signed with\n`,
      ],
      [["--policy", p("nothing")], `seam: error: cannot read policy file ${p("nothing")}: `],
      [["--policy", p("policy"), "--key", "k"], "seam: error: --policy carries the log keys: give it without --key\n"],
    ];
    for (const [args, err] of verifyCases) {
      const r = await runCli(via, ["verify", p("l.jsonl"), ...args]);
      expect([args, r.code, r.stderr.slice(0, err.length)]).toEqual([args, 2, err]);
    }
  });
});
