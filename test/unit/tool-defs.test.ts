/**
 * Tool definitions in tools_list rows (src/format/tool-defs.ts) and what the
 * readers make of them (src/read/tool-defs.ts, the no-drift and against
 * rules of src/read/check.ts): digests, the bound, pages joined.
 */
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { getField, type Json, parseJson } from "../../src/core/json.ts";
import { MAX_TOOL_DIGESTS, readToolDigests, toolDigestFields } from "../../src/format/tool-defs.ts";
import { SKIM_AT } from "../../src/observe/large-answer.ts";
import { Checker, rulesFromObject } from "../../src/read/check.ts";
import { type Operation, OperationJoiner } from "../../src/read/read-model.ts";
import {
  againstLock,
  CallMarks,
  LOCK_FORMAT,
  lockFrom,
  lockText,
  ToolDefs,
  type ToolLock,
} from "../../src/read/tool-defs.ts";
import { observe } from "../helpers/observe.ts";

/**
 * The json-c14n digest computed apart from seam's writer: JSON.stringify of
 * the value with its keys sorted (the same form for the ASCII values here).
 */
function independentDigest(v: unknown): string {
  const sorted = (x: unknown): unknown =>
    Array.isArray(x)
      ? x.map(sorted)
      : x !== null && typeof x === "object"
        ? Object.fromEntries(
            Object.keys(x)
              .sort()
              .map((k) => [k, sorted((x as Record<string, unknown>)[k])]),
          )
        : x;
  return `sha256:json-c14n:v1:${createHash("sha256")
    .update(JSON.stringify(sorted(v)))
    .digest("hex")}`;
}

const tool = (name: unknown, description = "d") => ({ name, description, inputSchema: { type: "object" } });
const parsed = (v: unknown) => parseJson(JSON.stringify(v));

