/**
 * Verifying a ledger one step ahead of reading it, on a thread of its own.
 *
 * The reading model needs two things of every line: what the verifier makes
 * of it (a row handed on, chained or not; a break) and the parsed row. The
 * verifier's part (the chain form hashed, the session checks) costs about as
 * much as the rest of what `seam log` or `report` does with a row, so on a
 * big file it runs on a second thread (when the caller asks: ReadOptions.verifier): the very LedgerVerifier, fed the
 * same chunks in the same order, which posts back per chunk what it handed
 * on and broke, in the order it did. This thread cuts the same chunks into
 * lines with the same splitter, parses the lines the verifier handed on as
 * rows (the row as the verifier would have handed it: parsed, its chain
 * taken out when it was checked), and replays the verifier's calls in order.
 * The verdict at the end is the thread's verifier's report.
 *
 * Only plain data crosses: copies of the chunks (transferred), line numbers
 * and breaks. A function cannot cross: a reader that asks whether a
 * session's writer still runs asks the runtime's own (src/runtime/alive.ts),
 * which the thread imports too; one given another verifies on its own thread.
 */

import { FormRow, parsePlainLine } from "../core/canonical/index.ts";
import type { Json } from "../core/json.ts";
import { LineSplitter } from "../core/lines.ts";
import { classifyLine } from "../format/line.ts";
import { isWriterAlive } from "../runtime/alive.ts";
import { type ThreadRole, threadOrNull } from "../runtime/thread.ts";
import type { Thread } from "../runtime/types.ts";
import { type Break, DEFAULT_MAX_LINE_BYTES, LedgerVerifier, type VerifyReport } from "../verify/ledger-verifier.ts";

export const READ_VERIFIER_ROLE = "read-verifier";

/**
 * Chunks posted to the thread whose verdicts are not back yet: enough to keep
 * it busy, few enough that the lines of the chunk being replayed are still
 * remembered by a reader that keeps the last few chunks' (the report's LineTap).
 */
const AHEAD = 2;

/**
 * A row the verifier handed on: 2 × its line number, plus 1 when JSON.parse
 * reads it as parseJson does (FormLayout.plain), negated when its chain was
 * not checked.
 */
type Event = number | Break;

type ToThread = { t: "chunk"; bytes: Uint8Array } | { t: "end"; failed: string | null };
type FromThread = { t: "events"; events: Event[] } | { t: "end"; events: Event[]; report: VerifyReport };

export interface AheadData {
  strict: boolean;
  /** Ask the runtime whether a session's writer still runs (src/runtime/alive.ts), as the reader would. */
  writerAlive: boolean;
}

/** The callbacks of LedgerVerifier that a reader gives it (VerifyOptions' onRow and onBreak). */
export interface VerifierCalls {
  onRow(row: Json, line: number, chained: boolean): void;
  onBreak(b: Break): void;
}

/**
 * LedgerVerifier's push / end / fail, with the verification on `thread`.
 * The calls happen while `push` or `end` is awaited, in the verifier's own
 * order, each row parsed here when its call comes.
 */
export class AheadVerifier {
  private readonly lines = new LineSplitter(DEFAULT_MAX_LINE_BYTES);
  private lineNo = 0;
  /** Chunks posted, oldest first, kept until their events are replayed. */
  private readonly posted: Uint8Array[] = [];
  private readonly answers: FromThread[] = [];
  private wake: (() => void) | null = null;
  private ended: string | null = null;

  constructor(
    private readonly thread: Thread,
    private readonly calls: VerifierCalls,
  ) {
    thread.onMessage((m) => {
      this.answers.push(m as FromThread);
      this.wake?.();
    });
    thread.onExit((error) => {
      this.ended = `the verifier thread ended${error ? `: ${error}` : " early"}`;
      this.wake?.();
    });
  }

  /** Hands a chunk on (copied: the caller keeps its own); replays what the thread has judged once enough wait. */
  async push(chunk: Uint8Array): Promise<void> {
    const copy = chunk.slice();
    this.thread.post({ t: "chunk", bytes: copy } satisfies ToThread, [copy.buffer as ArrayBuffer]);
    this.posted.push(chunk);
    while (this.posted.length > AHEAD) await this.replayNext();
  }

