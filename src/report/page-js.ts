/**
 * The report page's script, inlined into the HTML under a CSP hash (so no
 * other script, and no inline event handler, can run). It reads the data
 * blocks the generator wrote (src/report/html.ts describes them) and builds
 * the page with textContent only: nothing from a ledger ever becomes markup.
 *
 * Kept as plain browser JavaScript in strings: no template literals and no
 * "${" inside (each part is itself a template), and never the sequence that
 * would close the script element. The parts, one concern a file, are joined
 * into one function scope, so each may call what another defines.
 */
import { PAGE_KIT } from "./page-js-kit.ts";
import { PAGE_LOAD } from "./page-js-load.ts";
import { PAGE_TABLE } from "./page-js-table.ts";
import { PAGE_DETAILS } from "./page-js-details.ts";
import { PAGE_TIMELINE } from "./page-js-timeline.ts";
import { PAGE_TOOLS } from "./page-js-tools.ts";

/** The whole script: one strict-mode function over the parts, in this order. */
export const PAGE_JS = [
  '\n(function () {\n  "use strict";',
  PAGE_KIT,
  PAGE_LOAD,
  PAGE_TABLE,
  PAGE_DETAILS,
  PAGE_TIMELINE,
  PAGE_TOOLS,
  "\n  start();\n})();\n",
].join("");
