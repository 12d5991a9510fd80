/**
 * The core of `seam verify`: checks a ledger's hash chain the way the format's
 * reference verifier does, then checks what seam's own rows promise about
 * their sessions. Takes bytes, never a path or `process`; never throws on any
 * input; memory stays flat however large the file (one line at a time, split
 * on "\n" bytes only, so U+2028 and friends inside a row never split it).
 *
 * The rules (lines, chain walk, torn and repaired lines, session
 * completeness, breaks and findings) are docs/ledger-format.md; the line and
 * chain rules themselves are src/format/line.ts, shared with the writer.
 * Where seam knowingly differs from the reference verifier: a torn final
 * line is a finding, not a break; a torn line the next row declares
 * repaired is a note; a ledger_repair row that records the tail its writer
 * cut off is a note when its torn_text agrees with torn_bytes and
 * torn_digest (else `repair_mismatch`); a line over the limit that ends with
 * its chain is a finding (`line_too_long`) whose claimed chain is carried
 * on; session completeness gives findings;
 * a row with a
 * repeated key is the break duplicate_key (readers disagree about which
 * value a duplicate means: SQLite's json_extract takes the first, jq and
 * Python the last, while the chain hashes only the last, so such a row
 * cannot vouch for what it says; its chain is still checked); client frames
 * rowed as unparsed_frame or ambiguous_frame make the session inconclusive
 * (findings unparsed_client_frame, ambiguous_client_frame) unless
 * `allowUnparsed`.
 */

import { unescapeBytes } from "../core/byte-escape.ts";
import { CanonicalError, FormRow } from "../core/canonical/index.ts";
import { GENESIS } from "../core/chain.ts";
import { digestBytes, StreamDigest } from "../core/digest.ts";
import { getField, isObject, type Json, type JsonObject } from "../core/json.ts";
import { LineSplitter } from "../core/lines.ts";
import type { Break, BreakKind, FindingKind } from "../format/kinds.ts";
import { CHAIN_TAIL_BYTES, chainClaim, chainFromTail, classifyLine, expectedChain, isBlank } from "../format/line.ts";
import { isSeamsOwn, repairs, type TornLine } from "../format/row.ts";
import { DEFAULT_MAX_LINE_BYTES, type VerifyOptions } from "./options.ts";
import { type Finding, SessionCheck } from "./sessions.ts";
import { readShallow, SHALLOW_FROM, SHALLOW_MEMBERS_MAX, SHALLOW_VALUE_MAX } from "./shallow-row.ts";
import { show } from "./show.ts";
import type { Verdict, VerifyReport } from "./verdict.ts";

export type { Break } from "../format/kinds.ts";
export { REFERENCE_MAX_DEPTH } from "../format/line.ts";
export { fileChunks } from "./file-chunks.ts";
export { DEFAULT_MAX_LINE_BYTES, type VerifyOptions } from "./options.ts";
export type { SessionReport, Verdict, VerifiedScope, VerifyReport } from "./verdict.ts";

/** A line too long to parse: only its length, digest and end are kept. */
interface LongLine {
  length: number;
  digest: string;
  /** Its last CHAIN_TAIL_BYTES bytes. */
  tail: Uint8Array;
}

/**
 * Push-style verifier: `push` chunks as they arrive, then `end()` (or
 * `fail(reason)` when the source broke). Neither throws.
 */
export class LedgerVerifier {
  private readonly strict: boolean;
  private readonly maxLine: number;
  private readonly maxFindings: number;
  private readonly onRow: VerifyOptions["onRow"];
  private readonly rowsOnLoan: boolean;
  private readonly onBreak: VerifyOptions["onBreak"];
  private readonly duplicateBreaks: boolean;
  /** The first repeated key of the line being parsed. */
  private dupKey: string | undefined;
  private readonly onDuplicate = (key: string) => {
    this.dupKey ??= key;
  };

  private readonly lines: LineSplitter;
  /** The digest so far of a line too long to keep, and its last bytes. */
  private longDigest: StreamDigest | null = null;
  private longTail: Uint8Array = new Uint8Array(0);
  private bytes = 0;
  private lineNo = 0;

  private prev: string = GENESIS;
  private began = false;
  private head: string | null = null;
  private rows = 0;
  private chained = 0;
  private prechain = 0;
  private breaks = 0;
  private firstBreak: Break | null = null;
  private breakKinds: Partial<Record<BreakKind, number>> = {};
  /** An unparseable line, judged once the next line shows whether it declares it repaired. */
  private unjudged: TornLine | null = null;
  private repairLine = 0;

