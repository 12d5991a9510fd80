// @ts-check
/**
 * The report page's script, part 6 of 6 (src/report/page-script.ts joins them):
 * the per-tool summary table with its latency histograms.
 */

// ---- per-tool summary (the seam stats figures) with a latency distribution ----
function buildTools() {
  const box = $("tools");
  const rows = meta.tools || [];
  if (rows.length === 0) {
    add(box, el("div", "empty", "No tool calls."));
    return;
  }
  const table = el("table", "tools"),
    head = el("tr");
  [
    "server",
    "tool",
    "calls",
    "vouched",
    "ok",
    "error",
    "unanswered",
    "cancelled",
    "error rate",
    "p50 ms",
    "p95 ms",
    "p99 ms",
    "max ms",
    "distribution (log ms)",
  ].forEach((h) => {
    add(head, el("th", null, h));
  });
  add(table, add(el("thead"), head));
  const body = el("tbody");
  const toolKind = S.indexOf("tool_call");
  const bins = 24,
    lo = Math.log10(0.01),
    hi = Math.log10(600000);
  const hist = new Map();
  for (let i = 0; i < loaded; i++) {
    if (fKind[i] !== toolKind || Number.isNaN(fMs[i])) continue;
    const key = `${fSrv[i]}:${fName[i]}`;
    const hgm = hist.get(key) || (hist.set(key, new Uint32Array(bins)), hist.get(key));
    const b = Math.floor(((Math.log10(Math.max(fMs[i], 0.01)) - lo) / (hi - lo)) * bins);
    hgm[Math.max(0, Math.min(bins - 1, b))]++;
  }
  rows.forEach((t) => {
    const tr = el("tr");
    const st = t.statuses || {};
    [
      cut(shown(t.server === null ? "" : t.server), 80),
      cut(shown(t.tool === null ? "" : t.tool), 80),
      t.calls,
      t.vouched,
      st.ok || 0,
      st.error || 0,
      st.unanswered || 0,
      st.cancelled || 0,
      `${(t.error_rate * 100).toFixed(1)}%`,
      fmtN(t.p50),
      fmtN(t.p95),
      fmtN(t.p99),
      fmtN(t.max),
    ].forEach((v) => {
      add(tr, el("td", null, v));
    });
    const cell = el("td");
    const h = hist.get(`${S.indexOf(t.server)}:${S.indexOf(t.tool)}`);
    if (h) cell.appendChild(histogram(h));
    add(tr, cell);
    body.appendChild(tr);
  });
  add(table, body);
  add(box, table);
  add(box, el("div", "count", "distribution: calls per bin, ms on a log scale from 0.01 ms to 10 min"));
}
function fmtN(v) {
  return v === null || v === undefined ? "" : fmtMs(v);
}
function histogram(h) {
  let NS = "http://www.w3.org/2000/svg",
    svg = document.createElementNS(NS, "svg"),
    max = 0;
  for (let i = 0; i < h.length; i++) if (h[i] > max) max = h[i];
  svg.setAttribute("width", "120");
  svg.setAttribute("height", "22");
  svg.setAttribute("viewBox", "0 0 120 22");
  for (let j = 0; j < h.length; j++) {
    if (!h[j]) continue;
    const r = document.createElementNS(NS, "rect"),
      bh = Math.max(1, Math.round((h[j] / max) * 20));
    r.setAttribute("x", String(j * 5));
    r.setAttribute("y", String(22 - bh));
    r.setAttribute("width", "4");
    r.setAttribute("height", String(bh));
    r.setAttribute("fill", "#57606a");
    const title = document.createElementNS(NS, "title");
    title.textContent = `${h[j]} calls`;
    r.appendChild(title);
    svg.appendChild(r);
  }
  return svg;
}
