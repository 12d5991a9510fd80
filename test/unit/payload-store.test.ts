/**
 * The payload store (src/runtime/payload-store.ts): where a digest's payload
 * lives, what a write leaves, and what it refuses; the spans the observer
 * keeps (src/observe/payloads.ts); the check verify makes of them
 * (src/verify/payload-check.ts).
 */
import { describe, expect, test } from "bun:test";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { digestJsonUtf8 } from "../../src/core/digest.ts";
import { LedgerWriter } from "../../src/ledger/ledger-writer.ts";
import { McpObserver } from "../../src/observe/observer.ts";
import type { Fields } from "../../src/observe/observer-options.ts";
import { PayloadKeeper, type PayloadSink, valueSpan } from "../../src/observe/payloads.ts";
import { openAppend } from "../../src/runtime/file.ts";
import { PayloadStore, payloadDigest, payloadPath } from "../../src/runtime/payload-store.ts";
import { PayloadCheck, type PayloadFound, withPayloads } from "../../src/verify/payload-check.ts";
import { verifyBytes } from "../../src/verify/verify-ledger.ts";
import { tempDir } from "../helpers/proc.ts";

const HEX = "43258cff783fe7036d8a43033f830adfc60ec037382473548ac742b888292777";
const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array | null) => (b === null ? null : new TextDecoder().decode(b));
const c14n = (text: string) => digestJsonUtf8(enc(text));

describe("payloadPath", () => {
  test.each([
    [`sha256:json-c14n:v1:${HEX}`, { dir: "sha256", name: HEX }],
    [`sha256:jcs:v1:${HEX}`, { dir: "sha256-jcs", name: HEX }],
    [`sha256:raw-bytes:v1:${HEX}`, null],
    ["undigestible:ValueError", null],
    [`sha256:json-c14n:v1:${HEX.toUpperCase()}`, null],
    [`sha256:json-c14n:v1:${HEX.slice(1)}`, null],
    [`sha256:json-c14n:v2:${HEX}`, null],
    [`sha256:json-c14n:v1:${HEX}/../x`, null],
  ])("%s", (digest, want) => {
    const got = payloadPath(digest);
    expect(got).toEqual(want);
    if (got !== null) expect(payloadDigest(got.dir, got.name)).toBe(digest);
  });

  test.each([
    ["sha256", "x".repeat(64)],
    ["sha256", `.tmp-1-${HEX.slice(0, 16)}`],
    ["sha512", HEX],
  ])("no payload is named %s/%s", (dir, name) => {
    expect(payloadDigest(dir, name)).toBeNull();
  });
});

