/**
 * Tool definitions as the ledger records them (the `tool_digests` of
 * `tools_list` rows, src/format/tool-defs.ts), for `seam check --no-drift`
 * and `--against`, `seam pin`, `seam diff` and `seam log`'s marker.
 *
 * Two views, both per server (the rows' `server` label):
 *   - each page, as it is read: a tool whose definition differs from the one
 *     the server last showed for it (in any session before, or earlier in
 *     the same session) is a redefinition;
 *   - whole listings: a page without `cursor` starts one; a page whose
 *     `cursor` is the `next_cursor` of an open listing of the same session
 *     continues it; a page without `next_cursor` ends it. A listing is
 *     complete when it began without a cursor and ended; one that any page
 *     of carried no `tool_digests` (an older writer, or past the bound) has
 *     no tools to compare.
 * A name a page lists twice is one entry whose definition is both digests,
 * joined by "," in their sorted order, so a server that does so is not seen
 * to flip between them.
 */
import { getField, type Json } from "../core/json.ts";
import { readToolDigests } from "../format/tool-defs.ts";
import type { Operation } from "./read-model.ts";

/** Where a definition was seen: the row's file, line and session. */
export interface SeenAt {
  digest: string;
  file: string;
  line: number;
  session: string | null;
}

/** A tool of a server whose definition changed: where it was last seen before, and where it changed. */
export interface Redefinition {
  server: string;
  tool: string;
  from: SeenAt;
  to: SeenAt;
}

/** One whole tools/list of a session: its pages joined. */
export interface ToolListing {
  server: string;
  session: string | null;
  file: string;
  /** Line of each page's row, in order. */
  lines: number[];
  /** Tool name → definition digest, and the line of the page that listed it; null when a page had no tool_digests. */
  tools: Map<string, { digest: string; line: number }> | null;
}

interface Open extends ToolListing {
  next: string;
}

/** What one tools_list operation showed: its redefinitions, and the listing it completed (if any). */
export interface PageResult {
  redefined: Redefinition[];
  listing: ToolListing | null;
}

/** The most listings left open (waiting for their next page) that are kept. */
const MAX_OPEN = 64;

const NOTHING: PageResult = { redefined: [], listing: null };

/** Feed it every operation in file order (across files, in the order given); it reads the tools_list ones. */
export class ToolDefs {
  private readonly last = new Map<string, SeenAt>();
  private readonly open = new Map<string, Open>();
  /** tools_list pages read, and those that listed tools without tool_digests (an older seam, or past the bound). */
  pages = 0;
  pagesWithout = 0;
  /** Servers with at least one page of tool_digests. */
  readonly servers = new Set<string>();

  add(op: Operation): PageResult {
    if (op.kind !== "tools_list") return NOTHING;
    this.pages++;
    const row = op.row;
    const server = op.server ?? "";
    const pairs = readToolDigests(getField(row, "tool_digests"));
    // A page that listed tools (an answer with a tools array has a tool_count) but names none by definition.
    if (pairs === null && getField(row, "tool_count") !== undefined) this.pagesWithout++;
    if (pairs !== null) this.servers.add(server);
    const page = pairs === null ? null : pageTools(pairs);
    const redefined: Redefinition[] = [];
    if (page !== null) {
      for (const [tool, digest] of page) {
        const key = `${server.length}:${server}${tool}`;
        const now: SeenAt = { digest, file: op.file, line: op.line, session: op.session };
        const before = this.last.get(key);
        if (before !== undefined && before.digest !== digest) redefined.push({ server, tool, from: before, to: now });
        this.last.set(key, now);
      }
    }
    return { redefined, listing: this.listing(op, server, page) };
  }

  /** Joins the page to its listing; returns the listing when this page ends it. */
  private listing(op: Operation, server: string, page: Map<string, string> | null): ToolListing | null {
    const row = op.row;
    const cursor = getField(row, "cursor");
    const next = getField(row, "next_cursor");
    const sessionKey = `${op.file}\u0000${op.session ?? ""}\u0000`;
    let l: ToolListing | undefined;
    if (cursor === undefined) l = { server, session: op.session, file: op.file, lines: [], tools: new Map() };
    else if (typeof cursor === "string") {
      const key = sessionKey + cursor;
      l = this.open.get(key);
      this.open.delete(key);
    }
    // A page that continues no listing this reader saw begin: nothing to join it to.
    if (l === undefined) return null;
    l.lines.push(op.line);
    if (page === null || op.status !== "ok") l.tools = null;
    else if (l.tools !== null) for (const [tool, digest] of page) l.tools.set(tool, { digest, line: op.line });
    if (typeof next === "string" && op.status === "ok") {
      // Listings a client never finished stay open; a file of many is not let grow this reader without end.
      if (this.open.size >= MAX_OPEN) this.open.delete(this.open.keys().next().value!);
      this.open.set(sessionKey + next, { ...l, next });
      return null;
    }
    return l;
  }
}

