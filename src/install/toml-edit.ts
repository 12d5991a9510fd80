/**
 * Codex's config.toml: read with smol-toml, edited as text. An entry is
 * edited only where it is written as its own table, `[mcp_servers.NAME]`
 * with `command = "…"` (and `args = […]`) as keys of that table; other
 * layouts (an inline table, dotted keys from another table) are reported and
 * left alone. The edits mirror json-edit.ts: the command's original string
 * text moves verbatim after `--`, seam's args go in front of the first
 * original one, and a missing `args` becomes a line just above `command`.
 * Every other byte of the file, comments included, stays as it was.
 */
import { parse, TomlError } from "smol-toml";
import type { Container } from "./clients.ts";
import {
  COMMAND_ARGS,
  isPlainObject,
  type SeamCommand,
  valueAt,
  type WrapOptions,
  type Wrapped,
  wrapPrefix,
} from "./entry.ts";
import { type ConfigFormat, type Edit, EditError, type Listed, type Planner, type ServerRef } from "./format.ts";

function list(text: string, containers: Container[]): Listed {
  let doc: Record<string, unknown>;
  try {
    doc = parse(text) as Record<string, unknown>;
  } catch (e) {
    if (e instanceof TomlError)
      return { ok: false, error: `line ${e.line}, column ${e.column}: ${firstLine(e.message)}` };
    return { ok: false, error: (e as Error).message };
  }
  const servers: ServerRef[] = [];
  for (const c of containers) {
    const node = valueAt(doc, c.path);
    if (!isPlainObject(node)) continue;
    for (const [name, value] of Object.entries(node))
      servers.push({ where: c.label, path: [...c.path, name], name, value, shape: c.shape ?? COMMAND_ARGS });
  }
  return { ok: true, servers, value: doc };
}

function firstLine(s: string): string {
  return s
    .split("\n")[0]!
    .replace(/\.$/, "")
    .replace(/^./, (c) => c.toLowerCase());
}

function value(text: string): unknown {
  try {
    return parse(text);
  } catch {
    return undefined;
  }
}

interface Span {
  start: number;
  end: number;
}
interface KeyValue {
  lineStart: number;
  value: Span;
  /** For an array: its elements. */
  elems?: Span[];
  /** Offset just after the end of the value's line (its line break included). */
  lineEnd: number;
}

/** A tiny scanner over TOML text: enough to find one table's keys and the spans of their values. */
class Scanner {
  constructor(
    readonly t: string,
    public i = 0,
  ) {}
  skipInline(): void {
    while (this.t[this.i] === " " || this.t[this.i] === "\t") this.i++;
  }
  /** Whitespace, newlines and comments (inside an array). */
  skipAll(): void {
    for (;;) {
      const c = this.t[this.i];
      if (c === " " || c === "\t" || c === "\r" || c === "\n") this.i++;
      else if (c === "#") while (this.i < this.t.length && this.t[this.i] !== "\n") this.i++;
      else return;
    }
  }
  toLineEnd(): number {
    while (this.i < this.t.length && this.t[this.i] !== "\n") this.i++;
    if (this.i < this.t.length) this.i++;
    return this.i;
  }
  /** A key (bare, quoted, dotted) up to `=`; null when the line is no key/value pair. */
  key(): string[] | null {
    const parts: string[] = [];
    for (;;) {
      this.skipInline();
      const c = this.t[this.i];
      if (c === '"' || c === "'") {
        const s = this.string();
        parts.push(parse(`k = ${this.t.slice(s.start, s.end)}`).k as string);
      } else {
        const m = /^[A-Za-z0-9_-]+/.exec(this.t.slice(this.i, this.i + 256));
        if (!m) return null;
        parts.push(m[0]);
        this.i += m[0].length;
      }
      this.skipInline();
      if (this.t[this.i] === ".") this.i++;
      else if (this.t[this.i] === "=") {
        this.i++;
        return parts;
      } else return null;
    }
  }
  string(): Span {
    const start = this.i;
    const q = this.t[this.i]!;
    const triple = this.t.startsWith(q.repeat(3), this.i);
    if (triple) {
      const close = this.t.indexOf(q.repeat(3), this.i + 3);
      if (close < 0) throw new EditError("unterminated string");
      this.i = close + 3;
      while (this.t[this.i] === q) this.i++;
      return { start, end: this.i };
    }
    this.i++;
    while (this.i < this.t.length && this.t[this.i] !== q && this.t[this.i] !== "\n") {
      if (q === '"' && this.t[this.i] === "\\") this.i++;
      this.i++;
    }
    if (this.t[this.i] !== q) throw new EditError("unterminated string");
    this.i++;
    return { start, end: this.i };
  }
  value(): { span: Span; elems?: Span[] } {
    const start = this.i;
    const c = this.t[this.i];
    if (c === '"' || c === "'") return { span: this.string() };
    if (c === "[" || c === "{") {
      const close = c === "[" ? "]" : "}";
      this.i++;
      const elems: Span[] = [];
      for (;;) {
        this.skipAll();
        if (this.t[this.i] === close) {
          this.i++;
          return { span: { start, end: this.i }, elems };
        }
        if (c === "{") {
          if (!this.key()) throw new EditError("unreadable inline table");
          this.skipInline();
        }
        const v = this.value();
        elems.push(v.span);
        this.skipAll();
        if (this.t[this.i] === ",") this.i++;
        else if (this.t[this.i] !== close) throw new EditError("unreadable array");
      }
    }
    while (this.i < this.t.length && !/[,\]}\s#]/.test(this.t[this.i]!)) this.i++;
    if (this.i === start) throw new EditError("unreadable value");
    return { span: { start, end: this.i } };
  }
}

