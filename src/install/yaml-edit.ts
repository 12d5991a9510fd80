/**
 * Wrapping and unwrapping one entry of a YAML file (Continue's config.yaml,
 * Goose's config.yaml) as text edits at the source offsets of the `yaml`
 * package's document tree: the rest of the file (comments, quoting, key
 * order, indentation, line endings) is never re-serialised. The edits
 * mirror json-edit.ts so that unwrapping is their exact inverse:
 *   - the command's scalar is replaced by seam's (a double-quoted scalar);
 *     its original text moves verbatim into args, after `--`;
 *   - seam's args go in front of the first original arg: in a block list,
 *     each as its own `- ` item at the list's indentation; in a flow list,
 *     joined by the list's own separator;
 *   - an entry without args gets a flow list `args: [ … ]` just after its
 *     command, on the next line at the command key's column (after `, ` in
 *     a flow mapping); unwrapping removes a flow args that sits just after
 *     the command and holds nothing but seam's part. After, not before as
 *     in JSON: Goose writes its keys in order, `args: []` just before
 *     `cmd`, and that list must come back as it was. (So an entry that had
 *     `args: []` written just after its command comes back without it.)
 * Only plain or quoted one-line scalars are moved; an entry written any
 * other way (block scalars, anchors, tags, comments inside the list) is
 * reported and left alone, and every edit is checked by install.ts against
 * the parsed document before it is written.
 */
import { type Document, isMap, isScalar, isSeq, type Pair, parseDocument, type Node as YamlNode } from "yaml";
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
import {
  type ConfigFormat,
  type Edit,
  EditError,
  type Listed,
  lazyPlanner,
  type Planner,
  type ServerRef,
} from "./format.ts";

/** Aliases expand: a document that expands into a great many nodes is refused rather than built. */
const PARSE = { uniqueKeys: true, maxAliasCount: 100 } as const;

function parse(text: string): { doc: Document.Parsed; value: unknown } | { error: string } {
  const doc = parseDocument(text, PARSE);
  const e = doc.errors[0];
  if (e) {
    const at = e.linePos?.[0];
    const where = at ? `line ${at.line}, column ${at.col}: ` : "";
    return { error: `${where}${firstLine(e.message)}` };
  }
  try {
    return { doc, value: doc.toJS({ maxAliasCount: PARSE.maxAliasCount }) };
  } catch (err) {
    return { error: firstLine((err as Error).message) };
  }
}

function firstLine(s: string): string {
  return s
    .split("\n")[0]!
    .replace(/ at line \d+, column \d+:?$/, "")
    .replace(/\.$/, "")
    .replace(/^./, (c) => c.toLowerCase());
}

function list(text: string, containers: Container[]): Listed {
  if (text.trim() === "") return { ok: true, servers: [], value: undefined };
  const p = parse(text);
  if ("error" in p) return { ok: false, error: p.error };
  const doc = p.value;
  if (doc === null || doc === undefined) return { ok: true, servers: [], value: doc };
  if (!isPlainObject(doc)) return { ok: false, error: "line 1, column 1: the file is not a YAML mapping" };
  const servers: ServerRef[] = [];
  for (const c of containers) {
    const shape = c.shape ?? COMMAND_ARGS;
    const node = valueAt(doc, c.path);
    if (c.list) {
      if (!Array.isArray(node)) continue;
      node.forEach((v, i) => {
        const name = isPlainObject(v) && typeof v.name === "string" ? v.name : `#${i + 1}`;
        servers.push({ where: c.label, path: [...c.path, String(i)], name, value: v, shape });
      });
    } else if (isPlainObject(node)) {
      for (const [name, v] of Object.entries(node))
        servers.push({ where: c.label, path: [...c.path, name], name, value: v, shape });
    }
  }
  return { ok: true, servers, value: doc };
}

function value(text: string): unknown {
  const p = parse(text);
  return "error" in p ? undefined : p.value;
}

/** The node at a key path (a list's items by index). */
function nodeAt(doc: Document.Parsed, path: string[]): unknown {
  let n: unknown = doc.contents;
  for (const k of path) {
    if (isMap(n)) n = n.items.find((p) => isScalar(p.key) && String(p.key.value) === k)?.value;
    else if (isSeq(n) && /^\d+$/.test(k)) n = n.items[Number(k)];
    else return undefined;
  }
  return n;
}

const range = (n: unknown): [number, number, number] => {
  const r = (n as YamlNode).range;
  if (!r) throw new EditError("the entry has no position in the file");
  return r;
};

/** A scalar seam may move: plain or quoted, on one line, with no anchor or tag (a comment after it stays where it is). */
function movable(text: string, n: unknown, what: string): [number, number] {
  if (!isScalar(n) || !["PLAIN", "QUOTE_DOUBLE", "QUOTE_SINGLE"].includes(String(n.type)) || n.anchor || n.tag)
    throw new EditError(`its ${what} is not a one-line string`);
  const [a, b] = range(n);
  if (/[\r\n]/.test(text.slice(a, b))) throw new EditError(`its ${what} is not a one-line string`);
  return [a, b];
}

interface Entry {
  flow: boolean;
  command: Pair;
  args?: Pair;
}

function entryNodes(doc: Document.Parsed, ref: ServerRef): Entry {
  const m = nodeAt(doc, ref.path);
  if (!isMap(m)) throw new EditError("the entry is gone");
  const pair = (k: string | undefined) =>
    k === undefined ? undefined : m.items.find((p) => isScalar(p.key) && String(p.key.value) === k);
  const command = pair(ref.shape.command);
  const args = pair(ref.shape.args);
  if (!command) throw new EditError(`the entry has no ${ref.shape.command}`);
  if (args && (!isSeq(args.value) || args.value.anchor || args.value.tag))
    throw new EditError(`its ${ref.shape.args} is not a plain list`);
  return { flow: Boolean(m.flow), command, args };
}

