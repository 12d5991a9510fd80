/**
 * The MCP observer (src/observe/observer.ts) in process, driven by a script of
 * frames: what test/unit/mcp.test.ts and test/unit/protocol.test.ts check its rows by.
 */
import { lineForm } from "../../src/core/canonical/index.ts";
import { McpObserver } from "../../src/observe/observer.ts";
import type { Fields, ObserverFaults } from "../../src/observe/observer-options.ts";

const enc = new TextEncoder();

/** Frames in order: ">" from the client, "<" from the server. */
export type Script = [">" | "<", string][];

export interface ObserveOptions {
  faults?: ObserverFaults;
  /** Keep arguments and results (`--raw`). */
  raw?: boolean;
  /**
   * Give each row the seq a ledger would give it (1, 2, …), and tell the
   * observer, since an operation is named by its first row's seq.
   */
  seq?: boolean;
}

/**
 * Runs `script` through an observer, then ends the session as a client EOF
 * would. Rows come back in line form, without the fields left undefined.
 */
export function observe(script: Script, opts: ObserveOptions = {}) {
  const rows: { evt: string; fields: Fields }[] = [];
  let t = 0;
  const o = new McpObserver({
    rows: {
      row: (evt, fields) => rows.push({ evt, fields }),
      durable: async (evt, fields) => {
        rows.push({ evt, fields });
        return true;
      },
    },
    raw: opts.raw === true,
    writeAhead: false,
    now: () => (t += 1.5),
    faults: opts.faults,
    nextSeq: opts.seq ? () => rows.length + 1 : undefined,
  });
  for (const [dir, frame] of script) {
    if (dir === ">") o.fromClient(enc.encode(frame));
    else o.fromServer(enc.encode(frame));
  }
  o.finish("client_eof");
  const lines = rows.map(({ evt, fields }, i) => {
    const kept: Record<string, unknown> = opts.seq ? { evt, seq: i + 1 } : { evt };
    for (const [k, v] of Object.entries(fields)) if (v !== undefined) kept[k] = v;
    return lineForm(kept as never);
  });
  return { rows: lines, counts: o.counts, ops: o.operations.counts };
}