describe("PayloadStore", () => {
  const value = '{ "b": 2, "a": 1 }';
  const digest = c14n(value);
  /** The payload written by the async way (`put`) or the sync one (`putNow`). */
  const putBy = async (store: PayloadStore, put: "put" | "putNow") =>
    put === "put" ? await store.put(digest, enc(value)) : store.putNow(digest, enc(value));
  /** A store with its sub-directory made, and beside it a file a planted link points to. */
  const storeBesideVictim = () => {
    const base = tempDir();
    const dir = join(base, "store");
    const store = PayloadStore.open(dir);
    mkdirSync(join(dir, "sha256"), { mode: 0o700 });
    const target = join(base, "target");
    writeFileSync(target, "victim");
    return { dir, store, target };
  };

  test("a payload is written once, as given, 0600 in 0700 directories, with nothing else left", async () => {
    const dir = join(tempDir(), "store");
    const store = PayloadStore.open(dir);
    expect(store.wrote(digest)).toBe(false);
    expect(await store.put(digest, enc(value))).toBe("written");
    expect(store.wrote(digest)).toBe(true);
    const path = join(dir, "sha256", digest.slice(-64));
    expect(readFileSync(path, "utf8")).toBe(value);
    expect(lstatSync(path).mode & 0o777).toBe(0o600);
    expect(lstatSync(dir).mode & 0o777).toBe(0o700);
    expect(lstatSync(join(dir, "sha256")).mode & 0o777).toBe(0o700);
    // The same digest again, even with other bytes: the store wrote it, it is not touched.
    const ino = lstatSync(path).ino;
    expect(await store.put(digest, enc('{"a":1,"b":2}'))).toBe("exists");
    expect(readFileSync(path, "utf8")).toBe(value);
    expect(lstatSync(path).ino).toBe(ino);
    expect(readdirSync(join(dir, "sha256"))).toEqual([digest.slice(-64)]);
    expect(store.get(digest)).toEqual({ kind: "present", bytes: enc(value) });
    expect([...store.digests()]).toEqual([digest]);
    expect(store.remove(digest)).toBe(true);
    expect(store.get(digest)).toEqual({ kind: "absent" });
    expect(await store.put(`sha256:raw-bytes:v1:${HEX}`, enc("x"))).toBe("skipped");
  });

  test.each([
    ["a file torn by a crash", (path: string) => writeFileSync(path, value.slice(0, 5))],
    ["a file planted with other content", (path: string) => writeFileSync(path, "[1]")],
    ["the same value, spelt otherwise, by an earlier session", (path: string) => writeFileSync(path, '{"a":1,"b":2}')],
  ])("%s under a payload's name is replaced by a whole payload", async (_what, plant) => {
    for (const put of ["put", "putNow"] as const) {
      const dir = join(tempDir(), "store");
      mkdirSync(join(dir, "sha256"), { recursive: true, mode: 0o700 });
      plant(join(dir, "sha256", digest.slice(-64)));
      const store = PayloadStore.open(dir);
      expect(await putBy(store, put)).toBe("written");
      expect(store.get(digest)).toEqual({ kind: "present", bytes: enc(value) });
      expect(lstatSync(join(dir, "sha256", digest.slice(-64))).mode & 0o777).toBe(0o600);
      expect(readdirSync(join(dir, "sha256"))).toEqual([digest.slice(-64)]);
    }
  });

  test("a temporary file's name planted ahead is not written through", async () => {
    for (const put of ["put", "putNow"] as const) {
      const { dir, store, target } = storeBesideVictim();
      // The name the store takes for its next temporary file: a link to a victim is there already.
      const planted = `${(store as unknown as { tempPrefix: string }).tempPrefix}0`;
      symlinkSync(target, join(dir, "sha256", planted));
      // A torn file under the payload's name: the store replaces it by way of a temporary file.
      writeFileSync(join(dir, "sha256", digest.slice(-64)), value.slice(0, 4));
      expect(await putBy(store, put)).toBe("written");
      expect(readFileSync(target, "utf8")).toBe("victim");
      expect(store.get(digest)).toEqual({ kind: "present", bytes: enc(value) });
      expect(readdirSync(join(dir, "sha256")).sort()).toEqual([planted, digest.slice(-64)].sort());
    }
  });

  test("a write cut short leaves nothing under the payload's name, and no temporary file", async () => {
    const dir = join(tempDir(), "store");
    const store = PayloadStore.open(dir);
    store.writeFile = ((path: string, bytes: Uint8Array, o: { mode: number }, done: (e: Error | null) => void) => {
      writeFileSync(path, bytes.subarray(0, 3), { flag: "wx", mode: o.mode });
      setImmediate(() => done(new Error("no space left on device")));
    }) as unknown as typeof store.writeFile;
    await expect(store.put(digest, enc(value))).rejects.toThrow("no space left on device");
    expect(store.get(digest)).toEqual({ kind: "absent" });
    expect(readdirSync(join(dir, "sha256"))).toEqual([]);
    expect(store.wrote(digest)).toBe(false);
  });

  test("a link planted under a payload's name is replaced, never followed", async () => {
    const { dir, store, target } = storeBesideVictim();
    symlinkSync(target, join(dir, "sha256", digest.slice(-64)));
    expect(store.get(digest)).toEqual({ kind: "refused", why: "is a symbolic link" });
    expect(await store.put(digest, enc(value))).toBe("written");
    expect(readFileSync(target, "utf8")).toBe("victim");
    expect(store.get(digest)).toEqual({ kind: "present", bytes: enc(value) });
    expect(store.remove(digest)).toBe(true);
    expect(readFileSync(target, "utf8")).toBe("victim");
  });

  test("a directory planted under a payload's name is not replaced: the payload is not written", async () => {
    const dir = join(tempDir(), "store");
    const store = PayloadStore.open(dir);
    mkdirSync(join(dir, "sha256", digest.slice(-64)), { recursive: true, mode: 0o700 });
    await expect(store.put(digest, enc(value))).rejects.toThrow();
    expect(store.wrote(digest)).toBe(false);
    expect(readdirSync(join(dir, "sha256"))).toEqual([digest.slice(-64)]);
  });

  test("a sub-directory planted as a link is refused", async () => {
    const base = tempDir();
    const dir = join(base, "store");
    const store = PayloadStore.open(dir);
    mkdirSync(join(base, "elsewhere"), { mode: 0o700 });
    symlinkSync(join(base, "elsewhere"), join(dir, "sha256"));
    await expect(store.put(digest, enc(value))).rejects.toThrow("is a symbolic link");
    expect(readdirSync(join(base, "elsewhere"))).toEqual([]);
  });

  test.each([
    ["a symlinked DIR", "is a symbolic link"],
    ["a DIR others can write", "can be written by others"],
    ["a file", "is not a directory"],
  ])("%s is refused", (what, why) => {
    const base = tempDir();
    const dir = join(base, "store");
    if (what === "a file") writeFileSync(dir, "");
    else if (what === "a symlinked DIR") {
      mkdirSync(join(base, "real"), { mode: 0o700 });
      symlinkSync(join(base, "real"), dir);
    } else {
      mkdirSync(dir);
      chmodSync(dir, 0o777);
    }
    expect(() => PayloadStore.open(dir)).toThrow(why);
    expect(() => PayloadStore.existing(dir)).toThrow(why);
  });
});

