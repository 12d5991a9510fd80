/**
 * The library entry points (src/api/), in process: the same answers as the
 * CLI and the frozen vectors, typed errors for bad input, and reports (not
 * throws) from verifiers.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ActionMapError, actionFor, isRecordedStatus, loadActionMap, shouldForward } from "../../src/api/actions.ts";
import { verifyCheckpoint, verifyProof } from "../../src/api/checkpoint.ts";
import {
  chain,
  digest,
  digestRaw,
  GENESIS,
  JsonInputError,
  verifyBytes,
  verifyFile,
  verifyStream,
} from "../../src/api/index.ts";
import { ROOT, seamArgv } from "../helpers/cli.ts";
import { run, tempDir } from "../helpers/proc.ts";

const c14n = JSON.parse(readFileSync(`${ROOT}vectors/json-c14n-v1.json`, "utf8")) as {
  input: string;
  digest: string;
}[];
const chains = JSON.parse(readFileSync(`${ROOT}vectors/chain-v1.json`, "utf8")) as {
  prev: string;
  row_json: string;
  chain: string;
}[];

describe("seam-mcp", () => {
  test("digest equals every json-c14n vector, from text and from bytes", () => {
    for (const v of c14n) {
      expect(digest(v.input)).toBe(v.digest);
      expect(digest(new TextEncoder().encode(v.input))).toBe(v.digest);
    }
  });

  test("chain equals every chain vector; a chain key in the row is left out", () => {
    for (const v of chains) expect(chain(v.prev, v.row_json)).toBe(v.chain);
    const first = chains[0]!;
    const withChain = `${first.row_json.slice(0, -1)}, "chain": "ignored"}`;
    expect(chain(first.prev, withChain)).toBe(first.chain);
  });

  test("bad input is a JsonInputError with the offset; an unknown recipe a RangeError", () => {
    const cases: [() => unknown, string][] = [
      [() => digest("{"), "JsonInputError"],
      [() => digest(new Uint8Array([0x7b])), "JsonInputError"],
      [() => chain(GENESIS, "[1]"), "JsonInputError"],
      [() => chain(GENESIS, "{,}"), "JsonInputError"],
      [() => digest("{}", "md5" as never), "RangeError"],
    ];
    for (const [f, name] of cases) expect(f).toThrow(name === "RangeError" ? RangeError : JsonInputError);
    try {
      digest(`{"a": tru}`);
    } catch (e) {
      expect((e as JsonInputError).offset).toBe(6);
    }
    expect(digestRaw(new Uint8Array())).toBe(
      "sha256:raw-bytes:v1:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    );
  });

  test("verifyFile, verifyStream and verifyBytes agree with seam verify; an edit is a break at its line", async () => {
    const dir = tempDir("seam-api-");
    const ledger = join(dir, "demo.jsonl");
    const demo = await run([...seamArgv("bun"), "demo", "--ledger", ledger]);
    expect(demo.code).toBe(0);
    const text = readFileSync(ledger, "utf8");
    const file = await verifyFile(ledger, { isWriterAlive: () => false });
    expect([file.verdict, file.breaks, file.rows]).toEqual(["ok", 0, text.split("\n").length - 1]);
    const chunks = [new TextEncoder().encode(text.slice(0, 100)), new TextEncoder().encode(text.slice(100))];
    expect((await verifyStream(chunks)).head).toBe(file.head);
    expect(verifyBytes(text).verdict).toBe("ok");
    const edited = text.replace(`"echo"`, `"ECHO"`);
    const line = text.slice(0, text.indexOf(`"echo"`)).split("\n").length;
    const broken = verifyBytes(edited);
    expect(broken.verdict).toBe("broken");
    expect(broken.first_break).toEqual({ line, kind: "chain_mismatch", message: `line ${line}: chain mismatch` });
    const gone = await verifyFile(join(dir, "absent.jsonl"));
    expect(gone.verdict).not.toBe("ok");
    expect(gone.first_break?.message).toStartWith("unreadable: ");
  });
});

describe("seam-mcp/actions", () => {
  const MAP = `{"agent_id": "support-bot", "tools": {"stripe.refund_payment": {"contract_id": "refund_workflow",
    "action_type": "refund_order", "subject": "arguments.order_id", "params": {"amount": "arguments.amount"},
    "action_id": "refund:{arguments.order_id}"}}}`;

  test("a mapped call: the body the endpoint receives, its digest, exact numbers, mcp_request_id as text", async () => {
    const map = await loadActionMap(MAP, "m.json");
    const a = actionFor(map, {
      name: "refund_payment",
      id: 18446744073709551616n,
      params: `{"name": "refund_payment", "arguments": {"order_id": "o-1", "amount": 180.0}}`,
      at: new Date("2026-11-30T03:24:07.123Z"),
    });
    if (a.kind !== "action") throw new Error(a.kind);
    expect(a.body).toBe(
      `{"action_id":"refund:o-1","action_type":"refund_order","agent_id":"support-bot","channel":"mcp","contract_id":"refund_workflow","params":{"amount":180.0,"mcp_request_id":"18446744073709551616","mcp_tool":"refund_payment"},"requested_at":"2026-11-30T03:24:07.123Z","subject_id":"o-1"}`,
    );
    expect(a.digest).toBe(digest(a.body));
    expect((a.action.params as Record<string, unknown>).mcp_request_id).toBe("18446744073709551616");
  });

  test("unmapped, skipped and invalid maps", async () => {
    const map = await loadActionMap(MAP, "m.json");
    expect(actionFor(map, { name: "other", id: 1, params: "{}" })).toEqual({ kind: "unmapped" });
    expect(actionFor(map, { name: "refund_payment", id: 1, params: `{"arguments": {}}` })).toEqual({
      kind: "skipped",
      reason: "subject arguments.order_id is absent",
    });
    expect(actionFor(map, { name: "refund_payment", id: 1, params: `{` }).kind).toBe("skipped");
    await expect(loadActionMap(`{"tools": {"pay": {"subject": "a"}}}`, "bad.json")).rejects.toThrow(
      new ActionMapError(`mapping bad.json: tool "pay", key contract_id: missing (every mapped tool needs one)`),
    );
  });

  test("forward or refuse: posted (2xx or 409) goes on; a failed post only when failing open", () => {
    expect([200, 201, 204, 409].map(isRecordedStatus)).toEqual([true, true, true, true]);
    expect([301, 400, 404, 500].map(isRecordedStatus)).toEqual([false, false, false, false]);
    expect(shouldForward(true, { failOpen: false })).toBe(true);
    expect(shouldForward(false)).toBe(true);
    expect(shouldForward(false, { failOpen: false })).toBe(false);
  });
});

describe("seam-mcp/checkpoint", () => {
  test("a proof from seam verify --prove checks ok with its key, and not with another key or edited", async () => {
    const dir = tempDir("seam-api-cp-");
    const p = (s: string) => join(dir, s);
    const seam = seamArgv("bun");
    const vkey = (await run([...seam, "keygen", "--name", "api", "--out", p("k")])).stdout.toString().trim();
    const other = (await run([...seam, "keygen", "--name", "other", "--out", p("k2")])).stdout.toString().trim();
    const fixture = [...seam, "fixture"];
    const wrapped = await run([
      ...fixture,
      "client",
      "--script",
      "awkward",
      "--",
      ...seam,
      "wrap",
      "--ledger",
      p("l.jsonl"),
      "--sign",
      p("k"),
      "--checkpoint-every",
      "4",
      "--",
      ...fixture,
      "server",
    ]);
    expect(wrapped.code).toBe(0);
    const proof = (await run([...seam, "verify", p("l.jsonl"), "--key", vkey, "--prove", "3"])).stdout.toString();
    writeFileSync(p("proof"), proof);
    const line3 = readFileSync(p("l.jsonl"), "utf8").split("\n")[2];
    const ok = verifyProof(proof, [vkey]);
    expect([ok.verdict, ok.line, ok.entry, ok.problem]).toEqual(["ok", 3, line3!, null]);
    expect(ok.signedBy).toHaveLength(1);
    expect(verifyProof(proof, [other]).verdict).toBe("broken");
    expect(verifyProof(proof, []).verdict).toBe("inconclusive");
    const note = proof.slice(proof.indexOf("\n\n") + 2);
    const cp = verifyCheckpoint(note, [vkey]);
    if (!cp.ok) throw new Error(cp.reason);
    expect(cp.origin).toMatch(/^seam-ledger\/[0-9a-f]{32}$/);
    expect(cp.size).toBeGreaterThanOrEqual(3);
    expect(verifyCheckpoint(note, [other])).toEqual({ ok: false, reason: "not signed by any of the given keys" });
    const bad = verifyProof(proof, ["not a key"]);
    expect(bad.verdict).toBe("broken");
    expect(bad.problem).toStartWith("key 1 is not a verifier key");
    expect(bad.problem).not.toContain("not a key (");
  });
});
