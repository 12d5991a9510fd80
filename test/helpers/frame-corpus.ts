/**
 * A seeded corpus of tools/call frames built to sit where JSON stacks
 * disagree: deep nesting, long integers, huge exponents, invalid and overlong
 * UTF-8 in strings, keys and tool names, lone surrogates as escapes and as
 * bytes, byte order marks, duplicate and case-variant JSON-RPC keys, NUL in
 * keys, whitespace variants, numbers like 1.0 / 1e0 / -0, NaN, and frames no
 * stack reads. Every frame names a tool unique to it (`tool_<n>`, perhaps
 * with a suffix), so a row can be matched to what a server saw.
 */
import { cat, type Part } from "./bytes.ts";
import { Gen } from "./jsongen.ts";

export interface CorpusFrame {
  bytes: Uint8Array;
  /** The mutations applied, for messages. */
  kinds: string[];
}

/** Byte sequences that are not UTF-8: a stray byte, overlong "/", a UTF-8-encoded surrogate, a truncated sequence, a 5-byte form, a lone continuation. */
const BAD_UTF8: number[][] = [
  [0xff],
  [0xc0, 0xaf],
  [0xed, 0xa0, 0x80],
  [0xe2, 0x82],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0x80],
];

const ARGS: ((g: Gen) => { parts: Part[]; kind: string })[] = [
  () => ({ parts: ['{"a":1}'], kind: "plain" }),
  (g) => {
    const k = g.pick([899, 905, 992, 1000, 3000, 12000]);
    return { parts: [`{"d":${"[".repeat(k)}${"]".repeat(k)}}`], kind: `deep ${k}` };
  },
  (g) => {
    const k = g.pick([4300, 4301, 9000]);
    return { parts: [`{"n":${g.chance(0.5) ? "-" : ""}${"9".repeat(k)}}`], kind: `int of ${k} digits` };
  },
  () => ({ parts: ['{"x":1e400,"y":-1e999,"z":1e-400,"w":1E+2}'], kind: "huge exponents" }),
  (g) => ({ parts: ['{"s":"a', g.pick(BAD_UTF8), 'b"}'], kind: "invalid UTF-8 in a value" }),
  (g) => ({ parts: ['{"k', g.pick(BAD_UTF8), '":1}'], kind: "invalid UTF-8 in a key" }),
  () => ({ parts: ['{"s":"\\ud800x\\udc00y\\udbff"}'], kind: "lone surrogate escapes" }),
  (g) => ({ parts: [`{"x":${g.pick(["NaN", "Infinity", "-Infinity"])}}`], kind: "NaN" }),
  () => ({ parts: ['{"a\\u0000b":1,"\\u0000":2}'], kind: "NUL in keys" }),
  () => ({ parts: ['{"a":1.0,"b":1e0,"c":-0,"d":-0.0,"e":0.1e1}'], kind: "int-like floats" }),
  () => ({ parts: ['{"a":1,"a":2,"b":{"c":1,"c":[]}}'], kind: "duplicate argument keys" }),
];

const NAMES: ((g: Gen, t: string) => { parts: Part[]; kind?: string })[] = [
  (_g, t) => ({ parts: [`"${t}"`] }),
  (g, t) => ({ parts: [`"${t}`, g.pick(BAD_UTF8), '"'], kind: "invalid UTF-8 in the name" }),
  (_g, t) => ({ parts: [`"${t}\\udead"`], kind: "lone surrogate in the name" }),
  (_g, t) => ({ parts: [`"\\u0074${t.slice(1)}"`], kind: "escaped name" }),
];

const IDS: ((g: Gen, n: number) => { id: string; kind?: string })[] = [
  (_g, n) => ({ id: `${n}` }),
  (_g, n) => ({ id: `"s${n}"` }),
  (g, n) => ({ id: g.pick([`${n}.0`, `${n}e0`, `${n}0e-1`]), kind: "float id" }),
  (_g, n) => ({ id: `${9007199254740993n + BigInt(n * 2)}`, kind: "id beyond 2^53" }),
];

