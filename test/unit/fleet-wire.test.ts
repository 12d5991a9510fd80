/**
 * How a replay reads NATS's wire: frames cut by the fast path exactly as
 * the client's own parser cuts them (however the socket's reads split
 * them), a delivery's sequences off its reply subject (both forms), and
 * what the status messages to a pull say.
 */
import { describe, expect, test } from "bun:test";
import { Kind, Parser, type ParserEvent, State } from "@nats-io/nats-core/internal";
import { headers } from "@nats-io/transport-node";
import { deliveryOf, replayStatus } from "../../src/fleet/jetstream.ts";
import { fastFrames } from "../../src/fleet/wire.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

describe("deliveryOf", () => {
  const cases: [string, { stream: number; consumer: number } | null][] = [
    ["$JS.ACK.SEAM_LEDGERS.3rC4THfw.1.17.5.1796085510251821030.299999", { stream: 17, consumer: 5 }],
    ["$JS.ACK.S.c.3.123456789012345.2.1.0", { stream: 123456789012345, consumer: 2 }],
    // The newer form: domain (or "_") and account hash first, a random token last (or not).
    ["$JS.ACK._.ACCHASH.SEAM_LEDGERS.c1.1.42.7.1796085510251821030.0.r4nd0m", { stream: 42, consumer: 7 }],
    ["$JS.ACK.hub.ACCHASH.S.c1.2.43.8.1796085510251821030.9", { stream: 43, consumer: 8 }],
    ["$JS.ACK.S.c.1.17.5.1796085510251821030", null], // 8 tokens
    ["$JS.ACK.S.c.1.17.5.1796085510251821030.1.2", null], // 10 tokens
    ["$JS.ACK._.H.S.c.1.17.5.1796085510251821030.0.r.x", null], // 13 tokens
    ["$JS.ACK.S.c.1.x7.5.1796085510251821030.0", null],
    ["$JS.ACK.S.c.1.17..1796085510251821030.0", null],
    ["$JS.ACK.S.c.1.0.5.1796085510251821030.0", null],
    ["$JS.ACK.S.c.1.1234567890123456.5.1796085510251821030.0", null], // more digits than the client reads
    ["$JS.NAK.S.c.1.17.5.1796085510251821030.0", null],
    ["_INBOX.abc.1.17.5.1796085510251821030.0.1.2", null],
    ["", null],
  ];
  test.each(cases)("%s", (reply, want) => {
    expect(deliveryOf(enc.encode(reply))).toEqual(want);
  });
});

describe("replayStatus", () => {
  const pending = (code: number, description: string, n: string) => {
    const h = headers(code, description);
    h.set("Nats-Pending-Messages", n);
    return h;
  };
  const cases: [string, ReturnType<typeof headers> | undefined, ReturnType<typeof replayStatus>][] = [
    ["heartbeat", headers(100, "Idle Heartbeat"), "heartbeat"],
    ["no messages", headers(404, "No Messages"), "ended"],
    ["expired", headers(408, "Request Timeout"), "ended"],
    ["expired with 12 undelivered", pending(408, "Request Timeout", "12"), 12],
    ["expired with a bad count", pending(408, "Request Timeout", "x"), "ended"],
    ["consumer deleted", headers(409, "Consumer Deleted"), "409 Consumer Deleted"],
    ["leadership change", pending(409, "Leadership Change", "3"), "409 Leadership Change"],
    ["no responders", headers(503, "No Responders"), "no consumer answers its pull requests (503)"],
    ["no status at all", undefined, "0 a message without a JetStream reply subject"],
  ];
  test.each(cases)("%s", (_name, h, want) => {
    expect(replayStatus(h)).toEqual(want);
  });
});

/** What a parser hands on, in a comparable form; the error it threw last. */
function run(chunks: Uint8Array[], fast: boolean): { events: unknown[]; stockBytes: number; error?: string } {
  const events: unknown[] = [];
  const p = new Parser({
    push: (e: ParserEvent) => {
      const m = e.msg;
      events.push(
        m === undefined
          ? [e.kind, e.data ? dec.decode(e.data) : null]
          : [
              e.kind,
              dec.decode(m.subject),
              m.sid,
              m.reply === undefined ? undefined : dec.decode(m.reply),
              m.hdr,
              m.size,
              dec.decode(e.data),
            ],
      );
    },
  });
  let stockBytes = 0;
  const stock = p.parse.bind(p);
  p.parse = (b) => {
    stockBytes += b.length;
    stock(b);
  };
  if (fast) fastFrames(p as never, State.OP_START, Kind.MSG);
  try {
    for (const c of chunks) p.parse(c);
  } catch (err) {
    return { events, stockBytes, error: (err as Error).message };
  }
  return { events, stockBytes };
}

