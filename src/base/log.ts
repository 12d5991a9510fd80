import { type ConsolaInstance, createConsola, type LogObject } from "consola/core";
import { terminalText } from "./terminal-text.ts";

/**
 * seam's voice on stderr, never stdout (stdout belongs to the protocol in
 * `wrap` and to results elsewhere). Lines read `seam: <kind>: <message>`,
 * lowercase and without a trailing period, in the manner of age. A message
 * may quote a config, a ledger or a server, so it is made terminal-safe
 * (src/base/terminal-text.ts): one line, no escape sequences.
 */
export interface Log {
  error(message: string, hint?: string): void;
  warn(message: string): void;
  info(message: string): void;
}

/** Where log lines go; a test passes an array-backed sink. */
export type LineSink = (line: string) => void;

function stderrSink(line: string): void {
  process.stderr.write(line);
}

export function createLog(sink: LineSink = stderrSink): Log {
  const consola: ConsolaInstance = createConsola({
    level: 3,
    reporters: [
      {
        log(entry: LogObject) {
          const kind = entry.tag || (entry.type === "warn" ? "warning" : entry.type);
          for (const arg of entry.args) sink(`seam: ${kind}: ${terminalText(String(arg))}\n`);
        },
      },
    ],
  });
  return {
    error(message, hint) {
      consola.error(message);
      if (hint) consola.withTag("hint").info(hint);
    },
    warn: (message) => consola.warn(message),
    info: (message) => consola.info(message),
  };
}
