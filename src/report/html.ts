/**
 * Writes the report: one HTML file, everything inline, nothing fetched.
 *
 * Layout of the file:
 *   <head>  (src/report/page-shell.ts) a Content-Security-Policy that allows no network at all
 *           (default-src 'none') and only this style and this script, by
 *           their SHA-256 (so no inline event handler or injected script
 *           can run); the stylesheet.
 *   <body>  empty containers; the meta block
 *           <script type="application/json" id="seam-meta"> (verdicts, sessions,
 *           per-tool figures, the interned strings); the page script, which
 *           draws the banner at once; then the operations in chunks of CHUNK:
 *           "seam-c<i>" holds their columns (the lines each joins among
 *           them), "seam-r<i>" (text/plain) every row of each, operation
 *           after operation, one per line exactly as the ledger holds it
 *           (its bytes copied, never decoded and written again), read only
 *           when one is shown or searched. A row with a "<" or a CR in it,
 *           which text/plain cannot carry unchanged, goes into the columns'
 *           JSON instead (`rx`, by its index among the chunk's rows) and
 *           leaves an empty line there; a row the reader no longer had is
 *           written out again from its parsed form (`rb` lists those).
 * Data blocks are JSON with every "<" written as \u003c, so nothing in a
 * ledger can close the element or open markup; the page inserts it all with
 * textContent.
 *
 * Operations stream to a temporary file beside the output while the meta is
 * not yet known; the output is assembled and renamed into place at the end,
 * so a reader never sees half a report. For a big report the temporary file
 * starts with room for what goes before the operations (`reserve` bytes of
 * spaces, white space between elements to HTML): when the head, meta and
 * page script fit there they are written over its start and the file is
 * renamed as it is, instead of every operation's bytes being copied once
 * more behind them (a second write of the whole report, most of its cost
 * past the reading).
 */
import { randomBytes } from "node:crypto";
import { chmodSync, closeSync, constants as fsc, openSync, readSync, renameSync, rmSync, writeSync } from "node:fs";
import { CR, LT } from "../core/ascii.ts";
import { FLAG, type PageFile, type PageHeader, type PageOp, type PageSessionEnd, type PageTool } from "./page-data.ts";
import { PAGE_JS } from "./page-js.ts";
import { jsonBlock, pageHead } from "./page-shell.ts";

/** Operations per data block: small enough to parse between frames, large enough to be few. */
const CHUNK = 8192;

interface SessionInfo {
  f: number;
  id: string;
  server: string | null;
  begin: number | null;
  last: number | null;
  end: number | null;
  reason: string | null;
  exit: string | null;
  complete: boolean;
}

/** Streams operations into a report at `out`; `finish` writes the file. */
export class ReportWriter {
  private readonly strings: string[] = [];
  private readonly stringIndex = new Map<string, number>();
  private readonly sessions: SessionInfo[] = [];
  private readonly sessionIndex = new Map<string, number>();
  private readonly tmpPath: string;
  private fd: number;
  private n = 0;
  private chunks = 0;
  private cols = emptyColumns();
  /**
   * The chunk's rows block so far: runs of rows, each run followed by "\n".
   * Rows that lie one after the other in the same piece of the ledger are
   * one run (a view of their bytes, "\n"s included), so a chunk's block is
   * a few large copies, not thousands of small ones.
   */
  private rows: Uint8Array[] = [];
  /** The run being extended, not yet in `rows`. */
  private run: Uint8Array | null = null;
  private rowCount = 0;
  private readonly decoder = new TextDecoder();
  /** The last session looked up, for the run of operations that share it. */
  private lastSession = { file: -1, id: "", index: -1 };
  private raw = false;
  private closed = false;
  /** Bytes of operations written to the temporary file (after the room kept for the head). */
  private bodyBytes = 0;

  /** `reserve`: bytes kept at the start of the temporary file for the head (0: none; the head is copied in front). */
  constructor(
    private readonly out: string,
    private readonly reserve = 0,
  ) {
    this.tmpPath = `${out}.seam-tmp-${randomBytes(6).toString("hex")}`;
    this.fd = openSync(this.tmpPath, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL | (fsc.O_NOFOLLOW ?? 0), 0o600);
    try {
      if (reserve > 0) writeAll(this.fd, Buffer.alloc(reserve, 0x20));
    } catch (e) {
      this.discard();
      throw e;
    }
  }