  /** The report, once every chunk's calls are replayed; `failed`: the source broke (LedgerVerifier.fail). */
  async end(failed: string | null): Promise<VerifyReport> {
    this.thread.post({ t: "end", failed } satisfies ToThread);
    while (this.posted.length > 0) await this.replayNext();
    const last = await this.answer();
    if (last.t !== "end") throw new Error("the verifier thread answered out of turn");
    this.lines.end();
    this.replay(last.events);
    this.close();
    return last.report;
  }

  /** Ends the thread (also when the reader stops early). */
  close(): void {
    if (this.ended === null) this.ended = "the verifier thread was closed";
    void this.thread.terminate();
  }

  private async answer(): Promise<FromThread> {
    while (this.answers.length === 0) {
      if (this.ended !== null) throw new Error(this.ended);
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      this.wake = null;
    }
    return this.answers.shift()!;
  }

  private async replayNext(): Promise<void> {
    const a = await this.answer();
    if (a.t !== "events") throw new Error("the verifier thread answered out of turn");
    this.lines.feed(this.posted.shift()!);
    this.replay(a.events);
  }

  /**
   * Cuts what the splitter has into lines (numbered as the verifier numbers
   * them: a line too long to keep counts once, at its end) and makes the
   * verifier's calls. A row the verifier handed on ended in the chunk that
   * was just fed (or at the end), so its line is among these.
   */
  private replay(events: Event[]): void {
    const first = this.lineNo + 1;
    const bytes: (Uint8Array | null)[] = [];
    for (let p = this.lines.next(); p !== null; p = this.lines.next()) {
      if (p.kind === "over") continue;
      this.lineNo++;
      bytes.push(p.kind === "line" && p.length <= DEFAULT_MAX_LINE_BYTES ? p.bytes : null);
    }
    for (const e of events) {
      if (typeof e !== "number") {
        this.calls.onBreak(e);
        continue;
      }
      const a = e < 0 ? -e : e;
      const line = Math.floor(a / 2);
      const b = bytes[line - first];
      if (b === undefined || b === null) throw new Error(`line ${line}: not the row the verifier read`);
      let row: Json;
      if (a % 2 === 1) row = parsePlainLine(b);
      else {
        const parsed = classifyLine(b);
        if (parsed.kind !== "row") throw new Error(`line ${line}: not the row the verifier read`);
        row = parsed.row;
      }
      // As the verifier leaves a row whose chain it checked (expectedChain).
      if (e > 0 && row instanceof Map) row.delete("chain");
      this.calls.onRow(row, line, e > 0);
    }
  }
}

/** Starts the verifier thread; null when this build cannot start one (then verify here). */
export function startAhead(
  startThread: ((role: string, data: unknown) => Thread | null) | undefined,
  data: AheadData,
  calls: VerifierCalls,
): AheadVerifier | null {
  const thread = threadOrNull(startThread, READ_VERIFIER_ROLE, data);
  return thread === null ? null : new AheadVerifier(thread, calls);
}

/** The thread's side: one LedgerVerifier, its calls sent back per chunk. */
export function serveAhead(role: ThreadRole): boolean {
  if (role.role !== READ_VERIFIER_ROLE) return false;
  const data = role.data as AheadData;
  let events: Event[] = [];
  const v = new LedgerVerifier({
    strict: data.strict,
    isWriterAlive: data.writerAlive ? isWriterAlive : undefined,
    // Nothing here keeps a row: it may be read member by member (FormRow).
    rowsOnLoan: true,
    onRow: (row, line, chained) => {
      const e = 2 * line + (row instanceof FormRow && row.plain ? 1 : 0);
      events.push(chained ? e : -e);
    },
    onBreak: (b) => {
      events.push(b);
    },
  });
  const take = () => {
    const e = events;
    events = [];
    return e;
  };
  role.port.on("message", (m: ToThread) => {
    if (m.t === "chunk") {
      v.push(m.bytes);
      role.port.postMessage({ t: "events", events: take() } satisfies FromThread);
    } else {
      const report = m.failed === null ? v.end() : v.fail(m.failed);
      role.port.postMessage({ t: "end", events: take(), report } satisfies FromThread);
    }
  });
  return true;
}
