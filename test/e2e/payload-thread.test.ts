/**
 * Payload files written on a thread of their own (src/runtime/payload-thread.ts),
 * a real thread started from test/fixtures/payload-writer-thread.ts: every
 * payload handed over is in its file once the keeper has settled, one whose
 * bytes are not its digest's is counted, and when the thread is gone the
 * payloads are still written. A write the file system refuses leaves no file.
 */
import { expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { digestJsonUtf8 } from "../../src/core/digest.ts";
import { PayloadKeeper } from "../../src/observe/payloads.ts";
import { PayloadStore } from "../../src/runtime/payload-store.ts";
import { ThreadedPayloadStore } from "../../src/runtime/payload-thread.ts";
import { startThreadFrom } from "../../src/runtime/thread.ts";
import { tempDir } from "../helpers/proc.ts";

const fixture = join(import.meta.dir, "..", "fixtures", "payload-writer-thread.ts");
const encoder = new TextEncoder();
const enc = (s: string) => encoder.encode(s);
const start = (role: string, data: unknown) => startThreadFrom(fixture, role, data);

/** One buffer every frame is read into, as a recorder reuses its ring: what is kept must be copied out. */
const ring = new Uint8Array(1024);

/** A frame whose result is `value`, kept under its digest (or under `digest` when given). */
function keepResult(keeper: PayloadKeeper, value: string, digest = digestJsonUtf8(enc(value))): void {
  const frame = enc(`{"jsonrpc":"2.0","id":1,"result":${value}}`);
  ring.fill(0x20);
  ring.set(frame);
  keeper.keep(digest, ring.subarray(0, frame.length), -1, ["result"]);
}

test("the thread writes every payload handed to it, in batches, and counts what it could not", async () => {
  const dir = join(tempDir(), "store");
  const store = PayloadStore.open(dir);
  const writer = ThreadedPayloadStore.start(start, store)!;
  expect(writer).not.toBeNull();
  const warned: string[] = [];
  const keeper = new PayloadKeeper(writer, (m) => warned.push(m));
  const values = Array.from({ length: 600 }, (_, i) => `{"n": ${i}, "text": "hello ${i}"}`);
  for (const v of values) keepResult(keeper, v);
  // The same values again: handed over once.
  for (const v of values.slice(0, 10)) keepResult(keeper, v);
  // Bytes that are not the digest's value are never written under its name.
  keepResult(keeper, "[1]", digestJsonUtf8(enc("[2]")));
  await keeper.settled();
  expect(keeper.unwritten).toBe(1);
  expect(warned).toEqual([expect.stringContaining("do not digest to the row's digest")]);
  const names = readdirSync(join(dir, "sha256"));
  expect(names.length).toBe(values.length);
  for (const v of values) expect(readFileSync(join(dir, "sha256", digestJsonUtf8(enc(v)).slice(-64)), "utf8")).toBe(v);
  await writer.close();
});

test("once the thread is gone, payloads are written on this side", async () => {
  const dir = join(tempDir(), "store");
  const store = PayloadStore.open(dir);
  const writer = ThreadedPayloadStore.start(start, store)!;
  await writer.close();
  await new Promise((r) => setTimeout(r, 50));
  const keeper = new PayloadKeeper(writer, () => {});
  keepResult(keeper, '{"late": true}');
  await keeper.settled();
  expect(keeper.unwritten).toBe(0);
  expect(store.get(digestJsonUtf8(enc('{"late": true}')))).toEqual({
    kind: "present",
    bytes: enc('{"late": true}'),
  });
});

// A file-size limit of 0 makes the kernel refuse the first byte written to a
// new file (EFBIG, SIGXFSZ ignored): a write cut short by the file system itself.
test("a write the file system refuses leaves nothing under the payload's name, on this thread or off it", () => {
  const dir = tempDir("seam-efbig-");
  const script = join(dir, "put.ts");
  writeFileSync(
    script,
    `import { readdirSync } from "node:fs";
import { digestJsonUtf8 } from ${JSON.stringify(join(import.meta.dir, "../../src/core/digest.ts"))};
import { PayloadStore } from ${JSON.stringify(join(import.meta.dir, "../../src/runtime/payload-store.ts"))};
const bytes = new TextEncoder().encode('{"a":1}');
const out: string[] = [];
const now = PayloadStore.open(process.argv[2] + "/now");
try { now.putNow(digestJsonUtf8(bytes), bytes); out.push("written"); } catch (e) { out.push((e as { code?: string }).code ?? "?"); }
const later = PayloadStore.open(process.argv[2] + "/later");
try { await later.put(digestJsonUtf8(bytes), bytes); out.push("written"); } catch (e) { out.push((e as { code?: string }).code ?? "?"); }
out.push(JSON.stringify(readdirSync(process.argv[2] + "/now/sha256")), JSON.stringify(readdirSync(process.argv[2] + "/later/sha256")));
console.log(out.join(" "));
`,
  );
  const r = spawnSync("bash", ["-c", `ulimit -f 0; trap '' XFSZ; exec "$0" "$1" "$2"`, process.execPath, script, dir], {
    encoding: "utf8",
  });
  expect(r.stdout.trim()).toBe("EFBIG EFBIG [] []");
});
