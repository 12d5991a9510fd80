import { createReadStream } from "node:fs";
import { readFile } from "node:fs/promises";
import { defineCommand } from "citty";
import { EXIT, UsageError } from "../src/base/exit.ts";
import { describeIoError } from "../src/base/io-error.ts";
import { createLog } from "../src/base/log.ts";
import { RECIPES, type Recipe, StreamDigest } from "../src/core/digest.ts";
import { runtime } from "../src/runtime/index.ts";
import { rejectUnknownFlags } from "./_args.ts";
import { type DigestOutcome, digestJsonBytes } from "./_digest-input.ts";
import { print } from "./_out.ts";

const args = {
  files: {
    type: "positional",
    description: "JSON files to digest; '-' or none reads stdin",
    required: false,
    valueHint: "FILE…",
  },
  "raw-bytes": {
    type: "boolean",
    description: "digest the bytes as they are (sha256:raw-bytes:v1) instead of the JSON value",
  },
  recipe: {
    type: "string",
    description: "json-c14n (default, Python json.dumps sorted and compact) or jcs (RFC 8785)",
    valueHint: "json-c14n|jcs",
  },
} as const;

/**
 * Output, one line per input:
 *   <digest>\n              for a single input
 *   <digest>  <name>\n      for more than one (as sha256sum), stdin named "-"
 * A failed input prints `seam: error: <name>: <reason>` on stderr and nothing
 * on stdout; the others are still digested, and the exit status is 1.
 */
export default defineCommand({
  meta: {
    name: "digest",
    description: "print the content digest of JSON files (exit 0 ok, 1 unreadable/unparseable/undigestible)",
  },
  args,
  async run({ args: a, rawArgs }) {
    rejectUnknownFlags(rawArgs, args, "digest");
    const recipe = a.recipe ?? "json-c14n";
    if (!(RECIPES as readonly string[]).includes(recipe)) {
      throw new UsageError(`unknown recipe ${JSON.stringify(recipe)}`, `use one of: ${RECIPES.join(", ")}`);
    }
    if (a["raw-bytes"] && a.recipe !== undefined) throw new UsageError("--raw-bytes and --recipe do not go together");
    const names = a._.length ? a._.map(String) : ["-"];
    if (names.filter((n) => n === "-").length > 1) throw new UsageError("stdin ('-') can be read only once");

    const log = createLog();
    let code: number = EXIT.OK;
    for (const name of names) {
      const result = a["raw-bytes"] ? await rawDigest(name) : await jsonDigest(name, recipe as Recipe);
      if (!result.ok) {
        log.error(`${displayName(name)}: ${result.reason}`);
        code = EXIT.FAIL;
        continue;
      }
      const line = names.length > 1 ? `${result.digest}  ${displayName(name)}\n` : `${result.digest}\n`;
      await print(line);
    }
    return code;
  },
});

async function jsonDigest(name: string, recipe: Recipe): Promise<DigestOutcome> {
  let bytes: Uint8Array;
  try {
    bytes = name === "-" ? await readAll(runtime.stdin()) : await readFile(name);
  } catch (err) {
    return { ok: false, reason: `unreadable: ${describeIoError(err)}` };
  }
  return digestJsonBytes(bytes, recipe);
}

/** Raw bytes stream through the hash: memory stays flat whatever the size. */
async function rawDigest(name: string): Promise<DigestOutcome> {
  const d = new StreamDigest();
  try {
    const source = name === "-" ? runtime.stdin() : createReadStream(name);
    for await (const chunk of source) d.update(chunk as Uint8Array);
  } catch (err) {
    return { ok: false, reason: `unreadable: ${describeIoError(err)}` };
  }
  return { ok: true, digest: d.digest() };
}

async function readAll(source: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for await (const c of source) chunks.push(c);
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

/** A name kept on one line whatever it holds (JSON-quoted when it has a line break or backslash). */
function displayName(name: string): string {
  return /[\n\r\\]/.test(name) ? JSON.stringify(name) : name;
}
