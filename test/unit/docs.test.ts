/**
 * The documentation holds: docs/cli.md is what scripts/cli-docs.ts makes of
 * the command definitions now, every relative link and anchor in the README
 * and docs/ resolves, the README and docs/performance.md stay short and carry
 * no dated run logs, and CHANGELOG.md names the version seam reports.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { CLI_DOCS, renderCliDocs } from "../../scripts/cli-docs.ts";
import { VERSION } from "../../src/base/version.ts";

const ROOT = join(import.meta.dir, "../..");
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

/** The Markdown files a reader follows links between. */
function markdownFiles(): string[] {
  const docs = readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`);
  return ["README.md", "CHANGELOG.md", "CONTRIBUTING.md", ...docs].filter((f) => existsSync(join(ROOT, f)));
}

/** Markdown text without fenced code blocks (a link in a code sample is not a link). */
function prose(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes, repeats numbered. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of prose(text).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = m[1]!
      .replace(/<[^>]+>/g, "")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const m of text.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) out.add(m[1]!);
  return out;
}

/** Every link target in a file: [text](target) and ![alt](target), outside code. */
function links(text: string): string[] {
  const body = prose(text).replace(/`[^`\n]*`/g, "");
  return [...body.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
}

/** What is wrong with one link from `file`, or null when it resolves. */
function brokenLink(file: string, target: string, readText: (path: string) => string | null): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return null; // https:, mailto: and the like: not checked offline
  const hash = target.indexOf("#");
  const path = hash < 0 ? target : target.slice(0, hash);
  const anchor = hash < 0 ? null : decodeURIComponent(target.slice(hash + 1));
  const dest = path === "" ? file : normalize(join(dirname(file), decodeURIComponent(path)));
  if (dest.startsWith("..")) return `${target}: outside the repository`;
  const text = readText(dest);
  if (text === null) return `${target}: no file ${dest}`;
  if (anchor !== null && dest.endsWith(".md") && !anchors(text).has(anchor))
    return `${target}: no heading #${anchor} in ${dest}`;
  return null;
}

function readIfThere(path: string): string | null {
  const full = join(ROOT, path);
  if (!existsSync(full)) return null;
  return statSync(full).isDirectory() ? "" : readFileSync(full, "utf8");
}

describe("docs/cli.md", () => {
  test("is what `npm run docs` makes of the command definitions now", async () => {
    const fresh = await renderCliDocs();
    const current = readFileSync(CLI_DOCS, "utf8");
    if (current !== fresh) throw new Error("docs/cli.md is stale: run `npm run docs` and commit it");
    expect(current).toBe(fresh);
  });

  test("names every command seam lists, each with its flags", async () => {
    const text = await renderCliDocs();
    for (const name of ["wrap", "proxy", "verify", "log", "stats", "check", "report", "install", "ship", "export"]) {
      expect(text).toContain(`## seam ${name}\n`);
    }
    expect(text).toContain("`--ledger PATH`");
    expect(text).toContain("`--fsync VALUE` | `batch`, `always`, `never`");
    // docs/protocol.md runs `seam fixture`: it is listed like every other command.
    expect(text).toContain("## seam fixture\n");
  });
});

describe("links", () => {
  test("the checker finds a missing file, a missing anchor, and passes good ones", () => {
    const files: Record<string, string> = { "docs/a.md": "# A title\n## Same\n## Same\n", "README.md": "" };
    const readText = (p: string) => files[p] ?? null;
    expect(brokenLink("README.md", "docs/a.md#a-title", readText)).toBeNull();
    expect(brokenLink("README.md", "docs/a.md#same-1", readText)).toBeNull();
    expect(brokenLink("docs/a.md", "#same", readText)).toBeNull();
    expect(brokenLink("README.md", "docs/b.md", readText)).toContain("no file");
    expect(brokenLink("README.md", "docs/a.md#nope", readText)).toContain("no heading");
    expect(brokenLink("docs/a.md", "../../x.md", readText)).toContain("outside");
    expect(links("see [x](a.md#b) and ![p](p.png)\n```\n[no](c.md)\n```\n`[no](d.md)`")).toEqual(["a.md#b", "p.png"]);
    expect([...anchors("## Record a remote server (`seam proxy`)\n")]).toEqual(["record-a-remote-server-seam-proxy"]);
  });

  test.each(markdownFiles())("every relative link and anchor in %s resolves", (file) => {
    const broken = links(read(file))
      .map((target) => brokenLink(file, target, readIfThere))
      .filter((problem) => problem !== null);
    expect(broken).toEqual([]);
  });
});

