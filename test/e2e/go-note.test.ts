/**
 * Interop with the Go reference of signed notes, golang.org/x/mod/sumdb/note
 * (Debian's golang-golang-x-mod-dev, built offline from its GOPATH tree):
 * the checkpoints of a real `seam wrap --sign --witness-url` session,
 * cosigned by a real `seam witness`, open there with note.Open and the
 * log's verifier key. The cosignature lines ride along: a cosignature key
 * (type 0x04) is unknown to the package, so their lines are ignored, as
 * the spec has a verifier do with signatures it has no key for. A note
 * whose text was changed does not open. Skipped only where `go` is absent
 * (CI installs it).
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { newCosignatureVerifier } from "../../src/checkpoint/cosignature.ts";
import { keyLabel, newVerifier, parseNote } from "../../src/checkpoint/note.ts";
import { getField } from "../../src/core/json.ts";
import { built, ROOT, VIAS } from "../helpers/cli.ts";
import { run, tempDir } from "../helpers/proc.ts";
import { evt, rowsOf, witnessKit } from "../helpers/witness-kit.ts";

const HAVE_GO = spawnSync("go", ["version"]).status === 0;
/** Where Debian's golang-*-dev packages put Go sources (a GOPATH tree). */
const DEBIAN_GOPATH = "/usr/share/gocode";

let goNote = "";
beforeAll(async () => {
  if (!HAVE_GO) return;
  goNote = join(tempDir(), "go-note");
  const env: Record<string, string> = { GO111MODULE: "off", GOPATH: DEBIAN_GOPATH, GOPROXY: "off", GOFLAGS: "" };
  if (!process.env.GOCACHE && !process.env.HOME && !process.env.XDG_CACHE_HOME) env.GOCACHE = tempDir();
  const b = await run(["go", "build", "-o", goNote, "."], { cwd: join(ROOT, "test/fixtures/go-note"), env });
  if (b.code !== 0) throw new Error(`go build: ${b.stderr}`);
}, 120_000);

const openInGo = async (note: string, keys: string[]) => {
  const r = await run([goNote, ...keys], { input: note });
  return { code: r.code, lines: r.stdout.toString().trimEnd().split("\n") };
};

describe.skipIf(!HAVE_GO).each(VIAS.filter(built))("via %s", (via) => {
  test("cosigned checkpoints open with golang.org/x/mod/sumdb/note; a changed one does not", async () => {
    const { p, keygen, wrapDemo, configureLog, startWitness } = witnessKit(via);
    const logKey = await keygen("log.test", "log.key");
    await keygen("w1.test", "w1.key");
    // The witness is configured with the ledger's origin, which a first session writes.
    expect((await wrapDemo("l.jsonl", [])).code).toBe(0);
    configureLog(logKey);
    const w1 = await startWitness("w1");
    let cosignKey = "";
    try {
      const second = await wrapDemo("l.jsonl", [w1.url]);
      expect([second.code, second.stderr]).toEqual([0, ""]);
      cosignKey = /its cosignature key: (\S+)\n/.exec(w1.stderr())![1]!;
    } finally {
      await w1.stop();
    }

    const rows = rowsOf(p("l.jsonl"));
    const cosigs = rows.filter((r) => evt(r) === "cosignature");
    const log = newVerifier(logKey);
    const witness = newCosignatureVerifier(cosignKey);
    // Each cosigned checkpoint: its note with the cosignature lines appended, as a client would hold it.
    const cosigned = rows
      .filter((r) => evt(r) === "checkpoint")
      .map((cp) => {
        const lines = cosigs
          .filter((c) => getField(c, "size") === getField(cp, "size") && getField(c, "root") === getField(cp, "root"))
          .map((c) => `${getField(c, "cosignature")}\n`);
        return { note: `${getField(cp, "note")}${lines.join("")}`, lines: lines.length };
      })
      .filter((c) => c.lines > 0);
    expect(cosigned.length).toBeGreaterThan(0);
    for (const { note } of cosigned) {
      const got = await openInGo(note, [logKey, cosignKey]);
      const ok = got.lines.filter((l) => !l.startsWith("skip "));
      expect([got.code, ...ok]).toEqual([
        0,
        `verified ${keyLabel(log.name, log.id)}`,
        `unverified ${keyLabel(witness.name, witness.id)}`,
        `text ${JSON.stringify(parseNote(note).text)}`,
      ]);
    }
    // The package knows no cosignature key type: it says so, and opens the note with the log's key alone.
    const { lines: first } = await openInGo(cosigned[0]!.note, [logKey, cosignKey]);
    expect(first[0]).toStartWith("skip w1.test ");

    // The text changed (the size one more): the log's signature fails, and the note does not open.
    const note = cosigned.at(-1)!.note;
    const [originLine, size, ...rest] = note.split("\n");
    const changed = [originLine, String(Number(size) + 1), ...rest].join("\n");
    const bad = await openInGo(changed, [logKey, cosignKey]);
    expect([bad.code, bad.lines.at(-1)]).toEqual([1, `error invalid signature for key ${keyLabel(log.name, log.id)}`]);
  }, 180_000);
});
