/**
 * `seam witness --config FILE`: the logs a witness cosigns for. One log key
 * a line, a log being named by its checkpoints' origin line:
 *
 *   # comment
 *   log <origin> <the log's verifier key, name+id+base64 as seam keygen prints it>
 *
 * An origin may be given several lines (several keys: a checkpoint signed
 * by any one of them is accepted). Blank lines and lines starting with "#"
 * are skipped; anything else is an error naming its line.
 */
import { SeamError } from "../base/error.ts";
import { describeIoError } from "../base/io-error.ts";
import { type Cosigner, isMlDsaPrivateKey, newCosigner, newMlDsaCosignerFromKey } from "../checkpoint/cosignature.ts";
import { noPrivateKey, readPrivateKeyFile } from "../checkpoint/keys.ts";
import { loadMlDsa44 } from "../checkpoint/ml-dsa.ts";
import { NoteError, newSigner, newVerifier, type Verifier } from "../checkpoint/note.ts";
import { readSmallFile } from "../runtime/small-file.ts";

export class WitnessConfigError extends SeamError {
  override readonly name = "WitnessConfigError";
  constructor(message: string, hint?: string) {
    super("witness_config", message, { hint });
  }
}

/** The logs witnessed: origin → the keys its checkpoints may be signed with. */
export type WitnessedLogs = ReadonlyMap<string, readonly Verifier[]>;

/** An origin line as a checkpoint carries it: non-empty, no spaces, no control characters. */
const ORIGIN = /^[^\s\u0000-\u001f\u007f]+$/u;

export function parseWitnessConfig(text: string, path: string): WitnessedLogs {
  const logs = new Map<string, Verifier[]>();
  text.split("\n").forEach((raw, i) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    const where = `${path} line ${i + 1}`;
    const words = line.split(/[ \t]+/);
    if (words[0] !== "log" || words.length !== 3)
      throw new WitnessConfigError(`${where} is not "log <origin> <verifier key>"`);
    const [, origin, key] = words as [string, string, string];
    if (!ORIGIN.test(origin))
      throw new WitnessConfigError(`${where}: the origin has a character an origin line cannot`);
    let v: Verifier;
    try {
      v = newVerifier(key);
    } catch {
      throw new WitnessConfigError(
        /PRIVATE\+KEY\+/i.test(key)
          ? `${where} holds a private key (it is not shown): a witness needs only the log's verifier key`
          : `${where}: ${JSON.stringify(key)} is not a verifier key (<name>+<id>+<key>)`,
      );
    }
    const keys = logs.get(origin) ?? [];
    // The same key twice would make every note by it ambiguous (openNote); once is enough.
    if (!keys.some((k) => k.text === v.text)) keys.push(v);
    logs.set(origin, keys);
  });
  if (logs.size === 0)
    throw new WitnessConfigError(`${path} names no log`, 'add a line "log <origin> <verifier key>" per log');
  return logs;
}

export function readWitnessConfig(path: string): WitnessedLogs {
  let text: string;
  try {
    text = readSmallFile(path).toString("utf8");
  } catch (e) {
    throw new WitnessConfigError(`cannot read --config ${path}: ${describeIoError(e)}`);
  }
  return parseWitnessConfig(text, path);
}

/**
 * `seam witness --key FILE`: the cosigner of a `seam keygen` key file, an
 * Ed25519 key (cosigning under type 0x04) or an ML-DSA-44 one (`--alg
 * ml-dsa-44`, whose module is loaded only then); and a warning when others
 * may read the file. Throws KeyFileError.
 */
export async function readCosignerKey(path: string): Promise<{ cosigner: Cosigner; warning: string | null }> {
  const { text, warning } = readPrivateKeyFile(path, "--key");
  try {
    if (isMlDsaPrivateKey(text)) {
      await loadMlDsa44();
      return { cosigner: newMlDsaCosignerFromKey(text), warning };
    }
    return { cosigner: newCosigner(newSigner(text)), warning };
  } catch (e) {
    if (e instanceof NoteError) throw noPrivateKey(path);
    throw e;
  }
}