  private fileFindings: Finding[] = [];
  private fileDropped = 0;
  private readonly notes: string[] = [];
  private readonly sessions: SessionCheck;
  private failed: string | null = null;
  private report: VerifyReport | null = null;

  constructor(opts: VerifyOptions = {}) {
    this.strict = opts.strict === true;
    this.maxLine = opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    this.lines = new LineSplitter(this.maxLine, opts.freshChunks === true);
    this.maxFindings = opts.maxFindings ?? 1000;
    this.onRow = opts.onRow;
    this.rowsOnLoan = opts.rowsOnLoan === true;
    this.onBreak = opts.onBreak;
    this.duplicateBreaks = opts.duplicateKeys !== "reference";
    this.sessions = new SessionCheck(
      this.maxFindings,
      opts.allowUnparsed === true,
      opts.isWriterAlive,
      this.notes,
      (line, kind, text) => this.fileFinding(line, kind, text),
    );
  }

  get progress(): { bytes: number; rows: number } {
    return { bytes: this.bytes, rows: this.rows };
  }

  push(chunk: Uint8Array): void {
    if (this.failed !== null || this.report !== null) return;
    this.bytes += chunk.length;
    this.lines.feed(chunk);
    this.drain();
  }

  /** The source broke: `unreadable: <reason>` is a break, and what was not read is not judged. */
  fail(reason: string): VerifyReport {
    if (this.report !== null) return this.report;
    if (this.failed === null) {
      this.failed = reason;
      this.settleUnjudged(null);
      this.addBreak(null, "unreadable", `unreadable: ${reason}`);
      if (this.bytes > 0) this.notes.push(`reading stopped after ${this.bytes} bytes; completeness not checked`);
    }
    return this.end();
  }

  end(): VerifyReport {
    if (this.report !== null) return this.report;
    if (this.failed === null) {
      this.lines.end();
      this.drain();
      this.settleUnjudged(null);
    }
    const sessions = this.sessions.finish(this.failed === null);
    const all = [...this.fileFindings, ...this.sessions.findings()];
    const findings = all.map((f) => f.text);
    const dropped = this.fileDropped + this.sessions.dropped();
    const findingCount = findings.length + dropped;
    const listed = findings.slice(0, this.maxFindings);
    if (findingCount > listed.length) this.notes.push(`${findingCount - listed.length} more findings not listed`);

    const verdict: Verdict =
      this.breaks > 0 ? "broken" : this.rows === 0 || this.prechain > 0 || findingCount > 0 ? "inconclusive" : "ok";
    this.report = {
      verdict,
      ok: verdict === "ok" ? true : verdict === "broken" ? false : null,
      rows: this.rows,
      chained: this.chained,
      prechain: this.prechain,
      first_break: this.firstBreak,
      breaks: this.breaks,
      break_kinds: this.breakKinds,
      verified_scope:
        this.rows === 0 ? "empty" : this.prechain > 0 && !this.strict ? "bounded_prechain_skipped" : "full",
      head: this.head,
      sessions,
      findings: listed,
      finding_kinds: all.slice(0, listed.length).map((f) => f.kind),
      notes: this.notes,
      bytes: this.bytes,
      lines: this.lineNo,
    };
    return this.report;
  }

  // ---- lines ----

  /** Judges every line the splitter has; a line over maxLine keeps only its length, digest and last bytes. */
  private drain(): void {
    for (let p = this.lines.next(); p !== null; p = this.lines.next()) {
      if (p.kind === "line" && p.length <= this.maxLine) {
        this.line(p.bytes, p.ends);
        continue;
      }
      this.longDigest ??= new StreamDigest();
      this.longDigest.update(p.bytes);
      this.keepTail(p.bytes);
      if (p.kind === "over") continue;
      this.line({ length: p.length, digest: this.longDigest.digest(), tail: this.longTail }, p.ends);
      this.longDigest = null;
      this.longTail = new Uint8Array(0);
    }
  }

  /** Keeps the last CHAIN_TAIL_BYTES of a long line (copied: the piece is a view the splitter reuses). */
  private keepTail(piece: Uint8Array): void {
    if (piece.length >= CHAIN_TAIL_BYTES) {
      this.longTail = piece.slice(-CHAIN_TAIL_BYTES);
      return;
    }
    const joined = new Uint8Array(Math.min(CHAIN_TAIL_BYTES, this.longTail.length + piece.length));
    const keep = joined.length - piece.length;
    joined.set(this.longTail.subarray(this.longTail.length - keep), 0);
    joined.set(piece, keep);
    this.longTail = joined;
  }

