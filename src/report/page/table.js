// @ts-check
/**
 * The report page's script, part 3 of 6 (src/report/page-script.ts joins them):
 * the filter controls, filtering and sorting, and the virtualized table.
 */

// ---- controls ----
function distinct(col, pred) {
  const seen = new Map();
  for (let i = 0; i < loaded; i++) {
    if (pred && !pred(i)) continue;
    const v = col[i];
    if (v >= 0) seen.set(v, (seen.get(v) || 0) + 1);
  }
  return Array.from(seen.keys()).sort((a, b) => (S[a] < S[b] ? -1 : S[a] > S[b] ? 1 : 0));
}
const selects = [];
function selectOf(id, label, col, pred, onChange) {
  const s = el("select");
  s.id = id;
  s.setAttribute("aria-label", label);
  const all = el("option", null, `all ${label === "status" ? "statuses" : `${label}s`}`);
  all.value = "-1";
  s.appendChild(all);
  const entry = { el: s, col: col, pred: pred, seen: new Set() };
  selects.push(entry);
  fillSelect(entry);
  s.addEventListener("change", () => {
    onChange(Number(s.value));
    applyView();
  });
  return s;
}
// Options for values not yet offered (more operations may have been read), kept in order.
function fillSelect(entry) {
  const fresh = distinct(entry.col, entry.pred).filter((v) => !entry.seen.has(v));
  if (fresh.length === 0) return;
  const chosen = entry.el.value,
    values = Array.from(entry.seen)
      .concat(fresh)
      .sort((a, b) => (S[a] < S[b] ? -1 : S[a] > S[b] ? 1 : 0));
  while (entry.el.options.length > 1) entry.el.remove(1);
  values.forEach((v) => {
    entry.seen.add(v);
    const o = el("option", null, cut(shown(S[v]), 80));
    o.value = String(v);
    entry.el.appendChild(o);
  });
  entry.el.value = chosen;
}
function buildControls() {
  const box = $("controls");
  const q = el("input");
  q.id = "search";
  q.type = "search";
  q.placeholder = "search tool, server, session, status, rpc id, line";
  q.setAttribute("aria-label", "search");
  let timer = 0;
  q.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      filter.q = q.value.toLowerCase();
      applyView();
    }, 120);
  });
  const inRows = el("input");
  inRows.type = "checkbox";
  inRows.id = "in-rows";
  inRows.addEventListener("change", () => {
    filter.inRows = inRows.checked;
    applyView();
  });
  const inRowsLabel = el("label", null, " in rows");
  inRowsLabel.prepend(inRows);
  const toolKind = S.indexOf("tool_call");
  const servers = selectOf("f-server", "server", fSrv, null, (v) => {
    filter.server = v;
  });
  const tools = selectOf(
    "f-tool",
    "tool",
    fName,
    (i) => fKind[i] === toolKind,
    (v) => {
      filter.tool = v;
    },
  );
  const statuses = selectOf("f-status", "status", fSt, null, (v) => {
    filter.status = v;
  });
  const kinds = selectOf("f-kind", "operation", fKind, null, (v) => {
    filter.kind = v;
  });
  const sort = el("select");
  sort.id = "sort";
  sort.setAttribute("aria-label", "sort");
  [
    ["line", "ledger order"],
    ["time", "time"],
    ["ms", "slowest first"],
  ].forEach((p) => {
    const o = el("option", null, p[1]);
    o.value = p[0];
    sort.appendChild(o);
  });
  sort.addEventListener("change", () => {
    sortBy = sort.value;
    applyView();
  });
  const tz = el("input");
  tz.type = "checkbox";
  tz.id = "utc";
  tz.addEventListener("change", () => {
    utc = tz.checked;
    layoutDay();
    renderRows();
    showDetails();
    drawTimeline();
  });
  const tzLabel = el("label", null, " UTC");
  tzLabel.prepend(tz);
  add(
    box,
    q,
    inRowsLabel,
    servers,
    tools,
    statuses,
    kinds,
    el("span", "count", "sort"),
    sort,
    tzLabel,
    el("span", "count", ""),
  );
  /** @type {HTMLElement} */ (box.lastChild).id = "count";
}

