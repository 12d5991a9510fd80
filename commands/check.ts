import { writeFileSync } from "node:fs";
import { defineCommand } from "citty";
import { parse as parseYaml } from "yaml";
import { EXIT, UsageError } from "../src/base/exit.ts";
import { describeIoError } from "../src/base/io-error.ts";
import { createLog } from "../src/base/log.ts";
import { type Json, parseJson } from "../src/core/json.ts";
import { JsonParseError } from "../src/core/json-error.ts";
import {
  Checker,
  type FileVerdict,
  junitXml,
  mergeRules,
  parseExpect,
  type Rules,
  ruleLine,
  rulesFromObject,
} from "../src/read/check.ts";
import { jsonText } from "../src/read/format.ts";
import { readLedgers } from "../src/read/stream.ts";
import { lockFrom, type ToolLock } from "../src/read/tool-defs.ts";
import { isWriterAlive } from "../src/runtime/alive.ts";
import { runtime } from "../src/runtime/index.ts";
import { readSmallFile } from "../src/runtime/small-file.ts";
import { exitCodeFor, worstExit } from "../src/verify/verify-report.ts";
import { rejectUnknownFlags, repeated } from "./_args.ts";
import { filterArgs, filtersFrom, givenFilters, keysFrom, requireReadable } from "./_read.ts";

const args = {
  path: { type: "positional", description: "ledger file(s); '-' reads stdin", required: true, valueHint: "PATH…" },
  "expect-tool": {
    type: "string",
    description: "NAME called at least once, or NAME=N exactly N times (repeatable)",
    valueHint: "NAME[=N]",
  },
  "forbid-tool": { type: "string", description: "no call of a tool matching GLOB (repeatable)", valueHint: "GLOB" },
  "max-errors": { type: "string", description: "at most N operations with status error", valueHint: "N" },
  "max-unanswered": { type: "string", description: "at most N unanswered operations", valueHint: "N" },
  "max-ms": { type: "string", description: "no single call longer than MS", valueHint: "MS" },
  "require-complete": { type: "boolean", description: "every session has its session_end" },
  "allow-empty": {
    type: "boolean",
    description: "pass when the filters select no operation (without it, that fails: a typo selects nothing)",
  },
  key: {
    type: "string",
    description: "every row under a valid checkpoint signed by this verifier key",
    valueHint: "VKEY",
  },
  drift: {
    type: "boolean",
    description:
      "let tool definitions change (the default); --no-drift fails when a tool of a server changes definition (title, description, schemas, annotations) between or within sessions (finding kind tool_drift)",
  },
  against: {
    type: "string",
    description:
      "every complete tools/list matches this lock file (written by seam pin); findings tool_added, tool_removed, tool_changed",
    valueHint: "LOCK",
  },
  rules: {
    type: "string",
    description: "rules from a JSON or YAML file (the flags' names as keys)",
    valueHint: "FILE",
  },
  junit: {
    type: "string",
    description: "also write a JUnit XML report here (one test case per rule)",
    valueHint: "FILE",
  },
  json: { type: "boolean", description: "print the results as one JSON object" },
  ...filterArgs,
} as const;

