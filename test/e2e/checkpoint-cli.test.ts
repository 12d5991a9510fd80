/**
 * keygen, wrap --sign and verify --key/--witness/--state/--prove/--check-proof
 * as real processes, from source under Bun, as the Node bundle and as the
 * compiled executable (`bun scripts/build.ts --exe` first).
 */
import { describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { cpSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { generateKey } from "../../src/checkpoint/note.ts";
import { getField } from "../../src/core/json.ts";
import { built, runCli, seamArgv, VIAS } from "../helpers/cli.ts";
import { ledgerRows, run, tempDir } from "../helpers/proc.ts";

const fixture = [...seamArgv("bun"), "fixture"];
const VKEY = /^seam\+[0-9a-f]{8}\+[A-Za-z0-9+/]{44}$/;

describe.each(VIAS.filter(built))("via %s", (via) => {
  test("keygen: a 0600 private key file, the verifier key on stdout; never overwrites; names checked", async () => {
    const dir = tempDir();
    const r = await runCli(via, ["keygen"], { cwd: dir });
    expect(r.code).toBe(0);
    const vkey = r.stdout.toString().trimEnd();
    expect(vkey).toMatch(VKEY);
    expect(r.stderr).toBe(
      "seam: info: private key written to seam.key (keep it secret); pin the verifier key above where the ledger's writer cannot change it\n",
    );
    const key = readFileSync(join(dir, "seam.key"), "utf8");
    expect(key).toMatch(new RegExp(`^PRIVATE\\+KEY\\+seam\\+${vkey.split("+")[1]}\\+[A-Za-z0-9+/]{44}\\n$`));
    expect(statSync(join(dir, "seam.key")).mode & 0o777).toBe(0o600);

    const again = await runCli(via, ["keygen"], { cwd: dir });
    expect([again.code, again.stdout.toString(), again.stderr]).toEqual([
      1,
      "",
      "seam: error: seam.key already exists; it is not overwritten\nseam: hint: choose another --out, or move the old key away first\n",
    ]);
    expect(readFileSync(join(dir, "seam.key"), "utf8")).toBe(key);

    const named = await runCli(via, ["keygen", "--name", "log.example/seam", "--out", "k2"], { cwd: dir });
    expect([named.code, named.stdout.toString()]).toEqual([
      0,
      expect.stringMatching(/^log\.example\/seam\+[0-9a-f]{8}\+/),
    ]);
    const bad = await runCli(via, ["keygen", "--name", "a+b"], { cwd: dir });
    expect([bad.code, bad.stderr]).toEqual([
      2,
      `seam: error: --name "a+b" is not a key name: it must be non-empty, without spaces or '+'\nseam: hint: run 'seam keygen --help' for usage\n`,
    ]);
  });

  test("wrap --sign --witness, then verify --key --witness --state, --prove and --check-proof", async () => {
    const dir = tempDir();
    const p = (s: string) => join(dir, s);
    const vkey = (await runCli(via, ["keygen", "--name", "cli", "--out", p("k")])).stdout.toString().trimEnd();
    const wrapped = await run([
      ...fixture,
      "client",
      "--script",
      "awkward",
      "--sent",
      p("sent"),
      "--received",
      p("recv"),
      "--",
      ...seamArgv(via),
      "wrap",
      "--ledger",
      p("l.jsonl"),
      "--sign",
      p("k"),
      "--checkpoint-every",
      "4",
      "--witness",
      p("w/witness.jsonl"),
      "--",
      ...fixture,
      "server",
    ]);
    expect([wrapped.code, wrapped.stderr]).toEqual([0, ""]);
    const rows = ledgerRows(p("l.jsonl"));
    const cps = rows.flatMap((r, i) => (getField(r, "evt") === "checkpoint" ? [i + 1] : []));
    expect(cps.length).toBeGreaterThan(4);
    expect(cps.at(-1)).toBe(rows.length);
    expect(getField(rows[0]!, "checkpoint_key")).toBe(vkey.split("+").slice(0, 2).join("+"));
    expect(readFileSync(p("w/witness.jsonl"), "utf8").trimEnd().split("\n").length).toBe(cps.length);

    // The awkward script's two deliberate non-JSON lines are rowed as unparsed frames: allowed here.
    const v = await runCli(via, [
      "verify",
      "--allow-unparsed",
      p("l.jsonl"),
      "--key",
      vkey,
      "--witness",
      p("w/witness.jsonl"),
      "--state",
      p("state"),
    ]);
    const last = rows.length - 1;
    expect([v.code, v.stderr]).toEqual([0, ""]);
    expect(v.stdout.toString()).toContain(
      `\n  sealed    through line ${last}; unsealed tail: 0 rows (${cps.length} checkpoints; key ${vkey.split("+").slice(0, 2).join("+")})\n  witness   ${p("w/witness.jsonl")}: ${cps.length} checkpoints\n  state     nothing remembered for seam-ledger/`,
    );
    expect(v.stdout.toString()).toContain(`; now ${last}\n`);

    const json = await runCli(via, [
      "verify",
      "--allow-unparsed",
      p("l.jsonl"),
      "--key",
      vkey,
      "--state",
      p("state"),
      "--json",
    ]);
    const j = JSON.parse(json.stdout.toString());
    expect([json.code, j.ok, j.seal.sealed_through, j.seal.remembered, j.seal.state_now]).toEqual([
      0,
      true,
      last,
      last,
      last,
    ]);

    // An older copy of the ledger: the state remembers more.
    writeFileSync(p("old.jsonl"), `${readFileSync(p("l.jsonl"), "utf8").split("\n").slice(0, cps[1]).join("\n")}\n`);
    const rolled = await runCli(via, ["verify", p("old.jsonl"), "--key", vkey, "--state", p("state")]);
    expect(rolled.code).toBe(1);
    expect(rolled.stdout.toString()).toContain(
      `  break     state: truncated or rolled back: remembered checkpoint has size ${last}; the ledger holds ${cps[1]} lines (1 break)\n`,
    );
    // The same copy against the witness file.
    const cut = await runCli(via, [
      "verify",
      p("old.jsonl"),
      "--key",
      vkey,
      "--witness",
      p("w/witness.jsonl"),
      "--quiet",
    ]);
    expect([cut.code, cut.stdout.toString()]).toEqual([1, ""]);
    // A state file that cannot be read is an error, never "nothing remembered", which would drop the
    // rollback check above without a word (and replace the file).
    cpSync(p("state"), p("state2"), { recursive: true });
    const kept = join(p("state2"), readdirSync(p("state2")).find((f) => f.endsWith(".checkpoint"))!);
    rmSync(kept);
    execFileSync("mkfifo", [kept]);
    const fifo = await runCli(via, ["verify", p("old.jsonl"), "--key", vkey, "--state", p("state2")]);
    expect([fifo.code, fifo.stdout.length, fifo.stderr]).toEqual([
      2,
      0,
      `seam: error: cannot read state file ${kept}: not a regular file\nseam: hint: seam writes only regular files there; move this one away, and seam remembers nothing for that ledger until the next run\n`,
    ]);

    // Line 3 is the fixture server's deliberate non-JSON line (an unparsed_frame row); line 4 is tools_list.
    const proof = await runCli(via, ["verify", p("l.jsonl"), "--key", vkey, "--prove", "4"]);
    expect([proof.code, proof.stderr]).toEqual([0, ""]);
    expect(proof.stdout.toString()).toMatch(/^c2sp\.org\/tlog-proof@v1\nextra [A-Za-z0-9+/=]+\nindex 3\n/);
    // Into a regular file, as the README shows it: the same bytes, and the process ends.
    const quoted = (a: string[]) => a.map((w) => `'${w.replace(/'/g, "'\\''")}'`).join(" ");
    const toFile = await run([
      "sh",
      "-c",
      `${quoted([...seamArgv(via), "verify", p("l.jsonl"), "--key", vkey, "--prove", "4"])} > ${quoted([p("p.tlog-proof")])}`,
    ]);
    expect([toFile.code, readFileSync(p("p.tlog-proof"), "utf8")]).toEqual([0, proof.stdout.toString()]);
    const checked = await runCli(via, ["verify", "--check-proof", p("p.tlog-proof"), "--key", vkey]);
    expect(checked.code).toBe(0);
    expect(checked.stdout.toString()).toMatch(
      new RegExp(
        `^${p("p.tlog-proof")}: ok\n  origin    seam-ledger/[0-9a-f]{32}\n  entry     line 4 of ${last} \\(index 3\\)\n  signed    by cli\\+[0-9a-f]{8}\n  row       \\{"evt": "tools_list"`,
      ),
    );
    const unkeyed = await runCli(via, ["verify", "--check-proof", "-"], { input: proof.stdout });
    expect(unkeyed.code).toBe(3);
    const unsealed = await runCli(via, ["verify", p("l.jsonl"), "--prove", String(rows.length)]);
    expect([unsealed.code, unsealed.stderr]).toEqual([
      1,
      `seam: error: line ${rows.length} is not sealed: the latest checkpoint (line ${rows.length}) covers lines 1..${last}\n`,
    ]);
  });

  test("usage errors: companions without --sign or --key, an unusable key, --check-proof with a ledger", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "bad.key"), "not a key\n");
    writeFileSync(join(dir, "good.key"), `${generateKey("cli").privateKey}\n`, { mode: 0o600 });
    const good = join(dir, "good.key");
    const urlHint = "seam: hint: give the URL seam witness prints (requests go to URL/add-checkpoint)\n";
    const table: [string[], string][] = [
      [
        ["wrap", "--ledger", "l", "--witness-url", "http://127.0.0.1:1", "--", "true"],
        "seam: error: --witness-url needs --sign KEYFILE\nseam: hint: make a key with: seam keygen --out seam.key\n",
      ],
      [
        ["proxy", "--ledger", "l", "--upstream", "http://127.0.0.1:1/mcp", "--witness-url", "http://127.0.0.1:1"],
        "seam: error: --witness-url needs --sign KEYFILE\nseam: hint: make a key with: seam keygen --out seam.key\n",
      ],
      [
        ["wrap", "--ledger", "l", "--sign", good, "--witness-url", "ftp://w.example", "--", "true"],
        `seam: error: --witness-url takes a witness's http:// or https:// URL, not "ftp://w.example"\n${urlHint}`,
      ],
      [
        ["wrap", "--ledger", "l", "--sign", good, "--witness-url=http://w.example/?x=1", "--", "true"],
        `seam: error: --witness-url takes a witness's http:// or https:// URL, not "http://w.example/?x=1"\n${urlHint}`,
      ],
      [
        [
          "wrap",
          "--ledger",
          "l",
          "--sign",
          good,
          "--witness-url",
          "http://w.example",
          "--witness-url",
          "http://w.example",
          "--",
          "true",
        ],
        "seam: error: --witness-url names a witness twice\nseam: hint: run 'seam wrap --help' for usage\n",
      ],
      [
        ["wrap", "--ledger", "l", "--sign", good, "--witness-url", "https://u:secret@w.example", "--", "true"],
        "seam: error: --witness-url must not carry credentials (user:password@): it is written into the ledger\nseam: hint: run 'seam wrap --help' for usage\n",
      ],
      [
        ["wrap", "--ledger", "l", "--witness", "w", "--", "true"],
        "seam: error: --witness needs --sign KEYFILE\nseam: hint: make a key with: seam keygen --out seam.key\n",
      ],
      [
        ["wrap", "--ledger", "l", "--checkpoint-every", "5", "--", "true"],
        "seam: error: --checkpoint-every needs --sign KEYFILE\nseam: hint: make a key with: seam keygen --out seam.key\n",
      ],
      [
        ["wrap", "--ledger", "l", "--sign", join(dir, "bad.key"), "--", "true"],
        `seam: error: ${join(dir, "bad.key")} holds no private key (one line: PRIVATE+KEY+<name>+<id>+<key>)\nseam: hint: make a key with: seam keygen --out seam.key\n`,
      ],
      [
        ["wrap", "--ledger", "l", "--sign", join(dir, "none.key"), "--", "true"],
        `seam: error: cannot read key file ${join(dir, "none.key")}: no such file or directory\nseam: hint: make a key with: seam keygen --out seam.key\n`,
      ],
      [
        ["verify", "l", "--witness", "w"],
        "seam: error: --witness needs --key VKEY\nseam: hint: give the verifier key that seam keygen printed\n",
      ],
      [
        ["verify", "l", "--key", "nonsense"],
        "seam: error: --key nonsense is neither a verifier key (<name>+<id>+<key>) nor a readable file: no such file or directory\nseam: hint: give the verifier key that seam keygen printed, or a file of them\n",
      ],
      [
        ["verify", "l", "--check-proof", "p"],
        "seam: error: --check-proof takes the proof alone: no ledger, --prove, --witness or --state\nseam: hint: seam verify --check-proof FILE --key VKEY\n",
      ],
      [
        ["verify", "--prove", "3"],
        "seam: error: missing required positional argument: PATH\nseam: hint: run 'seam verify --help' for usage\n",
      ],
      [
        ["verify", "l", "--prove", "0"],
        "seam: error: --prove takes a whole number of at least 1, not \"0\"\nseam: hint: run 'seam verify --help' for usage\n",
      ],
    ];
    for (const [args, stderr] of table) {
      const r = await runCli(via, args, { cwd: dir });
      expect([args.join(" "), r.code, r.stderr]).toEqual([args.join(" "), 2, stderr]);
    }
  });
});
