/** One wording of file errors (src/base/io-error.ts), whatever the operation and runtime. */
import { expect, test } from "bun:test";
import { describeIoError } from "../../src/base/io-error.ts";
import { UnsafeFileError } from "../../src/runtime/file.ts";

const coded = (code: string, message: string) => Object.assign(new Error(message), { code });

test.each([
  [
    "a known code, by its table entry",
    coded("ENOENT", "ENOENT: no such file or directory, open 'x'"),
    "no such file or directory",
  ],
  [
    "Node's EISDIR wording gives way to the table's",
    coded("EISDIR", "EISDIR: illegal operation on a directory, read"),
    "is a directory",
  ],
  ["Bun's EIO wording too", coded("EIO", "EIO: i/o error, fsync"), "input/output error"],
  [
    "an unknown code: the strerror text of its message",
    coded("ECONNRESET", "ECONNRESET: connection reset by peer, read"),
    "connection reset by peer",
  ],
  ["an unknown code and no strerror text: the code", coded("EWEIRD", "something odd"), "eweird"],
  [
    "a file seam refused to write to: why, without its path",
    new UnsafeFileError("/tmp/l.jsonl", "belongs to another user (uid 1001)"),
    "belongs to another user (uid 1001)",
  ],
  [
    "no code: the message, lowercase, no final period",
    new Error("Ledger shrank while being read."),
    "ledger shrank while being read",
  ],
  ["not an error at all", "Gone", "gone"],
] as const)("%s", (_name, err, want) => {
  expect(describeIoError(err)).toBe(want);
});
