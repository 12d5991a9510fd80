// @ts-check
/**
 * The report page's script, part 4 of 6 (src/report/page-script.ts joins them):
 * the details pane of the selected operation, with a JSON parser that keeps
 * numbers as written.
 */

// ---- details pane ----
function showDetails() {
  const box = $("details");
  box.textContent = "";
  const op = selected;
  if (op < 0) {
    add(box, el("div", "empty", "Select an operation in the table or on the timeline."));
    return;
  }
  box.setAttribute("data-op", String(op));
  add(box, el("h3", null, str(fKind[op]) + (fName[op] >= 0 ? ` ${cut(shown(S[fName[op]]), 300)}` : "")));
  const kv = el("div", "kv");
  function row(k, v, cls, copy) {
    const val = el("div", `v${cls ? ` ${cls}` : ""}`, v);
    if (copy !== undefined) {
      val.appendChild(document.createTextNode(" "));
      val.appendChild(copyButton(copy, `copy ${k}`));
    }
    add(kv, el("div", "k", k), val);
  }
  const f = meta.files[fFile[op]],
    rec = rowsOf(op),
    lines = rec[0];
  row("file", shown(f.path));
  row("ledger lines", lines.join(", "));
  row("time", fmtTime(fT[op]) + (utc ? " UTC" : " local"));
  if (fSes[op] >= 0) row("session", shown(meta.sessions[fSes[op]].id), "mono", meta.sessions[fSes[op]].id);
  if (fSrv[op] >= 0) row("server", shown(S[fSrv[op]]));
  if (fSt[op] >= 0) row("status", shown(S[fSt[op]]));
  if (!Number.isNaN(fMs[op])) row("ms", String(fMs[op]));
  if (fId[op] !== null) row("rpc id", shown(fId[op]), "mono");
  if (fFl[op] & F_NOT_VOUCHED)
    row(
      "chain",
      `not vouched for by the chain${f.first_break ? ` (first break: ${shown(f.first_break.message)})` : ""}`,
      "warn",
    );
  else row("chain", f.first_break ? "vouched for: before the first break" : `vouched for by the chain (${f.verdict})`);
  row(
    "seal",
    f.sealed === null
      ? "not checked (no --key given)"
      : fFl[op] & F_SEALED
        ? "sealed: under a signed checkpoint that holds"
        : `not sealed (${shown(f.sealed)})`,
  );
  add(box, kv);
  if (lines.length > 1) add(box, el("div", "count", `its ${lines.length} rows, in ledger order:`));
  // Every row it joins (an intent, each round, the result, an operation_end), each with all its fields.
  rec[1].forEach((r, k) => {
    let tree = null;
    try {
      tree = parse(r.text);
    } catch (e) {
      tree = null;
    }
    const evt = tree !== null && tree.t === "o" ? tree.e.filter((p) => p[0] === "evt" && p[1].t === "s")[0] : undefined;
    const what =
      lines.length === 1
        ? "the row"
        : (evt ? cut(shown(evt[1].v), 80) : `row ${k + 1}`) +
          (lines[k] === fLine[op] ? ", the row that finished it" : "");
    const sec = el("details", "rowsec");
    sec.open = lines.length <= 8 || k === 0 || k === lines.length - 1;
    sec.setAttribute("data-line", String(lines[k]));
    const head = el(
      "summary",
      "rowhead",
      "line " +
        lines[k] +
        ": " +
        what +
        (r.rebuilt ? " (as parsed, without its chain value)" : ", as the file holds it"),
    );
    head.appendChild(document.createTextNode(" "));
    head.appendChild(copyButton(r.text, "copy the row"));
    add(sec, head, tree === null ? el("pre", "j", cut(r.text, TEXT_MAX)) : fields(tree));
    add(box, sec);
  });
}
// One ledger row as key/value pairs; nested values as collapsible JSON, numbers exactly as written.
function fields(node) {
  if (node.t !== "o") return jsonNode(node, 0);
  const kv = el("div", "kv");
  node.e.forEach((p) => {
    const k = p[0],
      v = p[1],
      cell = el("div", "v j");
    cell.setAttribute("data-key", k);
    if (v.t === "s") {
      appendLong(cell, shown(v.v));
      if (/(^|_)digests?$/.test(k) || /^sha256:/.test(v.v) || k === "chain") {
        cell.appendChild(document.createTextNode(" "));
        cell.appendChild(copyButton(v.v, `copy ${k}`));
      }
    } else if (v.t === "o" || v.t === "a") {
      cell.appendChild(jsonNode(v, 0, k === "args" || k === "result" || k === "params" || size(v) <= 8));
      if (v.t === "o" && /digests$/.test(k))
        v.e.forEach((q) => {
          if (q[1].t === "s") {
            cell.appendChild(el("span", "count", ` ${shown(q[0])} `));
            cell.appendChild(copyButton(q[1].v, `copy ${k} ${q[0]}`));
          }
        });
    } else cell.appendChild(jsonNode(v, 0));
    add(kv, el("div", "k", shown(k)), cell);
  });
  return kv;
}
function size(v) {
  return v.t === "o" ? v.e.length : v.t === "a" ? v.e.length : 0;
}
function appendLong(parent, text) {
  if (text.length <= TEXT_MAX) {
    parent.appendChild(document.createTextNode(text));
    return;
  }
  const t = document.createTextNode(text.slice(0, TEXT_MAX));
  const more = el("button", "more", `show all ${text.length.toLocaleString("en-US")} characters`);
  more.addEventListener("click", () => {
    t.textContent = text;
    more.remove();
  });
  add(parent, t, el("span", "more", "\u2026 "), more);
}
function jsonNode(v, depth, open) {
  if (v.t === "s") {
    const s = el("span", "str");
    appendLong(
      s,
      JSON.stringify(v.v).replace(
        /[\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
        (c) => `\\u${(`000${c.charCodeAt(0).toString(16)}`).slice(-4)}`,
      ),
    );
    return s;
  }
  if (v.t === "n") return el("span", "num", v.v);
  if (v.t === "l") return el("span", "lit", v.v);
  const d = el("details");
  if (open !== false && (open || depth < 2)) d.open = true;
  const isObj = v.t === "o";
  add(
    d,
    el(
      "summary",
      null,
      (isObj ? "{\u2026} " : "[\u2026] ") + v.e.length + (isObj ? " key" : " item") + (v.e.length === 1 ? "" : "s"),
    ),
  );
  // Children are built when first opened: a deep or wide value costs nothing until looked at.
  let built = false;
  function build() {
    if (built) return;
    built = true;
    v.e.forEach((p) => {
      const item = el("div", "item");
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
  let i = 0;
  function ws() {
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 9 || c === 10 || c === 13) i++;
      else break;
    }
  }
  function value() {
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      const e = [];
      ws();
      if (text[i] === "}") {
        i++;
        return { t: "o", e: e };
      }
      for (;;) {
        ws();
        const k = string();
        ws();
        if (text[i++] !== ":") throw new Error("json");
        const v = value();
        e.push([k, v]);
        ws();
        const d = text[i++];
        if (d === "}") return { t: "o", e: e };
        if (d !== ",") throw new Error("json");
      }
    }
    if (c === "[") {
      i++;
      const a = [];
      ws();
      if (text[i] === "]") {
        i++;
        return { t: "a", e: a };
      }
      for (;;) {
        a.push(value());
        ws();
        const d2 = text[i++];
        if (d2 === "]") return { t: "a", e: a };
        if (d2 !== ",") throw new Error("json");
      }
    }
    if (c === '"') return { t: "s", v: string() };
    const m = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null|NaN|-?Infinity)/.exec(
      text.slice(i, i + 5000),
    );
    if (!m) throw new Error("json");
    i += m[0].length;
    return /^[tfn]/.test(m[0]) ? { t: "l", v: m[0] } : { t: "n", v: m[0] };
  }
  function string() {
    if (text[i] !== '"') throw new Error("json");
    let j = i + 1;
    for (;;) {
      const q = text.indexOf('"', j);
      if (q < 0) throw new Error("json");
      let b = 0,
        k = q - 1;
      while (text[k] === "\\") {
        b++;
        k--;
      }
      if (b % 2 === 0) {
        const s = JSON.parse(text.slice(i, q + 1));
        i = q + 1;
        return s;
      }
      j = q + 1;
    }
  }
  const out = value();
  ws();
  if (i !== text.length) throw new Error("json");
  return out;
}
