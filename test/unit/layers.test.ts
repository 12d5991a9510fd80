/**
 * The folder tree is the architecture: lower layers never import higher
 * ones, and no module imports itself round a cycle (README, "Layout").
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";

const ROOT = join(import.meta.dir, "../..");

function tsFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts"))
    .map((f) => join(dir, f));
}

/** Each file's relative imports (type-only and dynamic ones too), as paths from the repository root. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of [...tsFiles("src"), ...tsFiles("commands")]) {
    const text = readFileSync(join(ROOT, file), "utf8");
    const targets = [
      ...text.matchAll(/(?:(?:import|export)[^'"]*?from\s+|\bimport\(\s*|^import\s+)["'](\.[^"']+)["']/gm),
    ].map((m) => relative(ROOT, normalize(join(ROOT, dirname(file), m[1]!))));
    graph.set(file, targets);
  }
  return graph;
}

/** `src/core/json.ts` → core; `commands/wrap.ts` → commands. */
const layer = (path: string) => (path.startsWith("src/") ? path.split("/")[1]! : path.split("/")[0]!);

/** What each layer may import besides itself (anything else of seam's is a violation). */
const ALLOWED: Record<string, readonly string[]> = {
  base: [],
  core: ["base"],
  format: ["base", "core"],
  runtime: ["base", "core"],
  redact: ["base", "core"],
  verify: ["base", "core", "format"],
  checkpoint: ["base", "core", "format", "runtime", "verify"],
  ledger: ["base", "core", "format", "runtime", "checkpoint"],
  observe: ["base", "core", "format", "runtime", "ledger", "checkpoint"],
  actions: ["base", "core", "format", "runtime", "observe"],
  wrap: ["base", "core", "format", "runtime", "ledger", "checkpoint", "observe", "redact", "actions"],
  read: ["base", "core", "format", "runtime", "verify", "checkpoint"],
  proxy: ["base", "core", "format", "runtime", "ledger", "checkpoint", "observe", "redact"],
  install: ["base", "core", "format", "runtime", "verify", "checkpoint"],
  fleet: ["base", "core", "format", "runtime", "verify", "checkpoint", "read"],
  report: ["base", "core", "format", "runtime", "verify", "checkpoint", "read"],
  selftest: ["base", "core", "format", "runtime", "verify", "checkpoint", "ledger", "observe", "wrap", "proxy", "read"],
  api: ["base", "core", "format", "verify", "checkpoint", "actions"],
  release: ["base", "core", "runtime", "checkpoint"],
  witness: ["base", "core", "runtime", "checkpoint"],
  mock: ["base", "core", "format", "runtime", "observe", "proxy"],
  commands: [
    "base",
    "core",
    "format",
    "runtime",
    "verify",
    "checkpoint",
    "ledger",
    "observe",
    "redact",
    "actions",
    "wrap",
    "selftest",
    "read",
    "proxy",
    "install",
    "fleet",
    "report",
    "release",
    "witness",
    "mock",
  ],
};

describe("layers", () => {
  const graph = importGraph();

  test("every import goes down (or sideways within a folder)", () => {
    const wrong: string[] = [];
    for (const [file, targets] of graph) {
      for (const t of targets) {
        if (!t.startsWith("src/") && !t.startsWith("commands/")) continue; // package.json, vectors
        const from = layer(file);
        const to = layer(t);
        if (from !== to && !(ALLOWED[from] ?? []).includes(to)) wrong.push(`${file} -> ${t}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  test("seam proxy shares the observer with seam wrap, not wrap's relay", () => {
    expect(ALLOWED.proxy).not.toContain("wrap");
    const wrong = [...graph].flatMap(([file, targets]) =>
      layer(file) === "proxy" ? targets.filter((t) => layer(t) === "wrap").map((t) => `${file} -> ${t}`) : [],
    );
    expect(wrong).toEqual([]);
  });

  test("no folder is missing from the table", () => {
    expect([...new Set([...graph.keys()].map(layer))].filter((l) => !(l in ALLOWED))).toEqual([]);
  });

  test("no circular imports", () => {
    const cycles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const stack: string[] = [];
    const visit = (f: string) => {
      state.set(f, "open");
      stack.push(f);
      for (const t of graph.get(f) ?? []) {
        if (state.get(t) === "open") cycles.push([...stack.slice(stack.indexOf(t)), t].join(" -> "));
        else if (!state.has(t)) visit(t);
      }
      stack.pop();
      state.set(f, "done");
    };
    for (const f of graph.keys()) if (!state.has(f)) visit(f);
    expect(cycles).toEqual([]);
  });
});
