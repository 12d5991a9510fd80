/**
 * Wrapping and unwrapping one entry of a JSON or JSON-with-comments file as a
 * few text edits at offsets from jsonc-parser's tree, parsed once for all
 * entries: the rest of the file, comments, key order, indentation and line
 * endings included, is never re-serialised. (jsonc-parser's `modify` makes
 * the same edit but parses the whole text on each call, and with formatting
 * options re-formats the lines it touches.)
 *
 * The edits are chosen so that unwrapping is their exact inverse:
 *   - the command's value is replaced by seam's; its original text (escapes
 *     and all) moves verbatim into args, after `--`;
 *   - seam's args go in front of the first original arg, joined by the
 *     array's own separator (`, ` or `,` + its line break and indent);
 *   - an entry without `args` gets an `args` property just before `command`.
 *     Unwrapping removes an `args` that sits just before `command` and holds
 *     nothing but seam's part, so an entry that had `"args": []` written just
 *     before its command comes back without it (the same server either way).
 */
// The ES module build: the package's main entry is a UMD wrapper whose require()s a bundle cannot follow.
import {
  findNodeAtLocation,
  type Node,
  type ParseError,
  parseTree,
  printParseErrorCode,
} from "jsonc-parser/lib/esm/main.js";
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
  lineCol,
  type Planner,
  type ServerRef,
} from "./format.ts";

const PARSE = { allowTrailingComma: true, disallowComments: false } as const;

function tree(text: string): { root: Node | undefined; errors: ParseError[] } {
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, PARSE);
  return { root, errors };
}

/** A node's value with prototype-free objects: a key named __proto__ in a config file stays a key. */
function nodeValue(n: Node): unknown {
  switch (n.type) {
    case "object": {
      const o: Record<string, unknown> = Object.create(null);
      for (const p of n.children ?? []) {
        const [k, v] = p.children ?? [];
        if (k && v) o[k.value as string] = nodeValue(v);
      }
      return o;
    }
    case "array":
      return (n.children ?? []).map(nodeValue);
    default:
      return n.value;
  }
}

function properties(obj: Node): Array<{ key: string; prop: Node; value: Node }> {
  const out: Array<{ key: string; prop: Node; value: Node }> = [];
  for (const p of obj.children ?? []) {
    const [k, v] = p.children ?? [];
    if (k && v) out.push({ key: k.value as string, prop: p, value: v });
  }
  return out;
}

function list(text: string, containers: Container[]): Listed {
  if (text.trim() === "") return { ok: true, servers: [], value: undefined };
  const { root, errors } = value(text) === undefined ? tree(text) : { root: undefined, errors: [] };
  if (errors.length > 0) {
    const e = errors[0]!;
    const { line, column } = lineCol(text, e.offset);
    return { ok: false, error: `line ${line}, column ${column}: ${describe(printParseErrorCode(e.error))}` };
  }
  const doc = root === undefined ? value(text) : nodeValue(root);
  if (doc === undefined) return { ok: true, servers: [], value: undefined };
  if (!isPlainObject(doc)) return { ok: false, error: "line 1, column 1: the file is not a JSON object" };
  const servers: ServerRef[] = [];
  for (const c of containers) {
    const shape = c.shape ?? COMMAND_ARGS;
    const addAll = (obj: unknown, path: string[], where: string) => {
      if (!isPlainObject(obj)) return;
      for (const [key, v] of Object.entries(obj))
        servers.push({ where, path: [...path, key], name: key, value: v, shape });
    };
    const node = valueAt(doc, c.path);
    if (!c.projects) {
      addAll(node, c.path, c.label);
      continue;
    }
    if (!isPlainObject(node)) continue;
    for (const [key, v] of Object.entries(node)) {
      if (isPlainObject(v))
        addAll(v.mcpServers, [...c.path, key, "mcpServers"], `${c.label}[${JSON.stringify(key)}].mcpServers (local)`);
    }
  }
  return { ok: true, servers, value: doc };
}

function describe(code: string): string {
  return code
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .replace("eof", "end of file");
}

/** The entry object's node and its command and args properties (by the entry's shape). */
function entryNodes(root: Node, ref: ServerRef) {
  const obj = findNodeAtLocation(root, ref.path);
  if (obj?.type !== "object") throw new EditError("the entry is gone");
  const props = properties(obj);
  const { shape } = ref;
  const command = props.find((p) => p.key === shape.command);
  const args = shape.args === undefined ? undefined : props.find((p) => p.key === shape.args);
  if (props.filter((p) => p.key === shape.command || p.key === shape.args).length > (command ? 1 : 0) + (args ? 1 : 0))
    throw new EditError(`the entry has a duplicate ${shape.command} or ${shape.args ?? shape.command} key`);
  if (shape.args === undefined) {
    if (command?.value.type !== "array" || (command.value.children ?? []).length === 0)
      throw new EditError(`the entry has no ${shape.command} list`);
  } else if (command?.value.type !== "string") throw new EditError(`the entry has no string ${shape.command}`);
  if (args && args.value.type !== "array") throw new EditError(`${shape.args} is not a list`);
  return { command, args };
}

