/**
 * The package as a user gets it: `npm pack` of the built tree, installed
 * into an empty project with nothing but Node and npm (no network: it has no
 * dependencies), its CLI run with npx, each entry point imported under Node
 * and Bun, and type-checked with tsc against the shipped declarations.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { ROOT } from "../helpers/cli.ts";
import { run, tempDir } from "../helpers/proc.ts";

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
      (f) => !/^(dist\/(seam\.mjs|cli\/[0-9a-z]+\.mjs$|lib\/|types\/)|README\.md$|LICENSE$|package\.json$)/.test(f),
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

  /** `npm install -g` of the tarball into a prefix of this test's (once). */
  let global: Promise<string> | undefined;
  const globalPrefix = () =>
    (global ??= (async () => {
      const prefix = join(dir, "global");
      const g = await run([
        "npm",
        "install",
        "-g",
        "--offline",
        "--no-audit",
        "--no-fund",
        "--prefix",
        prefix,
        tarball,
      ]);
      expect(g.code).toBe(0);
      return prefix;
    })());

  test("npm install -g puts seam on PATH: seam demo runs from the global prefix", async () => {
    const prefix = await globalPrefix();
    const work = join(dir, "global-demo");
    mkdirSync(work);
    const d = await run([join(prefix, "bin", "seam"), "demo"], { cwd: work });
    expect([d.code, d.stderr]).toEqual([0, ""]);
    expect(d.stdout.toString()).toContain("verify  ok:");
    expect(readdirSync(work)).toEqual(["seam-demo.jsonl"]);
  }, 120_000);

  test("npx seam install: refused with the command to run while no lasting seam is on PATH; with the global one on PATH, the entry runs it", async () => {
    const prefix = await globalPrefix();
    const home = join(dir, "install-home");
    const config = join(home, ".cursor", "mcp.json");
    mkdirSync(dirname(config), { recursive: true });
    const text = '{\n  "mcpServers": {\n    "fs": { "command": "npx", "args": ["-y", "server-fs", "/data"] }\n  }\n}\n';
    writeFileSync(config, text);
    // This test's folders are under the system's temporary folder: seam gets another one, so that they count as lasting.
    const tmp = join(dir, "tmp");
    mkdirSync(tmp);
    const work = join(dir, "npx");
    mkdirSync(work, { recursive: true });
    const npx = (path: string) =>
      run(
        [
          "npx",
          "--yes",
          "--offline",
          `../${basename(tarball)}`,
          "install",
          "--client",
          "cursor",
          "--config-root",
          home,
        ],
        {
          cwd: work,
          env: { TMPDIR: tmp, PATH: path },
        },
      );
    const refused = await npx(process.env.PATH ?? "");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^seam: error: this seam runs from npm's npx cache \(.*[\\/]_npx[\\/].*\), which does not last/,
    );
    expect(refused.stderr).toContain(
      `seam: hint: install seam for good and run it from there: npm install -g seam-mcp, then seam install --client cursor --config-root ${home}\n`,
    );
    expect(readFileSync(config, "utf8")).toBe(text);

    const found = await npx(`${join(prefix, "bin")}:${process.env.PATH ?? ""}`);
    expect(found.code).toBe(0);
    const entry = JSON.parse(readFileSync(config, "utf8")).mcpServers.fs as { command: string; args: string[] };
    expect(entry.args.slice(0, 2)).toEqual([join(prefix, "bin", "seam"), "wrap"]);
    expect(JSON.stringify(entry)).not.toContain("_npx");
    // The global seam knows the entry: status says recorded, uninstall gives the file back.
    const seam = join(prefix, "bin", "seam");
    const st = await run([seam, "status", "--json", "--client", "cursor", "--config-root", home], {
      env: { TMPDIR: tmp },
    });
    expect(JSON.parse(st.stdout.toString())[0].servers[0].state).toBe("recorded");
    const u = await run([seam, "uninstall", "--client", "cursor", "--config-root", home], { env: { TMPDIR: tmp } });
    expect(u.code).toBe(0);
    expect(readFileSync(config, "utf8")).toBe(text);
  }, 120_000);

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