// ---- filtering and sorting ----
function applyView() {
  let q = filter.q,
    hits = null,
    ids = null;
  if (q) {
    hits = new Uint8Array(S.length);
    for (let s = 0; s < S.length; s++) if (S[s].toLowerCase().indexOf(q) >= 0) hits[s] = 1;
    ids = meta.sessions.map((x) => x.id.toLowerCase().indexOf(q) >= 0);
  }
  const lineQ = /^\d+$/.test(q) ? Number(q) : -1;
  const toolKind = S.indexOf("tool_call");
  let out = new Int32Array(loaded),
    n = 0;
  for (let i = 0; i < loaded; i++) {
    if (filter.server >= 0 && fSrv[i] !== filter.server) continue;
    if (filter.tool >= 0 && (fName[i] !== filter.tool || fKind[i] !== toolKind)) continue;
    if (filter.status >= 0 && fSt[i] !== filter.status) continue;
    if (filter.kind >= 0 && fKind[i] !== filter.kind) continue;
    if (
      q &&
      !(
        (fSrv[i] >= 0 && hits[fSrv[i]]) ||
        (fName[i] >= 0 && hits[fName[i]]) ||
        (fSt[i] >= 0 && hits[fSt[i]]) ||
        hits[fKind[i]] ||
        (fSes[i] >= 0 && ids[fSes[i]]) ||
        (fId[i] !== null && fId[i].toLowerCase().indexOf(q) >= 0) ||
        fLine[i] === lineQ ||
        (filter.inRows && inRowText(i, q))
      )
    )
      continue;
    out[n++] = i;
  }
  let ops = out.subarray(0, n);
  if (sortBy === "time") ops = Int32Array.from(ops).sort((a, b) => cmpNum(fT[a], fT[b]) || a - b);
  else if (sortBy === "ms")
    ops = Int32Array.from(ops).sort((a, b) => {
      const x = fMs[a],
        y = fMs[b];
      return (Number.isNaN(x) || Number.isNaN(y) ? cmpNum(x, y) : y - x) || a - b;
    });
  view = withMarkers(ops);
  $("count").textContent =
    n.toLocaleString("en-US") +
    " of " +
    N.toLocaleString("en-US") +
    " operations" +
    (loaded < N ? ` (${loaded.toLocaleString("en-US")} read so far)` : "");
  $("table-body").setAttribute("data-rows", String(n));
  layoutTable();
  buildLanes(ops);
  drawTimeline();
}
function cmpNum(a, b) {
  const an = Number.isNaN(a),
    bn = Number.isNaN(b);
  if (an || bn) return an === bn ? 0 : an ? 1 : -1;
  return a - b;
}
function inRowText(op, q) {
  return rowsOf(op)[1].some((r) => r.text.toLowerCase().indexOf(q) >= 0);
}
// The first break of each file is shown in place, in ledger order; sorted otherwise, at the top.
function withMarkers(ops) {
  markers = [];
  meta.files.forEach((f, fi) => {
    if (f.first_break)
      markers.push({
        file: fi,
        line: f.first_break.line,
        text:
          "\u2500\u2500 " +
          (meta.files.length > 1 ? `${shown(f.path)}: ` : "") +
          shown(f.first_break.message) +
          ": rows below are not vouched for by the chain \u2500\u2500",
      });
  });
  if (markers.length === 0) return ops;
  let out = new Int32Array(ops.length + markers.length),
    n = 0,
    placed = new Array(markers.length);
  if (sortBy !== "line") {
    for (let m = 0; m < markers.length; m++) out[n++] = -(m + 1);
    out.set(ops, n);
    return out;
  }
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i];
    for (let k = 0; k < markers.length; k++) {
      const mk = markers[k];
      if (!placed[k] && (mk.file < fFile[op] || (mk.file === fFile[op] && mk.line !== null && fLine[op] >= mk.line))) {
        out[n++] = -(k + 1);
        placed[k] = true;
      }
    }
    out[n++] = op;
  }
  for (let r = 0; r < markers.length; r++) if (!placed[r]) out[n++] = -(r + 1);
  return out;
}

// ---- table (virtualized: only the rows in sight exist) ----
let scroller,
  spacer,
  pool = [],
  markerPool = [];
