/**
 * The client frame being observed, as --write-ahead, --fail-closed and --map
 * hold it: what it waits for before the relay forwards it, and, when it is
 * refused instead, seam's answers in its place. The relay observes one
 * client frame at a time and forwards or refuses it before the next.
 */
import type { Json } from "../core/json.ts";
import { errorLine, NOT_DURABLE, REFUSED_CODE } from "./own-answers.ts";
import type { OpenRequest, RequestTable } from "./pairing.ts";
import type { RequestRows } from "./request-rows.ts";

export class FrameHold {
  /** Holds for write-ahead intents and action postings of the frame being observed. */
  holds: Promise<boolean>[] = [];
  /** The calls of the last client frame that was held (what `refuse` refuses). */
  heldCalls: OpenRequest[] = [];
  /** Set when the last client frame as a whole must be refused (unreadable, or ambiguous under --fail-closed). */
  frameRefusal: { code: number; message: string } | undefined;
  /** The requests of the last client frame (a refused frame's requests are answered by seam). */
  frameRequests: OpenRequest[] = [];

  /** A new client frame is observed (lists the last one filled are replaced, never emptied in place: they may be held). */
  begin(): void {
    if (this.holds.length > 0) this.holds = [];
    if (this.heldCalls.length > 0) this.heldCalls = [];
    if (this.frameRequests.length > 0) this.frameRequests = [];
    this.frameRefusal = undefined;
  }

  /** What the frame waits for: undefined when nothing holds it, else a promise of whether to forward it. */
  verdict(): Promise<boolean> | undefined {
    if (this.holds.length === 0) return undefined;
    const holds = this.holds;
    this.holds = [];
    return Promise.all(holds).then((oks) => oks.every(Boolean));
  }

  /**
   * The last held client frame is refused: each of its calls gets its row
   * (status `refused`) and seam's answer line; the answer lines, in order.
   */
  refuse(now: number, table: RequestTable, rows: RequestRows): Uint8Array[] {
    const calls = this.heldCalls;
    this.heldCalls = [];
    const fr = this.frameRefusal;
    this.frameRefusal = undefined;
    const first = fr?.message ?? calls.find((p) => p.refusal !== undefined)?.refusal ?? NOT_DURABLE;
    const code = fr?.code ?? REFUSED_CODE;
    const lines: Uint8Array[] = [];
    if (fr !== undefined) lines.push(...this.refuseFrame(fr, table));
    for (const p of calls) {
      const message = fr?.message ?? p.refusal ?? first;
      lines.push(errorLine(p.id, code, message));
      if (!table.withdraw(p)) continue; // its row is written already (the session ended while it was held)
      const error = new Map<string, Json>([
        ["code", code],
        ["message", message],
      ]);
      rows.rowFor(p, { error, result: undefined }, now, "refused", message);
    }
    return lines;
  }

  /**
   * The answers to a refused frame's requests other than tools/call (those
   * are `refuse`'s own), or one answer with id null when it had none: then
   * its requests are no longer open.
   */
  private refuseFrame(fr: { code: number; message: string }, table: RequestTable): Uint8Array[] {
    const pending = this.frameRequests;
    this.frameRequests = [];
    const lines: Uint8Array[] = [];
    for (const p of pending) {
      if (p.method === "tools/call") continue;
      table.withdraw(p);
      lines.push(errorLine(p.id, fr.code, fr.message));
    }
    if (pending.length === 0) lines.push(errorLine(null, fr.code, fr.message));
    return lines;
  }
}
