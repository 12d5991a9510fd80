/** Key files: created 0600 and never overwritten; a private key read back with a warning when others may read it; verifier keys given inline or as a file. */
import { expect, test } from "bun:test";
import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { KeyFileError, readSignerFile, readVerifierKeys, writeKeyFile } from "../../src/checkpoint/keys.ts";
import { KEY, OTHER, refusal } from "../helpers/checkpoint-helpers.ts";
import { tempDir } from "../helpers/proc.ts";

const refused = (f: () => unknown) => refusal(f, KeyFileError);

test("writeKeyFile: one line, mode 0600, never over an existing file", () => {
  const dir = tempDir();
  const path = join(dir, "k");
  writeKeyFile(path, KEY.privateKey);
  expect(readFileSync(path, "utf8")).toBe(`${KEY.privateKey}\n`);
  expect(statSync(path).mode & 0o777).toBe(0o600);
  expect(refused(() => writeKeyFile(path, OTHER.privateKey))).toBe(`${path} already exists; it is not overwritten`);
  expect(readFileSync(path, "utf8")).toBe(`${KEY.privateKey}\n`);
  expect(refused(() => writeKeyFile(join(dir, "no", "such", "dir"), KEY.privateKey))).toBe(
    `cannot create ${join(dir, "no", "such", "dir")}: no such file or directory`,
  );
});

test("readSignerFile: the key, a warning when group or others may read it, refusals in words", () => {
  const dir = tempDir();
  const path = join(dir, "k");
  writeKeyFile(path, KEY.privateKey);
  const r = readSignerFile(path);
  expect([r.signer.verifierKey, r.warning]).toEqual([KEY.verifierKey, null]);
  chmodSync(path, 0o644);
  expect(readSignerFile(path).warning).toBe(`key file ${path} can be read by others (mode 644); chmod 600 it`);
  writeFileSync(join(dir, "v"), `${KEY.verifierKey}\n`);
  expect(refused(() => readSignerFile(join(dir, "v")))).toBe(
    `${join(dir, "v")} holds no private key (one line: PRIVATE+KEY+<name>+<id>+<key>)`,
  );
  expect(refused(() => readSignerFile(join(dir, "none")))).toBe(
    `cannot read key file ${join(dir, "none")}: no such file or directory`,
  );
});

test("readVerifierKeys: a key itself, or a file of keys with comments and blank lines", () => {
  const dir = tempDir();
  expect(readVerifierKeys(KEY.verifierKey).map((v) => v.text)).toEqual([KEY.verifierKey]);
  const file = join(dir, "keys");
  writeFileSync(file, `# the log\n${KEY.verifierKey}\n\n  ${OTHER.verifierKey}  \n`);
  expect(readVerifierKeys(file).map((v) => v.name)).toEqual(["seam-test", "other"]);
  writeFileSync(file, `${KEY.verifierKey}\n${KEY.privateKey}\n`);
  // a private key where a verifier key belongs is named as such, never shown
  expect(refused(() => readVerifierKeys(file))).toBe(
    `${file} line 2 is a private key (this looks like a private key; it is not shown)`,
  );
  writeFileSync(file, `${KEY.verifierKey}\nnot a key\n`);
  expect(refused(() => readVerifierKeys(file))).toBe(`${file} line 2 is not a verifier key (<name>+<id>+<key>)`);
  writeFileSync(file, "# nothing\n");
  expect(refused(() => readVerifierKeys(file))).toBe(`${file} holds no verifier key`);
  expect(refused(() => readVerifierKeys(join(dir, "nope")))).toBe(
    `--key ${join(dir, "nope")} is neither a verifier key (<name>+<id>+<key>) nor a readable file: no such file or directory`,
  );
});
