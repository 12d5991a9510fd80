import { lineForm } from "../core/canonical/index.ts";
import type { Json } from "../core/json.ts";

/** A value as it reads in the ledger line (never throws). */
export function show(v: Json | undefined): string {
  if (v === undefined) return "(missing)";
  try {
    return lineForm(v);
  } catch {
    return String(v);
  }
}
