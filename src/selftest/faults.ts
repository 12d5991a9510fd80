/**
 * Test-only defects. `seam selftest` switches one on (environment variable
 * SEAM_SELFTEST_FAULT) to prove that the check guarding against it goes red.
 * A fault is never silent: `wrap` announces it on stderr and stamps it into
 * session_begin as `selftest_fault`.
 */
import type { ObserverFaults } from "../observe/observer-options.ts";
import type { WrapFault } from "../wrap/options.ts";
import type { Corruptor } from "../wrap/relay.ts";

export const FAULTS = [
  "reserialize",
  "drop-byte",
  "strip-newlines",
  "double-row",
  "no-unanswered-flush",
  "shared-id-table",
  // `seam log` reads rows without chain-checking them (src/selftest/read.ts must catch it).
  "log-unverified",
  "unlinked-rounds",
] as const;
export type Fault = (typeof FAULTS)[number];

export const FAULT_ENV = "SEAM_SELFTEST_FAULT";

/** The stream offset at which `drop-byte` drops one byte, in each direction. */
export const DROP_OFFSET = 100;

export function parseFault(value: string | undefined): Fault | undefined | null {
  if (value === undefined || value === "") return undefined;
  return (FAULTS as readonly string[]).includes(value) ? (value as Fault) : null;
}

/** What `seam wrap` is given for fault `f` (its WrapOptions.fault). */
export function wrapFault(f: Fault): WrapFault {
  return { name: f, observer: observerFaults(f), corrupt: corruptor(f) };
}

function observerFaults(f: Fault | undefined): ObserverFaults {
  return {
    doubleRow: f === "double-row",
    noUnansweredFlush: f === "no-unanswered-flush",
    sharedIdTable: f === "shared-id-table",
    unlinkedRounds: f === "unlinked-rounds",
  };
}

/** Does fault `f` corrupt the bytes wrap forwards (rather than only what it records)? */
export function corruptsStream(f: Fault): boolean {
  return corruptor(f) !== undefined;
}

/** A fresh corruptor for one direction of the relay, or undefined. */
function corruptor(f: Fault | undefined): Corruptor | undefined {
  switch (f) {
    case "strip-newlines":
      return (c) => c.filter((b) => b !== 0x0a);
    case "drop-byte": {
      let seen = 0;
      return (c) => {
        const at = DROP_OFFSET - seen;
        seen += c.length;
        if (at < 0 || at >= c.length) return c;
        const out = new Uint8Array(c.length - 1);
        out.set(c.subarray(0, at));
        out.set(c.subarray(at + 1), at);
        return out;
      };
    }
    case "reserialize": {
      // What a proxy that parses and re-emits would do: JSON.parse + JSON.stringify per line.
      const dec = new TextDecoder();
      const enc = new TextEncoder();
      return (c) => {
        const lines = dec.decode(c).split("\n");
        return enc.encode(
          lines
            .map((l) => {
              try {
                return JSON.stringify(JSON.parse(l));
              } catch {
                return l;
              }
            })
            .join("\n"),
        );
      };
    }
    default:
      return undefined;
  }
}
