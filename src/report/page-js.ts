/**
 * The report page's script, inlined into the HTML under a CSP hash (so no
 * other script, and no inline event handler, can run). It reads the data
 * blocks the generator wrote (src/report/html.ts describes them) and builds
 * the page with textContent only: nothing from a ledger ever becomes markup.
 * Its source is src/report/page/*.js, joined at build time (page-script.ts).
 */
import { pageScript } from "./page-script.ts" with { type: "macro" };

export const PAGE_JS: string = pageScript();
