/**
 * What a wrapped session loads: a client may run ten `seam wrap` all day, and
 * under Bun every module a process (or its recorder thread) loads stays in
 * its memory (bench/footprint.ts measures it). So the modules each side of a
 * session loads, following static imports from where it starts, must not
 * reach code no session runs: another command's layer, or a node: module
 * only another command uses.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "../..");

interface Inputs {
  [path: string]: { imports: { path: string; kind: string; external?: boolean }[] };
}

/** Every module reached from `roots` by static imports (a dynamic import is loaded only when it runs). */
async function staticClosure(roots: string[]): Promise<Set<string>> {
  const built = await Bun.build({
    entrypoints: roots.map((r) => join(ROOT, r)),
    target: "node",
    metafile: true,
    throw: false,
  } as Parameters<typeof Bun.build>[0]);
  const inputs = (built as unknown as { metafile: { inputs: Inputs } }).metafile.inputs;
  const seen = new Set<string>();
  const todo = [...roots];
  while (todo.length > 0) {
    const at = todo.pop()!;
    if (seen.has(at)) continue;
    seen.add(at);
    for (const i of inputs[at]?.imports ?? []) if (i.kind !== "dynamic-import") todo.push(i.path);
  }
  return seen;
}

// Each side of a session: where it starts, and the modules it goes on to load at run time.
const SIDES: [string, string[]][] = [
  // commands/_commands.ts loads the wrap command when seam is run as `seam wrap`;
  // src/wrap/session.ts loads the recording's side while the server starts.
  ["the forwarding thread", ["commands/seam.ts", "commands/wrap.ts", "src/wrap/recorded.ts"]],
  // commands/_threads.ts loads these for the recorder role.
  [
    "the recorder thread",
    [
      "commands/seam.ts",
      "commands/_threads.ts",
      "src/base/log.ts",
      "src/checkpoint/note.ts",
      "src/runtime/index.ts",
      "src/selftest/faults.ts",
      "src/wrap/recorder-thread.ts",
    ],
  ],
];

/** What no wrapped session uses. */
const NEVER: [string, (path: string) => boolean][] = [
  ["node:http", (p) => p === "node:http"],
  ["node:https", (p) => p === "node:https"],
  ["the report", (p) => p.startsWith("src/report/")],
  ["install", (p) => p.startsWith("src/install/")],
  ["the fleet", (p) => p.startsWith("src/fleet/")],
  ["the proxy", (p) => p.startsWith("src/proxy/")],
  ["the readers", (p) => p.startsWith("src/read/")],
  // ML-DSA-44 is loaded where a key of that type is met (src/checkpoint/ml-dsa.ts), never by a session.
  ["ML-DSA", (p) => p.includes("@noble/post-quantum")],
];

describe("a wrapped session loads only what wrapping needs", () => {
  for (const [side, roots] of SIDES) {
    test(side, async () => {
      const loaded = await staticClosure(roots);
      // The walk itself works: it reaches the relay (or the recorder) and node:fs.
      expect(loaded.has("node:fs")).toBe(true);
      expect([...loaded].some((p) => p.startsWith("src/wrap/"))).toBe(true);
      for (const [what, is] of NEVER) expect({ what, loaded: [...loaded].filter(is) }).toEqual({ what, loaded: [] });
    });
  }
});
