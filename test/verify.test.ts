import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GENESIS, chainOf } from "../src/chain.ts";
import { lineForm } from "../src/canonical.ts";
import { digestBytes } from "../src/digest.ts";
import { JsonFloat } from "../src/json.ts";
import { exitCodeFor, humanReport, jsonReport, worstExit } from "../src/verify-report.ts";
import { LedgerVerifier, type VerifyOptions, type VerifyReport, fileChunks, verifyBytes, verifyLedger } from "../src/verify.ts";
import {
  HAVE_PYTHON,
  LedgerBuilder,
  type RefVerdict,
  type Row,
  enc,
  reference,
  resetClock,
  seamRow,
  sessionRows,
} from "./verify-helpers.ts";

const cat = (...parts: (string | Uint8Array)[]) => Buffer.concat(parts.map((p) => (typeof p === "string" ? enc(p) : p)));

/** Five plain rows of the format (no seam fields), chained from genesis. */
function plain(n = 5): LedgerBuilder {
  const b = new LedgerBuilder();
  for (let i = 1; i <= n; i++) b.add({ ts: `2026-01-01T00:00:0${i}Z`, tool: "search", n: i, q: `query ${i}` });
  return b;
}
const L = (b: LedgerBuilder) => [...b.lines];
const text = (lines: string[]) => lines.join("\n") + "\n";

interface ChainCase {
  name: string;
  file: Uint8Array;
  strict?: boolean;
  verdict: VerifyReport["verdict"];
  first: string | null;
  breaks: number;
  /** Where seam knowingly differs from the reference: what the reference says instead. */
  reference?: { verdict: RefVerdict["verdict"]; first: string | null; breaks: number };
  rows?: number;
  prechain?: number;
  findings?: string[];
  notes?: string[];
}

const base = L(plain());
const forgedRow = (prev: string) => lineForm({ ...{ ts: "x", tool: "pay", n: 99 }, chain: chainOf(prev, { ts: "x", tool: "pay", n: 99 }) });
const chainOfLine = (line: string) => JSON.parse(line).chain as string;

