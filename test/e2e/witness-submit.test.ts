/**
 * `seam wrap --sign --witness-url` as real processes (from source under Bun,
 * as the Node bundle and as the compiled executable) against two real
 * `seam witness` processes: the cosignatures come back as cosignature rows,
 * `seam verify --policy` counts them toward a quorum of two, a ledger
 * rewritten and re-signed with the same key loses that cover (and the
 * witnesses' cosignatures of the old roots say so), and a witness that is
 * down is counted, not waited for. An ML-DSA-44 witness's cosignatures
 * count the same, in verify --policy and in --check-proof --policy (on the
 * proof --prove prints, its note cosigned).
 * `seam proxy --witness-url` the same way, its MCP sessions' checkpoints
 * through one client.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { checkpointText, parseCheckpointText } from "../../src/checkpoint/checkpoint.ts";
import { CompactRange, leafHash } from "../../src/checkpoint/merkle.ts";
import { newSigner, signNote } from "../../src/checkpoint/note.ts";
import { lineForm } from "../../src/core/canonical/index.ts";
import { getField, type JsonObject, parseJson } from "../../src/core/json.ts";
import { flipArgsDigest, rechainLines } from "../../src/selftest/tamper.ts";
import { built, runCli, VIAS } from "../helpers/cli.ts";
import { freePort, type Running, startEverything, startProxy } from "../helpers/proxy-helpers.ts";
import { HAVE_PYTHON, reference } from "../helpers/verify-helpers.ts";
import { evt, fixture, rowsOf, witnessKit } from "../helpers/witness-kit.ts";

let everything: Running;
beforeAll(async () => {
  everything = await startEverything();
});
afterAll(async () => {
  await everything?.stop("SIGKILL");
});

function announcedKey(w: Running): string {
  const m = /its cosignature key: (\S+)\n/.exec(w.stderr());
  if (!m) throw new Error(`no cosignature key announced: ${w.stderr()}`);
  return m[1]!;
}

/**
 * The ledger as someone holding the log key would rewrite it: line `at`
 * changed, every checkpoint row from there on given the size and root of
 * the lines now before it and signed anew, everything re-chained.
 */
function rewrite(lines: readonly string[], at: number, change: (l: string) => string, sign: (t: string) => string) {
  let out = lines.slice();
  out[at] = change(out[at]!);
  out = rechainLines(out, at);
  for (let i = at + 1; i < out.length; i++) {
    if (getField(parseJson(out[i]!), "evt") !== "checkpoint") continue;
    const row = new Map(parseJson(out[i]!) as JsonObject);
    const note = row.get("note") as string;
    const c = parseCheckpointText(note.slice(0, note.lastIndexOf("\n\n") + 1));
    c.size = i;
    const tree = new CompactRange();
    for (const l of out.slice(0, c.size)) tree.append(leafHash(Buffer.from(l)));
    c.root = tree.root();
    row.set("size", c.size);
    row.set("root", Buffer.from(c.root).toString("base64"));
    row.set("note", sign(checkpointText(c)));
    out[i] = lineForm(row);
    out = rechainLines(out, i);
  }
  return out;
}

