/**
 * A Readable pushed through pump (readableSource, as seam wrap reads the
 * client's stdin and the server's stdout under Node): every chunk in order,
 * none while the last one's wait is pending, and an end that waits for it.
 * And heldSource (a server's stdout under Node): what came before it was read.
 */
import { describe, expect, test } from "bun:test";
import { PassThrough } from "node:stream";
import { heldSource, readableSource } from "../../src/runtime/proc-node.ts";
import type { ByteSink } from "../../src/runtime/types.ts";
import { pump } from "../../src/wrap/relay.ts";

const enc = new TextEncoder();
const text = (chunks: Uint8Array[]) => new TextDecoder().decode(Buffer.concat(chunks));

function sink(): ByteSink & { got: Uint8Array[] } {
  const got: Uint8Array[] = [];
  return {
    got,
    write(c) {
      got.push(c);
    },
    async end() {},
  };
}

function deferred(): { promise: Promise<void>; resolve: () => void; reject: (e: Error) => void } {
  let resolve!: () => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const tick = () => new Promise((r) => setTimeout(r, 20));

describe("readableSource through pump", () => {
  test("every chunk forwarded and observed, in order, and the end", async () => {
    const src = new PassThrough();
    const out = sink();
    const seen: Uint8Array[] = [];
    const done = pump(readableSource(src), out, (c) => {
      seen.push(c);
    });
    for (let i = 0; i < 50; i++) src.write(enc.encode(`frame ${i}\n`));
    src.end();
    await done;
    const want = Array.from({ length: 50 }, (_, i) => `frame ${i}\n`).join("");
    expect(text(out.got)).toBe(want);
    expect(text(seen)).toBe(want);
  });

  test("no chunk is read while the observer's wait is pending; the end waits for it", async () => {
    const src = new PassThrough();
    const out = sink();
    const gate = deferred();
    let observed = 0;
    let ended = false;
    const done = pump(readableSource(src), out, () => {
      observed++;
      return observed === 1 ? gate.promise : undefined;
    }).then(() => {
      ended = true;
    });
    src.write(enc.encode("a\n"));
    await tick();
    src.write(enc.encode("b\n"));
    src.write(enc.encode("c\n"));
    src.end();
    await tick();
    expect(observed).toBe(1);
    expect(text(out.got)).toBe("a\n");
    expect(ended).toBe(false);
    gate.resolve();
    await done;
    expect(text(out.got)).toBe("a\nb\nc\n");
    expect(observed).toBeGreaterThanOrEqual(2);
  });

  test("the last chunk's wait is awaited before the end", async () => {
    const src = new PassThrough();
    const gate = deferred();
    let ended = false;
    const done = pump(readableSource(src), sink(), () => gate.promise).then(() => {
      ended = true;
    });
    src.end(enc.encode("only\n"));
    await tick();
    expect(ended).toBe(false);
    gate.resolve();
    await done;
    expect(ended).toBe(true);
  });

  test("a wait that fails ends the flow, as a read error does (no hang)", async () => {
    const src = new PassThrough();
    const gate = deferred();
    const out = sink();
    const done = pump(readableSource(src), out, () => gate.promise);
    src.write(enc.encode("x\n"));
    await tick();
    gate.reject(new Error("recorder gone"));
    await done;
    src.write(enc.encode("y\n"));
    await tick();
    expect(text(out.got)).toBe("x\n");
  });

  test("a stream that fails ends the flow", async () => {
    const src = new PassThrough();
    const out = sink();
    const done = pump(readableSource(src), out, () => {});
    src.write(enc.encode("x\n"));
    await tick();
    src.destroy(new Error("EIO"));
    await done;
    expect(text(out.got)).toBe("x\n");
  });
});

describe("heldSource: a child's output that came before it was read", () => {
  // Node's child_process resumes a child's stdout once the child exits (what nobody reads is then lost):
  // `resume` does the same here, before the source is read, and `after` writes once it is.
  for (const [name, after] of [
    ["all of it, and the end, before the source is read", []],
    ["some before, the rest after", ["c", "d"]],
  ] as const)
    test(name, async () => {
      const src = new PassThrough();
      const source = heldSource(src);
      src.write(enc.encode("a"));
      src.write(enc.encode("b"));
      if (after.length === 0) src.end();
      await tick();
      src.resume();
      await tick();
      const out = sink();
      const seen: string[] = [];
      const done = pump(source, out, (c) => {
        seen.push(new TextDecoder().decode(c));
      });
      for (const t of after) src.write(enc.encode(t));
      if (after.length > 0) src.end();
      await done;
      expect(text(out.got)).toBe(["a", "b", ...after].join(""));
      expect(seen.join("")).toBe(["a", "b", ...after].join(""));
    });
});
