/**
 * The client side of c2sp.org/tlog-witness (src/checkpoint/submit.ts)
 * against a real HTTP server scripted per case: what it sends (the old size,
 * the proof), and what it makes of each answer: a cosignature, a 409 to
 * resync to, a refusal, a 5xx to retry, a fork, a witness beyond the
 * checkpoint, an answer that is no signature lines or is too long.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { checkpointText } from "../../src/checkpoint/checkpoint.ts";
import { newCosigner } from "../../src/checkpoint/cosignature.ts";
import { type Hash, leafHash, verifyConsistency } from "../../src/checkpoint/merkle.ts";
import { decodeBase64, generateKey, newSigner, signNote } from "../../src/checkpoint/note.ts";
import { type SubmitOutcome, WitnessSubmitter } from "../../src/checkpoint/submit.ts";
import { rootOf } from "../helpers/merkle-proofs.ts";
import { tempDir } from "../helpers/proc.ts";

const lines = Array.from({ length: 12 }, (_, i) => `{"n": ${i}}`);
const leaves: Hash[] = lines.map((l) => leafHash(Buffer.from(l)));
const origin = "seam-ledger/0123456789abcdef0123456789abcdef";
const log = newSigner(generateKey("log.test").privateKey);
const cosigner = newCosigner(newSigner(generateKey("w.test").privateKey));
const checkpoint = { origin, size: 12, root: rootOf(leaves) };
const text = checkpointText(checkpoint);
const note = signNote(text, [log]);
const cosigned = cosigner.cosign(text, 1_700_000_000);

type Answer = [status: number, type: string, body: string];
const size = (n: number): Answer => [409, "text/x.tlog.size", `${n}\n`];

const cases: [what: string, answers: Answer[], olds: number[], outcomes: string[]][] = [
  ["cosigned at once", [[200, "text/plain", cosigned]], [0], ["cosigned w.test"]],
  [
    "a 409 resyncs to the witness's size, with a proof from there",
    [size(5), [200, "text/plain", cosigned]],
    [0, 5],
    ["cosigned w.test"],
  ],
  [
    "a 503 is retried",
    [
      [503, "text/plain", "busy\n"],
      [200, "text/plain", cosigned],
    ],
    [0, 0],
    ['failed HTTP 503 ("busy")', "cosigned w.test"],
  ],
  [
    "a 503 every time: four tries, said once",
    Array(4).fill([503, "text/plain", "busy\n"]),
    [0, 0, 0, 0],
    Array(4).fill('failed HTTP 503 ("busy")'),
  ],
  [
    "a 422 is a refusal",
    [[422, "text/plain", "the consistency proof does not hold\n"]],
    [0],
    ['failed HTTP 422 ("the consistency proof does not hold")'],
  ],
  ["a 409 at the size sent is a fork", [size(0)], [0], ["failed it holds another checkpoint of size 0 (a fork)"]],
  [
    "a witness beyond the checkpoint",
    [size(40)],
    [0],
    [
      "failed it has cosigned size 40, beyond this checkpoint's 12 (another writer's checkpoint, or the ledger was cut back)",
    ],
  ],
  [
    "an answer that is no signature lines",
    [[200, "text/plain", "cosigned!\n"]],
    [0],
    ["failed its answer is not signature lines"],
  ],
  ["an answer too long", [[200, "text/plain", "— w ".repeat(20_000)]], [0], ["failed an answer over 65536 bytes"]],
];

describe("WitnessSubmitter", () => {
  test.each(cases)("%s", async (_what, answers, olds, outcomes) => {
    const path = join(tempDir(), "l.jsonl");
    writeFileSync(path, lines.map((l) => `${l}\n`).join(""));
    const got: { old: number; proof: Hash[]; path: string | undefined }[] = [];
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (d: Buffer) => {
        body += d.toString("utf8");
      });
      req.on("end", () => {
        const head = body.slice(0, body.indexOf("\n\n")).split("\n");
        got.push({ old: Number(head[0]!.slice(4)), proof: head.slice(1).map((h) => decodeBase64(h)!), path: req.url });
        const [status, type, text] = answers[got.length - 1] ?? [500, "text/plain", "no more answers\n"];
        res.writeHead(status, { "content-type": type }).end(text);
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const warned: string[] = [];
    const reports: SubmitOutcome[] = [];
    const submitter = new WitnessSubmitter([url], { warn: (m) => warned.push(m), info: () => {} });
    try {
      submitter.submit({ path, checkpoint, note, report: (o) => reports.push(o) });
      await submitter.settled(10_000);
      expect(got.map((g) => [g.path, g.old])).toEqual(olds.map((o) => ["/add-checkpoint", o]));
      for (const g of got)
        if (g.old > 0)
          expect(verifyConsistency(g.old, 12, g.proof, rootOf(leaves.slice(0, g.old)), checkpoint.root).ok).toBe(true);
        else expect(g.proof).toEqual([]);
      expect(
        reports.map((o) =>
          o.kind === "cosigned" ? `cosigned ${o.cosignatures.map((c) => c.witness).join(" ")}` : `failed ${o.why}`,
        ),
      ).toEqual(outcomes);
      const ok = reports.find((o) => o.kind === "cosigned");
      if (ok?.kind === "cosigned") expect(ok.cosignatures[0]!.line).toBe(cosigned.trimEnd());
      // Said once per witness, however many requests failed.
      expect(warned.length).toBe(outcomes.some((o) => o.startsWith("failed")) ? 1 : 0);
    } finally {
      submitter.close();
      server.close();
    }
  });

  test("a smaller checkpoint handed over after a larger one is not sent", async () => {
    const path = join(tempDir(), "l.jsonl");
    writeFileSync(path, lines.map((l) => `${l}\n`).join(""));
    let requests = 0;
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        requests++;
        res.writeHead(200, { "content-type": "text/plain" }).end(cosigned);
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const reports: SubmitOutcome[] = [];
    const submitter = new WitnessSubmitter([url], { warn: () => {}, info: () => {} });
    const seven = { origin, size: 7, root: rootOf(leaves.slice(0, 7)) };
    try {
      submitter.submit({ path, checkpoint, note, report: (o) => reports.push(o) });
      // While 12 is in flight, 7 waits behind it, then is passed over; after 12 is cosigned, 7 is not sent either.
      submitter.submit({
        path,
        checkpoint: seven,
        note: signNote(checkpointText(seven), [log]),
        report: (o) => reports.push(o),
      });
      await submitter.settled(10_000);
      submitter.submit({
        path,
        checkpoint: seven,
        note: signNote(checkpointText(seven), [log]),
        report: (o) => reports.push(o),
      });
      await submitter.settled(10_000);
      expect([requests, reports.map((o) => o.kind)]).toEqual([1, ["cosigned"]]);
    } finally {
      submitter.close();
      server.close();
    }
  });

  test("unreached: the witnesses failing now, each said once until it answers again; settled skips them", async () => {
    const path = join(tempDir(), "l.jsonl");
    writeFileSync(path, lines.map((l) => `${l}\n`).join(""));
    const answers: Answer[] = [
      [422, "text/plain", "no\n"],
      [200, "text/plain", cosigned],
    ];
    let requests = 0;
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        const [status, type, body] = answers[requests++]!;
        res.writeHead(status, { "content-type": type }).end(body);
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const warned: string[] = [];
    const submitter = new WitnessSubmitter([url], { warn: (m) => warned.push(m), info: () => {} });
    const hand = () => submitter.submit({ path, checkpoint, note, report: () => {} });
    try {
      expect(submitter.unreached()).toEqual(new Set());
      hand();
      await submitter.settled(10_000);
      const unreached = submitter.unreached();
      expect([...unreached, ...submitter.unreached()]).toEqual([url, url]);
      expect(warned.filter((m) => m.includes("not reached"))).toEqual([
        `witness ${url}: not reached at the session's end; its last checkpoint is not waited for (counted in session_end)`,
      ]);
      // Skipped, the answer is not waited for; it still comes, and then the witness is reached again.
      hand();
      const before = requests;
      await submitter.settled(10_000, unreached);
      expect(requests).toBe(before);
      await submitter.settled(10_000);
      expect([requests, submitter.unreached()]).toEqual([2, new Set()]);
    } finally {
      submitter.close();
      server.close();
    }
  });
});