const hmsg = (subject: string, sid: number, reply: string | null, hdr: string, data: string) =>
  `HMSG ${subject} ${sid}${reply === null ? "" : ` ${reply}`} ${hdr.length} ${hdr.length + data.length}\r\n${hdr}${data}\r\n`;
const msg = (subject: string, sid: number, reply: string | null, data: string) =>
  `MSG ${subject} ${sid}${reply === null ? "" : ` ${reply}`} ${data.length}\r\n${data}\r\n`;
const HDR = "NATS/1.0\r\nSeam-Line: 7\r\nSeam-Host: h\r\n\r\n";

/** Every frame the server sends a replay, and frames only the client's parser takes. */
const WHOLE = [
  hmsg("seam.ledger.o", 1, "$JS.ACK.S.c.1.1.1.1796085510251821030.2", HDR, '{"a":1}\n'),
  hmsg("seam.ledger.o", 1, "$JS.ACK.S.c.1.2.2.1796085510251821030.1", HDR, "line\r\nwith MSG and HMSG in it\n"),
  hmsg("_INBOX.x", 12, null, "NATS/1.0 408 Request Timeout\r\nNats-Pending-Messages: 3\r\n\r\n", ""),
  msg("seam.ack", 3, "_INBOX.y.0.1", '{"stream":"S","seq":1}'),
  msg("seam.ack", 3, null, ""),
  hmsg("s", 4, "r", HDR, ""),
];
const OTHER = [
  "PING\r\n",
  "+OK\r\n",
  `INFO {"server_id":"x","max_payload":1048576}\r\n`,
  "HMSG s\t5 r 4 4\r\nNATS\r\n", // a tab between tokens
  "HMSG s  6 r 4 4\r\nNATS\r\n", // two spaces
  "hmsg s 7 r 4 4\r\nNATS\r\n",
  "MSG s 8 2\nok\r\n", // no carriage return
  "MSG\ts 9 2\r\nok\r\n",
  "MSG s 10 2\r\nokay\r\n", // data longer than its size
];
const wire = (frames: string[]) => enc.encode(frames.join(""));

describe("fastFrames", () => {
  test("whole frames are cut here, each as the client's parser cuts it", () => {
    const bytes = wire([...WHOLE, ...WHOLE]);
    const mine = run([bytes], true);
    expect(mine.events).toEqual(run([bytes], false).events);
    expect(mine.events).toHaveLength(WHOLE.length * 2);
    expect(mine.stockBytes).toBe(0);
  });

  test("other operations and odd frames go to the client's parser, which reads them as ever", () => {
    const bytes = wire([...WHOLE, ...OTHER, ...WHOLE]);
    const mine = run([bytes], true);
    expect(mine.events).toEqual(run([bytes], false).events);
    expect(mine.events.length).toBeGreaterThan(WHOLE.length * 2 + 3);
    expect(mine.stockBytes).toBe(wire(OTHER).length);
  });

  test("frames split across reads at every byte come out the same", () => {
    const bytes = wire([...WHOLE, ...OTHER, ...WHOLE]);
    const want = run([bytes], false).events;
    for (let cut = 1; cut < bytes.length; cut++) {
      const got = run([bytes.subarray(0, cut), bytes.subarray(cut)], true);
      expect([cut, got.events]).toEqual([cut, want]);
    }
    for (const step of [1, 2, 3, 7, 64]) {
      const chunks: Uint8Array[] = [];
      for (let i = 0; i < bytes.length; i += step) chunks.push(bytes.subarray(i, i + step));
      expect([step, run(chunks, true).events]).toEqual([step, want]);
    }
    // A split within a frame costs only that frame: the whole frames after it are cut here again.
    const cut = WHOLE[0]!.length + 20;
    const split = run([bytes.subarray(0, cut), bytes.subarray(cut)], true);
    expect(split.stockBytes).toBe(wire(OTHER).length + WHOLE[1]!.length);
  });

  const broken: [string, string][] = [
    ["header longer than the message", "HMSG s 1 r 10 5\r\n12345\r\n"],
    ["a sid that is not a number", "HMSG s x r 4 4\r\nNATS\r\n"],
    ["too many tokens", "HMSG s 1 r q 4 4\r\nNATS\r\n"],
    ["too few tokens", "MSG s 2\r\nok\r\n"],
    ["a size beyond what the client takes", "MSG s 1 99999999999\r\nok\r\n"],
    ["a tab within the subject", "MSG s\tx 1 2\r\nok\r\n"],
    ["a carriage return within the subject", "HMSG s\rx 1 r 4 4\r\nNATS\r\n"],
  ];
  test.each(broken)("malformed: %s: the client's own error, after the frames before it", (_name, frame) => {
    const bytes = wire([WHOLE[0]!, frame, WHOLE[0]!]);
    const want = run([bytes], false);
    expect(want.error).toBeDefined();
    expect(run([bytes], true)).toMatchObject({ events: want.events, error: want.error });
  });
});
