import { defineCommand } from "citty";
import { EXIT, UsageError } from "../src/base/exit.ts";
import { createLog } from "../src/base/log.ts";
import { KeyFileError, writeKeyFile } from "../src/checkpoint/keys.ts";
import { generateKey, isValidKeyName } from "../src/checkpoint/note.ts";
import { rejectUnknownFlags } from "./_args.ts";
import { print } from "./_out.ts";

export const DEFAULT_KEY_NAME = "seam";
export const DEFAULT_KEY_FILE = "seam.key";

const args = {
  name: {
    type: "string",
    description: `the key's name in signature lines (default ${DEFAULT_KEY_NAME}); no spaces or '+'`,
    valueHint: "ORIGIN",
  },
  out: {
    type: "string",
    description: `private key file to create, mode 0600, never overwritten (default ${DEFAULT_KEY_FILE})`,
    valueHint: "FILE",
  },
} as const;

/**
 * stdout: the verifier key and "\n", to pin where the ledger's writer
 * cannot change it; stderr: where the private key went.
 */
export default defineCommand({
  meta: {
    name: "keygen",
    description:
      "make an Ed25519 key for signed checkpoints: the private key goes to a file, the verifier key to stdout",
  },
  args,
  async run({ rawArgs, args: a }) {
    rejectUnknownFlags(rawArgs, args, "keygen");
    if (a._.length > 0)
      throw new UsageError(
        `unexpected argument ${JSON.stringify(String(a._[0]))}`,
        "seam keygen [--name NAME] [--out FILE]",
      );
    const name = (a.name as string | undefined) ?? DEFAULT_KEY_NAME;
    if (!isValidKeyName(name))
      throw new UsageError(
        `--name ${JSON.stringify(name)} is not a key name: it must be non-empty, without spaces or '+'`,
      );
    const out = (a.out as string | undefined) ?? DEFAULT_KEY_FILE;
    if (out === "") throw new UsageError("--out must not be empty");
    const log = createLog();
    const { privateKey, verifierKey } = generateKey(name);
    try {
      writeKeyFile(out, privateKey);
    } catch (e) {
      if (!(e instanceof KeyFileError)) throw e;
      log.error(e.message, "choose another --out, or move the old key away first");
      return EXIT.FAIL;
    }
    await print(`${verifierKey}\n`);
    log.info(
      `private key written to ${out} (keep it secret); pin the verifier key above where the ledger's writer cannot change it`,
    );
    return EXIT.OK;
  },
});
