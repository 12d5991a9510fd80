/**
 * The report page's script, inlined into the HTML under a CSP hash (so no
 * other script, and no inline event handler, can run). It reads the data
 * blocks the generator wrote (src/report/html.ts describes them) and builds
 * the page with textContent only: nothing from a ledger ever becomes markup.
 *
 * Kept as plain browser JavaScript in a string: no template literals and no
 * "${" inside (this file is itself a template), and never the sequence that
 * would close the script element.
 */
export const PAGE_JS = String.raw`
(function () {
  "use strict";
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
  // Control characters (terminal escapes among them) and bidi overrides from a ledger are shown as \u escapes.
  function shown(s) {
    return String(s).replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, function (c) {
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

  var meta = readJson("seam-meta");
  var S = meta.strings;
  document.title = meta.title;

  // ---- banner: first, before the operations are read, so it paints at once ----
  function renderBanner() {
    var root = $("banner");
    add(root, el("h1", null, meta.title));
    var made = el("div", "count", "generated " + meta.generated + " by " + meta.seam + (meta.filters ? "; filters: " + meta.filters : ""));
    add(root, made);
    meta.files.forEach(function (f, fi) {
      var b = el("section", "banner v-" + f.verdict);
      b.id = "banner-" + fi;
      var headline = el("div", "verdict", shown(f.path) + ": " + f.verdict);
      headline.setAttribute("data-verdict", f.verdict);
      add(b, headline);
      var facts = el("div", "facts");
      function fact(k, v) { add(facts, el("div", null, k), el("div", "mono", v)); }
      fact("rows", f.rows_line);
      if (f.first_break) fact("break", shown(f.first_break.message) + " (" + f.breaks + " break" + (f.breaks === 1 ? "" : "s") + ")");
      fact("head", f.head === null ? "none" : shown(f.head));
      fact("sessions", f.sessions_line);
      fact("sealed", f.sealed === null ? "not checked (no --key given)" : shown(f.sealed));
      if (f.first_break) fact("vouched", f.first_break.line === null ? "nothing read after the break is vouched for by the chain (greyed below)" : "the chain vouches for nothing from the row before line " + f.first_break.line + " on: either side of a broken link may be the edit (greyed below)");
      add(b, facts);
      var cmd = el("div", "cmd");
      add(cmd, el("span", "count", "re-verify"), el("code", "reverify", f.reverify), copyButton(f.reverify, "copy the command"));
      add(b, cmd);
      var det = el("details");
      add(det, el("summary", null, "seam verify output"), el("pre", "verify", f.verify));
      add(b, det);
      add(root, b);
    });
  }
  renderBanner();
  performance.mark("seam-banner");

  // ---- operations, column by column ----
  var N = meta.n;
  // Operations read so far: a big page is shown while the browser is still reading the rest of it.
  var loaded = 0;
  var fFile = new Int32Array(N), fLine = new Int32Array(N), fT = new Float64Array(N), fSes = new Int32Array(N),
    fSrv = new Int32Array(N), fKind = new Int32Array(N), fName = new Int32Array(N), fSt = new Int32Array(N),
    fMs = new Float64Array(N), fFl = new Uint8Array(N), fId = new Array(N), fLines = new Map(),
    fRowAt = new Int32Array(N), chunkRx = new Array(meta.chunks), chunkRb = new Array(meta.chunks);
  var rowChunks = new Array(meta.chunks);

  function loadChunk(c, at) {
    var d = readJson("seam-c" + c);
    var n = d.ln.length, at0 = 0, c = Math.floor(at / meta.chunk);
    chunkRx[c] = d.rx;
    chunkRb[c] = new Set(d.rb || []);
    for (var i = 0; i < n; i++) {
      var j = at + i;
      fFile[j] = d.f[i]; fLine[j] = d.ln[i]; fT[j] = d.t[i] === null ? NaN : d.t[i]; fSes[j] = d.se[i];
      fSrv[j] = d.sv[i]; fKind[j] = d.k[i]; fName[j] = d.nm[i]; fSt[j] = d.st[i];
      fMs[j] = d.ms[i] === null ? NaN : d.ms[i]; fFl[j] = d.fl[i]; fId[j] = d.id[i];
      if (d.ls[i] !== null) fLines.set(j, d.ls[i]);
      // Its first row's place among the chunk's rows (each operation has one row per line it joins).
      fRowAt[j] = at0;
      at0 += d.ls[i] === null ? 1 : d.ls[i].length;
    }
    return n;
  }
  // [the lines it joins, its rows in the same order: { text, rebuilt }]
  function rowsOf(op) {
    var c = Math.floor(op / meta.chunk);
    if (!rowChunks[c]) rowChunks[c] = $("seam-r" + c).textContent.split("\n");
    var lines = fLines.get(op) || [fLine[op]], rows = [], rx = chunkRx[c];
    for (var k = 0; k < lines.length; k++) {
      var ri = fRowAt[op] + k;
      rows.push({ text: Object.prototype.hasOwnProperty.call(rx, ri) ? rx[ri] : rowChunks[c][ri], rebuilt: chunkRb[c].has(ri) });
    }
    return [lines, rows];
  }

  function start() {
    var progress = $("progress");
    var c = 0, built = false, shownAt = 0;
    // Chunk k is whole once the parser has begun the element after it.
    function whole(k) { return k + 1 < meta.chunks ? $("seam-c" + (k + 1)) !== null : document.readyState !== "loading"; }
    function step() {
      var t0 = performance.now(), grew = false;
      while (c < meta.chunks && whole(c) && performance.now() - t0 < 40) { loaded += loadChunk(c++, loaded); grew = true; }
      // What was read is shown at once, then again at most twice a second (each refresh goes over everything read).
      if (grew && !built) { build(); built = true; shownAt = performance.now(); }
      else if (grew && performance.now() - shownAt > 500) { refresh(); shownAt = performance.now(); }
      if (c < meta.chunks) {
        progress.textContent = "reading operations: " + loaded.toLocaleString("en-US") + " of " + N.toLocaleString("en-US");
        setTimeout(step, grew ? 0 : 50);
        return;
      }
      progress.textContent = "";
      if (!built) build();
      finish();
    }
    step();
  }

  // ---- state ----
  var view = new Int32Array(0);
  var selected = -1;
  var filter = { q: "", inRows: false, server: -1, tool: -1, status: -1, kind: -1 };
  var sortBy = "line";
  var markers = [];

  function build() {
    buildControls();
    buildTimeline();
    buildTable();
    layoutDay();
    applyView();
    showDetails();
    performance.mark("seam-table");
  }
  function refresh() {
    selects.forEach(fillSelect);
    timeRange();
    layoutDay();
    applyView();
  }
  function finish() {
    refresh();
    buildTools();
    performance.mark("seam-ready");
    document.body.setAttribute("data-ready", "1");
  }

  // ---- controls ----
  function distinct(col, pred) {
    var seen = new Map();
    for (var i = 0; i < loaded; i++) { if (pred && !pred(i)) continue; var v = col[i]; if (v >= 0) seen.set(v, (seen.get(v) || 0) + 1); }
    return Array.from(seen.keys()).sort(function (a, b) { return S[a] < S[b] ? -1 : S[a] > S[b] ? 1 : 0; });
  }
  var selects = [];
  function selectOf(id, label, col, pred, onChange) {
    var s = el("select");
    s.id = id;
    s.setAttribute("aria-label", label);
    var all = el("option", null, "all " + (label === "status" ? "statuses" : label + "s"));
    all.value = "-1";
    s.appendChild(all);
    var entry = { el: s, col: col, pred: pred, seen: new Set() };
    selects.push(entry);
    fillSelect(entry);
    s.addEventListener("change", function () { onChange(Number(s.value)); applyView(); });
    return s;
  }
  // Options for values not yet offered (more operations may have been read), kept in order.
  function fillSelect(entry) {
    var fresh = distinct(entry.col, entry.pred).filter(function (v) { return !entry.seen.has(v); });
    if (fresh.length === 0) return;
    var chosen = entry.el.value, values = Array.from(entry.seen).concat(fresh).sort(function (a, b) { return S[a] < S[b] ? -1 : S[a] > S[b] ? 1 : 0; });
    while (entry.el.options.length > 1) entry.el.remove(1);
    values.forEach(function (v) { entry.seen.add(v); var o = el("option", null, cut(shown(S[v]), 80)); o.value = String(v); entry.el.appendChild(o); });
    entry.el.value = chosen;
  }
  function buildControls() {
    var box = $("controls");
    var q = el("input");
    q.id = "search"; q.type = "search"; q.placeholder = "search tool, server, session, status, rpc id, line"; q.setAttribute("aria-label", "search");
    var timer = 0;
    q.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(function () { filter.q = q.value.toLowerCase(); applyView(); }, 120); });
    var inRows = el("input"); inRows.type = "checkbox"; inRows.id = "in-rows";
    inRows.addEventListener("change", function () { filter.inRows = inRows.checked; applyView(); });
    var inRowsLabel = el("label", null, " in rows"); inRowsLabel.prepend(inRows);
    var toolKind = S.indexOf("tool_call");
    var servers = selectOf("f-server", "server", fSrv, null, function (v) { filter.server = v; });
    var tools = selectOf("f-tool", "tool", fName, function (i) { return fKind[i] === toolKind; }, function (v) { filter.tool = v; });
    var statuses = selectOf("f-status", "status", fSt, null, function (v) { filter.status = v; });
    var kinds = selectOf("f-kind", "operation", fKind, null, function (v) { filter.kind = v; });
    var sort = el("select"); sort.id = "sort"; sort.setAttribute("aria-label", "sort");
    [["line", "ledger order"], ["time", "time"], ["ms", "slowest first"]].forEach(function (p) { var o = el("option", null, p[1]); o.value = p[0]; sort.appendChild(o); });
    sort.addEventListener("change", function () { sortBy = sort.value; applyView(); });
    var tz = el("input"); tz.type = "checkbox"; tz.id = "utc";
    tz.addEventListener("change", function () { utc = tz.checked; layoutDay(); renderRows(); showDetails(); drawTimeline(); });
    var tzLabel = el("label", null, " UTC"); tzLabel.prepend(tz);
    add(box, q, inRowsLabel, servers, tools, statuses, kinds, el("span", "count", "sort"), sort, tzLabel, el("span", "count", ""));
    box.lastChild.id = "count";
  }

  // ---- filtering and sorting ----
  function applyView() {
    var q = filter.q, hits = null, ids = null;
    if (q) {
      hits = new Uint8Array(S.length);
      for (var s = 0; s < S.length; s++) if (S[s].toLowerCase().indexOf(q) >= 0) hits[s] = 1;
      ids = meta.sessions.map(function (x) { return x.id.toLowerCase().indexOf(q) >= 0; });
    }
    var lineQ = /^\d+$/.test(q) ? Number(q) : -1;
    var toolKind = S.indexOf("tool_call");
    var out = new Int32Array(loaded), n = 0;
    for (var i = 0; i < loaded; i++) {
      if (filter.server >= 0 && fSrv[i] !== filter.server) continue;
      if (filter.tool >= 0 && (fName[i] !== filter.tool || fKind[i] !== toolKind)) continue;
      if (filter.status >= 0 && fSt[i] !== filter.status) continue;
      if (filter.kind >= 0 && fKind[i] !== filter.kind) continue;
      if (q && !(
        (fSrv[i] >= 0 && hits[fSrv[i]]) || (fName[i] >= 0 && hits[fName[i]]) || (fSt[i] >= 0 && hits[fSt[i]]) ||
        hits[fKind[i]] || (fSes[i] >= 0 && ids[fSes[i]]) || (fId[i] !== null && fId[i].toLowerCase().indexOf(q) >= 0) ||
        fLine[i] === lineQ || (filter.inRows && inRowText(i, q)))) continue;
      out[n++] = i;
    }
    var ops = out.subarray(0, n);
    if (sortBy === "time") ops = Int32Array.from(ops).sort(function (a, b) { return cmpNum(fT[a], fT[b]) || a - b; });
    else if (sortBy === "ms") ops = Int32Array.from(ops).sort(function (a, b) { var x = fMs[a], y = fMs[b]; return (x !== x || y !== y ? cmpNum(x, y) : y - x) || a - b; });
    view = withMarkers(ops);
    $("count").textContent = n.toLocaleString("en-US") + " of " + N.toLocaleString("en-US") + " operations" + (loaded < N ? " (" + loaded.toLocaleString("en-US") + " read so far)" : "");
    $("table-body").setAttribute("data-rows", String(n));
    layoutTable();
    buildLanes(ops);
    drawTimeline();
  }
  function cmpNum(a, b) { var an = a !== a, bn = b !== b; if (an || bn) return an === bn ? 0 : an ? 1 : -1; return a - b; }
  function inRowText(op, q) {
    return rowsOf(op)[1].some(function (r) { return r.text.toLowerCase().indexOf(q) >= 0; });
  }
  // The first break of each file is shown in place, in ledger order; sorted otherwise, at the top.
  function withMarkers(ops) {
    markers = [];
    meta.files.forEach(function (f, fi) { if (f.first_break) markers.push({ file: fi, line: f.first_break.line, text: "\u2500\u2500 " + (meta.files.length > 1 ? shown(f.path) + ": " : "") + shown(f.first_break.message) + ": rows below are not vouched for by the chain \u2500\u2500" }); });
    if (markers.length === 0) return ops;
    var out = new Int32Array(ops.length + markers.length), n = 0, placed = new Array(markers.length);
    if (sortBy !== "line") {
      for (var m = 0; m < markers.length; m++) out[n++] = -(m + 1);
      out.set(ops, n);
      return out;
    }
    for (var i = 0; i < ops.length; i++) {
      var op = ops[i];
      for (var k = 0; k < markers.length; k++) {
        var mk = markers[k];
        if (!placed[k] && (mk.file < fFile[op] || (mk.file === fFile[op] && mk.line !== null && fLine[op] >= mk.line))) { out[n++] = -(k + 1); placed[k] = true; }
      }
      out[n++] = op;
    }
    for (var r = 0; r < markers.length; r++) if (!placed[r]) out[n++] = -(r + 1);
    return out;
  }

  // ---- table (virtualized: only the rows in sight exist) ----
  var scroller, spacer, pool = [], markerPool = [];
  var COLS = ["time", "session", "server", "operation", "name", "status", "ms", "rpc id", "line", "proof"];
  function buildTable() {
    var head = $("table-head");
    COLS.forEach(function (c, i) { add(head, el("div", i >= 6 && i <= 8 ? "num" : null, c)); });
    scroller = $("table-body");
    spacer = el("div", "spacer");
    scroller.appendChild(spacer);
    scroller.addEventListener("scroll", renderRows);
    scroller.addEventListener("keydown", function (ev) {
      if (ev.key !== "ArrowDown" && ev.key !== "ArrowUp") return;
      ev.preventDefault();
      var pos = positionOf(selected), next = pos;
      do { next += ev.key === "ArrowDown" ? 1 : -1; } while (next >= 0 && next < view.length && view[next] < 0);
      if (next >= 0 && next < view.length) select(view[next], true);
    });
    window.addEventListener("resize", function () { renderRows(); drawTimeline(); });
  }
  function layoutTable() {
    spacer.style.height = Math.min(view.length * ROW_H, MAX_PX) + "px";
    renderRows();
  }
  function firstVisible() {
    var top = scroller.scrollTop, h = scroller.clientHeight, total = view.length * ROW_H;
    if (total <= MAX_PX) return { first: Math.floor(top / ROW_H), offset: top - (top % ROW_H) };
    var visible = Math.ceil(h / ROW_H), frac = top / Math.max(1, MAX_PX - h);
    return { first: Math.min(view.length - visible, Math.floor(frac * (view.length - visible))), offset: top };
  }
  function renderRows() {
    if (!scroller) return;
    var h = scroller.clientHeight || 440, fv = firstVisible(), count = Math.ceil(h / ROW_H) + 1;
    var used = 0, usedM = 0;
    for (var i = 0; i < count; i++) {
      var pos = fv.first + i;
      if (pos >= view.length) break;
      var entry = view[pos], y = fv.offset + i * ROW_H;
      if (entry < 0) {
        var m = markerPool[usedM] || (markerPool[usedM] = spacer.appendChild(el("div", "marker")));
        usedM++;
        m.style.display = "";
        m.style.top = y + "px";
        m.textContent = markers[-entry - 1].text;
        m.setAttribute("data-line", String(markers[-entry - 1].line));
        continue;
      }
      var r = pool[used] || (pool[used] = makeRow());
      used++;
      fillRow(r, entry);
      r.style.display = "";
      r.style.top = y + "px";
    }
    for (var a = used; a < pool.length; a++) pool[a].style.display = "none";
    for (var b = usedM; b < markerPool.length; b++) markerPool[b].style.display = "none";
  }
  function makeRow() {
    var r = el("div", "trow");
    for (var i = 0; i < COLS.length; i++) r.appendChild(el("div", i >= 6 && i <= 8 ? "num" : null));
    r.addEventListener("click", function () { select(Number(r.getAttribute("data-op")), false); });
    spacer.appendChild(r);
    return r;
  }
  function str(i) { return i >= 0 ? cut(shown(S[i]), CELL_MAX) : ""; }
  function proofOf(op) { return fFl[op] & F_NOT_VOUCHED ? "not vouched" : fFl[op] & F_SEALED ? "sealed" : "chain"; }
  function fillRow(r, op) {
    var c = r.children, st = fSt[op] >= 0 ? S[fSt[op]] : "";
    r.setAttribute("data-op", String(op));
    r.setAttribute("data-line", String(fLine[op]));
    r.className = "trow" + (op === selected ? " sel" : "") + (fFl[op] & F_NOT_VOUCHED ? " nv" : "");
    c[0].textContent = cellTime(fT[op]);
    c[1].textContent = fSes[op] >= 0 ? cut(shown(meta.sessions[fSes[op]].id), 8) : "";
    c[2].textContent = str(fSrv[op]);
    c[3].textContent = str(fKind[op]);
    c[4].textContent = str(fName[op]);
    c[5].textContent = cut(shown(st), CELL_MAX);
    c[5].className = "status s-" + (STATUS_COLOR[st] ? st : "other");
    c[6].textContent = fmtMs(fMs[op]);
    c[7].textContent = fId[op] === null ? "" : cut(shown(fId[op]), 40);
    c[8].textContent = String(fLine[op]);
    c[9].textContent = proofOf(op);
  }
  function positionOf(op) { for (var i = 0; i < view.length; i++) if (view[i] === op) return i; return -1; }
  function select(op, scrollTo) {
    selected = op;
    var pos = positionOf(op);
    if (pos >= 0 && (scrollTo || !isVisible(pos))) scrollToPos(pos);
    renderRows();
    drawTimeline();
    showDetails();
  }
  function isVisible(pos) { var fv = firstVisible(); return pos >= fv.first && pos < fv.first + Math.floor(scroller.clientHeight / ROW_H); }
  function scrollToPos(pos) {
    var total = view.length * ROW_H, h = scroller.clientHeight;
    if (total <= MAX_PX) {
      var y = pos * ROW_H;
      if (y < scroller.scrollTop || y + ROW_H > scroller.scrollTop + h) scroller.scrollTop = Math.max(0, y - h / 2);
    } else {
      var visible = Math.ceil(h / ROW_H);
      scroller.scrollTop = Math.max(0, (pos - visible / 2) / Math.max(1, view.length - visible)) * (MAX_PX - h);
    }
  }

  // ---- details pane ----
  function showDetails() {
    var box = $("details");
    box.textContent = "";
    var op = selected;
    if (op < 0) { add(box, el("div", "empty", "Select an operation in the table or on the timeline.")); return; }
    box.setAttribute("data-op", String(op));
    add(box, el("h3", null, str(fKind[op]) + (fName[op] >= 0 ? " " + cut(shown(S[fName[op]]), 300) : "")));
    var kv = el("div", "kv");
    function row(k, v, cls, copy) {
      var val = el("div", "v" + (cls ? " " + cls : ""), v);
      if (copy !== undefined) { val.appendChild(document.createTextNode(" ")); val.appendChild(copyButton(copy, "copy " + k)); }
      add(kv, el("div", "k", k), val);
    }
    var f = meta.files[fFile[op]], rec = rowsOf(op), lines = rec[0];
    row("file", shown(f.path));
    row("ledger lines", lines.join(", "));
    row("time", fmtTime(fT[op]) + (utc ? " UTC" : " local"));
    if (fSes[op] >= 0) row("session", shown(meta.sessions[fSes[op]].id), "mono", meta.sessions[fSes[op]].id);
    if (fSrv[op] >= 0) row("server", shown(S[fSrv[op]]));
    if (fSt[op] >= 0) row("status", shown(S[fSt[op]]));
    if (fMs[op] === fMs[op]) row("ms", String(fMs[op]));
    if (fId[op] !== null) row("rpc id", shown(fId[op]), "mono");
    if (fFl[op] & F_NOT_VOUCHED) row("chain", "not vouched for by the chain" + (f.first_break ? " (first break: " + shown(f.first_break.message) + ")" : ""), "warn");
    else row("chain", f.first_break ? "vouched for: before the first break" : "vouched for by the chain (" + f.verdict + ")");
    row("seal", f.sealed === null ? "not checked (no --key given)" : fFl[op] & F_SEALED ? "sealed: under a signed checkpoint that holds" : "not sealed (" + shown(f.sealed) + ")");
    add(box, kv);
    if (lines.length > 1) add(box, el("div", "count", "its " + lines.length + " rows, in ledger order:"));
    // Every row it joins (an intent, each round, the result, an operation_end), each with all its fields.
    rec[1].forEach(function (r, k) {
      var tree = null;
      try { tree = parse(r.text); } catch (e) { tree = null; }
      var evt = tree !== null && tree.t === "o" ? tree.e.filter(function (p) { return p[0] === "evt" && p[1].t === "s"; })[0] : undefined;
      var what = lines.length === 1 ? "the row" : (evt ? cut(shown(evt[1].v), 80) : "row " + (k + 1)) + (lines[k] === fLine[op] ? ", the row that finished it" : "");
      var sec = el("details", "rowsec");
      sec.open = lines.length <= 8 || k === 0 || k === lines.length - 1;
      sec.setAttribute("data-line", String(lines[k]));
      var head = el("summary", "rowhead", "line " + lines[k] + ": " + what + (r.rebuilt ? " (as parsed, without its chain value)" : ", as the file holds it"));
      head.appendChild(document.createTextNode(" "));
      head.appendChild(copyButton(r.text, "copy the row"));
      add(sec, head, tree === null ? el("pre", "j", cut(r.text, TEXT_MAX)) : fields(tree));
      add(box, sec);
    });
  }
  // One ledger row as key/value pairs; nested values as collapsible JSON, numbers exactly as written.
  function fields(node) {
    if (node.t !== "o") return jsonNode(node, 0);
    var kv = el("div", "kv");
    node.e.forEach(function (p) {
      var k = p[0], v = p[1], cell = el("div", "v j");
      cell.setAttribute("data-key", k);
      if (v.t === "s") {
        appendLong(cell, shown(v.v));
        if (/(^|_)digests?$/.test(k) || /^sha256:/.test(v.v) || k === "chain") { cell.appendChild(document.createTextNode(" ")); cell.appendChild(copyButton(v.v, "copy " + k)); }
      } else if (v.t === "o" || v.t === "a") {
        cell.appendChild(jsonNode(v, 0, k === "args" || k === "result" || k === "params" || size(v) <= 8));
        if (v.t === "o" && /digests$/.test(k)) v.e.forEach(function (q) { if (q[1].t === "s") { cell.appendChild(el("span", "count", " " + shown(q[0]) + " ")); cell.appendChild(copyButton(q[1].v, "copy " + k + " " + q[0])); } });
      } else cell.appendChild(jsonNode(v, 0));
      add(kv, el("div", "k", shown(k)), cell);
    });
    return kv;
  }
  function size(v) { return v.t === "o" ? v.e.length : v.t === "a" ? v.e.length : 0; }
  function appendLong(parent, text) {
    if (text.length <= TEXT_MAX) { parent.appendChild(document.createTextNode(text)); return; }
    var t = document.createTextNode(text.slice(0, TEXT_MAX));
    var more = el("button", "more", "show all " + text.length.toLocaleString("en-US") + " characters");
    more.addEventListener("click", function () { t.textContent = text; more.remove(); });
    add(parent, t, el("span", "more", "\u2026 "), more);
  }
  function jsonNode(v, depth, open) {
    if (v.t === "s") { var s = el("span", "str"); appendLong(s, JSON.stringify(v.v).replace(/[\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, function (c) { return "\\u" + ("000" + c.charCodeAt(0).toString(16)).slice(-4); })); return s; }
    if (v.t === "n") return el("span", "num", v.v);
    if (v.t === "l") return el("span", "lit", v.v);
    var d = el("details");
    if (open !== false && (open || depth < 2)) d.open = true;
    var isObj = v.t === "o";
    add(d, el("summary", null, (isObj ? "{\u2026} " : "[\u2026] ") + v.e.length + (isObj ? " key" : " item") + (v.e.length === 1 ? "" : "s")));
    // Children are built when first opened: a deep or wide value costs nothing until looked at.
    var built = false;
    function build() {
      if (built) return;
      built = true;
      v.e.forEach(function (p) {
        var item = el("div", "item");
        if (isObj) add(item, el("span", "key", JSON.stringify(shown(p[0]))), document.createTextNode(": "));
        item.appendChild(jsonNode(isObj ? p[1] : p, depth + 1));
        d.appendChild(item);
      });
    }
    if (d.open) build();
    d.addEventListener("toggle", build);
    return d;
  }
  // A JSON parser that keeps numbers as written (a 2^64 id stays exact) and keys in order, duplicates included.
  function parse(text) {
    var i = 0;
    function ws() { while (i < text.length) { var c = text.charCodeAt(i); if (c === 32 || c === 9 || c === 10 || c === 13) i++; else break; } }
    function value() {
      ws();
      var c = text[i];
      if (c === "{") {
        i++; var e = []; ws();
        if (text[i] === "}") { i++; return { t: "o", e: e }; }
        for (;;) { ws(); var k = string(); ws(); if (text[i++] !== ":") throw new Error("json"); var v = value(); e.push([k, v]); ws(); var d = text[i++]; if (d === "}") return { t: "o", e: e }; if (d !== ",") throw new Error("json"); }
      }
      if (c === "[") {
        i++; var a = []; ws();
        if (text[i] === "]") { i++; return { t: "a", e: a }; }
        for (;;) { a.push(value()); ws(); var d2 = text[i++]; if (d2 === "]") return { t: "a", e: a }; if (d2 !== ",") throw new Error("json"); }
      }
      if (c === '"') return { t: "s", v: string() };
      var m = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null|NaN|-?Infinity)/.exec(text.slice(i, i + 5000));
      if (!m) throw new Error("json");
      i += m[0].length;
      return /^[tfn]/.test(m[0]) ? { t: "l", v: m[0] } : { t: "n", v: m[0] };
    }
    function string() {
      if (text[i] !== '"') throw new Error("json");
      var j = i + 1;
      for (;;) { var q = text.indexOf('"', j); if (q < 0) throw new Error("json"); var b = 0, k = q - 1; while (text[k] === "\\") { b++; k--; } if (b % 2 === 0) { var s = JSON.parse(text.slice(i, q + 1)); i = q + 1; return s; } j = q + 1; }
    }
    var out = value();
    ws();
    if (i !== text.length) throw new Error("json");
    return out;
  }

  // ---- timeline: one lane per session, marks coloured by status ----
  var tl = { canvas: null, wrap: null, laneH: 16, label: 170, t0: 0, t1: 1, lanes: [], hover: -1 };
  function buildTimeline() {
    var wrap = $("timeline");
    var canvas = el("canvas");
    canvas.id = "timeline-canvas";
    var lanes = meta.sessions.length;
    tl.laneH = lanes <= 12 ? 18 : lanes <= 60 ? 10 : 6;
    var height = Math.max(1, lanes) * tl.laneH + 22;
    wrap.style.height = Math.min(height, 260) + "px";
    var sp = el("div");
    sp.style.height = Math.max(0, height - Math.min(height, 260)) + "px";
    add(wrap, canvas, sp);
    tl.canvas = canvas; tl.wrap = wrap;
    timeRange();

    // Wheel over the lanes zooms around the pointer (shift+wheel pans); a double click shows it all again.
    canvas.addEventListener("wheel", function (ev) {
      var r = canvas.getBoundingClientRect(), x = ev.clientX - r.left, w = tl.wrap.clientWidth;
      if (x < tl.label || (!ev.ctrlKey && !ev.shiftKey && !ev.altKey)) return;
      ev.preventDefault();
      var span = tl.t1 - tl.t0, at = tl.t0 + ((x - tl.label) / (w - tl.label - 8)) * span;
      if (ev.shiftKey) { var d = (ev.deltaY || ev.deltaX) / (w - tl.label) * span; tl.t0 += d; tl.t1 += d; }
      else { var k = ev.deltaY < 0 ? 0.8 : 1.25, ns = Math.max(1, Math.min(tl.full[1] - tl.full[0], span * k)); tl.t0 = at - (at - tl.t0) * (ns / span); tl.t1 = tl.t0 + ns; }
      drawTimeline();
    }, { passive: false });
    canvas.addEventListener("dblclick", function () { tl.t0 = tl.full[0]; tl.t1 = tl.full[1]; drawTimeline(); });
    wrap.addEventListener("scroll", drawTimeline);
    canvas.addEventListener("mousemove", function (ev) {
      var op = hit(ev);
      tl.hover = op;
      if (op < 0) { var L = laneAt(ev); if (L >= 0) { sessionTip(ev, L); return; } }
      tip(ev, op);
    });
    canvas.addEventListener("mouseleave", function () { tl.hover = -1; tip(null, -1); });
    canvas.addEventListener("click", function (ev) { var op = hit(ev); if (op >= 0) select(op, true); });
    add($("timeline-help"), document.createTextNode("hover a mark for the call, click it to select it in the table; ctrl+wheel zooms, shift+wheel pans, double click shows all"));
    var legend = $("legend");
    Object.keys(STATUS_COLOR).forEach(function (k) { var s = el("span", null, k); s.style.setProperty("--c", STATUS_COLOR[k]); legend.appendChild(s); });
    var nv = el("span", null, "not vouched for"); nv.style.setProperty("--c", "#c9d1d9"); legend.appendChild(nv);
  }
  // The span of every time read so far; a view not zoomed in follows it.
  function timeRange() {
    var t0 = Infinity, t1 = -Infinity;
    for (var i = 0; i < loaded; i++) if (fT[i] === fT[i]) { if (fT[i] < t0) t0 = fT[i]; var end = fT[i] + (fMs[i] === fMs[i] ? fMs[i] : 0); if (end > t1) t1 = end; }
    meta.sessions.forEach(function (s) { if (s.begin !== null && s.begin < t0) t0 = s.begin; if (s.end !== null && s.end > t1) t1 = s.end; });
    if (!(t0 < Infinity)) { t0 = 0; t1 = 1; }
    if (t1 <= t0) t1 = t0 + 1;
    var whole = !tl.full || (tl.t0 === tl.full[0] && tl.t1 === tl.full[1]);
    tl.full = [t0, t1];
    if (whole) { tl.t0 = t0; tl.t1 = t1; }
  }
  function buildLanes(ops) {
    var lanes = meta.sessions.map(function () { return []; });
    for (var i = 0; i < ops.length; i++) { var op = ops[i]; if (fSes[op] >= 0 && fSt[op] >= 0 && fT[op] === fT[op]) lanes[fSes[op]].push(op); }
    tl.lanes = lanes.map(function (l) { return Int32Array.from(l).sort(function (a, b) { return fT[a] - fT[b] || a - b; }); });
  }
  function xOf(t, w) { return tl.label + ((t - tl.t0) / (tl.t1 - tl.t0)) * (w - tl.label - 8); }
  function drawTimeline() {
    var c = tl.canvas;
    if (!c) return;
    var dpr = window.devicePixelRatio || 1, w = tl.wrap.clientWidth, h = tl.wrap.clientHeight;
    if (c.width !== Math.round(w * dpr) || c.height !== Math.round(h * dpr)) { c.width = Math.round(w * dpr); c.height = Math.round(h * dpr); c.style.width = w + "px"; c.style.height = h + "px"; }
    var g = c.getContext("2d");
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, h);
    g.font = "11px system-ui, sans-serif";
    g.textBaseline = "middle";
    var top = tl.wrap.scrollTop, lh = tl.laneH;
    var firstLane = Math.floor(top / lh), lastLane = Math.min(meta.sessions.length - 1, Math.floor((top + h - 22) / lh));
    var plotW = w - tl.label - 8;
    var bucket = new Uint8Array(Math.max(1, Math.ceil(plotW) + 2)), grey = new Uint8Array(bucket.length);
    var colors = [null, STATUS_COLOR.ok, STATUS_COLOR.cancelled, STATUS_COLOR.input_required, STATUS_COLOR.unanswered, STATUS_COLOR.refused, STATUS_COLOR.error, "#57606a"];
    for (var L = firstLane; L <= lastLane; L++) {
      var y = L * lh - top, s = meta.sessions[L];
      if (L % 2) { g.fillStyle = "#f6f8fa"; g.fillRect(0, y, w, lh); }
      if (s.begin !== null) {
        var xb = xOf(s.begin, w), xe = xOf(s.end !== null ? s.end : s.last !== null ? s.last : s.begin, w);
        g.fillStyle = s.complete ? "#afb8c1" : "#e6a23c";
        g.fillRect(xb, y + lh / 2 - 1, Math.max(1, xe - xb), 2);
        if (s.end !== null) { g.fillStyle = s.exit === "0" || s.exit === null ? "#57606a" : STATUS_COLOR.error; g.fillRect(xe - 1, y + 2, 2, lh - 4); }
      }
      bucket.fill(0); grey.fill(0);
      var ops = tl.lanes[L] || [];
      for (var i = 0; i < ops.length; i++) {
        var op = ops[i], px = Math.round(xOf(fT[op], w) - tl.label);
        if (px < 0 || px >= bucket.length) continue;
        if (fFl[op] & F_NOT_VOUCHED) { grey[px] = 1; continue; }
        var rank = STATUS_RANK[S[fSt[op]]] || 7;
        if (rank > bucket[px]) bucket[px] = rank;
      }
      for (var x = 0; x < bucket.length; x++) {
        if (bucket[x]) { g.fillStyle = colors[bucket[x]]; g.fillRect(tl.label + x - 1, y + 2, 3, lh - 4); }
        else if (grey[x]) { g.fillStyle = "#c9d1d9"; g.fillRect(tl.label + x - 1, y + 2, 3, lh - 4); }
      }
      // The label last, over anything a zoomed-in lane drew left of the plot.
      g.fillStyle = L % 2 ? "#f6f8fa" : "#fff";
      g.fillRect(0, y, tl.label - 2, lh);
      g.fillStyle = "#1d2329";
      if (lh >= 10) g.fillText(cut(shown((s.server === null ? "" : s.server + " ") + s.id.slice(0, 8)), 28).slice(0, 28), 4, y + lh / 2);
    }
    // The first break: a red line where what the chain vouches for ends.
    meta.files.forEach(function (f, fi) {
      if (!f.first_break) return;
      for (var i = 0; i < loaded; i++) if (fFile[i] === fi && fFl[i] & F_NOT_VOUCHED && fT[i] === fT[i]) { var xb = xOf(fT[i], w); g.fillStyle = STATUS_COLOR.error; g.fillRect(xb - 1, 0, 2, h - 20); break; }
    });
    if (selected >= 0 && fSes[selected] >= 0 && fT[selected] === fT[selected]) {
      var ys = fSes[selected] * lh - top;
      g.strokeStyle = "#000"; g.lineWidth = 2;
      g.strokeRect(xOf(fT[selected], w) - 3, ys + 1, 6, lh - 2);
    }
    // Axis: start and end times.
    g.fillStyle = "#fff"; g.fillRect(0, h - 20, w, 20);
    g.fillStyle = "#5f6b76";
    g.fillText(fmtTime(tl.t0), tl.label, h - 10);
    var endText = fmtTime(tl.t1), tw = g.measureText(endText).width;
    g.fillText(endText, w - tw - 8, h - 10);
  }
  function hit(ev) {
    var r = tl.canvas.getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top + tl.wrap.scrollTop;
    var L = Math.floor(y / tl.laneH), w = tl.wrap.clientWidth;
    if (L < 0 || L >= tl.lanes.length || x < tl.label) return -1;
    var ops = tl.lanes[L];
    if (!ops || ops.length === 0) return -1;
    var t = tl.t0 + ((x - tl.label) / (w - tl.label - 8)) * (tl.t1 - tl.t0);
    var lo = 0, hi = ops.length - 1;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (fT[ops[mid]] < t) lo = mid + 1; else hi = mid; }
    var best = -1, bestD = 6;
    for (var k = Math.max(0, lo - 2); k <= Math.min(ops.length - 1, lo + 2); k++) { var d = Math.abs(xOf(fT[ops[k]], w) - x); if (d < bestD) { bestD = d; best = ops[k]; } }
    return best;
  }
  // Over a lane's label: the session, how long it ran and how it ended.
  function laneAt(ev) {
    var r = tl.canvas.getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top + tl.wrap.scrollTop;
    var L = Math.floor(y / tl.laneH);
    return x < tl.label && L >= 0 && L < meta.sessions.length ? L : -1;
  }
  function sessionTip(ev, L) {
    var s = meta.sessions[L], t = $("tip");
    var end = s.end !== null ? s.end : s.last;
    t.hidden = false;
    t.textContent = ["session " + cut(shown(s.id), 120), "server " + (s.server === null ? "(none)" : cut(shown(s.server), 120)),
      "began " + (s.begin === null ? "(unknown)" : fmtTime(s.begin)) + (s.begin !== null && end !== null ? ", ran " + fmtMs(end - s.begin) + " ms" : ""),
      s.end !== null ? "ended: " + (s.reason === null ? "(no reason)" : cut(shown(s.reason), 80)) + ", exit code " + (s.exit === null ? "(none)" : cut(shown(s.exit), 40)) : "no session_end in the file",
      s.complete ? "complete" : "incomplete (seam verify says why)"].join("\n");
    t.style.left = Math.min(ev.clientX + 12, window.innerWidth - 300) + "px";
    t.style.top = ev.clientY + 14 + "px";
  }
  function tip(ev, op) {
    var t = $("tip");
    if (op < 0 || !ev) { t.hidden = true; return; }
    t.hidden = false;
    t.textContent = [str(fKind[op]) + (fName[op] >= 0 ? " " + cut(shown(S[fName[op]]), 120) : ""),
      "status " + (fSt[op] >= 0 ? cut(shown(S[fSt[op]]), 60) : "") + (fMs[op] === fMs[op] ? ", " + fmtMs(fMs[op]) + " ms" : ""),
      fmtTime(fT[op]) + ", line " + fLine[op] + (fFl[op] & F_NOT_VOUCHED ? " (not vouched for)" : "")].join("\n");
    t.style.left = Math.min(ev.clientX + 12, window.innerWidth - 300) + "px";
    t.style.top = ev.clientY + 14 + "px";
  }

  // ---- per-tool summary (the seam stats figures) with a latency distribution ----
  function buildTools() {
    var box = $("tools");
    var rows = meta.tools || [];
    if (rows.length === 0) { add(box, el("div", "empty", "No tool calls.")); return; }
    var table = el("table", "tools"), head = el("tr");
    ["server", "tool", "calls", "vouched", "ok", "error", "unanswered", "cancelled", "error rate", "p50 ms", "p95 ms", "p99 ms", "max ms", "distribution (log ms)"].forEach(function (h) { add(head, el("th", null, h)); });
    add(table, add(el("thead"), head));
    var body = el("tbody");
    var toolKind = S.indexOf("tool_call");
    var bins = 24, lo = Math.log10(0.01), hi = Math.log10(600000);
    var hist = new Map();
    for (var i = 0; i < loaded; i++) {
      if (fKind[i] !== toolKind || fMs[i] !== fMs[i]) continue;
      var key = fSrv[i] + ":" + fName[i];
      var hgm = hist.get(key) || (hist.set(key, new Uint32Array(bins)), hist.get(key));
      var b = Math.floor(((Math.log10(Math.max(fMs[i], 0.01)) - lo) / (hi - lo)) * bins);
      hgm[Math.max(0, Math.min(bins - 1, b))]++;
    }
    rows.forEach(function (t) {
      var tr = el("tr");
      var st = t.statuses || {};
      [cut(shown(t.server === null ? "" : t.server), 80), cut(shown(t.tool === null ? "" : t.tool), 80), t.calls, t.vouched, st.ok || 0, st.error || 0, st.unanswered || 0, st.cancelled || 0,
        (t.error_rate * 100).toFixed(1) + "%", fmtN(t.p50), fmtN(t.p95), fmtN(t.p99), fmtN(t.max)].forEach(function (v) { add(tr, el("td", null, v)); });
      var cell = el("td");
      var h = hist.get(S.indexOf(t.server) + ":" + S.indexOf(t.tool));
      if (h) cell.appendChild(histogram(h));
      add(tr, cell);
      body.appendChild(tr);
    });
    add(table, body);
    add(box, table);
    add(box, el("div", "count", "distribution: calls per bin, ms on a log scale from 0.01 ms to 10 min"));
  }
  function fmtN(v) { return v === null || v === undefined ? "" : fmtMs(v); }
  function histogram(h) {
    var NS = "http://www.w3.org/2000/svg", svg = document.createElementNS(NS, "svg"), max = 0;
    for (var i = 0; i < h.length; i++) if (h[i] > max) max = h[i];
    svg.setAttribute("width", "120"); svg.setAttribute("height", "22"); svg.setAttribute("viewBox", "0 0 120 22");
    for (var j = 0; j < h.length; j++) {
      if (!h[j]) continue;
      var r = document.createElementNS(NS, "rect"), bh = Math.max(1, Math.round((h[j] / max) * 20));
      r.setAttribute("x", String(j * 5)); r.setAttribute("y", String(22 - bh)); r.setAttribute("width", "4"); r.setAttribute("height", String(bh));
      r.setAttribute("fill", "#57606a");
      var title = document.createElementNS(NS, "title");
      title.textContent = h[j] + " calls";
      r.appendChild(title);
      svg.appendChild(r);
    }
    return svg;
  }

  start();
})();
`;