/** A page's pairs as one definition per name (a repeated name's digests joined by ","). */
function pageTools(pairs: [string, string][]): Map<string, string> {
  const m = new Map<string, string>();
  for (const [name, digest] of pairs) {
    const had = m.get(name);
    m.set(name, had === undefined ? digest : `${had},${digest}`);
  }
  return m;
}

/** The lock of `seam pin`: server → tool → definition digest. */
export type ToolLock = Map<string, Map<string, string>>;

/** The lock file's format name, its first key. */
export const LOCK_FORMAT = "seam-tools-lock/v1";

/**
 * A lock's text: one JSON object, `{"format": "seam-tools-lock/v1", "servers":
 * {server: {tool: digest}}}`, keys in code point order, two-space indents, a
 * final newline. The same lock gives the same bytes.
 */
export function lockText(lock: ToolLock): string {
  const q = (s: string) => JSON.stringify(s);
  const byCode = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  const servers = [...lock.keys()].sort(byCode).map((server) => {
    const tools = lock.get(server)!;
    const inner = [...tools.keys()].sort(byCode).map((t) => `      ${q(t)}: ${q(tools.get(t)!)}`);
    return inner.length === 0 ? `    ${q(server)}: {}` : `    ${q(server)}: {\n${inner.join(",\n")}\n    }`;
  });
  const body = servers.length === 0 ? "{}" : `{\n${servers.join(",\n")}\n  }`;
  return `{\n  "format": ${q(LOCK_FORMAT)},\n  "servers": ${body}\n}\n`;
}

/** A lock from its parsed text, or a message saying what is wrong with it. */
export function lockFrom(v: Json): ToolLock | string {
  if (getField(v, "format") !== LOCK_FORMAT) return `not a ${LOCK_FORMAT} file (its "format" differs)`;
  const servers = getField(v, "servers");
  if (!(servers instanceof Map)) return `"servers" is not an object`;
  const lock: ToolLock = new Map();
  for (const [server, tools] of servers) {
    if (!(tools instanceof Map)) return `server ${JSON.stringify(server)}: not an object of tools`;
    const m = new Map<string, string>();
    for (const [tool, digest] of tools) {
      if (typeof digest !== "string")
        return `server ${JSON.stringify(server)}, tool ${JSON.stringify(tool)}: the digest is not a string`;
      m.set(tool, digest);
    }
    lock.set(server, m);
  }
  return lock;
}

/** What differs between a lock and a listing, each its kind: tool_added, tool_removed, tool_changed. */
export interface LockDifference {
  kind: "tool_added" | "tool_removed" | "tool_changed";
  server: string;
  tool: string;
  /** The lock's digest (removed, changed) and the listing's (added, changed). */
  locked: string | null;
  listed: string | null;
  /** file:line of the page that listed it, or of the listing's last page for a removed tool. */
  at: string;
  session: string | null;
}

/** A complete listing against the lock (a server the lock does not name has no tools there). */
export function againstLock(lock: ToolLock, l: ToolListing): LockDifference[] {
  if (l.tools === null) return [];
  const locked = lock.get(l.server) ?? new Map<string, string>();
  const out: LockDifference[] = [];
  const base = { server: l.server, session: l.session };
  const byCode = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  for (const tool of [...new Set([...locked.keys(), ...l.tools.keys()])].sort(byCode)) {
    const want = locked.get(tool);
    const got = l.tools.get(tool);
    if (got === undefined)
      out.push({
        kind: "tool_removed",
        tool,
        locked: want!,
        listed: null,
        at: `${l.file}:${l.lines[l.lines.length - 1]}`,
        ...base,
      });
    else if (want === undefined)
      out.push({ kind: "tool_added", tool, locked: null, listed: got.digest, at: `${l.file}:${got.line}`, ...base });
    else if (want !== got.digest)
      out.push({ kind: "tool_changed", tool, locked: want, listed: got.digest, at: `${l.file}:${got.line}`, ...base });
  }
  return out;
}

/**
 * Marks each tool_call that is the first call of its tool on its server
 * after a tools/list showed the tool's definition changed (`redefined`).
 * Feed it every operation of a file, in order, before any filter.
 */
export class CallMarks {
  private readonly defs = new ToolDefs();
  /** Tools (by server) redefined and not called since. */
  private readonly pending = new Set<string>();

  see(op: Operation): void {
    if (op.kind === "tools_list") {
      for (const r of this.defs.add(op).redefined) this.pending.add(`${r.server.length}:${r.server}${r.tool}`);
      return;
    }
    if (op.kind !== "tool_call" || this.pending.size === 0 || op.name === null) return;
    const server = op.server ?? "";
    if (this.pending.delete(`${server.length}:${server}${op.name}`)) op.redefined = true;
  }
}