describe("tool_digests: one pair per named tool, digest of its whole definition", () => {
  test("each digest is the json-c14n digest of the tool object as sent, every member counted", () => {
    const t = {
      name: "search",
      title: "Search",
      description: "Find things",
      inputSchema: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
      outputSchema: { type: "object" },
      annotations: { readOnlyHint: true },
      _meta: { x: 1 },
    };
    const f = toolDigestFields(parsed([t]));
    expect(f.tool_digests).toEqual([["search", independentDigest(t)]]);
    // Any member changes it, not only the description.
    for (const k of ["title", "outputSchema", "annotations", "_meta"] as const) {
      const { [k]: _, ...less } = t;
      expect(toolDigestFields(parsed([less])).tool_digests).toEqual([["search", independentDigest(less)]]);
      expect(independentDigest(less)).not.toBe(independentDigest(t));
    }
  });

  // [case, tools, the pairs' names, tool_digests_omitted]
  const cases: [string, unknown, string[] | null, number | undefined][] = [
    [
      "sorted by name, code points",
      [tool("b"), tool("\uFB00"), tool("a"), tool("\u{1F600}")],
      ["a", "b", "\uFB00", "\u{1F600}"],
      undefined,
    ],
    ["no tools: an empty list", [], [], undefined],
    ["a name of 128 characters has its pair", [tool("x".repeat(128))], ["x".repeat(128)], undefined],
    ["a name of 129 has none", [tool("x".repeat(129)), tool("a")], ["a"], undefined],
    [
      "a tool with no string name, or no object, has none",
      [tool(7), { description: "x" }, "echo", null, tool("a")],
      ["a"],
      undefined,
    ],
    ["a name listed twice: both pairs", [tool("a", "one"), tool("a", "two")], ["a", "a"], undefined],
    [
      `${MAX_TOOL_DIGESTS} tools: every pair`,
      Array.from({ length: MAX_TOOL_DIGESTS }, (_, i) => tool(`t${i}`)),
      null,
      undefined,
    ],
    [
      `${MAX_TOOL_DIGESTS + 1} tools: none, counted`,
      Array.from({ length: MAX_TOOL_DIGESTS + 1 }, (_, i) => tool(`t${i}`)),
      null,
      MAX_TOOL_DIGESTS + 1,
    ],
    [
      "past the bound counts only the named tools",
      [...Array.from({ length: MAX_TOOL_DIGESTS + 1 }, (_, i) => tool(`t${i}`)), tool(1)],
      null,
      MAX_TOOL_DIGESTS + 1,
    ],
  ];
  test.each(cases)("%s", (_name, tools, names, omitted) => {
    const f = toolDigestFields(parsed(tools));
    expect(f.tool_digests_omitted).toBe(omitted);
    if (omitted !== undefined) {
      expect(f.tool_digests).toBeUndefined();
      return;
    }
    const pairs = f.tool_digests as [string, string][];
    if (names !== null) expect(pairs.map((p) => p[0])).toEqual(names);
    else expect(pairs).toHaveLength((tools as unknown[]).length);
    for (const [n, d] of pairs) {
      const sent = (tools as { name: unknown }[]).filter((t) => t !== null && typeof t === "object" && t.name === n);
      expect(sent.map(independentDigest)).toContain(d);
    }
  });

  test("a name listed twice: its pairs in digest order", () => {
    const pairs = toolDigestFields(parsed([tool("a", "one"), tool("a", "two")])).tool_digests as [string, string][];
    expect(pairs.map((p) => p[1])).toEqual(
      [independentDigest(tool("a", "one")), independentDigest(tool("a", "two"))].sort(),
    );
  });

  test("no tools array: no field", () => {
    expect(toolDigestFields(undefined)).toEqual({});
    expect(toolDigestFields(parsed({ a: 1 }))).toEqual({});
  });

  test("the observer writes them on each page of a paged list", () => {
    const page1 = [tool("b"), tool("a")];
    const page2 = [tool("c", "x")];
    const { rows } = observe([
      [">", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`],
      ["<", JSON.stringify({ jsonrpc: "2.0", id: 1, result: { tools: page1, nextCursor: "p2" } })],
      [">", `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"p2"}}`],
      ["<", JSON.stringify({ jsonrpc: "2.0", id: 2, result: { tools: page2 } })],
    ]);
    const r1 = parseJson(rows[0]!);
    const r2 = parseJson(rows[1]!);
    expect(getField(r1, "tool_digests")).toEqual([
      ["a", independentDigest(tool("a"))],
      ["b", independentDigest(tool("b"))],
    ]);
    expect(getField(r1, "next_cursor")).toBe("p2");
    expect(getField(r2, "tool_digests")).toEqual([["c", independentDigest(tool("c", "x"))]]);
    expect(getField(r2, "cursor")).toBe("p2");
    // After tools_digest, before cursor: the row's field order.
    expect(rows[0]!.indexOf('"tools_digest"')).toBeLessThan(rows[0]!.indexOf('"tool_digests"'));
    expect(rows[0]!.indexOf('"tool_digests"')).toBeLessThan(rows[0]!.indexOf('"next_cursor"'));
  });

  test("a list long enough to be read without its payload (SKIM_AT) still has every pair", () => {
    const many = Array.from({ length: 300 }, (_, i) => tool(`t${String(i).padStart(3, "0")}`, "x".repeat(300)));
    const frame = JSON.stringify({ jsonrpc: "2.0", id: 1, result: { tools: many } });
    expect(frame.length).toBeGreaterThan(SKIM_AT);
    const { rows } = observe([
      [">", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`],
      ["<", frame],
    ]);
    expect(getField(parseJson(rows[0]!), "tool_digests")).toEqual(
      many.map((t) => [t.name as string, independentDigest(t)]),
    );
  });

  test("readToolDigests takes only well-formed pairs", () => {
    expect(readToolDigests(parsed([["a", "d"]]))).toEqual([["a", "d"]]);
    for (const bad of [undefined, "x", [["a"]], [["a", 1]], [[1, "d"]], [["a", "d", "e"]], { a: "d" }])
      expect(readToolDigests(bad === undefined ? undefined : parsed(bad))).toBeNull();
  });
});