  /** One physical line, without its "\n"; `terminated` is false only for a last line with no "\n" after it. */
  private line(input: Uint8Array | LongLine, terminated: boolean): void {
    const n = ++this.lineNo;
    let row: Json | undefined;
    // The line was looked at for its chain form already (then a parsed row is known not to be in it).
    let formTried = false;
    // The row's chain, when it was computed from the line's bytes (src/verify/shallow-row.ts).
    let computedChain: string | null = null;
    if (input instanceof Uint8Array) {
      this.dupKey = undefined;
      // A line in chain form is read member by member as the checks ask, unless the row is
      // handed on for good (readers that keep rows read all of them: parsing is cheaper then).
      formTried = this.onRow === undefined || this.rowsOnLoan;
      const quick = formTried ? FormRow.read(input) : null;
      // A long line in no chain form is not parsed whole where no reader keeps its row.
      const shallow =
        quick === null && formTried && input.length > SHALLOW_FROM && !isBlank(input)
          ? readShallow(input, this.prev)
          : null;
      const line = quick === null && shallow === null ? classifyLine(input, this.onDuplicate) : null;
      if (line?.kind === "blank") {
        this.settleUnjudged(null);
        return;
      }
      if (quick !== null) row = quick;
      else if (line?.kind === "row") row = line.row;
      else if (shallow?.kind === "row") {
        row = shallow.row;
        this.dupKey = shallow.dupKey;
        computedChain = shallow.chain;
        if (shallow.left > 0)
          this.notes.push(
            `line ${n}: ${input.length} bytes, not in chain form: its chain computed from its bytes; ${shallow.left} of its members (${shallow.leftKeys.map((k) => show(k)).join(", ")}${shallow.left > shallow.leftKeys.length ? ", …" : ""}) not read by the session checks (over ${SHALLOW_VALUE_MAX} bytes, or past the first ${SHALLOW_MEMBERS_MAX})`,
          );
      }
    } else {
      const claimed = terminated ? chainFromTail(input.tail) : null;
      if (claimed !== null) {
        // Not parsed, not held: its chain is taken as claimed so that the rows after it are still checked.
        this.settleUnjudged(null);
        this.rows++;
        this.fileFinding(
          n,
          "line_too_long",
          `line ${n}: ${input.length} bytes, longer than the ${this.maxLine}-byte limit (--max-line): not parsed, its chain not checked`,
        );
        this.began = true;
        this.prev = claimed;
        this.head = claimed;
        return;
      }
      this.notes.push(`line ${n}: ${input.length} bytes, longer than the ${this.maxLine}-byte limit, not parsed`);
    }
    if (row === undefined) {
      this.settleUnjudged(null);
      if (!terminated) {
        this.fileFinding(n, "torn_final_line", `line ${n}: torn final line`);
        return;
      }
      // Judged when the next line is seen: it may declare this one repaired.
      this.unjudged = {
        line: n,
        bytes: input.length,
        digest: input instanceof Uint8Array ? digestBytes(input) : input.digest,
      };
      return;
    }
    this.settleUnjudged(row);
    this.row(row, n, this.dupKey, input instanceof Uint8Array && !formTried ? input : undefined, computedChain);
    // A whole row without its newline verifies, but the next writer to open the ledger takes it for a torn
    // line and cuts it off (recording it in a ledger_repair row): said, so that it is not a surprise.
    if (!terminated)
      this.notes.push(
        `line ${n}: the last row has no newline: the next writer will cut it off as a torn line (kept in a ledger_repair row)`,
      );
  }

  /** Resolves an unparseable line against the line after it (`next`, or null when that is no row). */
  private settleUnjudged(next: Json | null): void {
    const p = this.unjudged;
    if (p === null) return;
    this.unjudged = null;
    if (next !== null && repairs(next, p)) {
      this.repairLine = p.line + 1;
      this.notes.push(
        `line ${p.line}: torn line (${p.bytes} bytes) repaired by the ledger_repair row at line ${p.line + 1}`,
      );
      return;
    }
    this.rows++;
    this.addBreak(p.line, "unparseable", `line ${p.line}: unparseable`);
  }