/** n frames from `seed`; deterministic. */
export function corpus(seed: number, n: number): CorpusFrame[] {
  const g = new Gen(seed);
  const out: CorpusFrame[] = [];
  for (let i = 0; i < n; i++) {
    const t = `tool_${seed}_${i}`;
    const kinds: string[] = [];
    const args = g.pick(ARGS)(g);
    kinds.push(args.kind);
    const name = g.chance(0.7) ? NAMES[0]!(g, t) : g.pick(NAMES)(g, t);
    if (name.kind) kinds.push(name.kind);
    const id = g.chance(0.7) ? IDS[0]!(g, i) : g.pick(IDS)(g, i);
    if (id.kind) kinds.push(id.kind);
    const W = () => (g.chance(0.1) ? g.pick([" ", "\t", "\r", " \t\r "]) : "");
    let method: Part[] = [`"method"${W()}:${W()}"tools/call"`];
    let idPart: Part[] = [`"id":${W()}${id.id}`];
    let nameMember: Part[] = [`"name":${W()}`, ...name.parts];
    let extraParams: Part[] = [];
    let extraTop: Part[] = [];
    const structural = g.int(14);
    switch (structural) {
      case 0:
        kinds.push("duplicate name");
        nameMember = [`"name":"${t}_first",`, ...nameMember];
        break;
      case 1:
        kinds.push("duplicate name, last differs");
        extraParams = [`,"name":"${t}_last"`];
        break;
      case 2:
        kinds.push("duplicate method");
        method = g.chance(0.5) ? ['"method":"tools/list",', ...method] : [...method, ',"method":"tools/list"'];
        break;
      case 3:
        kinds.push("duplicate id");
        idPart = [...idPart, `,"id":"other${i}"`];
        break;
      case 4:
        kinds.push("duplicate params");
        extraTop = [`,"params":{"name":"${t}_second","arguments":{}}`];
        break;
      case 5:
        kinds.push("case-variant name");
        extraParams = [`,"${g.pick(["Name", "NAME", "nAme"])}":"${t}_go"`];
        break;
      case 6:
        kinds.push("case-variant method");
        method = ['"method":"tools/list",', `"${g.pick(["Method", "METHOD", "method".toUpperCase()])}":"tools/call"`];
        break;
      case 7:
        kinds.push("case-variant params (long s)");
        extraTop = [`,"param\u017f":{"name":"${t}_longs","arguments":{}}`];
        break;
      case 8:
        kinds.push("case-variant id");
        extraTop = [`,"ID":${i + 1000000}`];
        break;
      default:
        break;
    }
    let parts: Part[] = [
      `{${W()}"jsonrpc":"2.0",${W()}`,
      ...idPart,
      `,${W()}`,
      ...method,
      `,${W()}"params":${W()}{${W()}`,
      ...nameMember,
      `,${W()}"arguments":${W()}`,
      ...args.parts,
      ...extraParams,
      `${W()}}`,
      ...extraTop,
      `${W()}}`,
    ];
    const frame = g.int(40);
    if (frame === 0) {
      kinds.push("BOM");
      parts = [[0xef, 0xbb, 0xbf], ...parts];
    } else if (frame === 1) {
      kinds.push("form feed (no stack's whitespace)");
      parts = ["\f", ...parts];
    } else if (frame === 2) {
      kinds.push("CRLF");
      parts = [...parts, "\r"];
    } else if (frame === 3) {
      kinds.push("lone surrogate as bytes between tokens");
      parts = [...parts.slice(0, 1), [0xed, 0xb0, 0x80], ...parts.slice(1)];
    }
    let bytes = cat(...parts);
    if (g.int(30) === 0) {
      kinds.push("truncated");
      bytes = bytes.subarray(0, 1 + g.int(bytes.length - 1));
    }
    out.push({ bytes, kinds });
  }
  return out;
}

/** The frames as one client stream, each followed by "\n". */
export function stream(frames: CorpusFrame[]): Uint8Array {
  return cat(...frames.flatMap((f): Part[] => [Array.from(f.bytes), "\n"]));
}
