import { defineCommand } from "citty";
import { EXIT, UsageError } from "../src/base/exit.ts";
import { createLog } from "../src/base/log.ts";
import { generateMlDsaKey } from "../src/checkpoint/cosignature.ts";
import { KeyFileError, writeKeyFile } from "../src/checkpoint/keys.ts";
import { loadMlDsa44 } from "../src/checkpoint/ml-dsa.ts";
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
  alg: {
    type: "string",
    description:
      "ed25519 (default: signs checkpoints, and cosigns as a witness) or ml-dsa-44 (a witness's post-quantum cosignatures only)",
    valueHint: "ALG",
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
      "make a key for signed checkpoints (Ed25519) or a witness (also ML-DSA-44): the private key goes to a file, the verifier key to stdout",
  },
  args,
  async run({ rawArgs, args: a }) {
    rejectUnknownFlags(rawArgs, args, "keygen");
    if (a._.length > 0)
      throw new UsageError(
        `unexpected argument ${JSON.stringify(String(a._[0]))}`,
        "seam keygen [--name NAME] [--out FILE] [--alg ed25519|ml-dsa-44]",
      );
    const name = (a.name as string | undefined) ?? DEFAULT_KEY_NAME;
    if (!isValidKeyName(name))
      throw new UsageError(
        `--name ${JSON.stringify(name)} is not a key name: it must be non-empty, without spaces or '+'`,
      );
    const out = (a.out as string | undefined) ?? DEFAULT_KEY_FILE;
    if (out === "") throw new UsageError("--out must not be empty");
    const alg = (a.alg as string | undefined) ?? "ed25519";
    if (alg !== "ed25519" && alg !== "ml-dsa-44")
      throw new UsageError(`--alg ${JSON.stringify(alg)} is not ed25519 or ml-dsa-44`);
    const log = createLog();
    let privateKey: string;
    let verifierKey: string;
    if (alg === "ml-dsa-44") {
      await loadMlDsa44();
      const made = generateMlDsaKey(name);
      privateKey = made.privateKey;
      verifierKey = made.cosigner.verifierKey;
    } else ({ privateKey, verifierKey } = generateKey(name));
    try {
      writeKeyFile(out, privateKey);
    } catch (e) {
      if (!(e instanceof KeyFileError)) throw e;
      log.error(e.message, "choose another --out, or move the old key away first");
      return EXIT.FAIL;
    }
    await print(`${verifierKey}\n`);
    log.info(
      alg === "ml-dsa-44"
        ? `private key written to ${out} (keep it secret); it cosigns only, as seam witness --key ${out}: the key above is its cosignature key, for policies`
        : `private key written to ${out} (keep it secret); pin the verifier key above where the ledger's writer cannot change it`,
    );
    return EXIT.OK;
  },
});
