/** What install, uninstall and status need from a config file format (JSON/JSONC, TOML or YAML). */
import { SeamError } from "../base/error.ts";
import type { Container } from "./clients.ts";
import type { SeamCommand, Shape, WrapOptions, Wrapped } from "./entry.ts";

export interface ServerRef {
  /** Where in the file, for people: e.g. `mcpServers` or `projects["/home/me/app"].mcpServers`. */
  where: string;
  /** Key path of the entry in the document. */
  path: string[];
  name: string;
  value: unknown;
  /** Which of its fields start the server. */
  shape: Shape;
}

export type Listed = { ok: true; servers: ServerRef[]; value: unknown } | { ok: false; error: string };

/** One text edit: replace `length` characters at `offset` with `content`. */
export interface Edit {
  offset: number;
  length: number;
  content: string;
}

/** Edits computed against one text (parsed once): each throws EditError when the entry's layout is one seam does not edit. */
export interface Planner {
  /** The edits that wrap one stdio entry. */
  wrap(ref: ServerRef, seam: SeamCommand, o: WrapOptions): Edit[];
  /** The edits that put one wrapped entry back as it was. */
  unwrap(ref: ServerRef, w: Wrapped): Edit[];
}

/**
 * A Planner over a document parsed once, when its first edit is planned
 * (`parse` throws EditError where the file does not parse): the edits of a
 * format whose writers take the parsed document beside the text.
 */
export function lazyPlanner<D>(
  text: string,
  parse: (text: string) => D,
  edits: {
    wrap(text: string, doc: D, ref: ServerRef, seam: SeamCommand, o: WrapOptions): Edit[];
    unwrap(text: string, doc: D, ref: ServerRef, w: Wrapped): Edit[];
  },
): Planner {
  let doc: D | undefined;
  const get = (): D => {
    doc ??= parse(text);
    return doc;
  };
  return {
    wrap: (ref, seam, o) => edits.wrap(text, get(), ref, seam, o),
    unwrap: (ref, w) => edits.unwrap(text, get(), ref, w),
  };
}

export interface ConfigFormat {
  /** The servers of the given containers, or where the file fails to parse ("line L, column C: …"). */
  list(text: string, containers: Container[]): Listed;
  plan(text: string): Planner;
  /** The whole document's value, or undefined when it does not parse. */
  value(text: string): unknown;
}

/** Applies edits that do not overlap (an overlap is an EditError: two entries cannot share bytes). */
export function applyEdits(text: string, edits: Edit[]): string {
  const sorted = [...edits].sort((a, b) => a.offset - b.offset);
  const parts: string[] = [];
  let at = 0;
  for (const e of sorted) {
    if (e.offset < at) throw new EditError("two edits overlap");
    parts.push(text.slice(at, e.offset), e.content);
    at = e.offset + e.length;
  }
  parts.push(text.slice(at));
  return parts.join("");
}

/** An entry seam will not edit (its layout, not the file, is the problem); the file is left as it is. */
export class EditError extends SeamError {
  override readonly name = "EditError";
  constructor(message: string) {
    super("edit_refused", message);
  }
}

/** 1-based line and column of a character offset. */
export function lineCol(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      start = i + 1;
    }
  }
  return { line, column: offset - start + 1 };
}
