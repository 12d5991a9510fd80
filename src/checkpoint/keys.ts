/**
 * Key files for checkpoints. A private key file holds one line, the
 * golang.org/x/mod/sumdb/note form (src/checkpoint/note.ts):
 *
 *   PRIVATE+KEY+<name>+<8 hex key ID>+<base64(0x01 ‖ 32-byte Ed25519 seed)>\n
 *
 * created with mode 0600 and never over an existing file. A verifier key is
 * given as its text (`<name>+<hex>+<base64>`) or as a file of such lines
 * (blank lines and lines starting with "#" skipped).
 */
import { closeSync, openSync, readFileSync, statSync, writeSync } from "node:fs";
import { NoteError, type Signer, type Verifier, newSigner, newVerifier } from "./note.ts";
import { describeIoError } from "../base/io-error.ts";

/** A key file that cannot be used; the message says why, in words. */
export class KeyFileError extends Error {
  override readonly name = "KeyFileError";
}

/** Creates `path` with mode 0600 holding the private key; throws KeyFileError when it exists or cannot be written. */
export function writeKeyFile(path: string, privateKey: string): void {
  let fd: number;
  try {
    fd = openSync(path, "wx", 0o600);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new KeyFileError(
      code === "EEXIST"
        ? `${path} already exists; it is not overwritten`
        : `cannot create ${path}: ${describeIoError(e)}`,
    );
  }
  try {
    writeSync(fd, `${privateKey}\n`);
  } finally {
    closeSync(fd);
  }
}

/** The signer in a private key file, and a warning when others may read the file. */
export function readSignerFile(path: string): { signer: Signer; warning: string | null } {
  let text: string;
  let mode = 0;
  try {
    text = readFileSync(path, "utf8");
    mode = statSync(path).mode;
  } catch (e) {
    throw new KeyFileError(`cannot read key file ${path}: ${describeIoError(e)}`);
  }
  let signer: Signer;
  try {
    signer = newSigner(text.trim());
  } catch (e) {
    if (!(e instanceof NoteError)) throw e;
    throw new KeyFileError(`${path} holds no private key (one line: PRIVATE+KEY+<name>+<id>+<key>)`);
  }
  const warning =
    (mode & 0o077) !== 0
      ? `key file ${path} can be read by others (mode ${(mode & 0o777).toString(8)}); chmod 600 it`
      : null;
  return { signer, warning };
}

/** The verifier keys of a --key value: the key itself, or a file of keys. */
export function readVerifierKeys(arg: string): Verifier[] {
  try {
    return [newVerifier(arg)];
  } catch {
    // Not a key: a file of keys.
  }
  let text: string;
  try {
    text = readFileSync(arg, "utf8");
  } catch (e) {
    throw new KeyFileError(
      `--key ${arg} is neither a verifier key (<name>+<id>+<key>) nor a readable file: ${describeIoError(e)}`,
    );
  }
  const keys: Verifier[] = [];
  text.split("\n").forEach((raw, i) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    try {
      keys.push(newVerifier(line));
    } catch {
      throw new KeyFileError(`${arg} line ${i + 1} is not a verifier key (<name>+<id>+<key>)`);
    }
  });
  if (keys.length === 0) throw new KeyFileError(`${arg} holds no verifier key`);
  return keys;
}