const slice = (text: string, n: Node) => text.slice(n.offset, n.offset + n.length);

/** The edit that puts `items` (JSON texts) in front of a non-empty array's first element, joined as the array joins its own. */
function prepend(text: string, array: Node, items: string[]): Edit {
  const elems = array.children ?? [];
  const lead = text.slice(array.offset + 1, elems[0]!.offset).match(/\r?\n[ \t]*$/);
  const sep = lead ? `,${lead[0]}` : ", ";
  return { offset: elems[0]!.offset, length: 0, content: items.join(sep) + sep };
}

function wrap(text: string, root: Node, ref: ServerRef, seam: SeamCommand, o: WrapOptions): Edit[] {
  const { command, args } = entryNodes(root, ref);
  const prefix = wrapPrefix(seam, ref.name, o).map((s) => JSON.stringify(s));
  // One argv list (opencode): seam's argv goes in front of the server's.
  if (ref.shape.args === undefined) return [prepend(text, command.value, [JSON.stringify(seam.argv[0]), ...prefix])];
  const front = [...prefix, slice(text, command.value)];
  const edits: Edit[] = [];
  if (args) {
    if ((args.value.children ?? []).length === 0) {
      edits.push({ offset: args.value.offset + 1, length: 0, content: front.join(", ") });
    } else edits.push(prepend(text, args.value, front));
  } else {
    const before = text.slice(0, command.prop.offset).match(/[ \t\r\n]*$/)![0];
    edits.push({
      offset: command.prop.offset,
      length: 0,
      content: `${JSON.stringify(ref.shape.args)}: [${front.join(", ")}],${before || " "}`,
    });
  }
  // What `modify` without formatting options would do, on the tree already parsed (modify parses the whole text again).
  edits.push({ offset: command.value.offset, length: command.value.length, content: JSON.stringify(seam.argv[0]) });
  return edits;
}

function unwrap(text: string, root: Node, ref: ServerRef, w: Wrapped): Edit[] {
  const { command, args } = entryNodes(root, ref);
  if (ref.shape.args === undefined) {
    // The server's argv starts just after `--`: everything before it is seam's.
    const elems = command.value.children ?? [];
    const first = elems[w.commandAt + 1];
    if (!first) throw new EditError("the entry no longer has seam's shape");
    return [{ offset: elems[0]!.offset, length: first.offset - elems[0]!.offset, content: "" }];
  }
  const elems = args?.value.children ?? [];
  if (!args || elems.length <= w.commandAt) throw new EditError("the entry no longer has seam's shape");
  const original = elems[w.commandAt]!;
  const edits: Edit[] = [
    { offset: command.value.offset, length: command.value.length, content: slice(text, original) },
  ];
  const argsOnlySeams = elems.length === w.commandAt + 1;
  const argsJustBefore =
    args.prop.offset < command.prop.offset &&
    /^[ \t\r\n]*,[ \t\r\n]*$/.test(text.slice(args.prop.offset + args.prop.length, command.prop.offset));
  if (argsOnlySeams && argsJustBefore) {
    edits.push({ offset: args.prop.offset, length: command.prop.offset - args.prop.offset, content: "" });
  } else {
    const from = elems[0]!.offset;
    const to = argsOnlySeams ? original.offset + original.length : elems[w.commandAt + 1]!.offset;
    edits.push({ offset: from, length: to - from, content: "" });
  }
  return edits;
}

/**
 * The document's value: strict JSON through the runtime's own parser (far
 * faster on a large ~/.claude.json; it keeps a key named __proto__ as
 * a key), anything else (comments, trailing commas) through the tree.
 */
function value(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const { root, errors } = tree(text);
    return errors.length > 0 || root === undefined ? undefined : nodeValue(root);
  }
}

/** One parse of the text for all the entries' edits (a large ~/.claude.json is parsed once, not once per entry). */
function plan(text: string): Planner {
  const parsed = (t: string): Node => {
    const { root, errors } = tree(t);
    if (root === undefined || errors.length > 0) throw new EditError("the file does not parse");
    return root;
  };
  return lazyPlanner(text, parsed, { wrap, unwrap });
}

export const jsonFormat: ConfigFormat = { list, plan, value };
