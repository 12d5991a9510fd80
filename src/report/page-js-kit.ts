/**
 * The report page's script, part 1 of 6 (src/report/page-js.ts joins them):
 * constants, DOM and text helpers, time formatting and the copy button.
 * Plain browser JavaScript, under the rules src/report/page-js.ts states.
 */
import { UNSAFE_TEXT_SOURCE } from "../base/terminal-text.ts";

export const PAGE_KIT = String.raw`
  var ROW_H = 22;
  var MAX_PX = 16000000;
  var CELL_MAX = 200;
  var TEXT_MAX = 20000;
  var STATUS_COLOR = { ok: "#1a7f37", error: "#cf222e", unanswered: "#bc4c00", cancelled: "#6e7781",
    input_required: "#0969da", refused: "#8250df" };
  var STATUS_RANK = { ok: 1, cancelled: 2, input_required: 3, unanswered: 4, refused: 5, error: 6 };
  var F_NOT_VOUCHED = 1, F_SEALED = 2;

  function $(id) { return document.getElementById(id); }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function add(parent) { for (var i = 1; i < arguments.length; i++) if (arguments[i]) parent.appendChild(arguments[i]); return parent; }
  function readJson(id) { var n = $(id); return n ? JSON.parse(n.textContent) : null; }
  function cut(s, max) { s = String(s); return s.length > max ? s.slice(0, max) + "\u2026 (" + s.length.toLocaleString("en-US") + " chars)" : s; }
  // Text from a ledger is shown under the CLI's one policy (src/base/terminal-text.ts): controls, bidi
  // controls, line and paragraph separators and lone surrogates as \u escapes.
  var UNSAFE = new RegExp(${JSON.stringify(UNSAFE_TEXT_SOURCE)}, "g");
  function shown(s) {
    return String(s).replace(UNSAFE, function (c) {
      return "\\u" + ("000" + c.charCodeAt(0).toString(16)).slice(-4);
    });
  }
  function fmtMs(v) { return v !== v ? "" : v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2); }
  function pad(n, w) { var s = String(n); while (s.length < w) s = "0" + s; return s; }
  var utc = false;
  function fmtTime(t) {
    if (t !== t) return "";
    var d = new Date(t);
    if (utc) return d.toISOString().replace("T", " ").replace("Z", "");
    return fmtDay(t) + " " + pad(d.getHours(), 2) + ":" + pad(d.getMinutes(), 2) + ":" + pad(d.getSeconds(), 2) + "." + pad(d.getMilliseconds(), 3);
  }
  function fmtDay(t) {
    var d = new Date(t);
    if (utc) return d.toISOString().slice(0, 10);
    return d.getFullYear() + "-" + pad(d.getMonth() + 1, 2) + "-" + pad(d.getDate(), 2);
  }
  // When every operation falls on one day, the table shows the time of day and the header the date.
  var oneDay = null;
  function cellTime(t) { if (t !== t) return ""; var s = fmtTime(t); return oneDay === null ? s : s.slice(11); }
  function findOneDay() {
    var day = null;
    for (var i = 0; i < loaded; i++) { if (fT[i] !== fT[i]) continue; var k = fmtDay(fT[i]); if (day === null) day = k; else if (k !== day) return null; }
    return day;
  }
  function layoutDay() {
    oneDay = findOneDay();
    var tableBox = $("table-body").parentNode;
    if (oneDay === null) tableBox.classList.remove("oneday"); else tableBox.classList.add("oneday");
    $("table-head").firstChild.textContent = oneDay === null ? "time" + (utc ? " (UTC)" : "") : "time, " + oneDay + (utc ? " UTC" : "");
  }
  function copyText(text, button) {
    function done(ok) { button.textContent = ok ? "copied" : "select and copy"; setTimeout(function () { button.textContent = "copy"; }, 1200); }
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(function () { done(true); }, function () { done(fallback()); });
    } else done(fallback());
    function fallback() {
      var ta = el("textarea");
      ta.value = text;
      document.body.appendChild(ta);
      ta.select();
      var ok = false;
      try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
      ta.remove();
      return ok;
    }
  }
  function copyButton(text, label) {
    var b = el("button", "copy", "copy");
    if (label) b.setAttribute("aria-label", label);
    b.addEventListener("click", function (ev) { ev.stopPropagation(); copyText(text, b); });
    return b;
  }
`;
