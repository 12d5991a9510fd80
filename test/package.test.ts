/**
 * The package as a user gets it: `npm pack` of the built tree, installed
 * into an empty project with nothing but Node and npm (no network: it has no
 * dependencies), its CLI run with npx, each entry point imported under Node
 * and Bun, and type-checked with tsc against the shipped declarations.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { ROOT } from "./cli.ts";
import { run, tempDir } from "./proc.ts";

const built = existsSync(`${ROOT}dist/lib/index.mjs`) && existsSync(`${ROOT}dist/types/api/index.d.ts`);
const dir = tempDir("seam-pack-");
let tarball = "";
let files: string[] = [];

const CONSUMER = `
import { GENESIS, chain, digest, verifyBytes } from "seam-mcp";
import { actionFor, loadActionMap, shouldForward } from "seam-mcp/actions";
import { verifyCheckpoint, verifyProof } from "seam-mcp/checkpoint";
const c = chain(GENESIS, '{"evt":"x"}');
const map = await loadActionMap('{"tools":{"pay":{"contract_id":"c","subject":"arguments.id"}}}');
const a = actionFor(map, { name: "pay", id: 7, params: '{"arguments":{"id":"o-1"}}', at: new Date(0) });
console.log(JSON.stringify({
  verdict: verifyBytes(JSON.stringify({ evt: "x", chain: c }) + "\\n").verdict,
  digest: digest('{"b":2,"a":1}'),
  body: a.kind === "action" ? a.body : a.kind,
  forward: shouldForward(false, { failOpen: false }),
  checkpoint: verifyCheckpoint("x", []).ok,
  proof: verifyProof("x", []).verdict,
}));
`;
const EXPECTED = {
  verdict: "ok",
  digest: "sha256:json-c14n:v1:43258cff783fe7036d8a43033f830adfc60ec037382473548ac742b888292777",
  body: `{"action_id":"mcp:pay:7","channel":"mcp","contract_id":"c","params":{"mcp_request_id":"7","mcp_tool":"pay"},"requested_at":"1970-01-01T00:00:00.000Z","subject_id":"o-1"}`,
  forward: false,
  checkpoint: false,
  proof: "broken",
};

describe.skipIf(!built)("the npm package", () => {
  beforeAll(async () => {
    // dist/ is built by `npm test` before the suite; packing must not rebuild it under the other tests.
    const r = await run(["npm", "pack", "--ignore-scripts", "--json", "--pack-destination", dir], { cwd: ROOT });
    expect(r.code).toBe(0);
    const info = JSON.parse(r.stdout.toString()) as { filename: string; files: { path: string }[] }[];
    tarball = join(dir, info[0]!.filename);
    files = info[0]!.files.map((f) => f.path).sort();
    const proj = join(dir, "proj");
    mkdirSync(proj);
    writeFileSync(join(proj, "package.json"), `{"name": "consumer", "private": true, "type": "module"}\n`);
    const inst = await run(["npm", "install", "--offline", "--no-audit", "--no-fund", tarball], { cwd: proj });
    expect(inst.code).toBe(0);
  });

  test("is named seam-mcp, under 1 MB, and holds the builds and docs only", () => {
    expect(tarball).toEndWith("seam-mcp-0.1.0.tgz");
    expect(statSync(tarball).size).toBeLessThan(1024 * 1024);
    expect(files).toContain("dist/seam.mjs");
    expect(files).toContain("dist/lib/index.mjs");
    expect(files).toContain("dist/types/api/checkpoint.d.ts");
    expect(files).toContain("README.md");
    const stray = files.filter(
      (f) => !/^(dist\/(seam\.mjs|lib\/|types\/)|README\.md$|LICENSE$|package\.json$)/.test(f),
    );
    expect(stray).toEqual([]);
  });

  test("npx runs its CLI with Node alone: --version and demo", async () => {
    const cwd = join(dir, "proj");
    const v = await run(["npx", "--offline", "seam", "--version"], { cwd });
    expect(v.stdout.toString()).toBe("seam 0.1.0 (seam-mcp)\n");
    // As the README says it: a relative path names the tarball (an absolute one, npx takes for a command).
    const work = join(dir, "npx");
    mkdirSync(work);
    const d = await run(["npx", "--yes", "--offline", `../${basename(tarball)}`, "demo"], { cwd: work });
    expect(d.code).toBe(0);
    expect(d.stdout.toString()).toContain("verify  ok:");
    expect(readdirSync(work)).toEqual(["seam-demo.jsonl"]);
  });

  test("each entry point imports and works under Node and under Bun", async () => {
    const proj = join(dir, "proj");
    writeFileSync(join(proj, "use.mjs"), CONSUMER);
    for (const runtime of ["node", `${ROOT}node_modules/.bin/bun`]) {
      const r = await run([runtime, "use.mjs"], { cwd: proj });
      expect(r.stderr).toBe("");
      expect(JSON.parse(r.stdout.toString())).toEqual(EXPECTED);
    }
  });

  test("type-checks against the shipped declarations (tsc, NodeNext, strict), and a wrong use does not", async () => {
    const proj = join(dir, "proj");
    writeFileSync(
      join(proj, "tsconfig.json"),
      `{"compilerOptions": {"target": "ES2022", "module": "NodeNext", "moduleResolution": "NodeNext", "strict": true, "noEmit": true, "types": []}, "files": ["use.ts"]}\n`,
    );
    const typed = `import { type VerifyReport, verifyFile } from "seam-mcp";
import { type ActionOutcome, actionFor, loadActionMap } from "seam-mcp/actions";
import { type ProofResult, verifyProof } from "seam-mcp/checkpoint";
export const r: Promise<VerifyReport> = verifyFile("x.jsonl", { strict: true });
export const p: ProofResult = verifyProof("", []);
export async function f(): Promise<ActionOutcome> {
  return actionFor(await loadActionMap("{}"), { name: "a", id: 1n, params: "{}" });
}
`;
    const tsc = [`${ROOT}node_modules/.bin/tsc`, "-p", "."];
    writeFileSync(join(proj, "use.ts"), typed);
    const ok = await run(tsc, { cwd: proj });
    expect(ok.stdout.toString()).toBe("");
    expect(ok.code).toBe(0);
    writeFileSync(join(proj, "use.ts"), `${typed}export const wrong: number = verifyProof("", []).verdict;\n`);
    const bad = await run(tsc, { cwd: proj });
    expect(bad.code).not.toBe(0);
    expect(bad.stdout.toString()).toContain("not assignable to type 'number'");
  }, 180_000);
});
