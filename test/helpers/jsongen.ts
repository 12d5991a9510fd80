/**
 * Seeded generators of JSON text for property tests: valid documents that
 * stress what the canonical forms care about (int vs float literals, big
 * ints, exponents, escapes, lone surrogates, astral and U+E000..U+FFFF keys,
 * duplicate keys, deep nesting, odd whitespace), and near-JSON made by
 * mutating them.
 */

/** mulberry32: small, fast, and the same sequence on every machine. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class Gen {
  readonly r: () => number;
  constructor(seed: number) {
    this.r = rng(seed);
  }
  int(n: number): number {
    return Math.floor(this.r() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
  chance(p: number): boolean {
    return this.r() < p;
  }

  ws(): string {
    if (!this.chance(0.15)) return "";
    return this.pick([" ", "\n", "\t", "\r\n", "  ", " \t "]);
  }

  digits(n: number, leadingNonZero = true): string {
    let s = leadingNonZero ? String(1 + this.int(9)) : "";
    while (s.length < n) s += String(this.int(10));
    return s;
  }

  intLiteral(): string {
    const sign = this.chance(0.3) ? "-" : "";
    switch (this.int(6)) {
      case 0:
        return `${sign}0`;
      case 1:
        return sign + this.int(1000);
      case 2:
        return (
          sign +
          this.pick([
            "9007199254740991",
            "9007199254740992",
            "9007199254740993",
            "18446744073709551616",
            "123456789012345678",
          ])
        );
      case 3:
        return sign + this.digits(14 + this.int(6));
      case 4:
        return sign + this.digits(20 + this.int(60));
      default:
        return sign + (this.chance(0.1) ? this.digits(4290 + this.int(20)) : String(this.int(2 ** 31)));
    }
  }

  floatLiteral(): string {
    const sign = this.chance(0.3) ? "-" : "";
    switch (this.int(8)) {
      case 0:
        return (
          sign +
          this.pick([
            "0.0",
            "1.0",
            "100.0",
            "1E2",
            "1e2",
            "1.5e3",
            "0.1",
            "0.30000000000000004",
            "1e16",
            "1e15",
            "1e-7",
            "0.0001",
            "0.00001",
            "5e-324",
            "1.7976931348623157e308",
            "2.5e-5",
            "1e400",
            "1e-400",
            "4.50",
            "1E+30",
            "2e-3",
          ])
        );
      case 1:
        return `${sign + this.int(1e6)}.${this.digits(1 + this.int(20), false)}`;
      case 2:
        return sign + this.digits(1 + this.int(3)) + this.pick(["e", "E"]) + this.pick(["", "+", "-"]) + this.int(330);
      case 3:
        return (
          sign +
          this.digits(1 + this.int(25)) +
          "." +
          this.digits(1 + this.int(5), false) +
          "e" +
          this.pick(["", "-", "+"]) +
          this.int(40)
        );
      case 4: {
        // an arbitrary double, written as JS writes it
        const b = new DataView(new ArrayBuffer(8));
        b.setUint32(0, this.int(2 ** 32));
        b.setUint32(4, this.int(2 ** 32));
        const x = b.getFloat64(0);
        return Number.isFinite(x) ? String(x).replace(/^(-?\d+)$/, "$1.0") : "1.5";
      }
      case 5:
        return this.pick(["NaN", "Infinity", "-Infinity"]);
      case 6:
        return `${sign + this.int(100)}.${"0".repeat(1 + this.int(3))}`;
      default:
        return sign + (this.r() * 10 ** (this.int(40) - 20)).toString().replace(/^(-?\d+)$/, "$1.0");
    }
  }

  /** One character (as JSON string source) from a pool that covers every escaping rule. */
  strChar(): string {
    switch (this.int(16)) {
      case 0:
        return this.pick(['\\"', "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t"]);
      case 1:
        return `\\u00${this.pick(["00", "01", "1f", "1F", "7f", "e9", "20", "22", "5c"])}`;
      case 2:
        return this.pick([
          "é",
          "—",
          "日",
          "\u2028",
          "\u2029",
          "\u007f",
          "\u0080",
          "\ufeff",
          "\ufb00",
          "\ue000",
          "\uffff",
        ]);
      case 3:
        return this.pick(["😀", "🔒", "\u{10000}", "\u{10ffff}"]);
      case 4:
        return this.pick([
          "\\ud83d\\ude00",
          "\\uD83D\\uDE00",
          "\\ud800",
          "\\udc00",
          "\\udbff",
          "\\udfff",
          "\\ud800x",
          "\\ud800\\u0041",
          "\\udc00\\ud800",
        ]);
      case 5:
        return `\\u${this.pick(["fb00", "FB00", "e000", "2028", "0041", "ffff", "feff"])}`;
      default:
        return String.fromCharCode(32 + this.int(95)).replace(/["\\]/, "");
    }
  }

  string(maxLen = 8): string {
    let s = '"';
    const n = this.int(maxLen + 1);
    for (let i = 0; i < n; i++) s += this.strChar();
    return `${s}"`;
  }

  key(): string {
    // A small pool so that duplicates and order ties happen often.
    if (this.chance(0.6)) {
      return this.pick([
        '"a"',
        '"b"',
        '"A"',
        '"é"',
        '"e"',
        '"\\ufb00"',
        '"ﬀ"',
        '"😀"',
        '"\\ud83d\\ude00"',
        '"\\ue000"',
        '"\\ud800"',
        '"\\udc00"',
        '"10"',
        '"1"',
        '""',
        '"a\\u0000"',
        '"\\ud800\\ue000"',
      ]);
    }
    return this.string(4);
  }

  value(depth = 0): string {
    const k = depth > 6 ? this.int(6) : this.int(10);
    switch (k) {
      case 0:
        return this.pick(["null", "true", "false"]);
      case 1:
        return this.intLiteral();
      case 2:
        return this.floatLiteral();
      case 3:
      case 4:
      case 5:
        return this.string();
      case 6:
      case 7: {
        const n = this.int(5);
        const items: string[] = [];
        for (let i = 0; i < n; i++) items.push(this.ws() + this.value(depth + 1) + this.ws());
        return `[${items.join(",") || this.ws()}]`;
      }
      default: {
        const n = this.int(6);
        const items: string[] = [];
        for (let i = 0; i < n; i++)
          items.push(`${this.ws() + this.key() + this.ws()}:${this.ws()}${this.value(depth + 1)}${this.ws()}`);
        return `{${items.join(",") || this.ws()}}`;
      }
    }
  }

  /** A document, sometimes wrapped in deep nesting. */
  document(): string {
    let v = this.ws() + this.value() + this.ws();
    if (this.chance(0.03)) {
      const d = this.pick([50, 500, 890, 1200, 5000]);
      const obj = this.chance(0.5);
      v = (obj ? '{"k":' : "[").repeat(d) + v + (obj ? "}" : "]").repeat(d);
    }
    return v;
  }

  /** Near-JSON: a document with a few characters deleted, inserted, replaced or cut off. */
  mutant(): string {
    let s = this.document();
    const edits = 1 + this.int(3);
    for (let e = 0; e < edits; e++) {
      const at = this.int(s.length + 1);
      const junk = this.pick([
        '"',
        "\\",
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        "-",
        ".",
        "e",
        "0",
        "1",
        "N",
        "I",
        "t",
        " ",
        "\u0000",
        "\n",
        "\ud800",
        "\udc00",
        "\ufeff",
        "u",
        "x",
      ]);
      switch (this.int(4)) {
        case 0:
          s = s.slice(0, at) + s.slice(at + 1);
          break;
        case 1:
          s = s.slice(0, at) + junk + s.slice(at);
          break;
        case 2:
          s = s.slice(0, at) + junk + s.slice(at + 1);
          break;
        default:
          s = s.slice(0, at);
      }
    }
    return s;
  }

  /** Random bytes, sometimes biased towards JSON's punctuation. */
  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    const bias = this.chance(0.5);
    const punct = [0x22, 0x5c, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a, 0x2d, 0x30, 0x31, 0x65, 0x20, 0x75];
    for (let i = 0; i < n; i++) out[i] = bias && this.chance(0.7) ? this.pick(punct) : this.int(256);
    return out;
  }
}