  get count(): number {
    return this.n;
  }

  /** The report holds payloads (a --raw ledger): it is written mode 0600, as the ledger was. */
  markRaw(): void {
    this.raw = true;
  }

  add(op: PageOp): void {
    const c = this.cols;
    const si = op.session === null ? -1 : this.session(op.file, op.session, op.server);
    if (si >= 0 && op.ts !== null) {
      const s = this.sessions[si]!;
      if (s.begin === null || op.ts < s.begin) s.begin = op.ts;
      const last = op.ts + (op.ms ?? 0);
      if (s.last === null || last > s.last) s.last = last;
    }
    c.f.push(op.file);
    c.ln.push(op.line);
    c.t.push(op.ts);
    c.se.push(si);
    c.sv.push(this.str(op.server));
    c.k.push(this.str(op.kind));
    c.nm.push(this.str(op.name));
    c.st.push(this.str(op.status));
    c.ms.push(op.ms);
    c.id.push(op.rpcId);
    c.fl.push((op.vouched ? 0 : FLAG.NOT_VOUCHED) | (op.sealed ? FLAG.SEALED : 0));
    c.ls.push(op.lines.length === 1 && op.lines[0] === op.line ? null : op.lines);
    for (const row of op.rows) {
      const ri = this.rowCount++;
      if (typeof row === "string") {
        c.rb.push(ri);
        if (/[<\r]/.test(row)) {
          c.rx[ri] = row;
          this.addRow(EMPTY);
        } else this.addRow(Buffer.from(row, "utf8"));
      } else if (row.indexOf(LT) >= 0 || row.indexOf(CR) >= 0) {
        c.rx[ri] = this.decoder.decode(row);
        this.addRow(EMPTY);
      } else {
        this.addRow(row);
      }
    }
    this.n++;
    if (c.f.length >= CHUNK) this.flush();
  }

  /** How a session ended (from its session_end), for its timeline lane. */
  endSession(file: number, id: string, end: PageSessionEnd): void {
    const s = this.sessions[this.session(file, id, null)]!;
    s.reason = end.reason;
    s.exit = end.exit;
    s.end = end.end;
  }

  /** Whether `seam verify` finds the session complete. */
  sessionComplete(file: number, id: string, complete: boolean): void {
    const i = this.sessionIndex.get(`${file}\u0000${id}`);
    if (i !== undefined) this.sessions[i]!.complete = complete;
  }

  /** Writes the report and renames it into place; returns its size in bytes. */
  finish(header: PageHeader, files: PageFile[], tools: PageTool[]): number {
    this.flush();
    const meta = {
      v: 1,
      title: header.title,
      generated: header.generated,
      seam: header.seam,
      filters: header.filters,
      files,
      strings: this.strings,
      sessions: this.sessions.map((s) => ({ ...s })),
      tools,
      n: this.n,
      chunks: this.chunks,
      chunk: CHUNK,
    };
    const head = Buffer.from(
      `${pageHead()}<script type="application/json" id="seam-meta">${jsonBlock(meta)}</script>\n<script>${PAGE_JS}</script>\n`,
      "utf8",
    );
    const end = Buffer.from("</body>\n</html>\n", "utf8");
    try {
      if (head.length <= this.reserve) {
        writeAll(this.fd, end);
        writeAll(this.fd, head, 0);
        closeSync(this.fd);
        this.closed = true;
        this.place(this.tmpPath);
        return this.reserve + this.bodyBytes + end.length;
      }
    } catch (e) {
      this.discard();
      throw e;
    }
    closeSync(this.fd);
    this.closed = true;
    const final = `${this.out}.seam-tmp-${randomBytes(6).toString("hex")}`;
    const fd = openSync(final, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL | (fsc.O_NOFOLLOW ?? 0), 0o600);
    let open = true;
    try {
      writeAll(fd, head);
      const src = openSync(this.tmpPath, fsc.O_RDONLY);
      try {
        const buf = Buffer.allocUnsafe(1 << 20);
        // Past the room kept for a head that turned out larger.
        let at = this.reserve;
        for (;;) {
          const got = readSync(src, buf, 0, buf.length, at);
          if (got === 0) break;
          at += got;
          writeAll(fd, buf.subarray(0, got));
        }
      } finally {
        closeSync(src);
      }
      writeAll(fd, end);
      closeSync(fd);
      open = false;
      this.place(final);
    } catch (e) {
      if (open) closeSync(fd);
      rmSync(final, { force: true });
      throw e;
    } finally {
      rmSync(this.tmpPath, { force: true });
    }
    return head.length + this.bodyBytes + end.length;
  }