/** tools_list (and other) operations from rows, as a reader gets them. */
class Rows {
  private line = 0;
  private readonly joiner = new OperationJoiner("l.jsonl");
  ops: Operation[] = [];
  add(session: string, evt: string, fields: Record<string, unknown>, server = "srv"): Operation {
    const row = parsed({ evt, seam: "mcp-stdio", session, server, ...fields });
    const ops = this.joiner.add(row as Json, ++this.line);
    this.ops.push(...ops);
    return ops[0]!;
  }
  /** A page: `defs` tool → definition tag (its digest is `d:<tag>`). */
  page(session: string, defs: Record<string, string> | null, extra: Record<string, unknown> = {}, server = "srv") {
    const pairs = defs === null ? undefined : Object.entries(defs).map(([t, d]) => [t, `d:${d}`]);
    return this.add(session, "tools_list", { status: "ok", tool_digests: pairs, ...extra }, server);
  }
}

describe("ToolDefs: pages joined into listings, redefinitions per server", () => {
  test("pages of one listing join; the listing completes on its last page", () => {
    const r = new Rows();
    const defs = new ToolDefs();
    expect(defs.add(r.page("s1", { a: "1", b: "1" }, { next_cursor: "c2" })).listing).toBeNull();
    expect(defs.add(r.page("s2", { z: "1" })).listing?.tools?.size).toBe(1); // another session, by itself
    const l = defs.add(r.page("s1", { c: "1" }, { cursor: "c2" })).listing!;
    expect(l.session).toBe("s1");
    expect(l.lines).toEqual([1, 3]);
    expect([...l.tools!].map(([t, d]) => [t, d.digest, d.line])).toEqual([
      ["a", "d:1", 1],
      ["b", "d:1", 1],
      ["c", "d:1", 3],
    ]);
  });

  // [case, pages (session, defs, extra), whether the last page completes a listing, its tools (null: not comparable)]
  const cases: [
    string,
    [string, Record<string, string> | null, Record<string, unknown>][],
    boolean,
    string[] | null,
  ][] = [
    ["one page", [["s", { a: "1" }, {}]], true, ["a"]],
    ["a page whose cursor continues nothing", [["s", { a: "1" }, { cursor: "zz" }]], false, null],
    [
      "a cursor of another session continues nothing",
      [
        ["s", { a: "1" }, { next_cursor: "c" }],
        ["t", { b: "1" }, { cursor: "c" }],
      ],
      false,
      null,
    ],
    [
      "a page without tool_digests: the listing has no tools",
      [
        ["s", { a: "1" }, { next_cursor: "c" }],
        ["s", null, { cursor: "c" }],
      ],
      true,
      null,
    ],
    [
      "an error page ends the listing without tools",
      [
        ["s", { a: "1" }, { next_cursor: "c" }],
        ["s", {}, { cursor: "c", status: "error" }],
      ],
      true,
      null,
    ],
    [
      "a listing begun again starts afresh",
      [
        ["s", { a: "1" }, { next_cursor: "c" }],
        ["s", { b: "1" }, {}],
      ],
      true,
      ["b"],
    ],
  ];
  test.each(cases)("%s", (_name, pages, completes, tools) => {
    const r = new Rows();
    const defs = new ToolDefs();
    let last = null;
    for (const [s, d, extra] of pages) last = defs.add(r.page(s, d, extra)).listing;
    expect(last !== null).toBe(completes);
    if (last !== null) expect(last.tools === null ? null : [...last.tools.keys()]).toEqual(tools);
  });

  test("a redefinition is named with both rows' lines and sessions, per server", () => {
    const r = new Rows();
    const defs = new ToolDefs();
    const seen = (op: Operation) =>
      defs.add(op).redefined.map((x) => [x.server, x.tool, x.from.line, x.from.session, x.to.line, x.to.session]);
    expect(seen(r.page("s1", { a: "1", b: "1" }))).toEqual([]);
    expect(seen(r.page("s1", { a: "1" }, {}, "other"))).toEqual([]);
    expect(seen(r.page("s2", { a: "1", b: "1" }))).toEqual([]);
    expect(seen(r.page("s3", { a: "2", b: "1" }))).toEqual([["srv", "a", 3, "s2", 4, "s3"]]);
    // Within one session too, and another server's tool of the same name is its own.
    expect(seen(r.page("s3", { a: "3" }))).toEqual([["srv", "a", 4, "s3", 5, "s3"]]);
    expect(seen(r.page("s4", { a: "1" }, {}, "other"))).toEqual([]);
    // A tool that went missing and came back the same is no redefinition.
    expect(seen(r.page("s5", { b: "1" }))).toEqual([]);
  });

  test("a name a page lists twice is one definition, not a flip between two", () => {
    const r = new Rows();
    const defs = new ToolDefs();
    const twice = () =>
      r.add("s", "tools_list", {
        status: "ok",
        tool_digests: [
          ["a", "d:1"],
          ["a", "d:2"],
        ],
      });
    expect(defs.add(twice()).redefined).toEqual([]);
    expect(defs.add(twice()).redefined).toEqual([]);
    expect(defs.add(r.page("s", { a: "1" })).redefined.map((x) => [x.from.digest, x.to.digest])).toEqual([
      ["d:1,d:2", "d:1"],
    ]);
  });

  test("CallMarks marks the first call of a redefined tool on its server, once", () => {
    const r = new Rows();
    const marks = new CallMarks();
    const call = (tool: string, server = "srv") => {
      const op = r.add("s", "tool_call", { tool, rpc_id: r.ops.length, status: "ok" }, server);
      marks.see(op);
      return op.redefined === true;
    };
    marks.see(r.page("s", { a: "1", b: "1" }));
    expect(call("a")).toBe(false);
    marks.see(r.page("s", { a: "2", b: "1" }));
    expect(call("b")).toBe(false);
    expect(call("a", "other")).toBe(false);
    expect(call("a")).toBe(true);
    expect(call("a")).toBe(false);
  });
});