describe("valueSpan", () => {
  test.each([
    ['{"jsonrpc":"2.0","id":1,"result":{"a": 1}}', -1, ["result"], '{"a": 1}'],
    [' { "params" : { "name":"t", "arguments" : [1, "}"] } } ', -1, ["params", "arguments"], '[1, "}"]'],
    ['{"result":1,"result":{"x":2}}', -1, ["result"], '{"x":2}'],
    ['{"res\\u0075lt":"v"}', -1, ["result"], '"v"'],
    ['[{"id":1,"result":1}, {"id":2,"error":{"code":1}}]', 1, ["error"], '{"code":1}'],
    ['[{"id":1,"result":1}]', 1, ["result"], null],
    ['{"params":{"name":"t"}}', -1, ["params", "arguments"], null],
    ['{"params":[1]}', -1, ["params", "arguments"], null],
    ['{"result":1}', 0, ["result"], null],
  ])("%s, message %d, %j", (frame, index, path, want) => {
    expect(dec(valueSpan(enc(frame), index, path))).toBe(want);
  });
});

/** A sink that keeps payloads in `kept`, each write done when `release` says (at once by default). */
function mapSink(kept: Map<string, string>, held?: (() => void)[]): PayloadSink {
  return {
    wrote: (d) => kept.has(d),
    putLater: (d, b, done) => {
      if (kept.has(d)) return "exists";
      const bytes = dec(b)!;
      kept.set(d, bytes);
      const finish = () => done(bytes === '"fail"' ? new Error("disk full") : null);
      if (held) held.push(finish);
      else setImmediate(finish);
      return "writing";
    },
  };
}

