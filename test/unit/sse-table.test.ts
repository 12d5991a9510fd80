/**
 * src/proxy/sse.ts against the reader the official SDK clients use
 * (TextDecoderStream then eventsource-parser's EventSourceParserStream, as
 * @modelcontextprotocol/sdk's Streamable HTTP client pipes them): for each
 * stream of the table, cut into two chunks at every byte and fed a byte at a
 * time, seam's splitter hands the observer exactly the messages that reader
 * hands the client (events of type `message` with data), and every event of
 * another type to `other`. Each row also says what the HTML standard's event
 * stream interpretation gives, so a reader and the table cannot drift together.
 */
import { describe, expect, test } from "bun:test";
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from "node:zlib";
import { EventSourceParserStream } from "eventsource-parser/stream";
import { BodyCollector, bodyKind, contentCodings, DecodedBody, SseSplitter } from "../../src/proxy/sse.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/**
 * [name, stream, messages (data), events of other types ([type, data]), what
 * seam reports that readers differ on: "mojibake" (the HTML standard keeps
 * it, the SDK drops it), "final_cr <data>" (the HTML standard dispatches it,
 * the SDK does not)].
 */
const TABLE: [string, string | Uint8Array, string[], [string, string][], string[]?][] = [
  ["one event", 'data: {"a":1}\n\n', ['{"a":1}'], []],
  ["a BOM at the start", '\uFEFFdata: {"a":1}\n\n', ['{"a":1}'], []],
  ["a BOM and CRLF", '\uFEFFdata: {"a":1}\r\n\r\n', ['{"a":1}'], []],
  ["two BOMs: the second is part of the first field's name", "\uFEFF\uFEFFdata: x\n\ndata: y\n\n", ["y"], []],
  ["the BOM's mojibake", "\u00EF\u00BB\u00BFdata: x\n\ndata: y\n\n", ["x", "y"], [], ["mojibake"]],
  ["a BOM, then its mojibake", "\uFEFF\u00EF\u00BB\u00BFdata: x\n\n", ["x"], [], ["mojibake"]],
  ["the BOM's mojibake on a line of its own", "\u00EF\u00BB\u00BF\ndata: x\n\n", ["x"], [], ["mojibake"]],
  ["the mojibake later is a field name", "data: x\n\n\u00EF\u00BB\u00BFdata: y\n\n", ["x"], []],
  ["CR-only line ends", "data: x\r\rdata: y\r\rdata: z\r\r", ["x", "y"], [], ["final_cr z"]],
  ["a stream ending LF CR", "data: x\n\r", [], [], ["final_cr x"]],
  ["CRLF line ends", "id: 1\r\ndata: x\r\n\r\n", ["x"], []],
  ["mixed line ends", "data: a\r\ndata: b\rdata: c\n\r\n", ["a\nb\nc"], []],
  ["multi-line data joins with LF", "data: a\ndata: b\n\n", ["a\nb"], []],
  ["data: without a space", "data:x\n\n", ["x"], []],
  ["only one space is dropped", "data:  x\n\n", [" x"], []],
  ["comments", ": hi\ndata: x\n: there\n\n", ["x"], []],
  ["id and retry", "id: 7\nretry: 100\ndata: x\n\n", ["x"], []],
  ["empty data is no message", "data:\n\ndata\n\n", [], []],
  ["event: message is a message", "event: message\ndata: x\n\n", ["x"], []],
  ["event: with no value is a message", "event:\ndata: x\n\n", ["x"], []],
  [
    "event: decoy then a default event",
    'event: decoy\ndata: {"d":1}\n\ndata: {"r":1}\n\n',
    ['{"r":1}'],
    [["decoy", '{"d":1}']],
  ],
  ["event: Message (case differs) is another type", "event: Message\ndata: x\n\n", [], [["Message", "x"]]],
  ["event:message with a trailing space is another type", "event: message \ndata: x\n\n", [], [["message ", "x"]]],
  ["the last event field wins", "event: decoy\nevent: message\ndata: x\n\n", ["x"], []],
  ["a type is forgotten by an event with no data", "event: decoy\n\ndata: x\n\n", ["x"], []],
  ["a type is forgotten after its event", "event: decoy\ndata: a\n\ndata: b\n\n", ["b"], [["decoy", "a"]]],
  ["a field named events is ignored", "events: decoy\ndata: x\n\n", ["x"], []],
  ["an unfinished event is dropped", "data: x\n\ndata: y\n", ["x"], []],
  ["an unfinished typed event is dropped", "data: x\n\nevent: decoy\ndata: y", ["x"], []],
];

