/**
 * The report page's script, read from src/report/page/ at build time: it is
 * imported as a Bun macro (src/report/page-js.ts), so the bundles and the
 * executable carry it as a string and nothing is read at run time.
 *
 * The files are plain browser scripts with no imports or exports: tsc checks
 * them together as one scope (src/report/page/tsconfig.json), and they are
 * joined here into one strict-mode function, in this order, so each may call
 * what another defines.
 */
import { readFileSync } from "node:fs";
import { UNSAFE_TEXT_SOURCE } from "../base/terminal-text.ts";

const PARTS = ["kit", "load", "table", "details", "timeline", "tools"];

export function pageScript(): string {
  const body = PARTS.map((p) => readFileSync(new URL(`./page/${p}.js`, import.meta.url), "utf8")).join("\n");
  // The script is inlined in a <script> element: nothing in it may end that element.
  if (/<\/script|<!--/i.test(body)) throw new Error("the report page's script must not contain </script or <!--");
  // The one terminal-safe policy's pattern, for the page's shown() (src/report/page/globals.d.ts declares it).
  const unsafe = `const UNSAFE = new RegExp(${JSON.stringify(UNSAFE_TEXT_SOURCE)}, "g");`;
  return `(function () {\n"use strict";\n${unsafe}\n${body}\nstart();\n})();\n`;
}