describe.each(VIAS.filter(built))("via %s", (via) => {
  test("wrap --witness-url: cosignature rows, verify --policy covered by two witnesses; a rewrite loses it; a down witness is counted", async () => {
    const { p, keygen, wrapDemo: wrap, configureLog, startWitness } = witnessKit(via);
    const logKey = await keygen("log.test", "log.key");
    await keygen("w1.test", "w1.key");
    await keygen("w2.test", "w2.key");

    // A witness is configured with the ledger's origin, which its first line gives: a first session makes it.
    const first = await wrap("l.jsonl", []);
    expect([first.code, first.stderr]).toEqual([0, ""]);
    configureLog(logKey);
    const w1 = await startWitness("w1");
    const w2 = await startWitness("w2");
    try {
      const before = rowsOf(p("l.jsonl")).length;
      const second = await wrap("l.jsonl", [w1.url, `${w2.url}/`]);
      expect([second.code, second.stderr]).toEqual([0, ""]);
      const rows = rowsOf(p("l.jsonl"));
      const cosigs = rows.filter((r) => evt(r) === "cosignature");
      const end = rows.filter((r) => evt(r) === "session_end").at(-1)!;
      // Every cosignature follows the checkpoint it cosigns, with its size and root.
      for (const c of cosigs) {
        const at = rows.indexOf(c);
        const cp = rows
          .slice(0, at)
          .find((r) => evt(r) === "checkpoint" && getField(r, "size") === getField(c, "size"));
        expect([getField(c, "root"), at > before]).toEqual([getField(cp!, "root"), true]);
      }
      const last = rows.filter((r) => evt(r) === "checkpoint").at(-1)!;
      const onLast = cosigs
        .filter((c) => getField(c, "size") === getField(last, "size"))
        .map((c) => getField(c, "witness"));
      expect(onLast.sort()).toEqual(["w1.test", "w2.test"]);
      // session_end counts the cosignatures that came before it (those of the last checkpoint follow it).
      const endAt = rows.lastIndexOf(end);
      expect([getField(end, "witness_cosigned"), getField(end, "witness_failed")]).toEqual([
        cosigs.filter((c) => rows.indexOf(c) < endAt).length,
        0,
      ]);

      const policy = `log ${logKey}\nwitness W1 ${announcedKey(w1)}\nwitness W2 ${announcedKey(w2)}\n`;
      writeFileSync(p("both"), `${policy}group both all W1 W2\nquorum both\n`);
      writeFileSync(p("one"), `${policy}quorum W1\n`);
      const verify = async (ledger: string, pol: string) => {
        const v = await runCli(via, ["verify", "--json", p(ledger), "--policy", p(pol)]);
        const j = JSON.parse(v.stdout.toString());
        return { code: v.code, witnessed: j.seal.witnessed, kinds: j.break_kinds, findings: j.finding_kinds };
      };
      const covered = await verify("l.jsonl", "both");
      expect([covered.code, covered.witnessed]).toEqual([
        0,
        { quorum: "both", through: getField(last, "size"), by: ["W1", "W2"] },
      ]);
      if (HAVE_PYTHON) expect(reference([readFileSync(p("l.jsonl"))])[0]!.verdict).toBe("ok");
      // seam log names them as what they are.
      const logged = (await runCli(via, ["log", "--json", p("l.jsonl")])).stdout.toString().trimEnd().split("\n");
      const named = logged.map((l) => JSON.parse(l)).filter((o) => o.kind === "cosignature");
      expect(named.map((o) => o.name)).toEqual(cosigs.map((c) => `cosignature ${getField(c, "witness")}`));

      // Rewritten after it was witnessed: a call's row of the first session changed, re-chained, every
      // later checkpoint re-signed; none of the cosigned ones holds any more.
      const lines = readFileSync(p("l.jsonl"), "utf8").split("\n").slice(0, -1);
      const call = lines.findIndex((l) => l.includes('"evt": "tool_call"'));
      const logSigner = newSigner(readFileSync(p("log.key"), "utf8").trim());
      const forged = rewrite(lines, call, flipArgsDigest, (t) => signNote(t, [logSigner]));
      writeFileSync(p("forged.jsonl"), forged.map((l) => `${l}\n`).join(""));
      const keyOnly = await runCli(via, ["verify", p("forged.jsonl"), "--key", logKey]);
      expect(keyOnly.code).toBe(0); // the writer's key alone cannot tell
      const caught = await verify("forged.jsonl", "both");
      expect([caught.code, caught.witnessed.through, caught.kinds.cosignature_fork > 0]).toEqual([1, 0, true]);
      // Rewritten with that row taken out: every later line moves up one, and the re-signed checkpoints with
      // it, so none holds at a size the witnesses cosigned; each such cosignature is compared with the root
      // the ledger now has at its size (a second reading), and is a fork.
      const shifted = rewrite(
        lines.filter((_, i) => i !== call),
        call,
        (l) => l,
        (t) => signNote(t, [logSigner]),
      );
      writeFileSync(p("shifted.jsonl"), shifted.map((l) => `${l}\n`).join(""));
      const moved = cosigs.filter((c) => (getField(c, "size") as number) > call).length;
      expect(moved).toBeGreaterThan(0);
      const shiftedCaught = await verify("shifted.jsonl", "both");
      expect([shiftedCaught.code, shiftedCaught.kinds.cosignature_fork]).toEqual([1, moved]);
      // Read once from stdin, those sizes cannot be compared: the report says so.
      const piped = await runCli(via, ["verify", "--json", "-", "--policy", p("both")], {
        input: readFileSync(p("shifted.jsonl")),
      });
      expect(JSON.parse(piped.stdout.toString()).notes.join("\n")).toContain("not compared with its lines");

      // A witness that is down: the session runs as ever, the other witness cosigns, the failures are counted.
      const down = `http://127.0.0.1:${await freePort()}`;
      const third = await wrap("l.jsonl", [w1.url, down]);
      expect(third.code).toBe(0);
      expect(third.stderr.split(`witness ${down}: cannot connect`).length - 1).toBe(1);
      const after = rowsOf(p("l.jsonl"));
      const end3 = after.filter((r) => evt(r) === "session_end").at(-1)!;
      expect(getField(end3, "calls")).toBe(getField(end, "calls"));
      expect(getField(end3, "witness_failed")).toBeGreaterThan(0);
      const last3 = after.filter((r) => evt(r) === "checkpoint").at(-1)!;
      const w1Only = await verify("l.jsonl", "one");
      expect([w1Only.code, w1Only.witnessed.through]).toEqual([0, getField(last3, "size")]);
      // Quorum both still stands where both cosigned: the second session's last checkpoint.
      expect((await verify("l.jsonl", "both")).witnessed.through).toBe(getField(last, "size"));
    } finally {
      await w1.stop();
      await w2.stop();
    }
  }, 180_000);

  test("an ML-DSA-44 witness (keygen --alg ml-dsa-44): its cosignature rows count in verify --policy and --check-proof --policy", async () => {
    const { p, keygen, wrapDemo, configureLog, startWitness } = witnessKit(via);
    const wrap = (urls: string[]) => wrapDemo("l.jsonl", urls);
    const logKey = await keygen("log.test", "log.key");
    const pqKey = await keygen("pq.test", "pq.key", ["--alg", "ml-dsa-44"]);
    expect((await wrap([])).code).toBe(0);
    configureLog(logKey);
    const pq = await startWitness("pq", "s");
    try {
      const second = await wrap([pq.url]);
      expect([second.code, second.stderr, announcedKey(pq)]).toEqual([0, "", pqKey]);
    } finally {
      await pq.stop();
    }
    const rows = rowsOf(p("l.jsonl"));
    const last = rows.filter((r) => evt(r) === "checkpoint").at(-1)!;
    const onLast = rows.filter((r) => evt(r) === "cosignature" && getField(r, "size") === getField(last, "size"));
    expect(onLast.map((c) => getField(c, "witness"))).toEqual(["pq.test"]);

    writeFileSync(p("policy"), `log ${logKey}\nwitness PQ ${pqKey}\nquorum PQ\n`);
    const v = await runCli(via, ["verify", "--json", p("l.jsonl"), "--policy", p("policy")]);
    expect([v.code, JSON.parse(v.stdout.toString()).seal.witnessed]).toEqual([
      0,
      { quorum: "PQ", through: getField(last, "size"), by: ["PQ"] },
    ]);

    // A proof of line 2: its note carries the witness's cosignature (the one of the first checkpoint it cosigned).
    const proof = (await runCli(via, ["verify", p("l.jsonl"), "--prove", "2"])).stdout.toString();
    const size = Number(proof.split("\n\n")[1]!.split("\n")[1]);
    const line = getField(
      rows.find((r) => evt(r) === "cosignature" && getField(r, "size") === size)!,
      "cosignature",
    ) as string;
    expect(proof.endsWith(`${line}\n`)).toBe(true);
    const bare = proof.slice(0, -(line.length + 1));
    const raw = Buffer.from(line.split(" ")[2]!, "base64");
    raw[100] = raw[100]! ^ 1;
    const flipped = `${line.split(" ").slice(0, 2).join(" ")} ${raw.toString("base64")}`;
    const check = async (text: string) => {
      writeFileSync(p("proof"), text);
      const r = await runCli(via, ["verify", "--json", "--check-proof", p("proof"), "--policy", p("policy")]);
      return [r.code, JSON.parse(r.stdout.toString()).witnessed];
    };
    expect(await check(proof)).toEqual([0, { quorum: "PQ", ok: true, by: ["PQ"] }]);
    expect(await check(bare)).toEqual([3, { quorum: "PQ", ok: false, by: [] }]);
    expect(await check(`${bare}${flipped}\n`)).toEqual([3, { quorum: "PQ", ok: false, by: [] }]);
    // The witness's key signs no checkpoints: wrap --sign says what it is.
    const misuse = await runCli(via, [
      "wrap",
      "--ledger",
      p("x.jsonl"),
      "--sign",
      p("pq.key"),
      "--",
      ...fixture,
      "server",
    ]);
    expect([misuse.code, misuse.stderr]).toEqual([
      2,
      expect.stringContaining("holds an ML-DSA-44 key, which only cosigns"),
    ]);
  }, 120_000);

  test("proxy --witness-url: two MCP sessions' checkpoints cosigned, verify --policy covered", async () => {
    const { p, keygen, wrapDemo, configureLog, startWitness } = witnessKit(via);
    const logKey = await keygen("log.test", "log.key");
    await keygen("w1.test", "w1.key");
    // The witness needs the ledger's origin: a first session (wrapped, unwitnessed) writes its first line.
    const seeded = await wrapDemo("l.jsonl", [], undefined);
    expect(seeded.code).toBe(0);
    configureLog(logKey);
    const w1 = await startWitness("w1", "s");
    const proxy = await startProxy(via, [
      "--upstream",
      everything.url,
      "--ledger",
      p("l.jsonl"),
      "--sign",
      p("log.key"),
      "--checkpoint-every",
      "2",
      "--witness-url",
      w1.url,
    ]);
    try {
      for (const message of ["one", "two"]) {
        const client = new Client({ name: "witness-test", version: "1.0.0" });
        const transport = new StreamableHTTPClientTransport(new URL(proxy.url));
        await client.connect(transport);
        await client.callTool({ name: "echo", arguments: { message } });
        await transport.terminateSession();
        await client.close();
      }
      expect(await proxy.stop()).toBe(0);
      expect(proxy.stderr()).not.toContain("witness");
      const rows = rowsOf(p("l.jsonl"));
      const cosigs = rows.filter((r) => evt(r) === "cosignature");
      expect(cosigs.length).toBeGreaterThan(0);
      expect(new Set(cosigs.map((c) => getField(c, "seam")))).toEqual(new Set(["mcp-http"]));
      const last = rows.filter((r) => evt(r) === "checkpoint").at(-1)!;
      writeFileSync(p("policy"), `log ${logKey}\nwitness W1 ${announcedKey(w1)}\nquorum W1\n`);
      const v = await runCli(via, ["verify", "--json", p("l.jsonl"), "--policy", p("policy")]);
      expect([v.code, JSON.parse(v.stdout.toString()).seal.witnessed]).toEqual([
        0,
        { quorum: "W1", through: getField(last, "size"), by: ["W1"] },
      ]);
    } finally {
      await proxy.stop();
      await w1.stop();
    }
  }, 120_000);
});