const cases: ChainCase[] = [
  { name: "intact", file: enc(text(base)), verdict: "ok", first: null, breaks: 0, rows: 5 },
  {
    name: "edit: a value in row 3",
    file: enc(text(base.map((l, i) => (i === 2 ? l.replace('"n": 3', '"n": 4') : l)))),
    verdict: "broken", first: "line 3: chain mismatch", breaks: 1,
  },
  {
    name: "edit: the chain of row 3 (the next row then hashes from a forged claim)",
    file: enc(text(base.map((l, i) => (i === 2 ? l.replace(/"chain": "(.)/, (_, c) => `"chain": "${c === "0" ? "1" : "0"}`) : l)))),
    verdict: "broken", first: "line 3: chain mismatch", breaks: 2,
  },
  { name: "delete row 3", file: enc(text(base.filter((_, i) => i !== 2))), verdict: "broken", first: "line 3: chain mismatch", breaks: 1 },
  { name: "delete the last row: a bare chain cannot see it", file: enc(text(base.slice(0, 4))), verdict: "ok", first: null, breaks: 0 },
  { name: "delete the first row", file: enc(text(base.slice(1))), verdict: "broken", first: "line 1: chain mismatch", breaks: 1 },
  {
    name: "reorder rows 2 and 3",
    file: enc(text([base[0]!, base[2]!, base[1]!, base[3]!, base[4]!])),
    verdict: "broken", first: "line 2: chain mismatch", breaks: 3,
  },
  {
    name: "duplicate row 3",
    file: enc(text([...base.slice(0, 3), base[2]!, ...base.slice(3)])),
    verdict: "broken", first: "line 4: chain mismatch", breaks: 1,
  },
  {
    name: "insert a row chained correctly from row 2 (the next row breaks)",
    file: enc(text([...base.slice(0, 2), forgedRow(chainOfLine(base[1]!)), ...base.slice(2)])),
    verdict: "broken", first: "line 4: chain mismatch", breaks: 1,
  },
  {
    name: "insert a row with a made-up chain",
    file: enc(text([...base.slice(0, 2), '{"ts": "x", "chain": "0123456789abcdef0123456789abcdef"}', ...base.slice(2)])),
    verdict: "broken", first: "line 3: chain mismatch", breaks: 2,
  },
  ...["[1, 2]", '"text"', "42", "null", "true", "1.5"].map(
    (junk): ChainCase => ({
      name: `insert a non-object line ${junk}`,
      file: enc(text([...base.slice(0, 2), junk, ...base.slice(2)])),
      verdict: "broken", first: "line 3: not a JSON object", breaks: 1,
    }),
  ),
  ...["7", "true", "[1]", '{"x": 1}', "NaN", "-Infinity", "1.5", "123456789012345678901234567890"].map(
    (v): ChainCase => ({
      name: `insert a row with the non-string chain ${v}`,
      file: enc(text([...base.slice(0, 2), `{"a": 1, "chain": ${v}}`, ...base.slice(2)])),
      verdict: "broken", first: "line 3: non-string chain value", breaks: 1,
    }),
  ),
  {
    name: "insert an unchained row mid-chain (the next row then starts from genesis)",
    file: enc(text([...base.slice(0, 2), '{"a": 1}', ...base.slice(2)])),
    verdict: "broken", first: "line 3: unchained row after chain began", breaks: 2,
  },
  ...['"chain": ""', '"chain": null', '"chain": false', '"chain": 0', '"chain": 0.0', '"chain": -0.0', '"chain": []', '"chain": {}', '"nochain": 1'].map(
    (c): ChainCase => ({
      name: `two prechain rows (${c}) before the chain`,
      file: enc(text([`{"a": 1, ${c}}`, `{"b": 2, ${c}}`, ...base])),
      verdict: "inconclusive", first: null, breaks: 0, prechain: 2, rows: 7,
    }),
  ),
  {
    name: "prechain rows with --strict",
    file: enc(text(['{"a": 1}', '{"b": 2, "chain": ""}', ...base])),
    strict: true,
    verdict: "broken", first: "line 1: unchained (prechain) row rejected in strict mode", breaks: 2, prechain: 2,
  },
  { name: "an intact chain with --strict", file: enc(text(base)), strict: true, verdict: "ok", first: null, breaks: 0 },
  {
    name: "insert an unparseable line",
    file: enc(text([...base.slice(0, 2), '{"a": ', ...base.slice(2)])),
    verdict: "broken", first: "line 3: unparseable", breaks: 1,
  },
  {
    name: "row 3 with a byte of invalid UTF-8 (row 4 then breaks too: row 3's claim is lost)",
    file: cat(text(base.slice(0, 2)), base[2]!.slice(0, 20), new Uint8Array([0xff]), base[2]!.slice(21), "\n", text(base.slice(3))),
    verdict: "broken", first: "line 3: unparseable", breaks: 2,
  },
  {
    name: "a raw UTF-8-encoded surrogate (ED A0 80) inside a string",
    file: cat(text(base.slice(0, 2)), '{"s": "', new Uint8Array([0xed, 0xa0, 0x80]), '", "chain": "x"}\n', text(base.slice(2))),
    verdict: "broken", first: "line 3: unparseable", breaks: 1,
  },
  {
    name: "a byte order mark before the first row (the second then breaks too)",
    file: cat(new Uint8Array([0xef, 0xbb, 0xbf]), text(base)),
    verdict: "broken", first: "line 1: unparseable", breaks: 2,
  },
  { name: "empty file", file: new Uint8Array(0), verdict: "inconclusive", first: null, breaks: 0, rows: 0 },
  { name: "only blank lines (space, tab, CR, VT, FF)", file: enc("\n \n\t\r\n\x0b\x0c\n"), verdict: "inconclusive", first: null, breaks: 0, rows: 0 },
  {
    name: "blank lines count in line numbers",
    file: enc(text(["", base[0]!, "   ", base[1]!.replace('"n": 2', '"n": 5'), ...base.slice(2)])),
    verdict: "broken", first: "line 4: chain mismatch", breaks: 1, rows: 5,
  },
  { name: "CRLF line endings", file: enc(base.join("\r\n") + "\r\n"), verdict: "ok", first: null, breaks: 0 },
  { name: "no final newline after a complete row", file: enc(base.join("\n")), verdict: "ok", first: null, breaks: 0 },
  {
    name: "U+2028, U+2029, U+0085 and a raw CR inside a row are not line breaks",
    file: (() => {
      const b = plain(2);
      b.add({ s: "a\u2028b\u2029c\u0085d", t: "x" });
      b.raw(lineForm({ e: "\u2028" }).replace("}", `, "chain": "${chainOf(b.prev, { e: "\u2028" })}"}`));
      b.raw('{"f": 1, "chain": "bad"}');
      return b.bytes();
    })(),
    verdict: "broken", first: "line 5: chain mismatch", breaks: 1,
  },
  {
    name: "a duplicated chain key: the last one counts, as in Python",
    file: enc(text([base[0]!.replace("{", '{"chain": "bogus", ')])),
    verdict: "ok", first: null, breaks: 0,
  },
  {
    name: "a chain in upper-case hex",
    file: enc(text(base.map((l, i) => (i === 4 ? l.replace(/"chain": "([0-9a-f]+)"/, (_, h: string) => `"chain": "${h.toUpperCase()}"`) : l)))),
    verdict: "broken", first: "line 5: chain mismatch", breaks: 1,
  },
  {
    name: "rows holding NaN, ±Infinity, -0.0, lone surrogates, big ints and astral keys, chained by the core",
    file: (() => {
      const b = plain(1);
      b.add({ x: new JsonFloat(NaN), y: new JsonFloat(Infinity), z: new JsonFloat(-Infinity), w: new JsonFloat(-0), f: 1e-7 });
      b.add({ s: "lone \ud800 and \udfff", "\ud83d\ude00": 1, "\ufb00": 2, "\ud800": 3, big: 123456789012345678901234567890n });
      b.add({ deep: JSON.parse("[".repeat(400) + "]".repeat(400)), n: 18446744073709551616n, neg: -0 });
      return b.bytes();
    })(),
    verdict: "ok", first: null, breaks: 0,
  },
  {
    name: "an int of 4300 digits is read; one of 4301 is unparseable (Python's limit)",
    file: (() => {
      const b = plain(1);
      b.add({ n: BigInt("9".repeat(4300)) });
      b.raw(`{"n": ${"9".repeat(4301)}, "chain": "x"}`);
      return b.bytes();
    })(),
    verdict: "broken", first: "line 3: unparseable", breaks: 1,
  },
  {
    name: "nesting 100000 deep is unparseable",
    file: enc(text([base[0]!, `{"a": ${"[".repeat(100000)}${"]".repeat(100000)}, "chain": "x"}`])),
    verdict: "broken", first: "line 2: unparseable", breaks: 1,
  },
  // Torn lines: where seam knowingly differs from the reference.
  {
    name: "torn final line (no newline, unparseable)",
    file: enc(text(base) + base[0]!.slice(0, 40)),
    verdict: "inconclusive", first: null, breaks: 0, rows: 5, findings: ["line 6: torn final line"],
    reference: { verdict: "broken", first: "line 6: unparseable", breaks: 1 },
  },
  {
    name: "torn final line cut inside a UTF-8 character",
    file: cat(text(base), '{"s": "', new Uint8Array([0xe2, 0x80])),
    verdict: "inconclusive", first: null, breaks: 0, rows: 5, findings: ["line 6: torn final line"],
    reference: { verdict: "broken", first: "line 6: unparseable", breaks: 1 },
  },
  {
    name: "only a torn line",
    file: enc('{"evt": "session_be'),
    verdict: "inconclusive", first: null, breaks: 0, rows: 0, findings: ["line 1: torn final line"],
    reference: { verdict: "broken", first: "line 1: unparseable", breaks: 1 },
  },
  {
    name: "a torn final line after an edit is still broken",
    file: enc(text(base.map((l, i) => (i === 1 ? l.replace("query 2", "query X") : l))) + "{"),
    verdict: "broken", first: "line 2: chain mismatch", breaks: 1, findings: ["line 6: torn final line"],
    reference: { verdict: "broken", first: "line 2: chain mismatch", breaks: 2 },
  },
  {
    name: "a torn line followed by a newline but no repair row is a break",
    file: enc(text([...base, base[0]!.slice(0, 40)])),
    verdict: "broken", first: "line 6: unparseable", breaks: 1,
  },
  (() => {
    const b = plain(3);
    const torn = '{"evt": "tool_call", "seam": "mcp-st';
    b.raw(torn);
    b.add({ evt: "ledger_repair", torn_line: 4, torn_bytes: enc(torn).length, torn_digest: digestBytes(enc(torn)), ts: "t" });
    b.add({ ts: "after", n: 9 });
    return {
      name: "a torn line repaired by the next row",
      file: b.bytes(),
      verdict: "ok", first: null, breaks: 0, rows: 5,
      notes: [`line 4: torn line (${enc(torn).length} bytes) repaired by the ledger_repair row at line 5`],
      reference: { verdict: "broken", first: "line 4: unparseable", breaks: 1 },
    } satisfies ChainCase;
  })(),
  (() => {
    const b = plain(3);
    const torn = '{"evt": "tool_call", "seam": "mcp-st';
    b.raw(torn);
    b.add({ evt: "ledger_repair", seam: "mcp-stdio", torn_line: 4, torn_bytes: enc(torn).length, torn_digest: digestBytes(enc("other")), ts: "t" });
    return {
      name: "a repair row whose digest does not match the torn line",
      file: b.bytes(),
      verdict: "broken", first: "line 4: unparseable", breaks: 1,
      findings: ["line 5: ledger_repair row does not match the line before it", "line 5: seam row without a session id"],
    } satisfies ChainCase;
  })(),
];

describe("chain verdict on crafted files", () => {
  for (const c of cases) {
    test(c.name, () => {
      const r = verifyBytes(c.file, { strict: c.strict });
      expect({ verdict: r.verdict, first: r.first_break?.message ?? null, breaks: r.breaks }).toEqual({
        verdict: c.verdict,
        first: c.first,
        breaks: c.breaks,
      });
      if (c.first !== null) expect(r.first_break!.line).toBe(Number(c.first.match(/^line (\d+)/)![1]));
      if (c.rows !== undefined) expect(r.rows).toBe(c.rows);
      if (c.prechain !== undefined) expect(r.prechain).toBe(c.prechain);
      expect(r.findings).toEqual(c.findings ?? []);
      expect(r.notes).toEqual(c.notes ?? []);
      expect(r.ok).toBe(c.verdict === "ok" ? true : c.verdict === "broken" ? false : null);
    });
  }

  test.skipIf(!HAVE_PYTHON)("the Python reference verifier agrees on every crafted file (and differs exactly where stated)", () => {
    for (const strict of [false, true]) {
      const list = cases.filter((c) => (c.strict ?? false) === strict);
      const refs = reference(list.map((c) => c.file), strict);
      list.forEach((c, i) => {
        const ref = refs[i]!;
        const r = verifyBytes(c.file, { strict });
        const want = c.reference ?? { verdict: c.verdict, first: c.first, breaks: c.breaks };
        expect({ name: c.name, verdict: ref.verdict, first: ref.first_break?.message ?? null, breaks: ref.breaks }).toEqual({
          name: c.name,
          ...want,
        });
        expect({ name: c.name, line: ref.first_break?.line ?? null }).toEqual({
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
  });

  test("any split of the bytes into chunks gives the same report", () => {
    for (const c of cases) {
      const whole = verifyBytes(c.file, { strict: c.strict });
      for (const size of [1, 2, 3, 7, 64, 4096]) {
        const v = verifyChunked(c.file, size, { strict: c.strict });
        expect({ name: c.name, size, r: v }).toEqual({ name: c.name, size, r: whole });
      }
    }
  });

  test("a line longer than maxLineBytes is not parsed: unparseable, with a note (torn when last)", () => {
    const file = enc(text(base));
    const r = verifyBytes(file, { maxLineBytes: 100 });
    expect(r.first_break).toEqual({ line: 1, message: "line 1: unparseable" });
    expect(r.breaks).toBe(5);
    expect(r.notes[0]).toBe(`line 1: ${enc(base[0]!).length} bytes, longer than the 100-byte limit, not parsed`);
    expect(verifyChunked(file, 7, { maxLineBytes: 100 })).toEqual(r);
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

describe("unreadable sources", () => {
  test("a source that throws is `unreadable: <reason>`, broken, line null", async () => {
    async function* failing() {
      yield enc(text(base.slice(0, 2)));
      throw Object.assign(new Error("EIO: i/o error, read"), { code: "EIO" });
    }
    const r = await verifyLedger(failing());
    expect(r.verdict).toBe("broken");
    expect(r.first_break).toEqual({ line: null, message: "unreadable: input/output error" });
    expect(r.breaks).toBe(1);
    expect(r.rows).toBe(2);
    expect(r.notes).toEqual([`reading stopped after ${enc(text(base.slice(0, 2))).length} bytes; completeness not checked`]);
  });

  test("a missing file and a directory, through fileChunks", async () => {
    const dir = mkdtempSync(join(tmpdir(), "seam-verify-"));
    try {
      const missing = await verifyLedger(fileChunks(join(dir, "nope.jsonl")));
      expect(missing.first_break).toEqual({ line: null, message: "unreadable: no such file or directory" });
      expect(missing.verdict).toBe("broken");
      expect(missing.verified_scope).toBe("empty");
      const isDir = await verifyLedger(fileChunks(dir));
      expect(isDir.first_break).toEqual({ line: null, message: "unreadable: is a directory" });
      writeFileSync(join(dir, "ok.jsonl"), text(base));
      const ok = await verifyLedger(fileChunks(join(dir, "ok.jsonl"), 100));
      expect(ok).toEqual(verifyBytes(enc(text(base))));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
