// @ts-check
/**
 * The report page's script, part 2 of 6 (src/report/page-script.ts joins them):
 * the banner, reading the operation chunks into columns while the page
 * loads, and the view state with the build, refresh and finish steps.
 */

const meta = readJson("seam-meta");
const S = meta.strings;
document.title = meta.title;

// ---- banner: first, before the operations are read, so it paints at once ----
function renderBanner() {
  const root = $("banner");
  add(root, el("h1", null, meta.title));
  const made = el(
    "div",
    "count",
    `generated ${meta.generated} by ${meta.seam}${meta.filters ? `; filters: ${meta.filters}` : ""}`,
  );
  add(root, made);
  meta.files.forEach((f, fi) => {
    const b = el("section", `banner v-${f.verdict}`);
    b.id = `banner-${fi}`;
    const headline = el("div", "verdict", `${shown(f.path)}: ${f.verdict}`);
    headline.setAttribute("data-verdict", f.verdict);
    add(b, headline);
    const facts = el("div", "facts");
    function fact(k, v) {
      add(facts, el("div", null, k), el("div", "mono", v));
    }
    fact("rows", f.rows_line);
    if (f.first_break) fact("break", `${shown(f.first_break.message)} (${f.breaks} break${f.breaks === 1 ? "" : "s"})`);
    fact("head", f.head === null ? "none" : shown(f.head));
    fact("sessions", f.sessions_line);
    fact("sealed", f.sealed === null ? "not checked (no --key given)" : shown(f.sealed));
    if (f.first_break)
      fact(
        "vouched",
        f.first_break.line === null
          ? "nothing read after the break is vouched for by the chain (greyed below)"
          : "the chain vouches for nothing from the row before line " +
              f.first_break.line +
              " on: either side of a broken link may be the edit (greyed below)",
      );
    add(b, facts);
    const cmd = el("div", "cmd");
    add(
      cmd,
      el("span", "count", "re-verify"),
      el("code", "reverify", f.reverify),
      copyButton(f.reverify, "copy the command"),
    );
    add(b, cmd);
    const det = el("details");
    add(det, el("summary", null, "seam verify output"), el("pre", "verify", f.verify));
    add(b, det);
    add(root, b);
  });
}
renderBanner();
performance.mark("seam-banner");

// ---- operations, column by column ----
const N = meta.n;
// Operations read so far: a big page is shown while the browser is still reading the rest of it.
let loaded = 0;
const fFile = new Int32Array(N),
  fLine = new Int32Array(N),
  fT = new Float64Array(N),
  fSes = new Int32Array(N),
  fSrv = new Int32Array(N),
  fKind = new Int32Array(N),
  fName = new Int32Array(N),
  fSt = new Int32Array(N),
  fMs = new Float64Array(N),
  fFl = new Uint8Array(N),
  fId = new Array(N),
  fLines = new Map(),
  fRowAt = new Int32Array(N),
  chunkRx = new Array(meta.chunks),
  chunkRb = new Array(meta.chunks);
const rowChunks = new Array(meta.chunks);

function loadChunk(c, at) {
  const d = readJson(`seam-c${c}`);
  let n = d.ln.length,
    at0 = 0;
  chunkRx[c] = d.rx;
  chunkRb[c] = new Set(d.rb || []);
  for (let i = 0; i < n; i++) {
    const j = at + i;
    fFile[j] = d.f[i];
    fLine[j] = d.ln[i];
    fT[j] = d.t[i] === null ? NaN : d.t[i];
    fSes[j] = d.se[i];
    fSrv[j] = d.sv[i];
    fKind[j] = d.k[i];
    fName[j] = d.nm[i];
    fSt[j] = d.st[i];
    fMs[j] = d.ms[i] === null ? NaN : d.ms[i];
    fFl[j] = d.fl[i];
    fId[j] = d.id[i];
    if (d.ls[i] !== null) fLines.set(j, d.ls[i]);
    // Its first row's place among the chunk's rows (each operation has one row per line it joins).
    fRowAt[j] = at0;
    at0 += d.ls[i] === null ? 1 : d.ls[i].length;
  }
  return n;
}
// [the lines it joins, its rows in the same order: { text, rebuilt }]
function rowsOf(op) {
  const c = Math.floor(op / meta.chunk);
  if (!rowChunks[c]) rowChunks[c] = $(`seam-r${c}`).textContent.split("\n");
  const lines = fLines.get(op) || [fLine[op]],
    rows = [],
    rx = chunkRx[c];
  for (let k = 0; k < lines.length; k++) {
    const ri = fRowAt[op] + k;
    rows.push({ text: Object.hasOwn(rx, ri) ? rx[ri] : rowChunks[c][ri], rebuilt: chunkRb[c].has(ri) });
  }
  return [lines, rows];
}

function start() {
  const progress = $("progress");
  let c = 0,
    built = false,
    shownAt = 0;
  // Chunk k is whole once the parser has begun the element after it.
  function whole(k) {
    return k + 1 < meta.chunks ? $(`seam-c${k + 1}`) !== null : document.readyState !== "loading";
  }
  function step() {
    let t0 = performance.now(),
      grew = false;
    while (c < meta.chunks && whole(c) && performance.now() - t0 < 40) {
      loaded += loadChunk(c++, loaded);
      grew = true;
    }
    // What was read is shown at once, then again at most twice a second (each refresh goes over everything read).
    if (grew && !built) {
      build();
      built = true;
      shownAt = performance.now();
    } else if (grew && performance.now() - shownAt > 500) {
      refresh();
      shownAt = performance.now();
    }
    if (c < meta.chunks) {
      progress.textContent = `reading operations: ${loaded.toLocaleString("en-US")} of ${N.toLocaleString("en-US")}`;
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
let view = new Int32Array(0);
let selected = -1;
const filter = { q: "", inRows: false, server: -1, tool: -1, status: -1, kind: -1 };
let sortBy = "line";
let markers = [];

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