/** What the SDK client's pipeline makes of `bytes` cut at `cuts`. */
async function sdkReads(
  bytes: Uint8Array,
  cuts: number[],
): Promise<{ messages: string[]; others: [string, string][] }> {
  const points = [0, ...cuts, bytes.length];
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      for (let i = 0; i + 1 < points.length; i++) c.enqueue(bytes.slice(points[i], points[i + 1]));
      c.close();
    },
  });
  const reader = stream
    .pipeThrough(new TextDecoderStream() as unknown as TransformStream<Uint8Array, string>)
    .pipeThrough(new EventSourceParserStream())
    .getReader();
  const messages: string[] = [];
  const others: [string, string][] = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    if (!value.data) continue; // the SDK skips events without data
    if (!value.event || value.event === "message") messages.push(value.data);
    else others.push([value.event, value.data]);
  }
  return { messages, others };
}

/** What seam's splitter hands the observer of `bytes` cut at `cuts`. */
function seamReads(
  bytes: Uint8Array,
  cuts: number[],
): { messages: string[]; others: [string, string][]; unsure: string[] } {
  const messages: string[] = [];
  const others: [string, string][] = [];
  const unsure: string[] = [];
  const s = new SseSplitter(1024, {
    frame: (f) => {
      if (f.length > 0) messages.push(dec.decode(f));
    },
    oversize: () => {},
    other: (why, type, data) => {
      if (why === "final_cr") unsure.push(`final_cr ${dec.decode(data)}`);
      else if (data !== undefined && data.length > 0) others.push([dec.decode(type), dec.decode(data)]);
    },
    mojibake: () => unsure.push("mojibake"),
  });
  const points = [0, ...cuts, bytes.length];
  for (let i = 0; i + 1 < points.length; i++) s.push(bytes.subarray(points[i], points[i + 1]));
  s.end();
  return { messages, others, unsure };
}

describe("SSE: seam reads each stream as the SDK client does", () => {
  test.each(TABLE)("%s", async (_name, stream, messages, others, unsure = []) => {
    const bytes = typeof stream === "string" ? enc.encode(stream) : stream;
    const cutsList: number[][] = [[], Array.from({ length: bytes.length - 1 }, (_, i) => i + 1)];
    for (let at = 1; at < bytes.length; at++) cutsList.push([at]);
    for (const cuts of cutsList) {
      expect([cuts, seamReads(bytes, cuts)]).toEqual([cuts, { messages, others, unsure }]);
      // The SDK drops a BOM's mojibake only when its first piece of text holds all of it (why seam reports it).
      if (unsure.includes("mojibake") && cuts.some((c) => c < 9)) continue;
      expect([cuts, await sdkReads(bytes, cuts)]).toEqual([cuts, { messages, others }]);
    }
  });

  test("an event type longer than kept is not message, and a data line past maxFrame is counted", () => {
    const got: string[] = [];
    const sizes: number[] = [];
    const s = new SseSplitter(100, {
      frame: (f) => got.push(dec.decode(f)),
      oversize: (n) => sizes.push(n),
      other: (_why, type, data, n) =>
        got.push(`other ${type.length} ${data === undefined ? `unkept ${n}` : dec.decode(data)}`),
    });
    const stream = `event: ${"m".repeat(90)}\ndata: x\n\nevent: ${"n".repeat(300)}\ndata: w\n\nevent: decoy\ndata: ${"y".repeat(200)}\n\ndata: z\n\n`;
    s.push(enc.encode(stream));
    expect(got).toEqual(["other 64 x", "other 0 w", "other 5 unkept 206", "z"]);
    expect(sizes).toEqual([]);
  });
});

