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

import { closeSync, openSync, writeSync } from "node:fs";
import { SeamError } from "../base/error.ts";
import { describeIoError } from "../base/io-error.ts";
import { readSmallFile, readSmallFileMode } from "../runtime/small-file.ts";
import { NoteError, newSigner, newVerifier, type Signer, splitKey, type Verifier } from "./note.ts";

/** A key file that cannot be used; the message says why, in words. */
export class KeyFileError extends SeamError {
  override readonly name = "KeyFileError";
  constructor(message: string, hint?: string) {
    super("key_file", message, { hint });
  }
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

/**
 * Whether a command-line value is key material rather than a file name or a
 * verifier key: a private key line (`PRIVATE+KEY+…`), or anything holding a
 * run of 40 or more base64 characters (a 32-byte key is 43–44). Such a value
 * is never repeated in a message: it may be the secret itself.
 */
export function looksLikeSecretKey(value: string): boolean {
  return /PRIVATE\+KEY\+/i.test(value) || /[A-Za-z0-9+/]{40,}/.test(value.replace(/^[^+]*\+[0-9a-f]{8}\+/, ""));
}

/** What a message says in place of a value that looksLikeSecretKey. */
function shown(value: string): string {
  return looksLikeSecretKey(value) ? "(a value not shown: this looks like a private key)" : value;
}

/**
 * A private key file's text (trimmed), and a warning when others may read
 * the file; `flag` names the option that gave it, for the message when key
 * text was given in place of a file name.
 */
export function readPrivateKeyFile(path: string, flag = "--sign"): { text: string; warning: string | null } {
  if (/PRIVATE\+KEY\+/i.test(path))
    throw new KeyFileError(
      `${flag} takes the name of a key file, and was given key text: this looks like a private key (it is not shown); keep it in a file of mode 0600`,
    );
  let text: string;
  let mode = 0;
  try {
    const read = readSmallFileMode(path);
    text = read.bytes.toString("utf8");
    mode = read.mode;
  } catch (e) {
    throw new KeyFileError(`cannot read key file ${shown(path)}: ${describeIoError(e)}`);
  }
  const warning =
    (mode & 0o077) !== 0
      ? `key file ${path} can be read by others (mode ${(mode & 0o777).toString(8)}); chmod 600 it`
      : null;
  return { text: text.trim(), warning };
}

/** What a key file that holds no usable private key is told. */
export function noPrivateKey(path: string): KeyFileError {
  return new KeyFileError(`${shown(path)} holds no private key (one line: PRIVATE+KEY+<name>+<id>+<key>)`);
}

/** The signer in a private key file, and a warning when others may read the file. */
export function readSignerFile(path: string): { signer: Signer; warning: string | null; text: string } {
  const { text, warning } = readPrivateKeyFile(path);
  let signer: Signer;
  try {
    signer = newSigner(text);
  } catch (e) {
    if (!(e instanceof NoteError)) throw e;
    // An ML-DSA-44 key (type 0x06, seam keygen --alg ml-dsa-44) is a witness's: checkpoints are signed with Ed25519.
    if (text.startsWith("PRIVATE+KEY+") && splitKey(text.slice(12), 0x06) !== null)
      throw new KeyFileError(
        `${shown(path)} holds an ML-DSA-44 key, which only cosigns (seam witness --key); checkpoints are signed with an Ed25519 key`,
      );
    throw noPrivateKey(path);
  }
  return { signer, warning, text };
}

/** The verifier keys of a --key value: the key itself, or a file of keys. */
export function readVerifierKeys(arg: string): Verifier[] {
  try {
    return [newVerifier(arg)];
  } catch {
    // Not a key: a file of keys.
  }
  if (/PRIVATE\+KEY\+/i.test(arg))
    throw new KeyFileError(
      "--key takes the verifier key, and was given a private key: this looks like a private key (it is not shown); it belongs only with the writer",
    );
  let text: string;
  try {
    text = readSmallFile(arg).toString("utf8");
  } catch (e) {
    throw new KeyFileError(
      `--key ${shown(arg)} is neither a verifier key (<name>+<id>+<key>) nor a readable file: ${describeIoError(e)}`,
    );
  }
  const keys: Verifier[] = [];
  text.split("\n").forEach((raw, i) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    try {
      keys.push(newVerifier(line));
    } catch {
      const what = /PRIVATE\+KEY\+/i.test(line)
        ? "is a private key (this looks like a private key; it is not shown)"
        : "is not a verifier key (<name>+<id>+<key>)";
      throw new KeyFileError(`${arg} line ${i + 1} ${what}`);
    }
  });
  if (keys.length === 0) throw new KeyFileError(`${arg} holds no verifier key`);
  return keys;
}
