/** Defined by src/report/page-script.ts ahead of the page's files: the pattern of src/base/terminal-text.ts. */
declare const UNSAFE: RegExp;