describe("the lock: text, parsing, differences", () => {
  const lock: ToolLock = new Map([
    ["zeta", new Map([["b", "d:1"]])],
    [
      "alpha",
      new Map([
        ["z", "d:2"],
        ["a", "d:1"],
      ]),
    ],
    ["empty", new Map()],
  ]);

  test("the same lock gives the same bytes, keys sorted, and reads back", () => {
    const text = lockText(lock);
    expect(text).toBe(
      `{\n  "format": "${LOCK_FORMAT}",\n  "servers": {\n    "alpha": {\n      "a": "d:1",\n      "z": "d:2"\n    },\n    "empty": {},\n    "zeta": {\n      "b": "d:1"\n    }\n  }\n}\n`,
    );
    expect(JSON.parse(text).servers.alpha.a).toBe("d:1");
    expect(lockFrom(parseJson(text))).toEqual(lock);
    expect(lockText(new Map())).toBe(`{\n  "format": "${LOCK_FORMAT}",\n  "servers": {}\n}\n`);
  });

  test.each([
    ["another format", { format: "x", servers: {} }, "not a seam-tools-lock/v1 file"],
    ["servers not an object", { format: LOCK_FORMAT, servers: [] }, `"servers" is not an object`],
    ["tools not an object", { format: LOCK_FORMAT, servers: { s: "x" } }, "not an object of tools"],
    ["a digest not a string", { format: LOCK_FORMAT, servers: { s: { t: 1 } } }, "the digest is not a string"],
  ])("a malformed lock says what is wrong: %s", (_name, v, says) => {
    expect(lockFrom(parsed(v))).toContain(says);
  });

  test("against: added, removed and changed, each its kind", () => {
    const r = new Rows();
    const defs = new ToolDefs();
    const l = defs.add(r.page("s", { a: "1", z: "9", n: "1" }, {}, "alpha")).listing!;
    expect(againstLock(lock, l).map((d) => [d.kind, d.tool, d.locked, d.listed, d.at])).toEqual([
      ["tool_added", "n", null, "d:1", "l.jsonl:1"],
      ["tool_changed", "z", "d:2", "d:9", "l.jsonl:1"],
    ]);
    const less = defs.add(r.page("s", { z: "2" }, {}, "alpha")).listing!;
    expect(againstLock(lock, less).map((d) => [d.kind, d.tool])).toEqual([["tool_removed", "a"]]);
    const unknown = defs.add(r.page("s", { q: "1" }, {}, "new")).listing!;
    expect(againstLock(lock, unknown).map((d) => [d.kind, d.tool])).toEqual([["tool_added", "q"]]);
  });
});

