/**
 * Every thread role a protocol module names is served by commands/_threads.ts,
 * the one place seam's threads start, and it serves no other.
 */
import { expect, test } from "bun:test";
import { THREAD_ROLES } from "../../commands/_threads.ts";
import { VERIFIER_ROLE } from "../../src/fleet/verify-thread.ts";
import { READ_VERIFIER_ROLE } from "../../src/read/verify-ahead.ts";
import { PAYLOAD_WRITER_ROLE } from "../../src/runtime/payload-thread.ts";
import { RECORDER_ROLE } from "../../src/wrap/recorder-protocol.ts";

test("the served roles are the protocols' role names", () => {
  expect([...THREAD_ROLES].sort()).toEqual(
    [RECORDER_ROLE, VERIFIER_ROLE, READ_VERIFIER_ROLE, PAYLOAD_WRITER_ROLE].sort(),
  );
});
