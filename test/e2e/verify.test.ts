import { describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { escapeBytes, unescapeBytes } from "../../src/core/byte-escape.ts";
import { lineForm } from "../../src/core/canonical/index.ts";
import { chainOf } from "../../src/core/chain.ts";
import { digestBytes } from "../../src/core/digest.ts";
import { type Json, JsonFloat } from "../../src/core/json.ts";
import type { BreakKind, FindingKind } from "../../src/format/kinds.ts";
import { pyTruthy } from "../../src/format/line.ts";
import { fileChunks, LedgerVerifier, type VerifyOptions, type VerifyReport } from "../../src/verify/ledger-verifier.ts";
import { verifyBytes, verifyLedger } from "../../src/verify/verify-ledger.ts";
import { exitCodeFor, humanReport, jsonReport, worstExit } from "../../src/verify/verify-report.ts";
import { tempDir } from "../helpers/proc.ts";
import {
  enc,
  HAVE_PYTHON,
  inTimeOrder,
  LedgerBuilder,
  type RefVerdict,
  type Row,
  reference,
  resetClock,
  seamRow,
  sessionRows,
} from "../helpers/verify-helpers.ts";

const cat = (...parts: (string | Uint8Array)[]) =>
  Buffer.concat(parts.map((p) => (typeof p === "string" ? enc(p) : p)));

/** Five plain rows of the format (no seam fields), chained from genesis. */
function plain(n = 5): LedgerBuilder {
  const b = new LedgerBuilder();
  for (let i = 1; i <= n; i++) b.add({ ts: `2026-01-01T00:00:0${i}Z`, tool: "search", n: i, q: `query ${i}` });
  return b;
}
const L = (b: LedgerBuilder) => [...b.lines];
const text = (lines: string[]) => `${lines.join("\n")}\n`;

interface ChainCase {
  name: string;
  file: Uint8Array;
  strict?: boolean;
  verdict: VerifyReport["verdict"];
  first: string | null;
  /** The first break's kind, when there is one. */
  kind?: BreakKind;
  breaks: number;
  /** Where seam knowingly differs from the reference: what the reference says instead. */
  reference?: { verdict: RefVerdict["verdict"]; first: string | null; breaks: number };
  rows?: number;
  prechain?: number;
  findings?: string[];
  findingKinds?: FindingKind[];
  notes?: string[];
}

const base = L(plain());
const forgedRow = (prev: string) =>
  lineForm({ ...{ ts: "x", tool: "pay", n: 99 }, chain: chainOf(prev, { ts: "x", tool: "pay", n: 99 }) });
const chainOfLine = (line: string) => JSON.parse(line).chain as string;

const cases: ChainCase[] = [
  { name: "intact", file: enc(text(base)), verdict: "ok", first: null, breaks: 0, rows: 5 },
  {
    name: "edit: a value in row 3",
    file: enc(text(base.map((l, i) => (i === 2 ? l.replace('"n": 3', '"n": 4') : l)))),
    verdict: "broken",
    first: "line 3: chain mismatch",
    kind: "chain_mismatch",
    breaks: 1,
  },
  {
    name: "edit: the chain of row 3 (the next row then hashes from a forged claim)",
    file: enc(
      text(
        base.map((l, i) => (i === 2 ? l.replace(/"chain": "(.)/, (_, c) => `"chain": "${c === "0" ? "1" : "0"}`) : l)),
      ),
    ),
    verdict: "broken",
    first: "line 3: chain mismatch",
    kind: "chain_mismatch",
    breaks: 2,
  },
  {
    name: "delete row 3",
    file: enc(text(base.filter((_, i) => i !== 2))),
    verdict: "broken",
    first: "line 3: chain mismatch",
    kind: "chain_mismatch",
    breaks: 1,
  },
  {
    name: "delete the last row: a bare chain cannot see it",
    file: enc(text(base.slice(0, 4))),
    verdict: "ok",
    first: null,
    breaks: 0,
  },
  {
    name: "delete the first row",
    file: enc(text(base.slice(1))),
    verdict: "broken",
    first: "line 1: chain mismatch",
    kind: "chain_mismatch",
    breaks: 1,
  },
  {
    name: "reorder rows 2 and 3",
    file: enc(text([base[0]!, base[2]!, base[1]!, base[3]!, base[4]!])),
    verdict: "broken",
    first: "line 2: chain mismatch",
    kind: "chain_mismatch",
    breaks: 3,
  },
  {
    name: "duplicate row 3",
    file: enc(text([...base.slice(0, 3), base[2]!, ...base.slice(3)])),
    verdict: "broken",
    first: "line 4: chain mismatch",
    kind: "chain_mismatch",
    breaks: 1,
  },
  {
    name: "insert a row chained correctly from row 2 (the next row breaks)",
    file: enc(text([...base.slice(0, 2), forgedRow(chainOfLine(base[1]!)), ...base.slice(2)])),
    verdict: "broken",
    first: "line 4: chain mismatch",
    kind: "chain_mismatch",
    breaks: 1,
  },
  {
    name: "insert a row with a made-up chain",
    file: enc(
      text([...base.slice(0, 2), '{"ts": "x", "chain": "0123456789abcdef0123456789abcdef"}', ...base.slice(2)]),
    ),
    verdict: "broken",
    first: "line 3: chain mismatch",
    kind: "chain_mismatch",
    breaks: 2,
  },
  ...["[1, 2]", '"text"', "42", "null", "true", "1.5"].map(
    (junk): ChainCase => ({
      name: `insert a non-object line ${junk}`,
      file: enc(text([...base.slice(0, 2), junk, ...base.slice(2)])),
      verdict: "broken",
      first: "line 3: not a JSON object",
      kind: "not_object",
      breaks: 1,
    }),
  ),
  ...["7", "true", "[1]", '{"x": 1}', "NaN", "-Infinity", "1.5", "123456789012345678901234567890"].map(
    (v): ChainCase => ({
      name: `insert a row with the non-string chain ${v}`,
      file: enc(text([...base.slice(0, 2), `{"a": 1, "chain": ${v}}`, ...base.slice(2)])),
      verdict: "broken",
      first: "line 3: non-string chain value",
      kind: "non_string_chain",
      breaks: 1,
    }),
  ),
  {
    name: "insert an unchained row mid-chain (the next row continues from the last claimed chain: one break)",
    file: enc(text([...base.slice(0, 2), '{"a": 1}', ...base.slice(2)])),
    verdict: "broken",
    first: "line 3: unchained row after chain began",
    kind: "unchained_after_chain",
    breaks: 1,
  },
  ...[
    '"chain": ""',
    '"chain": null',
    '"chain": false',
    '"chain": 0',
    '"chain": 0.0',
    '"chain": -0.0',
    '"chain": []',
    '"chain": {}',
    '"nochain": 1',
  ].map(
    (c): ChainCase => ({
      name: `two prechain rows (${c}) before the chain`,
      file: enc(text([`{"a": 1, ${c}}`, `{"b": 2, ${c}}`, ...base])),
      verdict: "inconclusive",
      first: null,
      breaks: 0,
      prechain: 2,
      rows: 7,
    }),
  ),
  {
    name: "prechain rows with --strict",
    file: enc(text(['{"a": 1}', '{"b": 2, "chain": ""}', ...base])),
    strict: true,
    verdict: "broken",
    first: "line 1: unchained (prechain) row rejected in strict mode",
    kind: "prechain_rejected",
    breaks: 2,
    prechain: 2,
  },
  { name: "an intact chain with --strict", file: enc(text(base)), strict: true, verdict: "ok", first: null, breaks: 0 },
  {
    name: "insert an unparseable line",
    file: enc(text([...base.slice(0, 2), '{"a": ', ...base.slice(2)])),
    verdict: "broken",
    first: "line 3: unparseable",
    kind: "unparseable",
    breaks: 1,
  },
  {
    name: "row 3 with a byte of invalid UTF-8 (row 4 then breaks too: row 3's claim is lost)",
    file: cat(
      text(base.slice(0, 2)),
      base[2]!.slice(0, 20),
      new Uint8Array([0xff]),
      base[2]!.slice(21),
      "\n",
      text(base.slice(3)),
    ),
    verdict: "broken",
    first: "line 3: unparseable",
    kind: "unparseable",
    breaks: 2,
  },
  {
    name: "a raw UTF-8-encoded surrogate (ED A0 80) inside a string",
    file: cat(
      text(base.slice(0, 2)),
      '{"s": "',
      new Uint8Array([0xed, 0xa0, 0x80]),
      '", "chain": "x"}\n',
      text(base.slice(2)),
    ),
    verdict: "broken",
    first: "line 3: unparseable",
    kind: "unparseable",
    breaks: 1,
  },
  {
    name: "a byte order mark before the first row (the second then breaks too)",
    file: cat(new Uint8Array([0xef, 0xbb, 0xbf]), text(base)),
    verdict: "broken",
    first: "line 1: unparseable",
    kind: "unparseable",
    breaks: 2,
  },
  { name: "empty file", file: new Uint8Array(0), verdict: "inconclusive", first: null, breaks: 0, rows: 0 },
  {
    name: "only blank lines (space, tab, CR, VT, FF)",
    file: enc("\n \n\t\r\n\x0b\x0c\n"),
    verdict: "inconclusive",
    first: null,
    breaks: 0,
    rows: 0,
  },
  {
    name: "blank lines count in line numbers",
    file: enc(text(["", base[0]!, "   ", base[1]!.replace('"n": 2', '"n": 5'), ...base.slice(2)])),
    verdict: "broken",
    first: "line 4: chain mismatch",
    kind: "chain_mismatch",
    breaks: 1,
    rows: 5,
  },
  { name: "CRLF line endings", file: enc(`${base.join("\r\n")}\r\n`), verdict: "ok", first: null, breaks: 0 },
  {
    name: "no final newline after a complete row",
    file: enc(base.join("\n")),
    verdict: "ok",
    first: null,
    breaks: 0,
    notes: [
      `line ${base.length}: the last row has no newline: the next writer will cut it off as a torn line (kept in a ledger_repair row)`,
    ],
  },
  {
    name: "U+2028, U+2029, U+0085 and a raw CR inside a row are not line breaks",
    file: (() => {
      const b = plain(2);
      b.add({ s: "a\u2028b\u2029c\u0085d", t: "x" });
      b.raw(lineForm({ e: "\u2028" }).replace("}", `, "chain": "${chainOf(b.prev, { e: "\u2028" })}"}`));
      b.raw('{"f": 1, "chain": "bad"}');
      return b.bytes();
    })(),
    verdict: "broken",
    first: "line 5: chain mismatch",
    kind: "chain_mismatch",
    breaks: 1,
  },
  {
    name: "a duplicated chain key: a break of its own for seam; the last one counts for the chain, as in Python",
    file: enc(text([base[0]!.replace("{", '{"chain": "bogus", ')])),
    verdict: "broken",
    first: 'line 1: duplicate key "chain"',
    kind: "duplicate_key",
    breaks: 1,
    reference: { verdict: "ok", first: null, breaks: 0 },
  },
  {
    name: "a repeated key whose first value was never hashed: the chain holds, and seam still breaks",
    file: enc(text([...base.slice(0, 4), base[4]!.replace('{"', '{"tool": "delete", "')])),
    verdict: "broken",
    first: 'line 5: duplicate key "tool"',
    kind: "duplicate_key",
    breaks: 1,
    reference: { verdict: "ok", first: null, breaks: 0 },
  },
  {
    name: "a chain in upper-case hex",
    file: enc(
      text(
        base.map((l, i) =>
          i === 4 ? l.replace(/"chain": "([0-9a-f]+)"/, (_, h: string) => `"chain": "${h.toUpperCase()}"`) : l,
        ),
      ),
    ),
    verdict: "broken",
    first: "line 5: chain mismatch",
    kind: "chain_mismatch",
    breaks: 1,
  },
  {
    name: "rows holding NaN, ±Infinity, -0.0, lone surrogates, big ints and astral keys, chained by the core",
    file: (() => {
      const b = plain(1);
      b.add({
        x: new JsonFloat(NaN),
        y: new JsonFloat(Infinity),
        z: new JsonFloat(-Infinity),
        w: new JsonFloat(-0),
        f: 1e-7,
      });
      b.add({
        s: "lone \ud800 and \udfff",
        "\ud83d\ude00": 1,
        "\ufb00": 2,
        "\ud800": 3,
        big: 123456789012345678901234567890n,
      });
      b.add({ deep: JSON.parse("[".repeat(400) + "]".repeat(400)), n: 18446744073709551616n, neg: -0 });
      return b.bytes();
    })(),
    verdict: "ok",
    first: null,
    breaks: 0,
  },
  {
    name: "an int of 4300 digits is read; one of 4301 is unparseable (Python's limit)",
    file: (() => {
      const b = plain(1);
      b.add({ n: BigInt("9".repeat(4300)) });
      b.raw(`{"n": ${"9".repeat(4301)}, "chain": "x"}`);
      return b.bytes();
    })(),
    verdict: "broken",
    first: "line 3: unparseable",
    kind: "unparseable",
    breaks: 1,
  },
  {
    name: "nesting 100000 deep is unparseable",
    file: enc(text([base[0]!, `{"a": ${"[".repeat(100000)}${"]".repeat(100000)}, "chain": "x"}`])),
    verdict: "broken",
    first: "line 2: unparseable",
    kind: "unparseable",
    breaks: 1,
  },
  // Torn lines: where seam knowingly differs from the reference.
  {
    name: "torn final line (no newline, unparseable)",
    file: enc(text(base) + base[0]!.slice(0, 40)),
    verdict: "inconclusive",
    first: null,
    breaks: 0,
    rows: 5,
    findings: ["line 6: torn final line"],
    findingKinds: ["torn_final_line"],
    reference: { verdict: "broken", first: "line 6: unparseable", breaks: 1 },
  },
  {
    name: "torn final line cut inside a UTF-8 character",
    file: cat(text(base), '{"s": "', new Uint8Array([0xe2, 0x80])),
    verdict: "inconclusive",
    first: null,
    breaks: 0,
    rows: 5,
    findings: ["line 6: torn final line"],
    findingKinds: ["torn_final_line"],
    reference: { verdict: "broken", first: "line 6: unparseable", breaks: 1 },
  },
  {
    name: "only a torn line",
    file: enc('{"evt": "session_be'),
    verdict: "inconclusive",
    first: null,
    breaks: 0,
    rows: 0,
    findings: ["line 1: torn final line"],
    findingKinds: ["torn_final_line"],
    reference: { verdict: "broken", first: "line 1: unparseable", breaks: 1 },
  },
  {
    name: "a torn final line after an edit is still broken",
    file: enc(`${text(base.map((l, i) => (i === 1 ? l.replace("query 2", "query X") : l)))}{`),
    verdict: "broken",
    first: "line 2: chain mismatch",
    kind: "chain_mismatch",
    breaks: 1,
    findings: ["line 6: torn final line"],
    findingKinds: ["torn_final_line"],
    reference: { verdict: "broken", first: "line 2: chain mismatch", breaks: 2 },
  },
  {
    name: "a torn line followed by a newline but no repair row is a break",
    file: enc(text([...base, base[0]!.slice(0, 40)])),
    verdict: "broken",
    first: "line 6: unparseable",
    kind: "unparseable",
    breaks: 1,
  },
  (() => {
    const b = plain(3);
    const torn = '{"evt": "tool_call", "seam": "mcp-st';
    b.raw(torn);
    b.add({
      evt: "ledger_repair",
      torn_line: 4,
      torn_bytes: enc(torn).length,
      torn_digest: digestBytes(enc(torn)),
      ts: "t",
    });
    b.add({ ts: "after", n: 9 });
    return {
      name: "a torn line repaired by the next row",
      file: b.bytes(),
      verdict: "ok",
      first: null,
      breaks: 0,
      rows: 5,
      notes: [`line 4: torn line (${enc(torn).length} bytes) repaired by the ledger_repair row at line 5`],
      reference: { verdict: "broken", first: "line 4: unparseable", breaks: 1 },
    } satisfies ChainCase;
  })(),
  (() => {
    const b = plain(3);
    const torn = '{"evt": "tool_call", "seam": "mcp-st';
    b.raw(torn);
    b.add({
      evt: "ledger_repair",
      seam: "mcp-stdio",
      torn_line: 4,
      torn_bytes: enc(torn).length,
      torn_digest: digestBytes(enc("other")),
      ts: "t",
    });
    return {
      name: "a repair row whose digest does not match the torn line",
      file: b.bytes(),
      verdict: "broken",
      first: "line 4: unparseable",
      kind: "unparseable",
      breaks: 1,
      findings: [
        "line 5: ledger_repair row does not match the line before it",
        "line 5: seam row without a session id",
      ],
      findingKinds: ["repair_mismatch", "session_id_missing"],
    } satisfies ChainCase;
  })(),
];

describe("chain verdict on crafted files", () => {
  for (const c of cases) {
    test(c.name, () => {
      const r = verifyBytes(c.file, { strict: c.strict });
      expect({
        verdict: r.verdict,
        first: r.first_break?.message ?? null,
        kind: r.first_break?.kind,
        breaks: r.breaks,
      }).toEqual({
        verdict: c.verdict,
        first: c.first,
        kind: c.kind,
        breaks: c.breaks,
      });
      if (c.first !== null) expect(r.first_break!.line).toBe(Number(c.first.match(/^line (\d+)/)![1]));
      if (c.rows !== undefined) expect(r.rows).toBe(c.rows);
      if (c.prechain !== undefined) expect(r.prechain).toBe(c.prechain);
      expect(r.findings).toEqual(c.findings ?? []);
      expect(r.finding_kinds).toEqual(c.findingKinds ?? []);
      expect(r.notes).toEqual(c.notes ?? []);
      expect(r.ok).toBe(c.verdict === "ok" ? true : c.verdict === "broken" ? false : null);
    });
  }

  test.skipIf(!HAVE_PYTHON)(
    "the Python reference verifier agrees on every crafted file (and differs exactly where stated)",
    () => {
      for (const strict of [false, true]) {
        const list = cases.filter((c) => (c.strict ?? false) === strict);
        const refs = reference(
          list.map((c) => c.file),
          strict,
        );
        list.forEach((c, i) => {
          const ref = refs[i]!;
          const r = verifyBytes(c.file, { strict });
          const want = c.reference ?? { verdict: c.verdict, first: c.first, breaks: c.breaks };
          expect({
            name: c.name,
            verdict: ref.verdict,
            first: ref.first_break,
            breaks: ref.breaks,
          }).toEqual({
            name: c.name,
            ...want,
          });
          expect({ name: c.name, line: ref.first_break_line }).toEqual({
            name: c.name,
            line: want.first === null ? null : Number(want.first.match(/^line (\d+)/)![1]),
          });
          if (c.reference === undefined) {
            expect({ name: c.name, rows: r.rows, chained: r.chained, prechain: r.prechain, head: r.head }).toEqual({
              name: c.name,
              rows: ref.rows,
              chained: ref.chained,
              prechain: ref.prechain,
              head: ref.head,
            });
          } else {
            // Torn lines are no rows to seam; the reference counts each as one (unparseable) row.
            const torn = [...r.findings, ...r.notes].filter((m) => / torn /.test(m)).length;
            expect({ name: c.name, rows: r.rows + torn }).toEqual({ name: c.name, rows: ref.rows });
          }
        });
      }
    },
  );

  test("any split of the bytes into chunks gives the same report", () => {
    for (const c of cases) {
      const whole = verifyBytes(c.file, { strict: c.strict });
      for (const size of [1, 2, 3, 7, 64, 4096]) {
        const v = verifyChunked(c.file, size, { strict: c.strict });
        expect({ name: c.name, size, r: v }).toEqual({ name: c.name, size, r: whole });
      }
    }
  });

  test("a row longer than maxLineBytes is not parsed nor held: a finding, its claimed chain carried on", () => {
    const file = enc(text(base));
    const r = verifyBytes(file, { maxLineBytes: 100 });
    expect(r.breaks).toBe(0);
    expect(r.verdict).toBe("inconclusive");
    expect(r.findings[0]).toBe(
      `line 1: ${enc(base[0]!).length} bytes, longer than the 100-byte limit (--max-line): not parsed, its chain not checked`,
    );
    expect(r.finding_kinds?.[0]).toBe("line_too_long");
    expect(verifyChunked(file, 7, { maxLineBytes: 100 })).toEqual(r);
    // one long row among short ones: the rows after it are still checked
    const b = plain(1);
    b.add({ ts: "t", tool: "big", blob: "z".repeat(500) });
    b.add({ ts: "t", tool: "after", n: 3 });
    const mixed = text(L(b));
    const ok = verifyBytes(enc(mixed), { maxLineBytes: 300 });
    expect([ok.breaks, ok.rows, ok.finding_kinds]).toEqual([0, 3, ["line_too_long"]]);
    const edited = mixed.replace('"n": 3', '"n": 4');
    expect(verifyBytes(enc(edited), { maxLineBytes: 300 }).first_break).toEqual({
      line: 3,
      kind: "chain_mismatch",
      message: "line 3: chain mismatch",
    });
  });

  test("a line longer than maxLineBytes without a chain at its end: unparseable, with a note (torn when last)", () => {
    // A long torn line is repaired like any other: its digest is kept while its bytes are not.
    const b = plain(2);
    const torn = "x".repeat(300);
    b.raw(torn);
    b.add({ evt: "ledger_repair", torn_line: 3, torn_bytes: 300, torn_digest: digestBytes(enc(torn)), ts: "t" });
    for (const size of [1, 50, 1 << 20]) {
      const rr = verifyChunked(b.bytes(), size, { maxLineBytes: 250 });
      expect(rr.verdict).toBe("ok");
      expect(rr.notes).toEqual([
        "line 3: 300 bytes, longer than the 250-byte limit, not parsed",
        "line 3: torn line (300 bytes) repaired by the ledger_repair row at line 4",
      ]);
    }
  });
});

function verifyChunked(file: Uint8Array, size: number, opts: VerifyOptions = {}): VerifyReport {
  const v = new LedgerVerifier(opts);
  for (let i = 0; i < file.length; i += size) v.push(file.slice(i, i + size));
  return v.end();
}

test("pyTruthy is Python's bool() on parsed JSON", () => {
  const falsy = [undefined, null, false, 0, -0, "", [], new Map(), {}, new JsonFloat(0), new JsonFloat(-0), 0n];
  const truthy = [
    true,
    1,
    -1,
    0.5,
    "0",
    " ",
    [0],
    new Map([["a", null]]),
    { a: null },
    new JsonFloat(NaN),
    new JsonFloat(Infinity),
    new JsonFloat(1),
    10n ** 30n,
  ];
  expect(falsy.map((v) => pyTruthy(v))).toEqual(falsy.map(() => false));
  expect(truthy.map((v) => pyTruthy(v))).toEqual(truthy.map(() => true));
});

describe("unreadable sources", () => {
  test("a source that throws is `unreadable: <reason>`, broken, line null", async () => {
    async function* failing() {
      yield enc(text(base.slice(0, 2)));
      throw Object.assign(new Error("EIO: i/o error, read"), { code: "EIO" });
    }
    const r = await verifyLedger(failing());
    expect(r.verdict).toBe("broken");
    expect(r.first_break).toEqual({ line: null, kind: "unreadable", message: "unreadable: input/output error" });
    expect(r.breaks).toBe(1);
    expect(r.rows).toBe(2);
    expect(r.notes).toEqual([
      `reading stopped after ${enc(text(base.slice(0, 2))).length} bytes; completeness not checked`,
    ]);
  });

  test("a missing file and a directory, through fileChunks", async () => {
    const dir = tempDir("seam-verify-");
    try {
      const missing = await verifyLedger(fileChunks(join(dir, "nope.jsonl")));
      expect(missing.first_break).toEqual({
        line: null,
        kind: "unreadable",
        message: "unreadable: no such file or directory",
      });
      expect(missing.verdict).toBe("broken");
      expect(missing.verified_scope).toBe("empty");
      const isDir = await verifyLedger(fileChunks(dir));
      expect(isDir.first_break).toEqual({ line: null, kind: "unreadable", message: "unreadable: is a directory" });
      writeFileSync(join(dir, "ok.jsonl"), text(base));
      const ok = await verifyLedger(fileChunks(join(dir, "ok.jsonl"), 100));
      expect(ok).toEqual(verifyBytes(enc(text(base))));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** Chains `rows` in order into a ledger (the chain is intact: only completeness can fail). */
function chained(rows: Row[]): Uint8Array {
  const b = new LedgerBuilder();
  for (const r of rows) b.add(r);
  return b.bytes();
}
const without = (rows: Row[], ...evts: string[]) => rows.filter((r) => !evts.includes(r.evt as string));
const patch = (row: Row, fields: Row): Row => ({ ...row, ...fields });
/** Gives rows seq 1..n and makes session_end's counts say what the rows hold. */
function renumber(rows: Row[]): Row[] {
  let calls = 0;
  return inTimeOrder(
    rows.map((r, i) => {
      if (r.evt === "tool_call") calls++;
      return r.evt === "session_end" ? patch(r, { seq: i + 1, rows_before_end: i, calls }) : patch(r, { seq: i + 1 });
    }),
  );
}

describe("completeness of seam sessions", () => {
  const calls: [string, Row[string], string][] = [
    ["echo", 1, "ok"],
    ["search", "1", "error"],
    ["echo", 2, "input_required"],
  ];

  test("a complete session with write-ahead intents verifies ok", () => {
    resetClock();
    const r = verifyBytes(chained(sessionRows({ id: "s1", calls, writeAhead: true })));
    expect(r.verdict).toBe("ok");
    expect(r.sessions).toEqual([
      { id: "s1", server: "echo", rows: 9, calls: 3, statuses: { ok: 1, error: 1, input_required: 1 }, complete: true },
    ]);
    expect(r.findings).toEqual([]);
  });

  const cases: {
    name: string;
    rows: () => Row[];
    findings: string[];
    findingKinds: FindingKind[];
    opts?: VerifyOptions;
    notes?: string[];
    verdict?: VerifyReport["verdict"];
  }[] = [
    {
      name: "missing session_end",
      rows: () => sessionRows({ id: "s1", calls, noEnd: true }),
      findings: ["session s1: no session_end (truncated or still running)"],
      findingKinds: ["session_missing_end"],
    },
    {
      name: "missing session_end, writer still alive: open, not a finding",
      rows: () => sessionRows({ id: "s1", calls, noEnd: true, writeAhead: true }).slice(0, -1),
      opts: { isWriterAlive: (pid, host) => pid === 4242 && host === "builder" },
      findings: [],
      findingKinds: [],
      notes: ["session s1: open (its writer, pid 4242 on builder, is still running); 1 call in flight"],
      verdict: "ok",
    },
    {
      name: "missing session_end, a writer of that pid on another host is not it",
      rows: () => sessionRows({ id: "s1", calls, noEnd: true, host: "elsewhere" }),
      opts: { isWriterAlive: (_pid, host) => host === "builder" },
      findings: ["session s1: no session_end (truncated or still running)"],
      findingKinds: ["session_missing_end"],
    },
    {
      name: "missing session_end, a liveness check that throws counts as dead",
      rows: () => sessionRows({ id: "s1", noEnd: true }),
      opts: {
        isWriterAlive: () => {
          throw new Error("boom");
        },
      },
      findings: ["session s1: no session_end (truncated or still running)"],
      findingKinds: ["session_missing_end"],
    },
    {
      name: "a row lost in the middle: seq gap and rows_before_end",
      rows: () => sessionRows({ id: "s1", calls }).filter((r) => r.seq !== 3),
      findings: [
        "session s1: line 3: seq jumps from 2 to 4 (3 missing)",
        "session s1: line 5: session_end says rows_before_end 5, the file holds 4",
        "session s1: line 5: session_end says calls 3, the file holds 2 tool_call rows",
      ],
      findingKinds: ["seq_gap", "end_rows_mismatch", "end_calls_mismatch"],
    },
    {
      name: "a seq gap that session_end declares lost",
      rows: () => {
        const rows = sessionRows({ id: "s1", calls }).filter((r) => r.seq !== 3 && r.seq !== 4);
        rows[rows.length - 1] = patch(rows.at(-1)!, { rows_before_end: 3, calls: 1, rows_unlogged: 2 });
        return rows;
      },
      findings: ["session s1: line 3: seq jumps from 2 to 5 (3..4 missing, declared lost: rows_unlogged 2)"],
      findingKinds: ["seq_gap"],
    },
    {
      name: "a repeated seq",
      rows: () => {
        const rows = sessionRows({ id: "s1" });
        return [rows[0]!, rows[1]!, patch(rows[1]!, { status: "error" }), rows[2]!];
      },
      findings: [
        "session s1: line 3: seq 2 repeats or goes back (expected 3)",
        "session s1: line 4: session_end says rows_before_end 2, the file holds 3",
      ],
      findingKinds: ["seq_repeat", "end_rows_mismatch"],
    },
    {
      name: "a missing, zero or non-integer seq",
      rows: () => {
        const rows = sessionRows({ id: "s1", calls: [["echo", 1, "ok"]] });
        const { seq: _, ...noSeq } = rows[1]!;
        return [rows[0]!, noSeq, patch(rows[2]!, { seq: new JsonFloat(3) }), rows[3]!];
      },
      findings: [
        "session s1: line 2: seq is missing or not a positive integer",
        "session s1: line 3: seq is missing or not a positive integer",
        "session s1: line 4: seq jumps from 1 to 4 (2..3 missing)",
      ],
      findingKinds: ["seq_invalid", "seq_invalid", "seq_gap"],
    },
    {
      name: "a ts earlier than its session's row before it: rows out of the order they happened",
      rows: () => {
        const rows = sessionRows({ id: "s1", calls });
        return [rows[0]!, rows[1]!, patch(rows[2]!, { ts: rows[0]!.ts! }), ...rows.slice(3)];
      },
      findings: [
        "session s1: line 3: ts 2026-11-30T03:24:07.007Z is earlier than the ts of its session's row before it (line 2, 2026-11-30T03:24:07.014Z)",
      ],
      findingKinds: ["ts_backwards"],
    },
    {
      name: "a ts earlier than another session's row before it is in order",
      rows: () => {
        const early = sessionRows({ id: "s2", calls });
        const late = sessionRows({ id: "s1", calls });
        return [...late, ...early];
      },
      findings: [],
      findingKinds: [],
      verdict: "ok",
    },
    {
      name: "no session_begin",
      rows: () => without(sessionRows({ id: "s1" }), "session_begin"),
      findings: [
        "session s1: line 1: first row is mcp_initialize, not session_begin",
        "session s1: line 1: seq jumps from 0 to 2 (1 missing)",
        "session s1: line 2: session_end says rows_before_end 2, the file holds 1",
      ],
      findingKinds: ["first_not_begin", "seq_gap", "end_rows_mismatch"],
    },
    {
      name: "a second session_begin",
      rows: () => {
        const rows = sessionRows({ id: "s1" });
        return [
          rows[0]!,
          rows[1]!,
          patch(rows[0]!, { seq: 3, ts: rows[1]!.ts! }),
          patch(rows[2]!, { seq: 4, rows_before_end: 3 }),
        ];
      },
      findings: ["session s1: line 3: session_begin is not the first row"],
      findingKinds: ["begin_not_first"],
    },
    {
      name: "a row after session_end",
      rows: () => {
        const rows = sessionRows({ id: "s1", calls: [["echo", 1, "ok"]] });
        return [...rows, seamRow("tool_call", "s1", 5, "echo", { tool: "late", rpc_id: 9, status: "ok" })];
      },
      findings: ["session s1: line 5: row after session_end (line 4)"],
      findingKinds: ["row_after_end"],
    },
    {
      name: "session_end counts that do not match, or are not ints",
      rows: () => {
        const rows = sessionRows({ id: "s1", calls });
        rows[rows.length - 1] = patch(rows.at(-1)!, { rows_before_end: new JsonFloat(5), calls: "3" });
        return rows;
      },
      findings: [
        "session s1: line 6: session_end says rows_before_end 5.0, the file holds 5",
        'session s1: line 6: session_end says calls "3", the file holds 3 tool_call rows',
      ],
      findingKinds: ["end_rows_mismatch", "end_calls_mismatch"],
    },
    {
      name: "zero calls may be left out of session_end",
      rows: () => {
        const rows = sessionRows({ id: "s1" });
        const { calls: _, ...end } = rows.at(-1)!;
        return [...rows.slice(0, -1), end];
      },
      findings: [],
      findingKinds: [],
      verdict: "ok",
    },
    {
      name: "an intent without its tool_call (SIGKILL after forwarding)",
      rows: () => {
        const rows = sessionRows({
          id: "s1",
          calls: [
            ["echo", 1, "ok"],
            ["pay", 2, "ok"],
          ],
          writeAhead: true,
          noEnd: true,
        });
        return rows.slice(0, -1);
      },
      findings: [
        'session s1: line 5: tool_call_intent rpc_id 2 (tool "pay") has no tool_call: the call reached the server and left no result',
        "session s1: no session_end (truncated or still running)",
      ],
      findingKinds: ["intent_without_result", "session_missing_end"],
    },
    {
      name: 'an intent for id 1 is not answered by a tool_call for id "1"',
      rows: () => {
        const rows = sessionRows({ id: "s1", calls: [["echo", 1, "ok"]], writeAhead: true });
        rows[3] = patch(rows[3]!, { rpc_id: "1" });
        return rows;
      },
      findings: [
        'session s1: line 3: tool_call_intent rpc_id 1 (tool "echo") has no tool_call: the call reached the server and left no result',
      ],
      findingKinds: ["intent_without_result"],
    },
    {
      name: "big int ids compare exactly",
      rows: () => {
        const rows = sessionRows({
          id: "s1",
          calls: [
            ["echo", 18446744073709551616n, "ok"],
            ["echo", 18446744073709551617n, "ok"],
          ],
          writeAhead: true,
        });
        rows[5] = patch(rows[5]!, { rpc_id: 18446744073709551618n });
        return rows;
      },
      findings: [
        'session s1: line 5: tool_call_intent rpc_id 18446744073709551617 (tool "echo") has no tool_call: the call reached the server and left no result',
      ],
      findingKinds: ["intent_without_result"],
    },
    {
      name: "an int id does not match the same number as a float",
      rows: () => {
        const rows = sessionRows({ id: "s1", calls: [["echo", 7, "ok"]], writeAhead: true });
        rows[3] = patch(rows[3]!, { rpc_id: new JsonFloat(7) });
        return rows;
      },
      findings: [
        'session s1: line 3: tool_call_intent rpc_id 7 (tool "echo") has no tool_call: the call reached the server and left no result',
      ],
      findingKinds: ["intent_without_result"],
    },
    {
      name: "duplicate ids pair first in, first out",
      rows: () => {
        const rows = sessionRows({
          id: "s1",
          calls: [
            ["a", 1, "ok"],
            ["b", 1, "ok"],
          ],
          writeAhead: true,
        });
        return renumber([rows[0]!, rows[1]!, rows[2]!, rows[4]!, rows[3]!, rows[6]!]);
      },
      findings: [
        'session s1: line 4: tool_call_intent rpc_id 1 (tool "b") has no tool_call: the call reached the server and left no result',
      ],
      findingKinds: ["intent_without_result"],
    },
    {
      name: 'rows without seam: "mcp-stdio" are not sessions',
      rows: () => [{ ts: "x", tool: "search" }, ...sessionRows({ id: "s1" }), { seam: "other", session: "s9", seq: 5 }],
      findings: [],
      findingKinds: [],
      verdict: "ok",
    },
    {
      name: "a seam row without a session id",
      rows: () => [...sessionRows({ id: "s1" }), { evt: "tool_call", seam: "mcp-stdio", session: 5, seq: 1 }],
      findings: ["line 4: seam row without a session id"],
      findingKinds: ["session_id_missing"],
    },
  ];

  for (const c of cases) {
    test(c.name, () => {
      resetClock();
      const r = verifyBytes(chained(c.rows()), c.opts);
      expect(r.breaks).toBe(0);
      expect(r.findings).toEqual(c.findings);
      expect(r.finding_kinds).toEqual(c.findingKinds);
      expect(r.notes).toEqual(c.notes ?? []);
      expect(r.verdict).toBe(c.verdict ?? "inconclusive");
      const aboutSessions = c.findings.some((f) => f.startsWith("session ")) || (c.notes ?? []).length > 0;
      expect(r.sessions.every((s) => s.complete)).toBe(!aboutSessions);
    });
  }

  test("findings do not hide a broken chain", () => {
    resetClock();
    const lines = new TextDecoder().decode(chained(sessionRows({ id: "s1", calls, noEnd: true }))).split("\n");
    lines[1] = lines[1]!.replace('"ms": 3', '"ms": 4');
    const r = verifyBytes(enc(lines.join("\n")));
    expect(r.verdict).toBe("broken");
    expect(r.first_break).toEqual({ line: 2, kind: "chain_mismatch", message: "line 2: chain mismatch" });
    expect(r.findings).toEqual(["session s1: no session_end (truncated or still running)"]);
  });

  test("two interleaved sessions and a repair row written by a new writer before its session_begin", () => {
    resetClock();
    const a = sessionRows({ id: "a", server: "fs", calls: [["read", 1, "ok"]] });
    const b = sessionRows({
      id: "b",
      server: "web",
      calls: [
        ["get", 1, "error"],
        ["get", 2, "ok"],
      ],
    });
    const builder = new LedgerBuilder();
    builder.add(a[0]!);
    builder.add(b[0]!);
    builder.add(a[1]!);
    const torn = lineForm(b[1]!).slice(0, 50);
    builder.raw(torn);
    builder.add(
      seamRow("ledger_repair", "c", undefined, "srv", {
        torn_line: 4,
        torn_bytes: enc(torn).length,
        torn_digest: digestBytes(enc(torn)),
      }),
    );
    const c = sessionRows({ id: "c", server: "srv" });
    for (const r of [b[1]!, a[2]!, b[2]!, a[3]!, c[0]!, b[3]!, c[1]!, b[4]!, c[2]!]) builder.add(r);
    const r = verifyBytes(builder.bytes());
    expect(r.findings).toEqual([]);
    expect(r.notes).toEqual([`line 4: torn line (50 bytes) repaired by the ledger_repair row at line 5`]);
    expect(r.verdict).toBe("ok");
    expect(r.sessions).toEqual([
      { id: "a", server: "fs", rows: 4, calls: 1, statuses: { ok: 1 }, complete: true },
      { id: "b", server: "web", rows: 5, calls: 2, statuses: { error: 1, ok: 1 }, complete: true },
      { id: "c", server: "srv", rows: 4, calls: 0, statuses: {}, complete: true },
    ]);
  });

  test("findings beyond maxFindings are counted in a note", () => {
    resetClock();
    const rows = sessionRows({
      id: "s1",
      calls: Array.from({ length: 10 }, (_, i): [string, Row[string], string] => ["t", i, "ok"]),
      writeAhead: true,
    });
    const r = verifyBytes(chained(renumber(rows.filter((x) => x.evt !== "tool_call"))), { maxFindings: 3 });
    expect(r.findings).toEqual(
      [1, 2, 3].map(
        (i) =>
          `session s1: line ${2 + i}: tool_call_intent rpc_id ${i - 1} (tool "t") has no tool_call: the call reached the server and left no result`,
      ),
    );
    expect(r.notes).toEqual(["7 more findings not listed"]);
    expect(r.verdict).toBe("inconclusive");
  });
});

describe("client frames seam could not read as the server did", () => {
  /** A session whose rows before session_end are `middle` (seq continues), and whose session_end carries `end`. */
  function ledger(middle: Row[], end: Row = {}): Uint8Array {
    resetClock();
    const rows = sessionRows({ id: "s1", calls: [["echo", 1, "ok"]] });
    const last = rows.pop()!;
    for (const { evt, ...fields } of middle) rows.push(seamRow(evt as string, "s1", rows.length + 1, "echo", fields));
    rows.push({ ...last, seq: rows.length + 1, rows_before_end: rows.length, ...end });
    inTimeOrder(rows);
    const b = new LedgerBuilder();
    for (const r of rows) b.add(r);
    return b.bytes();
  }
  const unparsed = (dir: string): Row => ({
    evt: "unparsed_frame",
    dir,
    bytes: 8,
    frame_digest: "sha256:raw-bytes:v1:00",
    head: "not json",
    reason: "expecting value",
    refused: true,
  });
  const ambiguous: Row = { evt: "ambiguous_frame", dir: "c2s", status: "ambiguous", bytes: 9, readings: [] };

  test.each([
    ["an unparsed client frame", [unparsed("c2s")], {}, ["unparsed_client_frame"]],
    ["an ambiguous client frame", [ambiguous], {}, ["ambiguous_client_frame"]],
    ["an unparsed server frame only", [unparsed("s2c")], { unparsed_frames: 1 }, []],
    ["unparsed frames counted by session_end, none rowed", [], { unparsed_frames: 3 }, ["unrowed_unparsed_frames"]],
  ] as [string, Row[], Row, FindingKind[]][])("%s", (_name, middle, end, kinds) => {
    const file = ledger(middle, end);
    const r = verifyBytes(file);
    expect({ verdict: r.verdict, kinds: r.finding_kinds, breaks: r.breaks }).toEqual({
      verdict: kinds.length > 0 ? "inconclusive" : "ok",
      kinds,
      breaks: 0,
    });
    const allowed = verifyBytes(file, { allowUnparsed: true });
    expect({ verdict: allowed.verdict, notes: allowed.notes.length }).toEqual({
      verdict: "ok",
      notes: kinds.length,
    });
  });
});

describe("reports", () => {
  function sample(): Uint8Array {
    resetClock();
    const b = new LedgerBuilder();
    b.raw('{"note": "written before seam"}');
    for (const r of sessionRows({
      id: "s1",
      calls: [
        ["echo", 1, "ok"],
        ["echo", 2, "error"],
      ],
      noEnd: true,
    }))
      b.add(r);
    return b.bytes();
  }

  test("the --json object, literally", () => {
    const r = verifyBytes(sample());
    expect(JSON.parse(JSON.stringify(jsonReport("ledger.jsonl", r)))).toEqual({
      file: "ledger.jsonl",
      ok: null,
      rows: 5,
      chained: 4,
      prechain: 1,
      first_break: null,
      first_break_line: null,
      first_break_kind: null,
      breaks: 0,
      break_kinds: {},
      verified_scope: "bounded_prechain_skipped",
      head: "20e6806e377a9b92bc2008cb1b7fa2d1",
      sessions: [{ id: "s1", server: "echo", rows: 4, calls: 2, statuses: { ok: 1, error: 1 }, complete: false }],
      findings: ["session s1: no session_end (truncated or still running)"],
      finding_kinds: ["session_missing_end"],
      notes: [],
    });
    const broken = verifyBytes(enc('{"a": 1, "chain": "x"}\n'));
    expect(jsonReport("b.jsonl", broken)).toEqual({
      file: "b.jsonl",
      ok: false,
      rows: 1,
      chained: 1,
      prechain: 0,
      first_break: "line 1: chain mismatch",
      first_break_line: 1,
      first_break_kind: "chain_mismatch",
      breaks: 1,
      break_kinds: { chain_mismatch: 1 },
      verified_scope: "full",
      head: "x",
      sessions: [],
      findings: [],
      finding_kinds: [],
      notes: [],
    });
    expect(jsonReport("e.jsonl", verifyBytes(new Uint8Array()))).toEqual({
      file: "e.jsonl",
      ok: null,
      rows: 0,
      chained: 0,
      prechain: 0,
      first_break: null,
      first_break_line: null,
      first_break_kind: null,
      breaks: 0,
      break_kinds: {},
      verified_scope: "empty",
      head: null,
      sessions: [],
      findings: [],
      finding_kinds: [],
      notes: [],
    });
  });

  test("the human report, literally", () => {
    expect(humanReport("ledger.jsonl", verifyBytes(sample()))).toBe(
      [
        "ledger.jsonl: inconclusive",
        "  why       session s1: no session_end (truncated or still running)",
        "  rows      5 (4 chained, 1 prechain skipped)",
        "  head      20e6806e377a9b92bc2008cb1b7fa2d1",
        "  sessions  1 (0 complete)",
        "    s1 (echo): 4 rows, 2 calls (ok 1, error 1), incomplete",
        "  findings",
        "    session s1: no session_end (truncated or still running)",
        "",
      ].join("\n"),
    );
    const b = plain(3);
    b.raw('{"a": 1, "chain": "x"}');
    b.raw("{");
    expect(humanReport("b.jsonl", verifyBytes(b.bytes()), { color: true })).toBe(
      [
        "b.jsonl: \x1b[1;31mbroken\x1b[0m",
        "  rows      5 (4 chained)",
        "  break     line 4: chain mismatch (2 breaks)",
        "  head      x",
        "",
      ].join("\n"),
    );
    const hostile = verifyBytes(chained(sessionRows({ id: "evil\x1b[2J\u202e", server: "a\nb" })));
    expect(
      humanReport("h\x07.jsonl", hostile).split("\n").slice(0, 1).concat(humanReport("h", hostile).split("\n")[4]!),
    ).toEqual(["h\\u0007.jsonl: ok", "    evil\\u001b[2J\\u202e (a\\u000ab): 3 rows, 0 calls, complete"]);
  });

  test("exit statuses: ok 0, broken 1, inconclusive 3; the worst of several wins", () => {
    expect(exitCodeFor(verifyBytes(enc(text(base))))).toBe(0);
    expect(exitCodeFor(verifyBytes(enc('{"a": 1, "chain": "x"}\n')))).toBe(1);
    expect(exitCodeFor(verifyBytes(new Uint8Array()))).toBe(3);
    expect(worstExit([])).toBe(0);
    expect(worstExit([0, 3, 0])).toBe(3);
    expect(worstExit([3, 1, 0])).toBe(1);
    expect(worstExit([1, 3])).toBe(1);
  });
});

describe("a ledger_repair row that records the tail it cut off", () => {
  const cut = Buffer.concat([Buffer.from('{"evt": "tool_call", "forged": "\\'), Buffer.from([0xff, 0x0a - 1])]);
  const repair = (fields: Record<string, Json>) => {
    const b = plain(2);
    b.add({
      evt: "ledger_repair",
      seam: "mcp-stdio",
      session: "s",
      server: "srv",
      torn_line: 3,
      torn_bytes: cut.length,
      torn_digest: digestBytes(cut),
      torn_text: escapeBytes(cut),
      ts: "t",
      ...fields,
    });
    for (const r of sessionRows({ id: "s" })) b.add(r); // the session of the writer that cut it
    return verifyBytes(b.bytes());
  };

  test("verifies ok, with a note saying what was cut off", () => {
    const r = repair({});
    expect([r.verdict, r.findings]).toEqual(["ok", []]);
    expect(r.notes).toEqual([
      `line 3: torn line (${cut.length} bytes) cut off and recorded by the ledger_repair row at line 3`,
    ]);
  });

  test.each([
    ["torn_text that is not what the digest covers", { torn_text: "something else" }],
    ["a wrong torn_bytes", { torn_bytes: 3 }],
    ["a torn_line that is not its own line", { torn_line: 2 }],
    ["torn_text that is no escapeBytes form", { torn_text: "\\q" }],
    ["capped, but as long as the whole", { torn_text_capped: true }],
  ])("is a finding (repair_mismatch) with %s", (_, fields) => {
    const r = repair(fields as Record<string, Json>);
    expect(r.verdict).toBe("inconclusive");
    expect(r.finding_kinds).toEqual(["repair_mismatch"]);
  });

  test("escapeBytes and unescapeBytes are inverse, for any bytes", () => {
    for (let i = 0; i < 500; i++) {
      const b = Uint8Array.from({ length: i % 40 }, () => Math.floor(Math.random() * 256));
      expect(unescapeBytes(escapeBytes(b))).toEqual(b);
    }
    expect(escapeBytes(Buffer.from("é\\\xff", "latin1"))).toBe("\\xe9\\\\\\xff");
    expect(escapeBytes(Buffer.from("é🔒"))).toBe("é🔒");
  });
});
