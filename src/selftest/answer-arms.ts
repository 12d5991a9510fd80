/**
 * selftest's answer-reading cases, run on the observer in process: a server
 * that answers call 7 first as "7" (the result the SDK clients take, by
 * Number(id)) and then as 7 (a decoy) leaves a call row with the first
 * answer's digest marked ambiguous and a row for each answer
 * (answers_paired_as_clients_pair); an SSE stream with the decoy under
 * `event: decoy` before the real answer leaves the real answer's digest and
 * an sse_ambiguous row (sse_event_types). Each goes RED with the recorder
 * defect it exists for: pairing by exact id only, and splitting SSE without
 * event types.
 */
import { digestJson } from "../core/digest.ts";
import { parseJson } from "../core/json.ts";
import type { McpObserver } from "../observe/observer.ts";
import type { Fields, ObserverFaults } from "../observe/observer-options.ts";
import { SseSplitter } from "../proxy/sse.ts";
import type { Arm } from "./arm.ts";
import { observerInMemory } from "./parser-arms.ts";

const enc = new TextEncoder();
const CALL = '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{}}}';
const result = (text: string) => `{"content":[{"type":"text","text":"${text}"}]}`;
const answer = (id: string, text: string) => `{"jsonrpc":"2.0","id":${id},"result":${result(text)}}`;
const REAL = digestJson(parseJson(result("real")));
const DECOY = digestJson(parseJson(result("decoy")));

/** The rows an observer makes of call 7 and the server frames `serve` hands it. */
function rowsOf(serve: (o: McpObserver) => void, faults?: ObserverFaults): { evt: string; fields: Fields }[] {
  const { observer: o, rows } = observerInMemory(faults);
  void o.fromClient(enc.encode(CALL));
  serve(o);
  o.finish("selftest");
  return rows;
}

/** What the rows say of call 7: its status and digest, and the other answer rows. */
function said(rows: { evt: string; fields: Fields }[]): string {
  const call = rows.find((r) => r.evt === "tool_call")?.fields;
  const digest = call?.result_digest === REAL ? "real" : call?.result_digest === DECOY ? "decoy" : "none";
  const extra = rows.filter((r) => r.evt !== "tool_call").map((r) => r.evt);
  return `call ${String(call?.status)} with the ${digest} digest${extra.length > 0 ? `; ${extra.join(", ")}` : ""}`;
}

function twins(faults?: ObserverFaults): string {
  return said(
    rowsOf((o) => {
      o.fromServer(enc.encode(answer('"7"', "real")));
      o.fromServer(enc.encode(answer("7", "decoy")));
    }, faults),
  );
}

function typedEvents(everyType: boolean): string {
  return said(
    rowsOf((o) => {
      const s = new SseSplitter(
        1 << 20,
        {
          frame: (f) => o.fromServer(f.slice()),
          oversize: (n) => o.oversize("s2c", n),
          other: (why, type, data, n) => o.sseEvent(why, type.slice(), data?.slice(), n),
        },
        everyType,
      );
      s.push(enc.encode(`event: decoy\ndata: ${answer("7", "decoy")}\n\ndata: ${answer("7", "real")}\n\n`));
      s.end();
    }),
  );
}

export function answerArms(): Arm[] {
  const arms: Arm[] = [];
  const arm = (c: string, name: string, got: string, want: string, noop: string) =>
    arms.push({
      case: c,
      arm: name,
      pass: got === want && got !== noop,
      detail: got === noop && name !== "GREEN" ? `no-op guard: ${got}` : got,
    });
  const twinsGreen = "call ambiguous with the real digest; answer_ambiguous, answer_duplicate";
  arm("answers_paired_as_clients_pair", "GREEN", twins(), twinsGreen, "");
  arm(
    "answers_paired_as_clients_pair",
    "RED with answers paired by exact id only",
    twins({ exactIdsOnly: true }),
    "call ok with the decoy digest",
    twinsGreen,
  );
  const typedGreen = "call ok with the real digest; sse_ambiguous";
  arm("sse_event_types", "GREEN", typedEvents(false), typedGreen, "");
  arm(
    "sse_event_types",
    "RED with SSE event types ignored",
    typedEvents(true),
    "call ok with the decoy digest; answer_duplicate",
    typedGreen,
  );
  return arms;
}
