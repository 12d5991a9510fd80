/**
 * Every error seam throws that a user or a library caller can see is a
 * SeamError with a stable machine code (and a hint where there is an obvious
 * fix); the library exports the base so callers can catch them all at once.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ActionMapError } from "../../src/api/actions.ts";
import { digest, JsonInputError, SeamError } from "../../src/api/index.ts";
import { SeamError as BaseSeamError } from "../../src/base/error.ts";
import { UsageError } from "../../src/base/exit.ts";
import { FormatError } from "../../src/checkpoint/checkpoint.ts";
import { KeyFileError } from "../../src/checkpoint/keys.ts";
import { NoteError } from "../../src/checkpoint/note.ts";
import { StateDirError } from "../../src/checkpoint/state.ts";
import { CanonicalError } from "../../src/core/canonical/index.ts";
import { JsonParseError } from "../../src/core/json-error.ts";
import { BatchError, RefusedError, ShipError } from "../../src/fleet/ship.ts";
import { EditError } from "../../src/install/format.ts";
import { LockTimeoutError } from "../../src/ledger/lock.ts";
import { UnsafeFileError } from "../../src/runtime/file.ts";
import { UpstreamError } from "../../src/runtime/http-types.ts";
import { NotSmallFileError } from "../../src/runtime/small-file.ts";

const ROOT = join(import.meta.dir, "../..");

describe("SeamError", () => {
  test("each error class: its name, its code, its hint", () => {
    const cases: [Error, string, string, string | undefined][] = [
      [new UsageError("bad flag", "run seam --help"), "UsageError", "usage", "run seam --help"],
      [new UnsafeFileError("/l.jsonl", "is a symlink"), "UnsafeFileError", "EUNSAFE", undefined],
      [new NotSmallFileError("ENOTREG", "/dev/zero"), "NotSmallFileError", "ENOTREG", undefined],
      [new UpstreamError("ECONNRESET", "reset"), "UpstreamError", "ECONNRESET", undefined],
      [new ActionMapError("bad map"), "ActionMapError", "action_map", undefined],
      [new JsonInputError("not JSON", 3), "JsonInputError", "json_input", undefined],
      [new EditError("odd entry"), "EditError", "edit_refused", undefined],
      [new LockTimeoutError("held"), "LockTimeoutError", "ELOCKTIMEOUT", undefined],
      [new FormatError("not a checkpoint"), "FormatError", "checkpoint_format", undefined],
      [new KeyFileError("no key", "run seam keygen"), "KeyFileError", "key_file", "run seam keygen"],
      [new StateDirError("cannot write", "check the directory"), "StateDirError", "state_dir", "check the directory"],
      [new NoteError("bad-key", "bad key"), "NoteError", "note_bad_key", undefined],
      [new ShipError("refused", "check the stream"), "ShipError", "ship", "check the stream"],
      [new RefusedError("limit"), "RefusedError", "stream_refused", undefined],
      [new BatchError(3, new Error("cut")), "BatchError", "batch_incomplete", undefined],
      [new JsonParseError("Expecting value", 0, "x"), "JsonParseError", "json_parse", undefined],
      [new CanonicalError("ValueError", "NaN"), "CanonicalError", "undigestible", undefined],
    ];
    for (const [e, name, code, hint] of cases) {
      expect(e).toBeInstanceOf(SeamError);
      expect({ name: e.name, code: (e as SeamError).code, hint: (e as SeamError).hint }).toEqual({ name, code, hint });
    }
  });

  test("the library's SeamError is the one every error derives from", () => {
    expect(SeamError).toBe(BaseSeamError);
    try {
      digest("{");
      throw new Error("no error");
    } catch (e) {
      expect(e).toBeInstanceOf(SeamError);
      expect((e as SeamError).code).toBe("json_input");
    }
  });

  test("no error class in src/ extends Error directly but SeamError itself", () => {
    const direct: string[] = [];
    const walk = (dir: string) => {
      for (const f of readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })) {
        if (!f.endsWith(".ts")) continue;
        const text = readFileSync(join(ROOT, dir, f), "utf8");
        for (const m of text.matchAll(/class (\w+) extends Error\b/g)) direct.push(`${dir}/${f}: ${m[1]}`);
      }
    };
    walk("src");
    walk("commands");
    expect(direct).toEqual(["src/base/error.ts: SeamError"]);
  });
});