describe("DecodedBody: compressed bodies observed as fetch decodes them, within maxFrame", () => {
  const body = (text: string) => enc.encode(text);
  const run = (codings: string[], bytes: Uint8Array, maxFrame = 1000, step = 7) => {
    const got: string[] = [];
    const sink = {
      frame: (f: Uint8Array) => got.push(`frame ${dec.decode(f)}`),
      oversize: (n: number) => got.push(`oversize ${n > maxFrame}`),
      undecoded: (why: string) => got.push(`undecoded ${why}`),
    };
    const d = new DecodedBody(maxFrame, codings, sink, new BodyCollector(maxFrame, sink, true));
    for (let i = 0; i < bytes.length; i += step) d.push(bytes.subarray(i, i + step));
    d.end();
    return got;
  };
  test("each coding, and two in a row", () => {
    expect(run(["gzip"], gzipSync(body('{"a":1}')))).toEqual(['frame {"a":1}']);
    expect(run(["deflate"], deflateSync(body('{"a":1}')))).toEqual(['frame {"a":1}']);
    expect(run(["deflate"], deflateRawSync(body('{"a":1}')))).toEqual(['frame {"a":1}']);
    expect(run(["br"], brotliCompressSync(body('{"a":1}')))).toEqual(['frame {"a":1}']);
    expect(run(["gzip", "br"], brotliCompressSync(gzipSync(body('{"a":1}'))))).toEqual(['frame {"a":1}']);
    expect(run(["gzip"], gzipSync(body('\uFEFF{"a":1}')))).toEqual(['frame {"a":1}']);
  });
  test("a body that decodes past maxFrame is counted, never grown; one that does not decode is flagged", () => {
    const bomb = gzipSync(new Uint8Array(900_000));
    expect(bomb.length).toBeLessThan(1000);
    expect(run(["gzip"], bomb)).toEqual(["oversize true"]);
    expect(run(["gzip"], new Uint8Array(2000))).toEqual(["oversize true"]);
    expect(run(["gzip"], body("not gzip"))).toEqual(["undecoded gzip: Z_DATA_ERROR"]);
  });
  test("contentCodings: the codings seam decodes, or null", () => {
    expect(contentCodings("GZIP")).toEqual(["gzip"]);
    expect(contentCodings("gzip, br")).toEqual(["gzip", "br"]);
    expect(contentCodings("identity")).toEqual([]);
    expect(contentCodings("zstd")).toBeNull();
    expect(contentCodings("gzip, compress")).toBeNull();
  });
});

test("SseSplitter: an event in the stream's first bytes is handed on with them, not at the stream's end", () => {
  for (const first of ["data:1\n\n", "\uFEFFdata:1\n\n", "\u00EF\u00BB\u00BFdata:1\n\n"]) {
    const got: string[] = [];
    const s = new SseSplitter(100, { frame: (f) => got.push(dec.decode(f)), oversize: () => {} });
    s.push(enc.encode(first));
    expect([first, got]).toEqual([first, ["1"]]);
  }
  // Bytes that may still be a BOM's mojibake wait for the next ones.
  const got: string[] = [];
  const s = new SseSplitter(100, { frame: (f) => got.push(dec.decode(f)), oversize: () => {} });
  s.push(new Uint8Array([0xef, 0xbb, 0xbf, 0xc3]));
  expect(got).toEqual([]);
  s.push(new Uint8Array([0xaf, 0xc2, 0xbb, 0xc2, 0xbf, ...enc.encode("data:2\n\n")]));
  expect(got).toEqual(["2"]);
});

test("bodyKind: the SDK clients' reading of an answer's Content-Type", () => {
  const table: [string | undefined, "sse" | "json" | null, boolean][] = [
    ["application/json", "json", false],
    ["Application/JSON; charset=utf-8", "json", false],
    ["text/event-stream", "sse", false],
    ["text/event-stream;charset=UTF-8", "sse", false],
    // The TypeScript SDK takes exactly the essence; the Python SDK a prefix.
    ["application/json-seq", null, true],
    ["text/event-streamx", null, true],
    ["application/vnd.api+json", null, false],
    ["text/plain", null, false],
    [undefined, null, false],
  ];
  for (const [type, kind, disputed] of table) expect([type, bodyKind(type)]).toEqual([type, { kind, disputed }]);
});
