/**
 * Micro-benchmarks of the digest path against the engine's own JSON, on a
 * row-sized value (an MCP tools/call request) and a ~1 MB value (a tool
 * result of 2000 such items):
 *   digest          digestJson(model), digestJsonText(text) vs SHA-256(JSON.stringify)
 *   serialize       compactForm / chainForm vs JSON.stringify
 *   parse           parseJson vs JSON.parse
 * mitata's summary prints each group as ratios to its fastest member.
 *   bun bench/digest.bench.ts        (or: bun build --target=node … and run under node)
 * bench/micro.bench.ts runs the same `digestCases` with the rest of the micro-benchmarks.
 */
import { bench, group, run, summary } from "mitata";
import { chainForm, compactForm } from "../src/core/canonical/index.ts";
import { digestJson, digestJsonText } from "../src/core/digest.ts";
import { parseJson } from "../src/core/json.ts";
import { sha256Floor } from "./lib.ts";

const rowText = JSON.stringify({
  jsonrpc: "2.0",
  id: 4711,
  method: "tools/call",
  params: {
    name: "search_documents",
    arguments: {
      query: "quarterly report café 🔒",
      limit: 25,
      score: 0.75,
      filters: { year: 2026, tags: ["finance", "q3"] },
    },
    _meta: { progressToken: "tok-4711" },
  },
});
const items = Array.from({ length: 2000 }, (_, i) => ({
  id: i,
  title: `Document ${i}: naïve résumé of the meeting`,
  score: i / 7,
  ratio: 1.0,
  tags: ["a", "b", String(i % 13)],
  body: "Lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(6),
  meta: { created: "2026-11-30T03:24:07.123Z", size: i * 1031, ok: i % 3 === 0 },
}));
const bigText = JSON.stringify({ jsonrpc: "2.0", id: 1, result: { content: items, isError: false } }).replace(
  /"ratio":1/g,
  '"ratio":1.0',
);
const row = parseJson(rowText);
const big = parseJson(bigText);
const rowPlain = JSON.parse(rowText);
const bigPlain = JSON.parse(bigText);

/** One measured function; the first case of each group is what the others are compared with. */
export interface MicroCase {
  group: string;
  name: string;
  fn: () => unknown;
}

export const digestSizes = { rowChars: rowText.length, bigChars: bigText.length };

export const digestCases: MicroCase[] = [];
for (const [name, text, model, plain] of [
  ["row", rowText, row, rowPlain],
  ["1 MB", bigText, big, bigPlain],
] as const) {
  digestCases.push(
    { group: `digest, ${name}`, name: "digestJson(model)", fn: () => digestJson(model) },
    { group: `digest, ${name}`, name: "digestJsonText(text)", fn: () => digestJsonText(text) },
    { group: `digest, ${name}`, name: "sha256(JSON.stringify(plain))", fn: () => sha256Floor(JSON.stringify(plain)) },
    { group: `serialize, ${name}`, name: "compactForm(model)", fn: () => compactForm(model) },
    { group: `serialize, ${name}`, name: "chainForm(model)", fn: () => chainForm(model) },
    { group: `serialize, ${name}`, name: "JSON.stringify(plain)", fn: () => JSON.stringify(plain) },
    { group: `parse, ${name}`, name: "parseJson(text)", fn: () => parseJson(text) },
    { group: `parse, ${name}`, name: "JSON.parse(text)", fn: () => JSON.parse(text) },
  );
}

if (import.meta.main) {
  console.log(`row ${rowText.length} chars, big ${(bigText.length / 1e6).toFixed(2)} MB`);
  for (const g of new Set(digestCases.map((c) => c.group))) {
    group(g, () => {
      summary(() => {
        for (const c of digestCases) if (c.group === g) bench(c.name, c.fn);
      });
    });
  }
  await run();
}
