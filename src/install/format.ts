/** What install, uninstall and status need from a config file format (JSON/JSONC, or TOML). */
import type { Container } from "./clients.ts";
import type { SeamCommand, WrapOptions, Wrapped } from "./entry.ts";

export interface ServerRef {
  /** Where in the file, for people: e.g. `mcpServers` or `projects["/home/me/app"].mcpServers`. */
  where: string;
  /** Key path of the entry in the document. */
  path: string[];
  name: string;
  value: unknown;
}

export type Listed = { ok: true; servers: ServerRef[]; value: unknown } | { ok: false; error: string };

export interface ConfigFormat {
  /** The servers of the given containers, or where the file fails to parse ("line L, column C: …"). */
  list(text: string, containers: Container[]): Listed;
  /** The text with one stdio entry wrapped; throws EditError when its layout is one seam does not edit. */
  wrap(text: string, ref: ServerRef, seam: SeamCommand, o: WrapOptions): string;
  /** The text with one wrapped entry put back as it was; throws EditError likewise. */
  unwrap(text: string, ref: ServerRef, w: Wrapped): string;
  /** The whole document's value, or undefined when it does not parse. */
  value(text: string): unknown;
}

/** An entry seam will not edit (its layout, not the file, is the problem); the file is left as it is. */
export class EditError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "EditError";
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
