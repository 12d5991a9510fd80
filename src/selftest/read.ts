/**
 * The `log_marks_breaks` arms of `seam selftest`: `seam log` (the running
 * build, as a separate process) must mark the exact line of an edited row
 * and every operation from the row before it on as not vouched for (GREEN),
 * and the same check must catch a log that reads rows without chain-checking
 * them (RED, the `log-unverified` fault, which the log announces on stderr).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { getField } from "../core/json.ts";
import { exec } from "../runtime/exec.ts";
import type { Arm } from "./arm.ts";
import { FAULT_ENV } from "./faults.ts";
import { CHILD_DEADLINE_MS, jsonLines } from "./fixture-runs.ts";

const dec = new TextDecoder();

/** What the log printed, judged: null when it marks the edit as it must, else why not. */
function judge(stdout: Uint8Array, code: number | null, line: number): string | null {
  const { values: objs, firstBad } = jsonLines(stdout);
  if (firstBad !== null) return `a line of --json output is not JSON: ${JSON.stringify(firstBad.slice(0, 80))}`;
  const brk = objs.find((o) => getField(o, "type") === "break");
  if (brk === undefined) return "no break marker";
  if (getField(brk, "line") !== line) return `the marker is at line ${String(getField(brk, "line"))}, not ${line}`;
  const ops = objs.filter((o) => getField(o, "type") === "operation");
  for (const op of ops) {
    const lines = getField(op, "lines");
    const last = Array.isArray(lines) ? (lines.at(-1) as number) : Number.NaN;
    const vouched = getField(op, "vouched");
    // The row before the broken link may be the one changed (its own chain recomputed), so it is not vouched either.
    const want = last < line - 1;
    if (vouched !== want) return `the operation at line ${last} is ${vouched ? "" : "not "}vouched for`;
  }
  if (code !== 1) return `exit ${String(code)}, not 1`;
  return null;
}

export async function readArms(self: string[], dir: string, ledger: Uint8Array): Promise<Arm[]> {
  const c = "log_marks_breaks";
  const arms: Arm[] = [];
  const lines = dec.decode(ledger).split("\n");
  if (lines.at(-1) === "") lines.pop();
  // The first tool_call row gets another tool name; its chain is left as it was.
  const i = lines.findIndex((l) => l.includes('"evt": "tool_call"') && l.includes('"tool": "'));
  if (i < 0) {
    arms.push({ case: c, arm: "GREEN", pass: false, detail: "the GREEN ledger has no tool_call row to edit" });
    return arms;
  }
  const edited = [...lines];
  edited[i] = edited[i]!.replace('"tool": "', '"tool": "x');
  const path = join(dir, "log-edited.jsonl");
  writeFileSync(path, edited.map((l) => `${l}\n`).join(""));
  const line = i + 1;

  const green = await exec([...self, "log", "--json", path], { timeoutMs: CHILD_DEADLINE_MS });
  const why = judge(green.stdout, green.code, line);
  arms.push({
    case: c,
    arm: "GREEN",
    pass: why === null,
    detail: why ?? `seam log marks line ${line} (the edited row) and vouches for nothing from line ${line - 1} on`,
  });

  const red = await exec([...self, "log", "--json", path], {
    timeoutMs: CHILD_DEADLINE_MS,
    env: { ...process.env, [FAULT_ENV]: "log-unverified" },
  });
  if (!red.stderr.includes("selftest fault log-unverified"))
    arms.push({
      case: c,
      arm: "RED on a log that skips verification",
      pass: false,
      detail: "no-op guard: the fault was not announced",
    });
  else {
    const caught = judge(red.stdout, red.code, line);
    arms.push({
      case: c,
      arm: "RED on a log that skips verification",
      pass: caught !== null,
      detail: caught === null ? "the unverified log was not caught" : `caught: ${caught}`,
    });
  }
  return arms;
}