describe("PayloadKeeper", () => {
  test("a payload's write is waited for by settled: the rows naming it wait for it", async () => {
    const kept = new Map<string, string>();
    const held: (() => void)[] = [];
    const warned: string[] = [];
    const keeper = new PayloadKeeper(mapSink(kept, held), (m) => warned.push(m));
    const settledAt = (p: Promise<void>) => {
      let done = false;
      void p.then(() => {
        done = true;
      });
      return async () => {
        await new Promise((r) => setImmediate(r));
        return done;
      };
    };
    expect(await settledAt(keeper.settled())()).toBe(true);
    keeper.keep(c14n("1"), enc('{"result":1}'), -1, ["result"]);
    const first = settledAt(keeper.settled());
    keeper.keep(c14n('"fail"'), enc('{"result":"fail"}'), -1, ["result"]);
    const second = settledAt(keeper.settled());
    expect(await first()).toBe(false);
    // The second look waits for the first's writes too, even once its own are done.
    held[1]!();
    expect(await second()).toBe(false);
    expect(keeper.unwritten).toBe(1);
    held[0]!();
    expect(await first()).toBe(true);
    expect(await second()).toBe(true);
    expect(warned.length).toBe(1);
  });

  test("keeps what digests to the row's digest; counts the rest and says so once", async () => {
    const store = PayloadStore.open(join(tempDir(), "store"));
    const warned: string[] = [];
    const keeper = new PayloadKeeper(store, (m) => warned.push(m));
    const frame = enc('{"jsonrpc":"2.0","id":1,"params":{"name":"t","arguments":{"b": 2, "a": 1}}}');
    keeper.keep(c14n('{"a":1,"b":2}'), frame, -1, ["params", "arguments"]);
    keeper.keep(c14n('{"a":1}'), frame, -1, ["params", "arguments"]);
    keeper.keep(c14n('{"a":2}'), frame, -1, ["params", "arguments"]);
    keeper.keep(c14n("{}"), enc('{"params":{}}'), -1, ["params", "arguments"], enc("{}"));
    keeper.keep(undefined, frame, -1, ["params"]);
    // The frame's buffer is reused before the writes are done: what was kept is what crossed.
    frame.fill(0x20);
    await keeper.settled();
    const kept = [...store.digests()].map((d) => dec((store.get(d) as { bytes: Uint8Array }).bytes));
    expect(kept.sort()).toEqual(['{"b": 2, "a": 1}', "{}"]);
    expect(keeper.unwritten).toBe(2);
    expect(warned.length).toBe(1);
    expect(warned[0]).toContain("do not digest to the row's digest");
  });

  test("deferred, a payload is copied now and written in a later turn, or by flush", async () => {
    const kept = new Map<string, string>();
    const keeper = new PayloadKeeper(mapSink(kept), () => {}, true);
    const frame = enc('{"result":{"a":1}}');
    keeper.keep(c14n('{"a":1}'), frame, -1, ["result"]);
    frame.fill(0x20);
    expect(kept.size).toBe(0);
    await new Promise((r) => setImmediate(r));
    expect([...kept.values()]).toEqual(['{"a":1}']);
    keeper.keep(c14n("2"), enc('{"result":2}'), -1, ["result"]);
    keeper.flush();
    expect([...kept.values()]).toEqual(['{"a":1}', "2"]);
  });

  test("a store that fails is counted, never thrown", () => {
    const keeper = new PayloadKeeper(
      {
        wrote: () => false,
        putLater: () => {
          throw new Error("no space left on device");
        },
      },
      () => {},
    );
    keeper.keep(c14n("1"), enc('{"result":1}'), -1, ["result"]);
    expect(keeper.unwritten).toBe(1);
  });
});

