/**
 * A row's fields as the reading model takes them: of the wrong type (a
 * hostile or foreign file) they read as null, never throw.
 */
import { type Json, JsonFloat } from "../core/json.ts";

/** A string field; anything else null. */
export function str(v: Json | undefined): string | null {
  return typeof v === "string" ? v : null;
}

/** A finite number as a JS number (floats and safe ints); anything else null. */
export function num(v: Json | undefined): number | null {
  if (typeof v === "number") return Number.isFinite(v) ? v : null;
  if (v instanceof JsonFloat) return Number.isFinite(v.value) ? v.value : null;
  if (typeof v === "bigint") return Number(v);
  return null;
}

let isoKey = "";
let isoBase = Number.NaN;

/**
 * A recorded `ts` as epoch ms, as Date.parse reads it (NaN when it is no
 * time). seam writes `YYYY-MM-DDTHH:MM:SS.mmmZ` and a ledger's rows come a
 * few ms apart, so the part up to the second is parsed once and the ms are
 * added to it: Date.parse is the costliest part of reading a row's time.
 */
export function isoMillis(ts: string | null): number {
  if (ts === null) return Number.NaN;
  if (
    ts.length !== 24 ||
    ts.charCodeAt(19) !== 46 /* . */ ||
    ts.charCodeAt(23) !== 90 /* Z */ ||
    !isDigit(ts.charCodeAt(20)) ||
    !isDigit(ts.charCodeAt(21)) ||
    !isDigit(ts.charCodeAt(22))
  )
    return Date.parse(ts);
  if (isoKey.length !== 19 || !ts.startsWith(isoKey)) {
    isoKey = ts.slice(0, 19);
    isoBase = Date.parse(`${isoKey}.000Z`);
  }
  return isoBase + (ts.charCodeAt(20) - 48) * 100 + (ts.charCodeAt(21) - 48) * 10 + (ts.charCodeAt(22) - 48);
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}
