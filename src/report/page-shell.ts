/**
 * The report page's shell: its head (a Content-Security-Policy that lets
 * nothing load and only this style and this script run, by their SHA-256),
 * the empty containers the script fills, and the JSON escaping every data
 * block uses.
 */
import { createHash } from "node:crypto";
import { PAGE_CSS } from "./page-css.ts";
import { PAGE_JS } from "./page-js.ts";

/** JSON for a data block: "<" escaped, so the text can neither end the element nor start markup. */
export function jsonBlock(v: unknown): string {
  return JSON.stringify(v).replace(/</g, "\\u003c");
}

function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("base64");
}

/** The policy: no network of any kind, only this stylesheet and this script (no inline handlers), no forms, no base. */
export function contentSecurityPolicy(): string {
  return [
    "default-src 'none'",
    `script-src 'sha256-${sha256(PAGE_JS)}'`,
    `style-src 'sha256-${sha256(PAGE_CSS)}'`,
    "img-src 'none'",
    "connect-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
}

export function pageHead(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${contentSecurityPolicy()}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>seam report</title>
<style>${PAGE_CSS}</style>
</head>
<body>
<div id="banner"></div>
<div id="progress" class="progress"></div>
<h2>Timeline</h2>
<div id="legend" class="legend"></div>
<div id="timeline-help" class="count"></div>
<div id="timeline" class="timeline-wrap"></div>
<h2>Operations</h2>
<div id="controls" class="controls"></div>
<div class="main">
<div class="table"><div id="table-head" class="thead"></div><div id="table-body" class="scroller" tabindex="0"></div></div>
<div id="details" class="details" aria-live="polite"></div>
</div>
<h2>Per tool</h2>
<div id="tools"></div>
<div id="tip" class="tip" hidden></div>
<footer>A seam report: one file, no network. What it shows comes from the ledger and is vouched for only as the banner says; the command in the banner checks the file again.</footer>
`;
}
