/**
 * selftest's frame-reading case: every tools/call a JSON.parse server reads
 * (bytes decoded as Node decodes them, invalid UTF-8 as U+FFFD) leaves a row
 * naming the tool that server saw; and a reader that refuses what the server
 * accepts (seam's strict parser alone, as seam once read frames) goes RED.
 */
import { concatBytes } from "../core/bytes.ts";
import { getField, type Json } from "../core/json.ts";
import { McpObserver } from "../observe/observer.ts";
import type { Fields, ObserverFaults } from "../observe/observer-options.ts";
import type { Arm } from "./arm.ts";

const enc = new TextEncoder();

type Part = string | number[];

function frame(name: Part[], args: Part[]): Uint8Array {
  const parts = [
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"',
    ...name,
    '","arguments":',
    ...args,
    "}}",
  ];
  return concatBytes(parts.map((p) => (typeof p === "string" ? enc.encode(p) : Uint8Array.from(p))));
}

/** Frames a JSON.parse server reads and a stricter parser does not, and two that read differently elsewhere. */
const FRAMES: { what: string; bytes: Uint8Array }[] = [
  { what: "arguments nested 901 levels", bytes: frame(["read_file"], [`{"p":${"[".repeat(900)}${"]".repeat(900)}}`]) },
  { what: "a 4,301-digit integer", bytes: frame(["read_file"], [`{"n":${"7".repeat(4301)}}`]) },
  { what: "invalid UTF-8 in a string", bytes: frame(["read_file"], ['{"path":"a', [0xff], 'b"}']) },
  { what: "invalid UTF-8 in the tool name", bytes: frame(["read_", [0xc0, 0xaf]], ["{}"]) },
  {
    what: "a case-variant name key",
    bytes: enc.encode(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a","Name":"b"}}`),
  },
];

/** The tool name a JSON.parse server (the TypeScript SDK) reads from the frame, or undefined for no tools/call. */
function serverSees(bytes: Uint8Array): string | undefined {
  try {
    const m = JSON.parse(new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes)) as {
      method?: unknown;
      params?: { name?: unknown };
    };
    return m.method === "tools/call" && typeof m.params?.name === "string" ? m.params.name : undefined;
  } catch {
    return undefined;
  }
}

/** An observer whose rows are kept in memory, in the order it makes them: selftest's in-process cases. */
export function observerInMemory(faults?: ObserverFaults): {
  observer: McpObserver;
  rows: { evt: string; fields: Fields }[];
} {
  const rows: { evt: string; fields: Fields }[] = [];
  const observer = new McpObserver({
    rows: {
      row: (evt, fields) => rows.push({ evt, fields }),
      durable: async (evt, fields) => (rows.push({ evt, fields }), true),
    },
    raw: false,
    writeAhead: false,
    now: () => 0,
    faults,
  });
  return { observer, rows };
}

/** The frames whose tool (as the server reads it) no row names. */
function unrecorded(faults?: ObserverFaults): string[] {
  const missed: string[] = [];
  for (const f of FRAMES) {
    const { observer: o, rows } = observerInMemory(faults);
    void o.fromClient(f.bytes);
    o.finish("selftest");
    const tool = serverSees(f.bytes);
    if (tool === undefined) continue;
    const named = rows.some(
      (r) =>
        r.fields.tool === tool ||
        (r.evt === "ambiguous_frame" &&
          Array.isArray(r.fields.readings) &&
          (r.fields.readings as Json[]).some((x) => getField(x, "tool") === tool)),
    );
    if (!named) missed.push(f.what);
  }
  return missed;
}

export function parserArms(): Arm[] {
  const c = "parser_matches_server";
  const green = unrecorded();
  const red = unrecorded({ strictFrames: true });
  return [
    {
      case: c,
      arm: "GREEN",
      pass: green.length === 0,
      detail:
        green.length === 0
          ? `${FRAMES.length} frames a JSON.parse server reads as tools/call each leave a row naming its tool`
          : `no row names the tool for: ${green.join("; ")}`,
    },
    {
      case: c,
      arm: "RED with a parser that refuses what the server accepts",
      pass: red.length > 0,
      detail:
        red.length > 0
          ? `unrecorded: ${red.join("; ")}`
          : "no-op guard: the strict parser alone still recorded every call",
    },
  ];
}
