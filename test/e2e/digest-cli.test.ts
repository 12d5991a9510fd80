import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { digestJson } from "../../src/core/digest.ts";
import { parseJson } from "../../src/core/json.ts";
import { ROOT, runCli, VIAS } from "../helpers/cli.ts";
import { Gen } from "../helpers/jsongen.ts";
import { tempDir } from "../helpers/proc.ts";

const sha = (b: Uint8Array | string) => createHash("sha256").update(b).digest("hex");
// {"a":1,"b":2}: the first json-c14n-v1 vector
const AB = "sha256:json-c14n:v1:43258cff783fe7036d8a43033f830adfc60ec037382473548ac742b888292777";
// examples/tool-call.json, digested by Python's json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
const EXAMPLE = "sha256:json-c14n:v1:11cff80ab078c15fc90362cc9d7282b3158daa9504441d3eda018168d92e87b9";

let dir: string;
const files: Record<string, string | Uint8Array> = {
  "ab.json": '{"b":2,"a":1}',
  "ab-spaced.json": ' {\n  "a" : 1,\n  "b" : 2\n}\n',
  "nan.json": '{"x":[1,NaN]}',
  "lone.json": '{"x":"\\ud800"}',
  "bad.json": '{\n  "a": 1,\n  "b": tru\n}',
  "empty.json": "",
  "latin1.json": Uint8Array.from([0x22, 0x63, 0x61, 0x66, 0xe9, 0x22]), // "café" in Latin-1
  "bom.json": "\ufeff{}",
  "deep.json": "[".repeat(901) + "]".repeat(901),
  "dup.json": '{"a":0,"a":1}',
};
let big = "";

beforeAll(() => {
  dir = tempDir("seam-digest-");
  for (const [name, body] of Object.entries(files)) writeFileSync(join(dir, name), body);
  // Past the 1 MB buffer, so the top-level array streams through the hash.
  const g = new Gen(5);
  const items: string[] = [];
  for (let size = 0; size < 3e6; ) {
    const text = g.document();
    try {
      digestJson(parseJson(text)).startsWith("sha256") ? items.push(text) : 0;
    } catch {
      continue;
    }
    size += text.length;
  }
  big = `[${items.join(",")}]`;
  writeFileSync(join(dir, "big.json"), big);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each(VIAS)("seam digest via %s", (via) => {
  const run = (args: string[], input?: string | Uint8Array) => runCli(via, ["digest", ...args], { cwd: dir, input });

  test("one file: the digest alone", async () => {
    const r = await run(["ab.json"]);
    expect(r.stderr).toBe("");
    expect(r.stdout.toString()).toBe(`${AB}\n`);
    expect(r.code).toBe(0);
  });

  test("the bundled example digests to what Python computes", async () => {
    const r = await run([join(ROOT, "examples/tool-call.json")]);
    expect(r.stdout.toString()).toBe(`${EXAMPLE}\n`);
    expect(r.code).toBe(0);
  });

  test("several files: sha256sum-style lines, stdin named -", async () => {
    const r = await run(["ab.json", "-", "ab-spaced.json"], "[1.0]");
    expect(r.stdout.toString()).toBe(`${AB}  ab.json\nsha256:json-c14n:v1:${sha("[1.0]")}  -\n${AB}  ab-spaced.json\n`);
    expect(r.code).toBe(0);
  });

  test("no file reads stdin", async () => {
    const r = await run([], '{"b":2,"a":1}');
    expect(r.stdout.toString()).toBe(`${AB}\n`);
    expect(r.code).toBe(0);
  });

  test("--raw-bytes digests the bytes as they are, stdin too", async () => {
    const r = await run(["--raw-bytes", "ab-spaced.json", "latin1.json", "-"], "x");
    expect(r.stdout.toString()).toBe(
      `sha256:raw-bytes:v1:${sha(files["ab-spaced.json"] as string)}  ab-spaced.json\n` +
        `sha256:raw-bytes:v1:${sha(files["latin1.json"] as Uint8Array)}  latin1.json\n` +
        `sha256:raw-bytes:v1:${sha("x")}  -\n`,
    );
    expect(r.code).toBe(0);
  });

  test("--recipe jcs digests the RFC 8785 form", async () => {
    const input = readFileSync(join(ROOT, "test/vectors/jcs/input/weird.json"));
    const output = readFileSync(join(ROOT, "test/vectors/jcs/output/weird.json"));
    const r = await run(["--recipe", "jcs", "-"], input);
    expect(r.stdout.toString()).toBe(`sha256:jcs:v1:${sha(output)}\n`);
    const r2 = await run(["--recipe=jcs", "dup.json"]);
    expect(r2.stderr).toBe("seam: error: dup.json: unparseable: duplicate key at line 1 column 13\n");
    expect(r2.code).toBe(1);
  });

  test("a 3 MB file digests as the library does", async () => {
    const r = await run(["big.json"]);
    expect(r.stdout.toString()).toBe(`${digestJson(parseJson(big))}\n`);
    expect(r.code).toBe(0);
  });

  test("bad inputs: one line each on stderr naming the file and the reason, exit 1, the good ones still printed", async () => {
    const r = await run([
      "nan.json",
      "lone.json",
      "bad.json",
      "ab.json",
      "empty.json",
      "latin1.json",
      "bom.json",
      "deep.json",
      "missing.json",
      ".",
    ]);
    expect(r.stdout.toString()).toBe(`${AB}  ab.json\n`);
    expect(r.stderr).toBe(
      [
        "seam: error: nan.json: undigestible (ValueError): NaN, Infinity or -Infinity has no canonical form",
        "seam: error: lone.json: undigestible (UnicodeEncodeError): a lone surrogate (\\udXXX) has no UTF-8 form",
        "seam: error: bad.json: unparseable: expecting value at line 3 column 8",
        "seam: error: empty.json: unparseable: expecting value at line 1 column 1",
        "seam: error: latin1.json: unparseable: not UTF-8 at offset 4",
        "seam: error: bom.json: unparseable: unexpected byte order mark at line 1 column 1",
        "seam: error: deep.json: unparseable: nesting deeper than 900 levels at line 1 column 901",
        "seam: error: missing.json: unreadable: no such file or directory",
        "seam: error: .: unreadable: is a directory",
        "",
      ].join("\n"),
    );
    expect(r.code).toBe(1);
  });

  test.each([
    [["--recipe", "sha1", "ab.json"], 'seam: error: unknown recipe "sha1"\nseam: hint: use one of: json-c14n, jcs\n'],
    [["--recipe"], "seam: error: flag --recipe needs a value\nseam: hint: run 'seam digest --help' for usage\n"],
    [
      ["--raw-bytes", "--recipe", "jcs", "ab.json"],
      "seam: error: --raw-bytes and --recipe do not go together\nseam: hint: run 'seam digest --help' for usage\n",
    ],
    [
      ["--frob", "ab.json"],
      "seam: error: unknown flag --frob for 'seam digest'\nseam: hint: run 'seam digest --help' for the flags it takes\n",
    ],
    [["-", "-"], "seam: error: stdin ('-') can be read only once\nseam: hint: run 'seam digest --help' for usage\n"],
  ])("usage error %j: exit 2, nothing on stdout", async (args, stderr) => {
    const r = await run(args);
    expect(r.stderr).toBe(stderr);
    expect(r.stdout.length).toBe(0);
    expect(r.code).toBe(2);
  });
});
