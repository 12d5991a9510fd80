/**
 * A tools/call whose id is an integer written as a float (113.0, 1E2) is the
 * call with that integer id to a client or server that reads JSON numbers as
 * doubles: under --write-ahead it gets its intent row before the server sees
 * it, and its answer (which such a server sends as 113) pairs with it, in all
 * three builds. A fractional id stays no id (invalid_id).
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { getField, type Json, JsonFloat } from "../../src/core/json.ts";
import { built, seamArgv, VIAS } from "../helpers/cli.ts";
import { ledgerRows, start, tempDir, until } from "../helpers/proc.ts";

/** A server that reads frames as the TypeScript SDK does (JSON.parse) and answers each request with the id it read. */
const SERVER = ["node", new URL("../fixtures/recording-server.mjs", import.meta.url).pathname];
const INIT =
  '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n' +
  '{"jsonrpc":"2.0","method":"notifications/initialized"}\n';
const call = (id: string, message: string) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"message":"${message}"}}}\n`;

const f = (r: Json, k: string) => getField(r, k);

describe.each(VIAS)("a float-valued integer id under --write-ahead via %s", (via) => {
  test.skipIf(!built(via))(
    "113.0 and 1E2: an intent row, the answer paired; 2.5: invalid_id",
    async () => {
      const dir = tempDir();
      const ledger = join(dir, "l.jsonl");
      const p = start([
        ...seamArgv(via),
        "wrap",
        "--write-ahead",
        "--ledger",
        ledger,
        "--",
        ...SERVER,
        join(dir, "seen.jsonl"),
      ]);
      p.child.stdin!.write(INIT);
      const answers = () =>
        p
          .stdoutSoFar()
          .toString()
          .split("\n")
          .filter((l) => /"id":(113|100|0)\b/.test(l));
      await until(() => answers().length >= 1, 20_000, "initialize answer");
      p.child.stdin!.write(call("113.0", "a") + call("1E2", "b"));
      await until(() => answers().length >= 3, 20_000, "both answers");
      p.child.stdin!.end(call("2.5", "c"));
      const done = await p.done;
      expect(done.code).toBe(0);
      const rows = ledgerRows(ledger);
      const of = (evt: string) => rows.filter((r) => f(r, "evt") === evt);
      // The rows keep the id as it was written (a float), so the row says what the client sent.
      const id = (r: Json) => {
        const v = f(r, "rpc_id");
        return v instanceof JsonFloat ? `float ${v.value}` : v;
      };
      expect(of("tool_call_intent").map(id)).toEqual(["float 113", "float 100"]);
      const calls = of("tool_call").map((r) => [id(r), f(r, "status"), f(r, "result_digest") !== undefined]);
      expect(calls).toEqual([
        ["float 113", "ok", true],
        ["float 100", "ok", true],
        [2.5, "invalid_id", false],
      ]);
      // The intent row comes before the call's row, as write-ahead promises.
      const seqOf = (evt: string, i: number) => f(of(evt)[i]!, "seq") as number;
      expect(seqOf("tool_call_intent", 0)).toBeLessThan(seqOf("tool_call", 0));
    },
    60_000,
  );
});
