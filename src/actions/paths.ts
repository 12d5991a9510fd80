/**
 * The paths and templates of an action mapping (src/actions/map.ts): a
 * dotted path into the tools/call `params` object (`arguments.items.0`,
 * `name`, `_meta.progressToken`), where a segment of digits indexes an array;
 * and an action_id template of literal text and `{path}` placeholders.
 */
import { getField, type Json } from "../core/json.ts";

/** A dotted path, split. */
export interface Path {
  readonly text: string;
  readonly segments: readonly string[];
}

/** An action_id template: literal text and placeholder paths, alternating (literal first and last). */
export interface Template {
  readonly text: string;
  readonly literals: readonly string[];
  readonly paths: readonly Path[];
}

/** A dotted path, or why the text is not one. */
export function parsePath(text: string): Path | string {
  if (text === "") return "it is empty";
  const segments = text.split(".");
  for (const s of segments) {
    if (s === "") return "an empty segment (two dots, or a dot at an end)";
    if (/[[\]]/.test(s)) return "brackets are not path syntax (write arguments.items.0 for an array element)";
    if (/[{}]/.test(s)) return "braces belong in action_id templates, not in paths";
    if (/\s/.test(s)) return "a segment with white space";
  }
  return { text, segments };
}

/** An action_id template, or why the text is not one. */
export function parseTemplate(text: string): Template | string {
  const literals: string[] = [];
  const paths: Path[] = [];
  let lit = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "}") return `a "}" at ${i + 1} closes nothing`;
    if (c !== "{") {
      lit += c;
      continue;
    }
    const close = text.indexOf("}", i + 1);
    const open = text.indexOf("{", i + 1);
    if (close < 0) return `the "{" at ${i + 1} is never closed`;
    if (open >= 0 && open < close) return `a "{" inside the placeholder at ${i + 1}`;
    const inner = text.slice(i + 1, close);
    const p = parsePath(inner);
    if (typeof p === "string") return `placeholder {${inner}}: ${p}`;
    literals.push(lit);
    paths.push(p);
    lit = "";
    i = close;
  }
  literals.push(lit);
  return { text, literals, paths };
}

/** The value at `path` in `root`; undefined when any step is missing. */
export function resolvePath(root: Json | undefined, path: Path): Json | undefined {
  let v: Json | undefined = root;
  for (const s of path.segments) {
    if (v === undefined) return undefined;
    if (Array.isArray(v)) {
      if (!/^(0|[1-9][0-9]*)$/.test(s)) return undefined;
      const i = Number(s);
      v = i < v.length ? v[i] : undefined;
    } else {
      v = getField(v, s);
    }
  }
  return v;
}