export default defineCommand({
  meta: {
    name: "check",
    description:
      "a CI gate: exit 0 only when the ledger verifies and every rule holds (1 a rule fails or broken, 3 inconclusive)",
  },
  args,
  async run({ args: a, rawArgs }) {
    rejectUnknownFlags(rawArgs, args, "check");
    const t0 = performance.now();
    const paths = a._.map(String);
    const filters = filtersFrom(rawArgs, a);
    const flagRules: Rules = {};
    const expect = repeated(rawArgs, "expect-tool").map((s) => {
      const e = parseExpect(s);
      if (e === null) throw new UsageError(`--expect-tool takes NAME or NAME=N, not ${JSON.stringify(s)}`);
      return e;
    });
    if (expect.length > 0) flagRules.expectTool = expect;
    const forbid = repeated(rawArgs, "forbid-tool");
    if (forbid.some((g) => g === "")) throw new UsageError("--forbid-tool must not be empty");
    if (forbid.length > 0) flagRules.forbidTool = forbid;
    for (const [flag, field, integer] of [
      ["max-errors", "maxErrors", true],
      ["max-unanswered", "maxUnanswered", true],
      ["max-ms", "maxMs", false],
    ] as const) {
      const v = a[flag];
      if (v === undefined) continue;
      const n = Number(v);
      if (v.trim() === "" || !Number.isFinite(n) || n < 0 || (integer && !Number.isInteger(n)))
        throw new UsageError(
          `--${flag} takes a ${integer ? "whole " : ""}number of at least 0, not ${JSON.stringify(v)}`,
        );
      flagRules[field] = n;
    }
    if (a["require-complete"]) flagRules.requireComplete = true;
    if (a.key !== undefined) flagRules.key = a.key;
    if (a.drift === false) flagRules.noDrift = true;
    if (a.against !== undefined) flagRules.against = a.against;
    const rules = a.rules === undefined ? flagRules : mergeRules(readRules(a.rules), flagRules);
    const keys = keysFrom(rules.key, paths);
    if (a.junit === "") throw new UsageError("--junit must not be empty");

    if (rules.against === "") throw new UsageError("--against must not be empty");
    const lock = rules.against === undefined ? undefined : readLock(rules.against);
    requireReadable(paths);
    const checker = new Checker(rules, lock);
    const files: FileVerdict[] = [];
    for await (const e of readLedgers(paths, { filters, keys, isWriterAlive, verifier: "auto" })) {
      if (e.type === "op") checker.add(e.op);
      else if (e.type === "end") files.push({ file: e.file, report: e.report, seal: e.seal });
    }
    const given = givenFilters(rawArgs, a);
    const results = checker.results(
      files,
      given.length === 0 ? undefined : { given: given.join(" "), allowEmpty: a["allow-empty"] === true },
    );
    const failed = results.filter((r) => !r.ok);
    if (a.junit !== undefined) {
      try {
        writeFileSync(a.junit, junitXml(results, (performance.now() - t0) / 1000));
      } catch (e) {
        createLog().error(`cannot write ${a.junit}: ${describeIoError(e)}`);
        return EXIT.FAIL;
      }
    }
    const text = a.json
      ? `${jsonText({ ok: failed.length === 0, rules: results.length, failed: failed.length, results: results as unknown as Json[] })}\n`
      : `${results.map(ruleLine).join("\n")}\n${failed.length === 0 ? "ok" : "failed"}: ${results.length - failed.length} of ${results.length} rules hold\n`;
    await runtime.stdout().write(new TextEncoder().encode(text));
    // A rule that fails is a failure; otherwise the ledger's own verdict (3 when it is inconclusive).
    const verdicts = worstExit(files.map((f) => exitCodeFor(f.report)));
    const ruleFails = results.some((r) => !r.ok && r.kind !== "verify");
    return ruleFails ? EXIT.FAIL : verdicts;
  },
});

function readLock(path: string): ToolLock {
  let v: Json;
  try {
    v = parseJson(readSmallFile(path).toString("utf8"), { rejectDuplicateKeys: true });
  } catch (e) {
    const why = e instanceof JsonParseError ? `not JSON (${e.message})` : describeIoError(e);
    throw new UsageError(`cannot read lock file ${path}: ${why}`, "write one with: seam pin LEDGER > tools.lock");
  }
  const lock = lockFrom(v);
  if (typeof lock === "string")
    throw new UsageError(`lock file ${path}: ${lock}`, "write one with: seam pin LEDGER > tools.lock");
  return lock;
}

function readRules(path: string): Rules {
  let text: string;
  try {
    text = readSmallFile(path).toString("utf8");
  } catch (e) {
    throw new UsageError(`cannot read rules file ${path}: ${describeIoError(e)}`);
  }
  let v: unknown;
  try {
    // YAML 1.2 reads JSON as well.
    v = parseYaml(text, { maxAliasCount: 100 });
  } catch (e) {
    throw new UsageError(
      `rules file ${path} is neither JSON nor YAML: ${e instanceof Error ? e.message.split("\n")[0] : String(e)}`,
    );
  }
  const r = rulesFromObject(v);
  if (typeof r === "string") throw new UsageError(`rules file ${path}: ${r}`);
  return r;
}
