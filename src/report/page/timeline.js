// @ts-check
/**
 * The report page's script, part 5 of 6 (src/report/page-script.ts joins them):
 * the timeline canvas, one lane per session, with zoom, pan and tooltips.
 */

// ---- timeline: one lane per session, marks coloured by status ----
const tl = { canvas: null, wrap: null, laneH: 16, label: 170, t0: 0, t1: 1, lanes: [], hover: -1 };
function buildTimeline() {
  const wrap = $("timeline");
  const canvas = el("canvas");
  canvas.id = "timeline-canvas";
  const lanes = meta.sessions.length;
  tl.laneH = lanes <= 12 ? 18 : lanes <= 60 ? 10 : 6;
  const height = Math.max(1, lanes) * tl.laneH + 22;
  wrap.style.height = `${Math.min(height, 260)}px`;
  const sp = el("div");
  sp.style.height = `${Math.max(0, height - Math.min(height, 260))}px`;
  add(wrap, canvas, sp);
  tl.canvas = canvas;
  tl.wrap = wrap;
  timeRange();

  // Wheel over the lanes zooms around the pointer (shift+wheel pans); a double click shows it all again.
  canvas.addEventListener(
    "wheel",
    (ev) => {
      const r = canvas.getBoundingClientRect(),
        x = ev.clientX - r.left,
        w = tl.wrap.clientWidth;
      if (x < tl.label || (!ev.ctrlKey && !ev.shiftKey && !ev.altKey)) return;
      ev.preventDefault();
      const span = tl.t1 - tl.t0,
        at = tl.t0 + ((x - tl.label) / (w - tl.label - 8)) * span;
      if (ev.shiftKey) {
        const d = ((ev.deltaY || ev.deltaX) / (w - tl.label)) * span;
        tl.t0 += d;
        tl.t1 += d;
      } else {
        const k = ev.deltaY < 0 ? 0.8 : 1.25,
          ns = Math.max(1, Math.min(tl.full[1] - tl.full[0], span * k));
        tl.t0 = at - (at - tl.t0) * (ns / span);
        tl.t1 = tl.t0 + ns;
      }
      drawTimeline();
    },
    { passive: false },
  );
  canvas.addEventListener("dblclick", () => {
    tl.t0 = tl.full[0];
    tl.t1 = tl.full[1];
    drawTimeline();
  });
  wrap.addEventListener("scroll", drawTimeline);
  canvas.addEventListener("mousemove", (ev) => {
    const op = hit(ev);
    tl.hover = op;
    if (op < 0) {
      const L = laneAt(ev);
      if (L >= 0) {
        sessionTip(ev, L);
        return;
      }
    }
    tip(ev, op);
  });
  canvas.addEventListener("mouseleave", () => {
    tl.hover = -1;
    tip(null, -1);
  });
  canvas.addEventListener("click", (ev) => {
    const op = hit(ev);
    if (op >= 0) select(op, true);
  });
  add(
    $("timeline-help"),
    document.createTextNode(
      "hover a mark for the call, click it to select it in the table; ctrl+wheel zooms, shift+wheel pans, double click shows all",
    ),
  );
  const legend = $("legend");
  Object.keys(STATUS_COLOR).forEach((k) => {
    const s = el("span", null, k);
    s.style.setProperty("--c", STATUS_COLOR[k]);
    legend.appendChild(s);
  });
  const nv = el("span", null, "not vouched for");
  nv.style.setProperty("--c", "#c9d1d9");
  legend.appendChild(nv);
}
// The span of every time read so far; a view not zoomed in follows it.
function timeRange() {
  let t0 = Infinity,
    t1 = -Infinity;
  for (let i = 0; i < loaded; i++)
    if (!Number.isNaN(fT[i])) {
      if (fT[i] < t0) t0 = fT[i];
      const end = fT[i] + (!Number.isNaN(fMs[i]) ? fMs[i] : 0);
      if (end > t1) t1 = end;
    }
  meta.sessions.forEach((s) => {
    if (s.begin !== null && s.begin < t0) t0 = s.begin;
    if (s.end !== null && s.end > t1) t1 = s.end;
  });
  if (!(t0 < Infinity)) {
    t0 = 0;
    t1 = 1;
  }
  if (t1 <= t0) t1 = t0 + 1;
  const whole = !tl.full || (tl.t0 === tl.full[0] && tl.t1 === tl.full[1]);
  tl.full = [t0, t1];
  if (whole) {
    tl.t0 = t0;
    tl.t1 = t1;
  }
}
function buildLanes(ops) {
  const lanes = meta.sessions.map(() => []);
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i];
    if (fSes[op] >= 0 && fSt[op] >= 0 && !Number.isNaN(fT[op])) lanes[fSes[op]].push(op);
  }
  tl.lanes = lanes.map((l) => Int32Array.from(l).sort((a, b) => fT[a] - fT[b] || a - b));
}
function xOf(t, w) {
  return tl.label + ((t - tl.t0) / (tl.t1 - tl.t0)) * (w - tl.label - 8);
}
function drawTimeline() {
  const c = tl.canvas;
  if (!c) return;
  const dpr = window.devicePixelRatio || 1,
    w = tl.wrap.clientWidth,
    h = tl.wrap.clientHeight;
  if (c.width !== Math.round(w * dpr) || c.height !== Math.round(h * dpr)) {
    c.width = Math.round(w * dpr);
    c.height = Math.round(h * dpr);
    c.style.width = `${w}px`;
    c.style.height = `${h}px`;
  }
  const g = c.getContext("2d");
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, w, h);
  g.font = "11px system-ui, sans-serif";
  g.textBaseline = "middle";
  const top = tl.wrap.scrollTop,
    lh = tl.laneH;
  const firstLane = Math.floor(top / lh),
    lastLane = Math.min(meta.sessions.length - 1, Math.floor((top + h - 22) / lh));
  const plotW = w - tl.label - 8;
  const bucket = new Uint8Array(Math.max(1, Math.ceil(plotW) + 2)),
    grey = new Uint8Array(bucket.length);
  const colors = [
    null,
    STATUS_COLOR.ok,
    STATUS_COLOR.cancelled,
    STATUS_COLOR.input_required,
    STATUS_COLOR.unanswered,
    STATUS_COLOR.refused,
    STATUS_COLOR.error,
    "#57606a",
  ];
  for (let L = firstLane; L <= lastLane; L++) {
    const y = L * lh - top,
      s = meta.sessions[L];
    if (L % 2) {
      g.fillStyle = "#f6f8fa";
      g.fillRect(0, y, w, lh);
    }
    if (s.begin !== null) {
      const xb = xOf(s.begin, w),
        xe = xOf(s.end !== null ? s.end : s.last !== null ? s.last : s.begin, w);
      g.fillStyle = s.complete ? "#afb8c1" : "#e6a23c";
      g.fillRect(xb, y + lh / 2 - 1, Math.max(1, xe - xb), 2);
      if (s.end !== null) {
        g.fillStyle = s.exit === "0" || s.exit === null ? "#57606a" : STATUS_COLOR.error;
        g.fillRect(xe - 1, y + 2, 2, lh - 4);
      }
    }
    bucket.fill(0);
    grey.fill(0);
    const ops = tl.lanes[L] || [];
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i],
        px = Math.round(xOf(fT[op], w) - tl.label);
      if (px < 0 || px >= bucket.length) continue;
      if (fFl[op] & F_NOT_VOUCHED) {
        grey[px] = 1;
        continue;
      }
      const rank = STATUS_RANK[S[fSt[op]]] || 7;
      if (rank > bucket[px]) bucket[px] = rank;
    }
    for (let x = 0; x < bucket.length; x++) {
      if (bucket[x]) {
        g.fillStyle = colors[bucket[x]];
        g.fillRect(tl.label + x - 1, y + 2, 3, lh - 4);
      } else if (grey[x]) {
        g.fillStyle = "#c9d1d9";
        g.fillRect(tl.label + x - 1, y + 2, 3, lh - 4);
      }
    }
    // The label last, over anything a zoomed-in lane drew left of the plot.
    g.fillStyle = L % 2 ? "#f6f8fa" : "#fff";
    g.fillRect(0, y, tl.label - 2, lh);
    g.fillStyle = "#1d2329";
    if (lh >= 10)
      g.fillText(
        cut(shown((s.server === null ? "" : `${s.server} `) + s.id.slice(0, 8)), 28).slice(0, 28),
        4,
        y + lh / 2,
      );
  }
  // The first break: a red line where what the chain vouches for ends.
  meta.files.forEach((f, fi) => {
    if (!f.first_break) return;
    for (let i = 0; i < loaded; i++)
      if (fFile[i] === fi && fFl[i] & F_NOT_VOUCHED && !Number.isNaN(fT[i])) {
        const xb = xOf(fT[i], w);
        g.fillStyle = STATUS_COLOR.error;
        g.fillRect(xb - 1, 0, 2, h - 20);
        break;
      }
  });
  if (selected >= 0 && fSes[selected] >= 0 && !Number.isNaN(fT[selected])) {
    const ys = fSes[selected] * lh - top;
    g.strokeStyle = "#000";
    g.lineWidth = 2;
    g.strokeRect(xOf(fT[selected], w) - 3, ys + 1, 6, lh - 2);
  }
  // Axis: start and end times.
  g.fillStyle = "#fff";
  g.fillRect(0, h - 20, w, 20);
  g.fillStyle = "#5f6b76";
  g.fillText(fmtTime(tl.t0), tl.label, h - 10);
  const endText = fmtTime(tl.t1),
    tw = g.measureText(endText).width;
  g.fillText(endText, w - tw - 8, h - 10);
}
function hit(ev) {
  const r = tl.canvas.getBoundingClientRect(),
    x = ev.clientX - r.left,
    y = ev.clientY - r.top + tl.wrap.scrollTop;
  const L = Math.floor(y / tl.laneH),
    w = tl.wrap.clientWidth;
  if (L < 0 || L >= tl.lanes.length || x < tl.label) return -1;
  const ops = tl.lanes[L];
  if (!ops || ops.length === 0) return -1;
  const t = tl.t0 + ((x - tl.label) / (w - tl.label - 8)) * (tl.t1 - tl.t0);
  let lo = 0,
    hi = ops.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (fT[ops[mid]] < t) lo = mid + 1;
    else hi = mid;
  }
  let best = -1,
    bestD = 6;
  for (let k = Math.max(0, lo - 2); k <= Math.min(ops.length - 1, lo + 2); k++) {
    const d = Math.abs(xOf(fT[ops[k]], w) - x);
    if (d < bestD) {
      bestD = d;
      best = ops[k];
    }
  }
  return best;
}
// Over a lane's label: the session, how long it ran and how it ended.
function laneAt(ev) {
  const r = tl.canvas.getBoundingClientRect(),
    x = ev.clientX - r.left,
    y = ev.clientY - r.top + tl.wrap.scrollTop;
  const L = Math.floor(y / tl.laneH);
  return x < tl.label && L >= 0 && L < meta.sessions.length ? L : -1;
}
function sessionTip(ev, L) {
  const s = meta.sessions[L],
    t = $("tip");
  const end = s.end !== null ? s.end : s.last;
  t.hidden = false;
  t.textContent = [
    `session ${cut(shown(s.id), 120)}`,
    `server ${s.server === null ? "(none)" : cut(shown(s.server), 120)}`,
    "began " +
      (s.begin === null ? "(unknown)" : fmtTime(s.begin)) +
      (s.begin !== null && end !== null ? `, ran ${fmtMs(end - s.begin)} ms` : ""),
    s.end !== null
      ? "ended: " +
        (s.reason === null ? "(no reason)" : cut(shown(s.reason), 80)) +
        ", exit code " +
        (s.exit === null ? "(none)" : cut(shown(s.exit), 40))
      : "no session_end in the file",
    s.complete ? "complete" : "incomplete (seam verify says why)",
  ].join("\n");
  t.style.left = `${Math.min(ev.clientX + 12, window.innerWidth - 300)}px`;
  t.style.top = `${ev.clientY + 14}px`;
}
function tip(ev, op) {
  const t = $("tip");
  if (op < 0 || !ev) {
    t.hidden = true;
    return;
  }
  t.hidden = false;
  t.textContent = [
    str(fKind[op]) + (fName[op] >= 0 ? ` ${cut(shown(S[fName[op]]), 120)}` : ""),
    "status " +
      (fSt[op] >= 0 ? cut(shown(S[fSt[op]]), 60) : "") +
      (!Number.isNaN(fMs[op]) ? `, ${fmtMs(fMs[op])} ms` : ""),
    `${fmtTime(fT[op])}, line ${fLine[op]}${fFl[op] & F_NOT_VOUCHED ? " (not vouched for)" : ""}`,
  ].join("\n");
  t.style.left = `${Math.min(ev.clientX + 12, window.innerWidth - 300)}px`;
  t.style.top = `${ev.clientY + 14}px`;
}