/**
 * Repository paths a document names in code spans (`src/redact/`,
 * `bench/relay.ts`): each must exist, so a moved file cannot leave the docs
 * pointing at nothing. Placeholders (`<file>`) and machine output
 * (bench/results/, not committed) are not paths to check.
 */
function namedPaths(text: string): string[] {
  const spans = [...text.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!);
  const paths = spans.flatMap((span) =>
    [...span.matchAll(/(?:^|[\s(])((?:src|test|bench|scripts|commands|vectors|docs)\/[\w./-]*)/g)].map((m) => m[1]!),
  );
  return [...new Set(paths.map((p) => p.replace(/[.,:;]+$/, "")))].filter((p) => !p.startsWith("bench/results"));
}

describe("paths", () => {
  test("the check finds paths in code spans, not placeholders or results", () => {
    expect(
      namedPaths("see `src/redact/` and `bun bench/relay.ts --only rt`, `test/<file>.test.ts`, `bench/results/x`"),
    ).toEqual(["src/redact/", "bench/relay.ts", "test/"]);
  });

  test.each(markdownFiles())("every repository path %s names exists", (file) => {
    const missing = namedPaths(read(file)).filter((p) => !existsSync(join(ROOT, p)));
    expect(missing).toEqual([]);
  });
});

/** A date of the form 2026-MM-DD, except the MCP revision that is named by one. */
const DATED = /\b20\d\d-\d\d-\d\d/g;
const REVISION_NAMES = new Set(["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]);

describe("no lab notebook", () => {
  test("README.md is at most 400 lines, docs/performance.md at most 200", () => {
    expect(read("README.md").split("\n").length - 1).toBeLessThanOrEqual(400);
    expect(read("docs/performance.md").split("\n").length - 1).toBeLessThanOrEqual(200);
  });

  test.each(markdownFiles().filter((f) => f !== "CHANGELOG.md"))("%s names no date but an MCP revision's", (file) => {
    const dates = [...read(file).matchAll(DATED)].map((m) => m[0]).filter((d) => !REVISION_NAMES.has(d));
    expect(dates).toEqual([]);
  });
});

/** Comment lines of a source file (block comment lines and // comments). */
function commentLines(text: string): string[] {
  return text.split("\n").filter((line) => /^\s*(?:\*|\/\/|\/\*)/.test(line));
}

/** What a comment must not carry: a run's date, a measured time or size, a figure it used to be. */
const STALE_FIGURE = /2026-(?!07-28)|\d\s*µs\b|\d[\d.,]*\s*(?:MB|GB)\b|used to be \d/;

describe("comments in src/", () => {
  test("the check finds a date, a µs figure, a size in MB and a former value", () => {
    const hits = commentLines(
      "/**\n * measured on 2026-12-04\n * about 85 µs here\n */\nconst x = 1; // 190 MB before\n// the default used to be 1,000\n// the 2026-07-28 revision\nconst y = '3 µs';\n",
    ).filter((l) => STALE_FIGURE.test(l));
    expect(hits).toEqual([" * measured on 2026-12-04", " * about 85 µs here", "// the default used to be 1,000"]);
  });

  test("carry no run dates and no measured figures: a bench measures them", () => {
    const files = readdirSync(join(ROOT, "src"), { recursive: true, encoding: "utf8" }).filter((f) =>
      f.endsWith(".ts"),
    );
    const hits = files.flatMap((f) =>
      commentLines(read(join("src", f)))
        .filter((line) => STALE_FIGURE.test(line))
        .map((line) => `src/${f}: ${line.trim()}`),
    );
    expect(hits).toEqual([]);
  });
});

describe("CHANGELOG.md", () => {
  test("is in the Keep a Changelog form and its latest release is the version seam reports", () => {
    const text = read("CHANGELOG.md");
    const pkg = JSON.parse(read("package.json")) as { version: string };
    const releases = [...text.matchAll(/^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d\d-\d\d)$/gm)].map((m) => m[1]);
    expect(releases.length).toBeGreaterThan(0);
    expect(releases[0]).toBe(pkg.version);
    expect(VERSION).toBe(pkg.version);
    expect(text).toMatch(/^## \[Unreleased\]$/m);
    expect(releases.at(-1)).toBe("0.1.0");
  });
});