describe("the ledger's writer and the payloads", () => {
  test("a batch of rows is written only once the payloads before it are settled", async () => {
    const path = join(tempDir(), "ledger.jsonl");
    let release!: () => void;
    const settled = new Promise<void>((r) => {
      release = r;
    });
    let asked = 0;
    const writer = await LedgerWriter.open({
      path,
      session: "s1",
      server: "fixture",
      fsync: "never",
      openAppend,
      beforeWrite: () => {
        asked++;
        return settled;
      },
    });
    const written = writer.append("tool_call", { tool: "t", rpc_id: 1, status: "ok" });
    await new Promise((r) => setTimeout(r, 30));
    expect(asked).toBe(1);
    expect(existsSync(path) ? readFileSync(path, "utf8") : "").not.toContain("tool_call");
    release();
    expect(await written).toBe(true);
    expect(readFileSync(path, "utf8")).toContain("tool_call");
    await writer.end({ reason: "client_eof", calls: 1 });
  });
});

describe("the observer's payloads", () => {
  test("every digest its rows hold has its payload, as the bytes that crossed, by session_end's counts", async () => {
    const kept = new Map<string, string>();
    const rows: Fields[] = [];
    const keeper = new PayloadKeeper(mapSink(kept), () => {}, true);
    const o = new McpObserver({
      rows: {
        row: (_evt, f) => rows.push(f),
        durable: async (_evt, f) => (rows.push(f), true),
      },
      raw: false,
      writeAhead: false,
      payloads: keeper,
      now: () => 0,
    });
    const frames: [">" | "<", string][] = [
      [">", '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{ "b" : 2, "a": 1 }}}'],
      ["<", '{"jsonrpc":"2.0","id":1,"result":{"content":[]  ,"isError":false}}'],
      [
        ">",
        '[{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t"}},{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"p","arguments":{"x":"é"}}}]',
      ],
      ["<", '[{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"no"}},{"jsonrpc":"2.0","id":2,"result":{}}]'],
      ["<", '{"jsonrpc":"2.0","id":9,"method":"sampling/createMessage","params":{"m": [1, 2]}}'],
      [">", '{"jsonrpc":"2.0","id":9,"result":{"role":"assistant"}}'],
      ["<", '{"jsonrpc":"2.0","id":1,"result":{"again":true}}'],
      [">", '{"jsonrpc":"2.0","id":4,"method":"tools/list"}'],
      ["<", '{"jsonrpc":"2.0","id":4,"result":{"tools":[ {"name":"t"} ],"nextCursor":"n"}}'],
    ];
    for (const [dir, f] of frames) {
      if (dir === ">") o.fromClient(enc(f));
      else o.fromServer(enc(f));
    }
    o.finish("client_eof");
    expect(kept.size).toBe(0);
    await o.payloadsSettled();
    const end = o.endCounts();
    expect(end.payloads_unwritten).toBeUndefined();
    const named = new Set(
      rows.flatMap((r) =>
        ["args_digest", "result_digest", "params_digest", "first_result_digest", "tools_digest"]
          .map((k) => r[k])
          .filter((d): d is string => typeof d === "string"),
      ),
    );
    expect(named.size).toBe(9);
    expect([...kept.keys()].sort()).toEqual([...named].sort());
    for (const [d, bytes] of kept) expect(c14n(bytes)).toBe(d);
    expect(kept.get(c14n('{"a":1,"b":2}'))).toBe('{ "b" : 2, "a": 1 }');
    expect(kept.get(c14n('{"m":[1,2]}'))).toBe('{"m": [1, 2]}');
    expect(kept.get(c14n("{}"))).toBe("{}");
    // A tools/list answer: its tools, under the row's tools_digest (the row names no result).
    expect(kept.get(c14n('[{"name":"t"}]'))).toBe('[ {"name":"t"} ]');
  });
});