/** The `command` and `args` of the table `[mcp_servers.NAME]`, with their spans. */
function locate(text: string, ref: ServerRef): { command: KeyValue; args?: KeyValue } {
  const s = new Scanner(text);
  let inTable = false;
  let found = false;
  const kv: Record<string, KeyValue> = {};
  while (s.i < text.length) {
    const lineStart = s.i;
    s.skipInline();
    const c = text[s.i];
    if (c === "\n" || c === "\r" || c === "#" || c === undefined) {
      s.toLineEnd();
      continue;
    }
    if (c === "[") {
      if (inTable) break;
      const m = /^\[([^\]\n]*)\][ \t]*(#[^\n]*)?(\r?\n|$)/.exec(text.slice(s.i));
      if (m && !text.startsWith("[[", s.i)) {
        const header = new Scanner(`${m[1]} =`);
        const path = header.key();
        if (path && path.length === ref.path.length && path.every((p, i) => p === ref.path[i])) inTable = found = true;
      }
      s.toLineEnd();
      continue;
    }
    const key = s.key();
    if (!key) throw new EditError("a line seam cannot read");
    s.skipInline();
    const v = s.value();
    s.skipInline();
    const lineEnd = s.toLineEnd();
    if (inTable && key.length === 1 && (key[0] === "command" || key[0] === "args")) {
      if (kv[key[0]]) throw new EditError(`duplicate ${key[0]}`);
      kv[key[0]] = { lineStart, value: v.span, elems: v.elems, lineEnd };
    }
  }
  if (!found) throw new EditError(`not written as its own [${ref.path.join(".")}] table; seam edits only that layout`);
  const command = kv.command;
  if (!command || !/^["']/.test(text.slice(command.value.start)) || /^("""|''')/.test(text.slice(command.value.start)))
    throw new EditError("its command is not a one-line string in its table");
  if (kv.args && (text[kv.args.value.start] !== "[" || !kv.args.elems))
    throw new EditError("its args is not an array in its table");
  return { command, args: kv.args };
}

const slice = (t: string, s: Span) => t.slice(s.start, s.end);

function wrap(text: string, ref: ServerRef, seam: SeamCommand, o: WrapOptions): Edit[] {
  const { command, args } = locate(text, ref);
  const front = [...wrapPrefix(seam, ref.name, o).map((x) => JSON.stringify(x)), slice(text, command.value)];
  const edits: Edit[] = [
    {
      offset: command.value.start,
      length: command.value.end - command.value.start,
      content: JSON.stringify(seam.argv[0]),
    },
  ];
  if (args) {
    const elems = args.elems!;
    if (elems.length === 0) edits.push({ offset: args.value.start + 1, length: 0, content: front.join(", ") });
    else {
      const lead = text.slice(args.value.start + 1, elems[0]!.start).match(/\r?\n[ \t]*$/);
      const sep = lead ? `,${lead[0]}` : ", ";
      edits.push({ offset: elems[0]!.start, length: 0, content: front.join(sep) + sep });
    }
  } else {
    const line = text.slice(command.lineStart, command.lineEnd);
    const indent = line.match(/^[ \t]*/)![0];
    const eol = line.endsWith("\r\n") ? "\r\n" : "\n";
    edits.push({ offset: command.lineStart, length: 0, content: `${indent}args = [${front.join(", ")}]${eol}` });
  }
  return edits;
}

function unwrap(text: string, ref: ServerRef, w: Wrapped): Edit[] {
  const { command, args } = locate(text, ref);
  const elems = args?.elems ?? [];
  if (!args || elems.length <= w.commandAt) throw new EditError("the entry no longer has seam's shape");
  const original = elems[w.commandAt]!;
  const edits: Edit[] = [
    { offset: command.value.start, length: command.value.end - command.value.start, content: slice(text, original) },
  ];
  const onlySeams = elems.length === w.commandAt + 1;
  const lineJustAbove =
    args.lineEnd === command.lineStart && /^[ \t]*\r?\n$/.test(text.slice(args.value.end, args.lineEnd));
  if (onlySeams && lineJustAbove)
    edits.push({ offset: args.lineStart, length: args.lineEnd - args.lineStart, content: "" });
  else {
    const from = elems[0]!.start;
    const to = onlySeams ? original.end : elems[w.commandAt + 1]!.start;
    edits.push({ offset: from, length: to - from, content: "" });
  }
  return edits;
}

function plan(text: string): Planner {
  return { wrap: (ref, seam, o) => wrap(text, ref, seam, o), unwrap: (ref, w) => unwrap(text, ref, w) };
}

export const tomlFormat: ConfigFormat = { list, plan, value };