const COLS = ["time", "session", "server", "operation", "name", "status", "ms", "rpc id", "line", "proof"];
function buildTable() {
  const head = $("table-head");
  COLS.forEach((c, i) => {
    add(head, el("div", i >= 6 && i <= 8 ? "num" : null, c));
  });
  scroller = $("table-body");
  spacer = el("div", "spacer");
  scroller.appendChild(spacer);
  scroller.addEventListener("scroll", renderRows);
  scroller.addEventListener("keydown", (ev) => {
    if (ev.key !== "ArrowDown" && ev.key !== "ArrowUp") return;
    ev.preventDefault();
    let pos = positionOf(selected),
      next = pos;
    do {
      next += ev.key === "ArrowDown" ? 1 : -1;
    } while (next >= 0 && next < view.length && view[next] < 0);
    if (next >= 0 && next < view.length) select(view[next], true);
  });
  window.addEventListener("resize", () => {
    renderRows();
    drawTimeline();
  });
}
function layoutTable() {
  spacer.style.height = `${Math.min(view.length * ROW_H, MAX_PX)}px`;
  renderRows();
}
function firstVisible() {
  const top = scroller.scrollTop,
    h = scroller.clientHeight,
    total = view.length * ROW_H;
  if (total <= MAX_PX) return { first: Math.floor(top / ROW_H), offset: top - (top % ROW_H) };
  const visible = Math.ceil(h / ROW_H),
    frac = top / Math.max(1, MAX_PX - h);
  return { first: Math.min(view.length - visible, Math.floor(frac * (view.length - visible))), offset: top };
}
function renderRows() {
  if (!scroller) return;
  const h = scroller.clientHeight || 440,
    fv = firstVisible(),
    count = Math.ceil(h / ROW_H) + 1;
  let used = 0,
    usedM = 0;
  for (let i = 0; i < count; i++) {
    const pos = fv.first + i;
    if (pos >= view.length) break;
    const entry = view[pos],
      y = fv.offset + i * ROW_H;
    if (entry < 0) {
      const m = markerPool[usedM] || (markerPool[usedM] = spacer.appendChild(el("div", "marker")));
      usedM++;
      m.style.display = "";
      m.style.top = `${y}px`;
      m.textContent = markers[-entry - 1].text;
      m.setAttribute("data-line", String(markers[-entry - 1].line));
      continue;
    }
    const r = pool[used] || (pool[used] = makeRow());
    used++;
    fillRow(r, entry);
    r.style.display = "";
    r.style.top = `${y}px`;
  }
  for (let a = used; a < pool.length; a++) pool[a].style.display = "none";
  for (let b = usedM; b < markerPool.length; b++) markerPool[b].style.display = "none";
}
function makeRow() {
  const r = el("div", "trow");
  for (let i = 0; i < COLS.length; i++) r.appendChild(el("div", i >= 6 && i <= 8 ? "num" : null));
  r.addEventListener("click", () => {
    select(Number(r.getAttribute("data-op")), false);
  });
  spacer.appendChild(r);
  return r;
}
function str(i) {
  return i >= 0 ? cut(shown(S[i]), CELL_MAX) : "";
}
function proofOf(op) {
  return fFl[op] & F_NOT_VOUCHED ? "not vouched" : fFl[op] & F_SEALED ? "sealed" : "chain";
}
function fillRow(r, op) {
  const c = r.children,
    st = fSt[op] >= 0 ? S[fSt[op]] : "";
  r.setAttribute("data-op", String(op));
  r.setAttribute("data-line", String(fLine[op]));
  r.className = `trow${op === selected ? " sel" : ""}${fFl[op] & F_NOT_VOUCHED ? " nv" : ""}`;
  c[0].textContent = cellTime(fT[op]);
  c[1].textContent = fSes[op] >= 0 ? cut(shown(meta.sessions[fSes[op]].id), 8) : "";
  c[2].textContent = str(fSrv[op]);
  c[3].textContent = str(fKind[op]);
  c[4].textContent = str(fName[op]);
  c[5].textContent = cut(shown(st), CELL_MAX);
  c[5].className = `status s-${STATUS_COLOR[st] ? st : "other"}`;
  c[6].textContent = fmtMs(fMs[op]);
  c[7].textContent = fId[op] === null ? "" : cut(shown(fId[op]), 40);
  c[8].textContent = String(fLine[op]);
  c[9].textContent = proofOf(op);
}
function positionOf(op) {
  for (let i = 0; i < view.length; i++) if (view[i] === op) return i;
  return -1;
}
function select(op, scrollTo) {
  selected = op;
  const pos = positionOf(op);
  if (pos >= 0 && (scrollTo || !isVisible(pos))) scrollToPos(pos);
  renderRows();
  drawTimeline();
  showDetails();
}
function isVisible(pos) {
  const fv = firstVisible();
  return pos >= fv.first && pos < fv.first + Math.floor(scroller.clientHeight / ROW_H);
}
function scrollToPos(pos) {
  const total = view.length * ROW_H,
    h = scroller.clientHeight;
  if (total <= MAX_PX) {
    const y = pos * ROW_H;
    if (y < scroller.scrollTop || y + ROW_H > scroller.scrollTop + h) scroller.scrollTop = Math.max(0, y - h / 2);
  } else {
    const visible = Math.ceil(h / ROW_H);
    scroller.scrollTop = Math.max(0, (pos - visible / 2) / Math.max(1, view.length - visible)) * (MAX_PX - h);
  }
}