describe("payloads kept without a second digest", () => {
  // Invalid UTF-8 in a string: the strict parser refuses the frame; it is read leniently (U+FFFD in its place).
  const LENIENT = new Uint8Array([
    ...enc('{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"t","arguments":{"d":"'),
    0xff,
    ...enc('"}}}'),
  ]);
  const observe = (keeper: PayloadKeeper, frames: (string | Uint8Array)[]) => {
    const o = new McpObserver({
      rows: { row: () => {}, durable: async () => true },
      raw: false,
      writeAhead: false,
      payloads: keeper,
      now: () => 0,
    });
    for (const f of frames) o.fromClient(typeof f === "string" ? enc(f) : f);
    return o;
  };

  test("only the values of frames read plainly, found in the frame, are vouched for", async () => {
    const told: [string, boolean][] = [];
    const kept = new Map<string, string>();
    const sink = mapSink(kept);
    const keeper = new PayloadKeeper(
      {
        wrote: sink.wrote,
        putLater: (d, b, done, vouched) => (told.push([dec(b)!, vouched === true]), sink.putLater(d, b, done)),
      },
      () => {},
      true,
    );
    const o = observe(keeper, [
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a": 1}}}',
      '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t"}}',
      '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t","arguments":{"b":{"c":1,"c":2}}}}',
      LENIENT,
    ]);
    await o.payloadsSettled();
    expect(told).toEqual([
      ['{"a": 1}', true],
      ["{}", false],
      ['{"b":{"c":1,"c":2}}', false],
      ['{"d":"\ufffd"}', false],
    ]);
  });

  test("a value of a frame read leniently is digested again, and not kept under a name that is not its own", async () => {
    const store = PayloadStore.open(join(tempDir(), "store"));
    const keeper = new PayloadKeeper(store, () => {}, true);
    const o = observe(keeper, [
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a": 1}}}',
      LENIENT,
    ]);
    await o.payloadsSettled();
    expect([...store.digests()]).toEqual([c14n('{"a":1}')]);
    expect(o.endCounts().payloads_unwritten).toBe(1);
  });

  test("vouched bytes are written as they are; others only under their own digest", () => {
    const store = PayloadStore.open(join(tempDir(), "store"));
    expect(() => store.putNow(c14n("[1]"), enc("[2]"))).toThrow("do not digest to the row's digest");
    expect(store.putNow(c14n("[1]"), enc("[1]"), true)).toBe("written");
    expect(store.putNow(c14n("[3]"), enc("[3]"))).toBe("written");
  });
});

describe("PayloadCheck", () => {
  const row = (fields: string) => `{"evt": "tool_call", "seam": "mcp-stdio", ${fields}}`;
  test("mismatch is a break on the first line naming it; absent and erased are counted", () => {
    const good = c14n('{"a":1}');
    const bad = c14n('{"a":2}');
    const gone = c14n('{"a":3}');
    const erased = c14n('{"a":4}');
    const tools = c14n('[{"name":"t"}]');
    const rows = [
      row(`"args_digest": "${good}", "result_digest": "${bad}"`),
      row(`"args_digest": "${bad}", "result_digest": "${gone}"`),
      row(`"params_digest": "${erased}"`),
      `{"evt": "erasure", "seam": "mcp-stdio", "digests": ["${erased}"]}`,
      `{"evt": "tool_call", "seam": "another", "args_digest": "${bad}"}`,
      `{"evt": "tools_list", "seam": "mcp-stdio", "tools_digest": "${tools}"}`,
    ];
    const stored = new Map([
      [good, '{ "a": 1 }'],
      [bad, '{"a": 1}'],
      [tools, '[{"name":"u"}]'],
    ]);
    const check = new PayloadCheck();
    rows.forEach((r, i) => {
      check.row(JSON.parse(r), i + 1);
    });
    const found = check.finish({
      get: (d): PayloadFound => (stored.has(d) ? { kind: "present", bytes: enc(stored.get(d)!) } : { kind: "absent" }),
    });
    expect(found.summary).toEqual({ checked: 3, mismatched: 2, erased: 1, absent: 1 });
    expect(found.breaks.map((b) => [b.line, b.kind])).toEqual([
      [1, "payload_mismatch"],
      [6, "payload_mismatch"],
    ]);
    const report = withPayloads(verifyBytes(enc("")), found);
    expect([report.verdict, report.breaks, report.break_kinds, report.first_break?.line]).toEqual([
      "broken",
      2,
      { payload_mismatch: 2 },
      1,
    ]);
  });
});
