// @ts-check
/**
 * The report page's script, part 1 of 6 (src/report/page-script.ts joins them):
 * constants, DOM and text helpers, time formatting and the copy button.
 */

const ROW_H = 22;
const MAX_PX = 16000000;
const CELL_MAX = 200;
const TEXT_MAX = 20000;
const STATUS_COLOR = {
  ok: "#1a7f37",
  error: "#cf222e",
  unanswered: "#bc4c00",
  cancelled: "#6e7781",
  input_required: "#0969da",
  refused: "#8250df",
};
const STATUS_RANK = { ok: 1, cancelled: 2, input_required: 3, unanswered: 4, refused: 5, error: 6 };
const F_NOT_VOUCHED = 1,
  F_SEALED = 2;

function $(id) {
  return document.getElementById(id);
}
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}
function add(parent, ...children) {
  for (const c of children) if (c) parent.appendChild(c);
  return parent;
}
function readJson(id) {
  const n = $(id);
  return n ? JSON.parse(n.textContent) : null;
}
function cut(s, max) {
  s = String(s);
  return s.length > max ? `${s.slice(0, max)}\u2026 (${s.length.toLocaleString("en-US")} chars)` : s;
}
// Text from a ledger is shown under the CLI's one policy (src/base/terminal-text.ts, whose pattern
// page-script.ts puts in UNSAFE): controls, bidi controls, line and paragraph separators and lone
// surrogates as \u escapes.
function shown(s) {
  return String(s).replace(UNSAFE, (c) => `\\u${(`000${c.charCodeAt(0).toString(16)}`).slice(-4)}`);
}
function fmtMs(v) {
  return Number.isNaN(v) ? "" : v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2);
}
function pad(n, w) {
  let s = String(n);
  while (s.length < w) s = `0${s}`;
  return s;
}
let utc = false;
function fmtTime(t) {
  if (Number.isNaN(t)) return "";
  const d = new Date(t);
  if (utc) return d.toISOString().replace("T", " ").replace("Z", "");
  return (
    fmtDay(t) +
    " " +
    pad(d.getHours(), 2) +
    ":" +
    pad(d.getMinutes(), 2) +
    ":" +
    pad(d.getSeconds(), 2) +
    "." +
    pad(d.getMilliseconds(), 3)
  );
}
function fmtDay(t) {
  const d = new Date(t);
  if (utc) return d.toISOString().slice(0, 10);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1, 2)}-${pad(d.getDate(), 2)}`;
}
// When every operation falls on one day, the table shows the time of day and the header the date.
let oneDay = null;
function cellTime(t) {
  if (Number.isNaN(t)) return "";
  const s = fmtTime(t);
  return oneDay === null ? s : s.slice(11);
}
function findOneDay() {
  let day = null;
  for (let i = 0; i < loaded; i++) {
    if (Number.isNaN(fT[i])) continue;
    const k = fmtDay(fT[i]);
    if (day === null) day = k;
    else if (k !== day) return null;
  }
  return day;
}
function layoutDay() {
  oneDay = findOneDay();
  const tableBox = /** @type {HTMLElement} */ ($("table-body").parentNode);
  if (oneDay === null) tableBox.classList.remove("oneday");
  else tableBox.classList.add("oneday");
  $("table-head").firstChild.textContent =
    oneDay === null ? `time${utc ? " (UTC)" : ""}` : `time, ${oneDay}${utc ? " UTC" : ""}`;
}
function copyText(text, button) {
  function done(ok) {
    button.textContent = ok ? "copied" : "select and copy";
    setTimeout(() => {
      button.textContent = "copy";
    }, 1200);
  }
  if (navigator.clipboard?.writeText) {
    navigator.clipboard.writeText(text).then(
      () => {
        done(true);
      },
      () => {
        done(fallback());
      },
    );
  } else done(fallback());
  function fallback() {
    const ta = el("textarea");
    ta.value = text;
    document.body.appendChild(ta);
    ta.select();
    let ok = false;
    try {
      ok = document.execCommand("copy");
    } catch (e) {
      ok = false;
    }
    ta.remove();
    return ok;
  }
}
function copyButton(text, label) {
  const b = el("button", "copy", "copy");
  if (label) b.setAttribute("aria-label", label);
  b.addEventListener("click", (ev) => {
    ev.stopPropagation();
    copyText(text, b);
  });
  return b;
}
