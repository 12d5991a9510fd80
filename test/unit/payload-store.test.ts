/**
 * The payload store (src/runtime/payload-store.ts): where a digest's payload
 * lives, what a write leaves, and what it refuses; the spans the observer
 * keeps (src/observe/payloads.ts); the check verify makes of them
 * (src/verify/payload-check.ts).
 */
import { describe, expect, test } from "bun:test";
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { digestJsonUtf8 } from "../../src/core/digest.ts";
import { McpObserver } from "../../src/observe/observer.ts";
import type { Fields } from "../../src/observe/observer-options.ts";
import { PayloadKeeper, valueSpan } from "../../src/observe/payloads.ts";
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

  test("a payload is written once, as given, 0600 in 0700 directories, with nothing else left", () => {
    const dir = join(tempDir(), "store");
    const store = PayloadStore.open(dir);
    expect(store.put(digest, enc(value))).toBe("written");
    const path = join(dir, "sha256", digest.slice(-64));
    expect(readFileSync(path, "utf8")).toBe(value);
    expect(lstatSync(path).mode & 0o777).toBe(0o600);
    expect(lstatSync(dir).mode & 0o777).toBe(0o700);
    expect(lstatSync(join(dir, "sha256")).mode & 0o777).toBe(0o700);
    // The same digest again, even with other bytes: the payload there stays as it is.
    const ino = lstatSync(path).ino;
    expect(store.put(digest, enc('{"a":1,"b":2}'))).toBe("exists");
    expect(readFileSync(path, "utf8")).toBe(value);
    expect(lstatSync(path).ino).toBe(ino);
    expect(readdirSync(join(dir, "sha256"))).toEqual([digest.slice(-64)]);
    expect(store.get(digest)).toEqual({ kind: "present", bytes: enc(value) });
    expect([...store.digests()]).toEqual([digest]);
    expect(store.remove(digest)).toBe(true);
    expect(store.get(digest)).toEqual({ kind: "absent" });
    expect(store.put(`sha256:raw-bytes:v1:${HEX}`, enc("x"))).toBe("skipped");
  });

  test("a write cut short leaves nothing under the payload's name, and no temporary file", () => {
    const dir = join(tempDir(), "store");
    const store = PayloadStore.open(dir);
    store.writeBytes = (fd, bytes) => {
      writeSync(fd, bytes, 0, 3);
      throw new Error("no space left on device");
    };
    expect(() => store.put(digest, enc(value))).toThrow("no space left on device");
    expect(store.get(digest)).toEqual({ kind: "absent" });
    expect(readdirSync(join(dir, "sha256"))).toEqual([]);
  });

  test("a link planted under a payload's name is neither followed nor replaced", () => {
    const base = tempDir();
    const dir = join(base, "store");
    const store = PayloadStore.open(dir);
    mkdirSync(join(dir, "sha256"), { mode: 0o700 });
    const target = join(base, "target");
    writeFileSync(target, "victim");
    symlinkSync(target, join(dir, "sha256", digest.slice(-64)));
    expect(store.put(digest, enc(value))).toBe("exists");
    expect(readFileSync(target, "utf8")).toBe("victim");
    expect(store.get(digest)).toEqual({ kind: "refused", why: "is a symbolic link" });
    expect(store.remove(digest)).toBe(true);
    expect(readFileSync(target, "utf8")).toBe("victim");
  });

  test("a sub-directory planted as a link is refused", () => {
    const base = tempDir();
    const dir = join(base, "store");
    const store = PayloadStore.open(dir);
    mkdirSync(join(base, "elsewhere"), { mode: 0o700 });
    symlinkSync(join(base, "elsewhere"), join(dir, "sha256"));
    expect(() => store.put(digest, enc(value))).toThrow("is a symbolic link");
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

describe("PayloadKeeper", () => {
  test("keeps what digests to the row's digest; counts the rest and says so once", () => {
    const kept = new Map<string, string>();
    const warned: string[] = [];
    const keeper = new PayloadKeeper({ has: (d) => kept.has(d), put: (d, b) => kept.set(d, dec(b)!) }, (m) =>
      warned.push(m),
    );
    const frame = enc('{"jsonrpc":"2.0","id":1,"params":{"name":"t","arguments":{"b": 2, "a": 1}}}');
    keeper.keep(c14n('{"a":1,"b":2}'), frame, -1, ["params", "arguments"]);
    keeper.keep(c14n('{"a":1}'), frame, -1, ["params", "arguments"]);
    keeper.keep(c14n('{"a":2}'), frame, -1, ["params", "arguments"]);
    keeper.keep(c14n("{}"), enc('{"params":{}}'), -1, ["params", "arguments"], enc("{}"));
    keeper.keep(undefined, frame, -1, ["params"]);
    expect([...kept.values()]).toEqual(['{"b": 2, "a": 1}', "{}"]);
    expect(keeper.unwritten).toBe(2);
    expect(warned.length).toBe(1);
  });

  test("deferred, a payload is copied now and written in a later turn, or by flush", async () => {
    const kept = new Map<string, string>();
    const keeper = new PayloadKeeper({ has: (d) => kept.has(d), put: (d, b) => kept.set(d, dec(b)!) }, () => {}, true);
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
        has: () => false,
        put: () => {
          throw new Error("no space left on device");
        },
      },
      () => {},
    );
    keeper.keep(c14n("1"), enc('{"result":1}'), -1, ["result"]);
    expect(keeper.unwritten).toBe(1);
  });
});

describe("the observer's payloads", () => {
  test("every digest its rows hold has its payload, as the bytes that crossed, by session_end's counts", () => {
    const kept = new Map<string, string>();
    const rows: Fields[] = [];
    const keeper = new PayloadKeeper({ has: (d) => kept.has(d), put: (d, b) => kept.set(d, dec(b)!) }, () => {}, true);
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