/** Where the `- ` of a block list's item starts, and the indentation before it (spaces only). */
function dash(text: string, item: unknown): { at: number; indent: string } {
  const start = range(item)[0];
  let i = start - 1;
  while (i >= 0 && text[i] === " ") i--;
  if (text[i] !== "-") throw new EditError("its args list is not written one `- item` a line");
  const lineStart = text.lastIndexOf("\n", i - 1) + 1;
  const indent = text.slice(lineStart, i);
  if (!/^ *$/.test(indent)) throw new EditError("its args list is not written one `- item` a line");
  return { at: i, indent };
}

function eol(text: string): string {
  return /\r\n/.test(text) ? "\r\n" : "\n";
}

/** The column of an offset, as spaces: the indentation of a key written there. */
function column(text: string, at: number): string {
  return " ".repeat(at - (text.lastIndexOf("\n", at - 1) + 1));
}

/** The edit that puts items (scalar texts) in front of a list's first item, in the list's own style. */
function prepend(text: string, seq: unknown, items: string[]): Edit {
  if (!isSeq(seq)) throw new EditError("args is not a list");
  if (seq.items.length === 0) {
    if (!seq.flow) throw new EditError("args is not a list");
    return { offset: range(seq)[0] + 1, length: 0, content: items.join(", ") };
  }
  if (seq.flow) {
    const first = range(seq.items[0])[0];
    const lead = text.slice(range(seq)[0] + 1, first).match(/\r?\n[ \t]*$/);
    const sep = lead ? `,${lead[0]}` : ", ";
    return { offset: first, length: 0, content: items.join(sep) + sep };
  }
  const d = dash(text, seq.items[0]);
  return { offset: d.at, length: 0, content: items.map((s) => `- ${s}${eol(text)}${d.indent}`).join("") };
}

function wrap(text: string, doc: Document.Parsed, ref: ServerRef, seam: SeamCommand, o: WrapOptions): Edit[] {
  const e = entryNodes(doc, ref);
  if (ref.shape.args === undefined) throw new EditError("seam edits a command list only in JSON");
  const [ca, cb] = movable(text, e.command.value, ref.shape.command);
  const front = [...wrapPrefix(seam, ref.name, o).map((s) => JSON.stringify(s)), text.slice(ca, cb)];
  const edits: Edit[] = [];
  if (e.args) edits.push(prepend(text, e.args.value, front));
  else {
    const added = `${ref.shape.args}: [${front.join(", ")}]`;
    if (e.flow) edits.push({ offset: cb, length: 0, content: `, ${added}` });
    else
      edits.push({
        offset: lineEnd(text, cb),
        length: 0,
        content: `${eol(text)}${column(text, range(e.command.key)[0])}${added}`,
      });
  }
  edits.push({ offset: ca, length: cb - ca, content: JSON.stringify(seam.argv[0]) });
  return edits;
}

function unwrap(text: string, doc: Document.Parsed, ref: ServerRef, w: Wrapped): Edit[] {
  const e = entryNodes(doc, ref);
  if (ref.shape.args === undefined || !e.args) throw new EditError("the entry no longer has seam's shape");
  const seq = e.args.value as { items: unknown[]; flow?: boolean };
  const items = seq.items;
  if (items.length <= w.commandAt) throw new EditError("the entry no longer has seam's shape");
  const [ca, cb] = movable(text, e.command.value, ref.shape.command);
  const [oa, ob] = movable(text, items[w.commandAt], ref.shape.args);
  const edits: Edit[] = [{ offset: ca, length: cb - ca, content: text.slice(oa, ob) }];
  const onlySeams = items.length === w.commandAt + 1;
  // An args seam added sits just after the command (on the next line, or after `, ` in a flow mapping).
  const argsKey = range(e.args.key)[0];
  const argsEnd = range(e.args.value)[1];
  const between = text.slice(cb, argsKey);
  const justAfter = cb < argsKey && (e.flow ? /^ *, *$/ : /^[ \t]*(#[^\r\n]*)?\r?\n *$/).test(between);
  if (onlySeams && justAfter && seq.flow) {
    const from = e.flow ? cb : lineEnd(text, cb);
    edits.push({ offset: from, length: argsEnd - from, content: "" });
  } else if (seq.flow) {
    const from = range(items[0])[0];
    const to = onlySeams ? ob : range(items[w.commandAt + 1])[0];
    edits.push({ offset: from, length: to - from, content: "" });
  } else {
    const from = dash(text, items[0]).at;
    if (onlySeams) edits.push({ offset: from, length: ob - from, content: "[]" });
    else edits.push({ offset: from, length: dash(text, items[w.commandAt + 1]).at - from, content: "" });
  }
  return edits;
}

/** Where the line holding an offset ends (before its line break). */
function lineEnd(text: string, at: number): number {
  const m = /\r?\n/.exec(text.slice(at));
  return m ? at + m.index : text.length;
}

function plan(text: string): Planner {
  const parsed = (t: string): Document.Parsed => {
    const p = parse(t);
    if ("error" in p) throw new EditError("the file does not parse");
    return p.doc;
  };
  return lazyPlanner(text, parsed, { wrap, unwrap });
}

export const yamlFormat: ConfigFormat = { list, plan, value };