  /**
   * `line`: the row's bytes, when its chain may still be read off them
   * (chainFromLine); `computedChain`: its chain, when already computed from them.
   */
  private row(
    row: Json,
    n: number,
    dupKey: string | undefined,
    line: Uint8Array | undefined,
    computedChain: string | null = null,
  ): void {
    this.rows++;
    const claim = chainClaim(row);
    if (claim.kind === "not_object" || !isObject(row)) {
      this.addBreak(n, "not_object", `line ${n}: not a JSON object`);
      return;
    }
    if (dupKey !== undefined && this.duplicateBreaks)
      this.addBreak(n, "duplicate_key", `line ${n}: duplicate key ${JSON.stringify(dupKey)}`);
    if (claim.kind === "unchained") {
      if (this.began) this.addBreak(n, "unchained_after_chain", `line ${n}: unchained row after chain began`);
      else {
        this.prechain++;
        if (this.strict)
          this.addBreak(n, "prechain_rejected", `line ${n}: unchained (prechain) row rejected in strict mode`);
      }
    } else if (claim.kind === "non_string_chain") {
      this.addBreak(n, "non_string_chain", `line ${n}: non-string chain value`);
    } else {
      this.began = true;
      this.chained++;
      let computed: string | null = null;
      try {
        if (row instanceof FormRow) {
          computed = row.chain(this.prev) ?? expectedChain(this.prev, row.model());
          if (this.onRow !== undefined) row.dropChain(); // as expectedChain leaves a parsed row
        } else if (computedChain !== null) {
          computed = computedChain;
          (row as JsonObject).delete("chain"); // as expectedChain leaves a parsed row
        } else computed = expectedChain(this.prev, row, line);
      } catch (err) {
        // Python can fail to serialize a row it parsed (RecursionError just
        // under its own parse limit), hence the message. Here it cannot
        // happen to a parsed row: chainForm takes NaN and lone surrogates,
        // and parseJson stops at 900 levels and 4300-digit ints, well inside
        // what chainForm writes. Kept so a failure would be a break, not a throw.
        this.addBreak(n, "unhashable", `line ${n}: unhashable row (${failureName(err)})`);
      }
      if (computed !== null && computed !== claim.chain)
        this.addBreak(n, "chain_mismatch", `line ${n}: chain mismatch`);
      this.prev = claim.chain;
      this.head = claim.chain;
    }
    this.observe(row, n);
    this.onRow?.(row, n, claim.kind === "chained");
  }

  private addBreak(line: number | null, kind: BreakKind, message: string): void {
    this.breaks++;
    this.breakKinds[kind] = (this.breakKinds[kind] ?? 0) + 1;
    const b: Break = { line, kind, message };
    if (this.firstBreak === null) this.firstBreak = b;
    this.onBreak?.(b);
  }

  private fileFinding(line: number, kind: FindingKind, text: string): void {
    if (this.fileFindings.length >= this.maxFindings) this.fileDropped++;
    else this.fileFindings.push({ line, kind, text });
  }

  /** A ledger_repair row of the kind that records a cut-off tail (its own line as torn_line): does it hold together? */
  private checkCutRepair(row: JsonObject | { readonly [k: string]: Json }, n: number): boolean {
    const text = getField(row, "torn_text");
    const bytes = getField(row, "torn_bytes");
    const digest = getField(row, "torn_digest");
    if (getField(row, "torn_line") !== n || typeof text !== "string" || typeof digest !== "string") return false;
    if (typeof bytes !== "number" || !Number.isSafeInteger(bytes) || bytes < 0) return false;
    const kept = unescapeBytes(text);
    if (kept === null) return false;
    if (getField(row, "torn_text_capped") === true) return kept.length < bytes;
    return kept.length === bytes && digestBytes(kept) === digest;
  }

  /** A seam row: a ledger_repair row that records a cut-off tail is checked here, then the row goes to its session. */
  private observe(row: JsonObject | { readonly [k: string]: Json }, n: number): void {
    if (!isSeamsOwn(getField(row, "seam"))) return;
    const evt = getField(row, "evt");
    if (evt === "ledger_repair" && this.repairLine !== n) {
      if (getField(row, "torn_text") === undefined)
        this.fileFinding(n, "repair_mismatch", `line ${n}: ledger_repair row does not match the line before it`);
      else if (this.checkCutRepair(row, n))
        this.notes.push(
          `line ${n}: torn line (${show(getField(row, "torn_bytes"))} bytes) cut off and recorded by the ledger_repair row at line ${n}`,
        );
      else
        this.fileFinding(
          n,
          "repair_mismatch",
          `line ${n}: ledger_repair row's torn_text does not match its torn_bytes and torn_digest`,
        );
    }
    this.sessions.observe(row, evt, n);
  }
}

function failureName(err: unknown): string {
  if (err instanceof CanonicalError) return err.kind;
  if (err instanceof RangeError) return "RecursionError";
  return err instanceof Error ? err.name : "Error";
}
