/**
 * The report page's stylesheet, inlined into the HTML under a CSP hash.
 * Nothing here is loaded from anywhere: system fonts only, no url().
 */
export const PAGE_CSS = `
:root {
  --fg: #1d2329; --muted: #5f6b76; --line: #d8dde2; --bg: #fff; --panel: #f5f7f9;
  --ok: #1a7f37; --error: #cf222e; --unanswered: #bc4c00; --cancelled: #6e7781; --input: #0969da;
  --refused: #8250df; --other: #57606a; --sel: #fff3bf; --grey: #9aa4ae;
  font: 13px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg);
}
* { box-sizing: border-box; }
body { margin: 0; padding: 0 16px 32px; }
h1 { font-size: 18px; margin: 14px 0 8px; overflow-wrap: anywhere; }
h2 { font-size: 14px; margin: 18px 0 6px; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; }
button { font: inherit; font-size: 12px; padding: 1px 7px; border: 1px solid var(--line); border-radius: 4px; background: #fff; cursor: pointer; }
button:hover { background: var(--panel); }
input, select { font: inherit; font-size: 12px; padding: 2px 4px; border: 1px solid var(--line); border-radius: 4px; max-width: 260px; }
.banner { border: 2px solid var(--other); border-radius: 8px; padding: 10px 14px; margin: 10px 0; background: var(--panel); }
.banner.v-ok { border-color: var(--ok); }
.banner.v-broken { border-color: var(--error); background: #fff0f0; }
.banner.v-inconclusive { border-color: var(--unanswered); background: #fff8ef; }
.verdict { font-size: 20px; font-weight: 700; overflow-wrap: anywhere; }
.v-ok .verdict { color: var(--ok); } .v-broken .verdict { color: var(--error); } .v-inconclusive .verdict { color: var(--unanswered); }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 6px 0; }
.facts > div:nth-child(odd) { color: var(--muted); }
.facts > div { overflow-wrap: anywhere; }
.cmd { display: flex; gap: 8px; align-items: center; margin-top: 6px; }
.cmd code { background: #fff; border: 1px solid var(--line); padding: 2px 6px; border-radius: 4px; overflow-wrap: anywhere; }
details > summary { cursor: pointer; color: var(--muted); }
pre.verify { background: #fff; border: 1px solid var(--line); padding: 6px 8px; overflow: auto; max-height: 240px; white-space: pre; }
.status { font-weight: 600; }
.s-ok { color: var(--ok); } .s-error { color: var(--error); } .s-unanswered { color: var(--unanswered); }
.s-cancelled { color: var(--cancelled); } .s-input_required { color: var(--input); } .s-refused { color: var(--refused); }
.timeline-wrap { position: relative; border: 1px solid var(--line); border-radius: 6px; overflow-y: auto; overflow-x: hidden; }
.timeline-wrap canvas { position: sticky; top: 0; display: block; }
.tip { position: fixed; pointer-events: none; background: #1d2329; color: #fff; padding: 4px 8px; border-radius: 4px; font-size: 12px; max-width: 480px; overflow-wrap: anywhere; z-index: 10; white-space: pre-line; }
.legend { display: flex; gap: 12px; flex-wrap: wrap; color: var(--muted); margin: 4px 0; }
.legend span::before { content: ""; display: inline-block; width: 9px; height: 9px; margin-right: 4px; border-radius: 2px; background: var(--c); }
.controls { display: flex; gap: 8px; flex-wrap: wrap; align-items: center; margin: 6px 0; }
.count { color: var(--muted); }
.main { display: grid; grid-template-columns: minmax(0, 5fr) minmax(300px, 3fr); gap: 12px; }
@media (max-width: 1000px) { .main { grid-template-columns: 1fr; } }
.table { border: 1px solid var(--line); border-radius: 6px; overflow: hidden; }
.thead, .trow { display: grid; grid-template-columns: 164px 72px minmax(60px, 1fr) 92px minmax(80px, 2fr) 92px 56px 56px 48px 92px; }
.oneday .thead, .oneday .trow { grid-template-columns: 106px 72px minmax(80px, 1fr) 92px minmax(80px, 2fr) 92px 56px 56px 48px 92px; }
.thead { background: var(--panel); font-weight: 600; border-bottom: 1px solid var(--line); }
.thead > div, .trow > div { padding: 2px 6px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.scroller { position: relative; height: 440px; overflow-y: auto; outline: none; }
.spacer { position: relative; }
.trow { position: absolute; left: 0; right: 0; height: 22px; line-height: 18px; cursor: pointer; border-bottom: 1px solid #eef1f3; }
.trow:hover { background: #f0f6ff; }
.trow.sel { background: var(--sel); }
.trow.nv { color: var(--grey); }
.trow.nv .status { color: var(--grey); }
.trow .num { text-align: right; }
.marker { position: absolute; left: 0; right: 0; height: 22px; line-height: 20px; background: #ffd7d5; color: #82071e; font-weight: 700; padding: 0 8px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; border-top: 2px solid var(--error); }
.details { border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; max-height: 520px; overflow: auto; background: #fff; }
.details h3 { margin: 0 0 6px; font-size: 14px; overflow-wrap: anywhere; }
.kv { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 2px 10px; margin-bottom: 8px; }
.kv > .k { color: var(--muted); }
.kv > .v { overflow-wrap: anywhere; white-space: pre-wrap; }
.rowhead { margin: 10px 0 4px; font-weight: 600; border-top: 1px solid var(--line); padding-top: 6px; }
.warn { color: var(--error); font-weight: 600; }
.j { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; white-space: pre-wrap; overflow-wrap: anywhere; }
.j details { margin-left: 14px; } .j .item { margin-left: 14px; }
.j .key { color: #953800; } .j .str { color: #0a3069; } .j .num { color: #0550ae; } .j .lit { color: #8250df; }
.more { color: var(--muted); font-style: italic; }
table.tools { border-collapse: collapse; width: 100%; }
table.tools th, table.tools td { border-bottom: 1px solid var(--line); padding: 3px 8px; text-align: right; white-space: nowrap; }
table.tools th:first-child, table.tools td:first-child, table.tools th:nth-child(2), table.tools td:nth-child(2) { text-align: left; max-width: 320px; overflow: hidden; text-overflow: ellipsis; }
.empty { color: var(--muted); padding: 8px; }
.progress { color: var(--muted); }
footer { margin-top: 24px; color: var(--muted); font-size: 12px; }
`;
