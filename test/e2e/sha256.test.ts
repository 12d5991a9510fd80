/**
 * One-shot SHA-256 (src/core/sha256.ts) through each way it can hash: the
 * runtime's (under Bun, src/runtime/index.ts installs Bun's) and
 * node:crypto's; both must give what a Hash object gives, whole or cut to a
 * chain's 16 bytes.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { installedSha256, sha256Hex, useSha256 } from "../../src/core/sha256.ts";
import "../../src/runtime/index.ts";

const installed = installedSha256();
const reference = (d: string | Uint8Array) => createHash("sha256").update(d).digest("hex");

const inputs: [string, string | Uint8Array][] = [
  ["empty string", ""],
  ["ascii", 'genesis{"evt": "tool_call", "seq": 1}'],
  ["two-byte and three-byte UTF-8", "é€ and ü"],
  ["astral (a surrogate pair in UTF-16)", "𝄞 😀"],
  ["empty bytes", new Uint8Array(0)],
  ["bytes over one block", new Uint8Array(200).map((_, i) => i)],
  ["a megabyte", new Uint8Array(1 << 20).fill(0x61)],
  ["a view into a larger buffer", new Uint8Array(300).fill(7).subarray(13, 177)],
];

describe("sha256Hex", () => {
  afterAll(() => useSha256(installed));

  test("importing the runtime installs Bun's one-shot under Bun, none under Node", () => {
    const bun = typeof (globalThis as { Bun?: unknown }).Bun !== "undefined";
    expect(installed !== null).toBe(bun);
  });

  for (const backend of ["installed", "node:crypto"] as const) {
    for (const [name, data] of inputs) {
      test(`${backend}: ${name}`, () => {
        useSha256(backend === "installed" ? installed : null);
        const want = reference(data);
        expect(sha256Hex(data)).toBe(want);
        expect(sha256Hex(data, 16)).toBe(want.slice(0, 32));
      });
    }
  }
});