  /** Renames the finished file `from` into place (readable by others unless it holds payloads). */
  private place(from: string): void {
    try {
      if (!this.raw) chmodSync(from, 0o644);
      renameSync(from, this.out);
    } catch (e) {
      rmSync(from, { force: true });
      throw e;
    }
  }

  /** Removes the temporary file (after a failure). */
  discard(): void {
    if (!this.closed) {
      closeSync(this.fd);
      this.closed = true;
    }
    rmSync(this.tmpPath, { force: true });
  }

  private flush(): void {
    if (this.cols.f.length === 0) return;
    const i = this.chunks++;
    // The rows' block: the runs with a "\n" between them (none after the last), so that splitting it gives the rows.
    const parts = [
      Buffer.from(
        `<script type="application/json" id="seam-c${i}">${jsonBlock(this.cols)}</script>\n<script type="text/plain" id="seam-r${i}">`,
        "utf8",
      ),
      ...this.rows,
    ];
    if (this.run !== null) parts.push(this.run);
    parts.push(Buffer.from("</script>\n", "utf8"));
    for (const b of parts) {
      writeAll(this.fd, b);
      this.bodyBytes += b.length;
    }
    this.cols = emptyColumns();
    this.rows = [];
    this.run = null;
    this.rowCount = 0;
  }

  /** Appends a row to the rows block: to the run when it is the line that follows it in the same bytes. */
  private addRow(row: Uint8Array): void {
    const r = this.run;
    if (r !== null && row.length > 0 && row.buffer === r.buffer && row.byteOffset === r.byteOffset + r.length + 1) {
      this.run = new Uint8Array(r.buffer, r.byteOffset, r.length + 1 + row.length);
      return;
    }
    if (r !== null) this.rows.push(r, NL);
    this.run = row;
  }

  private str(s: string | null): number {
    if (s === null) return -1;
    let i = this.stringIndex.get(s);
    if (i === undefined) {
      i = this.strings.length;
      this.strings.push(s);
      this.stringIndex.set(s, i);
    }
    return i;
  }

  private session(file: number, id: string, server: string | null): number {
    const last = this.lastSession;
    if (last.file === file && last.id === id && (server === null || this.sessions[last.index]!.server !== null))
      return last.index;
    const key = `${file}\u0000${id}`;
    let i = this.sessionIndex.get(key);
    if (i === undefined) {
      i = this.sessions.length;
      this.sessions.push({
        f: file,
        id,
        server,
        begin: null,
        last: null,
        end: null,
        reason: null,
        exit: null,
        complete: false,
      });
      this.sessionIndex.set(key, i);
    } else if (server !== null && this.sessions[i]!.server === null) {
      this.sessions[i]!.server = server;
    }
    this.lastSession = { file, id, index: i };
    return i;
  }
}

function emptyColumns() {
  return {
    f: [] as number[],
    ln: [] as number[],
    t: [] as (number | null)[],
    se: [] as number[],
    sv: [] as number[],
    k: [] as number[],
    nm: [] as number[],
    st: [] as number[],
    ms: [] as (number | null)[],
    id: [] as (string | null)[],
    fl: [] as number[],
    /** The lines an operation joins, null when that is its own line alone. */
    ls: [] as (number[] | null)[],
    /** Rows that cannot go into the text/plain block unchanged, by their index among the chunk's rows. */
    rx: {} as Record<number, string>,
    /** The indexes of rows written out again from their parsed form (without their chain). */
    rb: [] as number[],
  };
}

const NL = new Uint8Array([0x0a]);
const EMPTY = new Uint8Array(0);

/** writeSync until every byte is out (it may take fewer than it is given): at the file's offset, or at `position`. */
function writeAll(fd: number, b: Uint8Array, position?: number): void {
  let at = 0;
  while (at < b.length)
    at += position === undefined ? writeSync(fd, b, at) : writeSync(fd, b, at, b.length - at, position + at);
}
