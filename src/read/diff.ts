/**
 * `seam diff A B`: what changed between two ledgers, or two sessions of one.
 * Per side: the tools the server listed (the last tools/list of each session:
 * names and tools_digest), and per tool the calls, statuses and p50. Between
 * them: tools added and removed, tools whose definition changed (the digests
 * of tools_list rows' tool_digests: each side's last complete listing of
 * the tool), a changed tools_digest with the same names (descriptions or
 * schemas changed; for ledgers without tool_digests), tools whose status flipped (their most
 * frequent status differs, or errors appeared or went away), and p50
 * slowdowns of at least `factor` and `minMs`.
 */
import type { Operation } from "./read-model.ts";
import { percentile } from "./stats.ts";
import { ToolDefs } from "./tool-defs.ts";

export interface Side {
  label: string;
  /** Tool names listed (the union of each session's last tools/list), sorted; null when no tools/list was seen. */
  tools: string[] | null;
  /** The tools_digest values of those lists, in order of first appearance. */
  digests: string[];
  perTool: Map<string, { calls: number; statuses: Map<string, number>; ms: number[] }>;
  /** Tool name → definition digest, from the side's complete listings with tool_digests (the last one wins). */
  definitions: Map<string, string>;
}

/** Collects one side from its operations. */
export class SideCollector {
  private readonly lists = new Map<string, { names: string[]; digest: string | null }>();
  private readonly perTool: Side["perTool"] = new Map();
  private readonly defs = new ToolDefs();
  private readonly definitions = new Map<string, string>();

  constructor(readonly label: string) {}

  add(op: Operation): void {
    if (op.kind === "tools_list") {
      const l = this.defs.add(op).listing;
      if (l !== null && l.tools !== null) for (const [t, d] of l.tools) this.definitions.set(t, d.digest);
      const tools = rowField(op, "tools");
      const digest = rowField(op, "tools_digest");
      // A paged list (next_cursor) adds to what the session listed before.
      const key = op.session ?? "";
      const names = Array.isArray(tools) ? tools.filter((t): t is string => typeof t === "string") : [];
      const prev = this.lists.get(key);
      const paged = prev !== undefined && typeof rowField(op, "cursor") === "string";
      this.lists.set(key, {
        names: paged ? [...prev!.names, ...names] : names,
        digest: typeof digest === "string" ? digest : null,
      });
    }
    if (op.kind !== "tool_call" || op.name === null) return;
    let t = this.perTool.get(op.name);
    if (t === undefined) this.perTool.set(op.name, (t = { calls: 0, statuses: new Map(), ms: [] }));
    t.calls++;
    const st = op.status ?? "(none)";
    t.statuses.set(st, (t.statuses.get(st) ?? 0) + 1);
    if (op.ms !== null) t.ms.push(op.ms);
  }

  side(): Side {
    const names = new Set<string>();
    const digests: string[] = [];
    for (const l of this.lists.values()) {
      for (const n of l.names) names.add(n);
      if (l.digest !== null && !digests.includes(l.digest)) digests.push(l.digest);
    }
    return {
      label: this.label,
      tools: this.lists.size === 0 ? null : [...names].sort(),
      digests,
      perTool: this.perTool,
      definitions: this.definitions,
    };
  }
}

export interface DiffResult {
  added: string[];
  removed: string[];
  /** Same names, other tools_digest: descriptions or schemas changed. */
  digestChanged: boolean;
  /** Tools listed on both sides whose definition digests differ, by name. */
  changed: { tool: string; a: string; b: string }[];
  flips: { tool: string; a: string; b: string }[];
  slowdowns: { tool: string; a_p50_ms: number; b_p50_ms: number; factor: number }[];
  /** Tools called on one side only. */
  calledOnlyA: string[];
  calledOnlyB: string[];
}

/** A slowdown is at least `factor` times and at least `minMs` slower (sub-millisecond jitter is no slowdown). */
export function diffSides(a: Side, b: Side, factor = 2, minMs = 1): DiffResult {
  const ta = new Set(a.tools ?? []);
  const tb = new Set(b.tools ?? []);
  const bothListed = a.tools !== null && b.tools !== null;
  const added = bothListed ? [...tb].filter((t) => !ta.has(t)) : [];
  const removed = bothListed ? [...ta].filter((t) => !tb.has(t)) : [];
  const digestChanged =
    bothListed && added.length === 0 && removed.length === 0 && a.digests.join() !== b.digests.join();
  const changed: DiffResult["changed"] = [];
  for (const [tool, da] of a.definitions) {
    const db = b.definitions.get(tool);
    if (db !== undefined && db !== da) changed.push({ tool, a: da, b: db });
  }
  changed.sort((p, q) => (p.tool < q.tool ? -1 : p.tool > q.tool ? 1 : 0));
  const flips: DiffResult["flips"] = [];
  const slowdowns: DiffResult["slowdowns"] = [];
  for (const [tool, x] of a.perTool) {
    const y = b.perTool.get(tool);
    if (y === undefined) continue;
    if (summary(x.statuses) !== summary(y.statuses)) flips.push({ tool, a: counts(x.statuses), b: counts(y.statuses) });
    const pa = percentile(Float64Array.from(x.ms).sort(), 50);
    const pb = percentile(Float64Array.from(y.ms).sort(), 50);
    if (pa !== null && pb !== null && pa > 0 && pb / pa >= factor && pb - pa >= minMs)
      slowdowns.push({ tool, a_p50_ms: pa, b_p50_ms: pb, factor: pb / pa });
  }
  const calledOnlyA = [...a.perTool.keys()].filter((t) => !b.perTool.has(t)).sort();
  const calledOnlyB = [...b.perTool.keys()].filter((t) => !a.perTool.has(t)).sort();
  flips.sort((p, q) => (p.tool < q.tool ? -1 : 1));
  slowdowns.sort((p, q) => q.factor - p.factor);
  return { added, removed, digestChanged, changed, flips, slowdowns, calledOnlyA, calledOnlyB };
}

/** What a flip compares: the most frequent status, and whether errors are among them ("ok", "ok with errors", "error"). */
function summary(statuses: Map<string, number>): string {
  let top = "";
  let topN = -1;
  for (const [s, n] of statuses) if (n > topN || (n === topN && s < top)) [top, topN] = [s, n];
  return top !== "error" && (statuses.get("error") ?? 0) > 0 ? `${top} with errors` : top;
}

/** `ok 9, error 1`: a tool's statuses with their counts. */
export function counts(statuses: Map<string, number>): string {
  return [...statuses].map(([s, n]) => `${s} ${n}`).join(", ");
}

export function hasDifferences(d: DiffResult): boolean {
  return (
    d.added.length + d.removed.length + d.changed.length + d.flips.length + d.slowdowns.length > 0 || d.digestChanged
  );
}

function rowField(op: Operation, k: string): unknown {
  const r = op.row;
  if (r instanceof Map) return r.get(k);
  if (r !== null && typeof r === "object" && !Array.isArray(r)) return (r as Record<string, unknown>)[k];
  return undefined;
}