describe("seam check's no-drift and against rules", () => {
  test("no-drift fails with a tool_drift finding naming the tool, lines and sessions", () => {
    const r = new Rows();
    r.page("s1", { echo: "1", add: "1" });
    r.page("s2", { echo: "2", add: "1" });
    const c = new Checker({ noDrift: true });
    for (const op of r.ops) c.add(op);
    const [res] = c.results([]);
    expect(res).toMatchObject({ kind: "no-drift", ok: false, where: ["l.jsonl:2"] });
    expect(res!.findings!.map((f) => [f.kind, f.tool, f.server, f.where, f.sessions, f.digests])).toEqual([
      ["tool_drift", "echo", "srv", ["l.jsonl:1", "l.jsonl:2"], ["s1", "s2"], ["d:1", "d:2"]],
    ]);
    expect(res!.findings![0]!.message).toContain('tool "echo"');
  });

  test("no-drift holds when nothing changed, and says what it could not judge", () => {
    const r = new Rows();
    r.page("s1", { echo: "1" });
    r.page("s2", { echo: "1" });
    r.page("s3", null, { tool_count: 1 });
    // An error page listed nothing: nothing left unjudged.
    r.add("s4", "tools_list", { status: "error", error_code: -32603 });
    const c = new Checker({ noDrift: true });
    for (const op of r.ops) c.add(op);
    const [res] = c.results([]);
    expect(res).toMatchObject({ kind: "no-drift", ok: true, findings: [] });
    expect(res!.observed).toContain("1 tools/list page without tool_digests not judged");
  });

  test("against: each difference once, whatever the number of sessions that show it", () => {
    const r = new Rows();
    for (const s of ["s1", "s2", "s3"]) r.page(s, { a: "1", extra: "1" });
    const c = new Checker({ against: "tools.lock" }, new Map([["srv", new Map([["a", "d:1"]])]]));
    for (const op of r.ops) c.add(op);
    const [res] = c.results([]);
    expect(res).toMatchObject({ kind: "against", ok: false, where: ["l.jsonl:1"] });
    expect(res!.findings!.map((f) => [f.kind, f.tool])).toEqual([["tool_added", "extra"]]);
    expect(res!.observed).toBe("1 difference from the lock in 3 listings");
  });
});

describe("a rules file's no-drift and against", () => {
  test.each([
    [{ no_drift: true }, { noDrift: true }],
    [{ "no-drift": false }, { noDrift: false }],
    [{ against: "tools.lock" }, { against: "tools.lock" }],
    [{ no_drift: "yes" }, 'no-drift takes true or false, not "yes"'],
    [{ against: "" }, "against takes a lock file (written by seam pin)"],
    [{ against: 1 }, "against takes a lock file (written by seam pin)"],
  ] as [Record<string, unknown>, unknown][])("%p", (file, want) => {
    expect(rulesFromObject(file)).toEqual(want as never);
  });
});
