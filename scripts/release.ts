/**
 * Builds seam's release executables into dist/release/, one per entry of
 * src/release/targets.ts, with SHA256SUMS and SHA256SUMS.note (a C2SP signed
 * note over SHA256SUMS, checked by `seam verify-release`).
 *
 * Nothing is downloaded from outside the npm registry: each platform's Bun
 * runtime is the npm package Bun itself ships it in (@oven/bun-<platform>),
 * at the version and integrity package-lock.json pins for the `bun`
 * devDependency. npm installs only the host's one, so the others are fetched
 * with `npm pack` into dist/.cache/, checked against the lockfile's
 * integrity, and given to `bun build --compile` as the base executable.
 *
 * Signing: the private key file named by SEAM_RELEASE_KEY (made by `seam
 * keygen`); without it, a local key is made once in dist/.cache/ (a build
 * signed by it proves only that the folder is unchanged since this build).
 * The verifier key is printed and written to dist/release.pub.
 *
 * npm packages, into dist/npm/ (each also packed there as a .tgz):
 *   seam-mcp-<id>   one per target: the executable as bin/seam (bin/seam.exe),
 *                   with os/cpu/libc fields so npm installs only the one that fits;
 *   seam-mcp        the main package as published: package.json's files, bin
 *                   npm/seam.mjs (runs the platform package's executable when
 *                   installed, the Node bundle otherwise) and the platform
 *                   packages as optionalDependencies. These are not in the
 *                   repository's package.json: they are not on the registry
 *                   until published, and `npm ci` here must not look for them.
 *
 * Usage: bun scripts/release.ts [--only ID,...]
 */
import { createHash } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { readSignerFile, writeKeyFile } from "../src/checkpoint/keys.ts";
import { generateKey, newSigner, signNote } from "../src/checkpoint/note.ts";
import { executableKind } from "../src/release/headers.ts";
import { formatSums, NOTE_FILE, SUMS_FILE, sha256File } from "../src/release/sums.ts";
import { platformPackage, RELEASE_TARGETS, type ReleaseTarget } from "../src/release/targets.ts";

const root = new URL("..", import.meta.url).pathname;
const out = `${root}dist/release`;
const cache = `${root}dist/.cache/bun-runtimes`;

function fail(message: string): never {
  console.error(`release: error: ${message}`);
  process.exit(1);
}

function run(cmd: string[], cwd = root): string {
  const p = Bun.spawnSync({ cmd, cwd, stdout: "pipe", stderr: "inherit" });
  if (p.exitCode !== 0) fail(`${cmd.slice(0, 3).join(" ")} … exited ${p.exitCode}`);
  return p.stdout.toString();
}

const lock = JSON.parse(readFileSync(`${root}package-lock.json`, "utf8")) as {
  packages: Record<string, { version?: string; integrity?: string }>;
};
const bunVersion = lock.packages["node_modules/bun"]?.version;
if (bunVersion === undefined) fail("package-lock.json pins no `bun`");

/** The target's Bun runtime, from the npm registry, at the lockfile's version and integrity. */
function runtimeFor(t: ReleaseTarget): string {
  const entry = lock.packages[`node_modules/${t.runtimePackage}`];
  if (entry?.integrity === undefined || entry.version !== bunVersion)
    fail(`package-lock.json pins no ${t.runtimePackage}@${bunVersion} with an integrity`);
  const [algo, want] = entry.integrity.split("-", 2) as [string, string];
  const dir = `${cache}/${t.runtimePackage.replace("/", "+")}-${bunVersion}`;
  const tgz = `${dir}/package.tgz`;
  mkdirSync(dir, { recursive: true });
  if (!existsSync(tgz)) {
    const packed = JSON.parse(
      run([
        "npm",
        "pack",
        `${t.runtimePackage}@${bunVersion}`,
        "--json",
        "--ignore-scripts",
        "--pack-destination",
        dir,
      ]),
    ) as { filename: string }[];
    run(["mv", `${dir}/${packed[0]!.filename}`, tgz]);
  }
  const got = createHash(algo).update(readFileSync(tgz)).digest("base64");
  if (got !== want) {
    rmSync(dir, { recursive: true, force: true });
    fail(`${t.runtimePackage}@${bunVersion}: the tarball's ${algo} is not the lockfile's integrity`);
  }
  const bin = `package/bin/${t.os === "win32" ? "bun.exe" : "bun"}`;
  if (!existsSync(`${dir}/${bin}`)) run(["tar", "-xzf", tgz, "-C", dir, bin]);
  return `${dir}/${bin}`;
}

function signer() {
  const named = process.env.SEAM_RELEASE_KEY;
  if (named !== undefined && named !== "") return readSignerFile(named).signer;
  const local = `${root}dist/.cache/release.key`;
  if (!existsSync(local)) {
    mkdirSync(`${root}dist/.cache`, { recursive: true });
    writeKeyFile(local, generateKey("seam-local-build").privateKey);
    console.error("release: no SEAM_RELEASE_KEY: signing with a local key made in dist/.cache/release.key");
  }
  return newSigner(readFileSync(local, "utf8").trim());
}

const only = process.argv.includes("--only") ? process.argv[process.argv.indexOf("--only") + 1]!.split(",") : null;
const targets = RELEASE_TARGETS.filter((t) => only === null || only.includes(t.id));
if (targets.length === 0) fail(`--only names no target; known: ${RELEASE_TARGETS.map((t) => t.id).join(", ")}`);

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
for (const t of targets) {
  const base = runtimeFor(t);
  const file = `${out}/${t.file}`;
  run([
    process.execPath,
    "build",
    "--compile",
    "--no-compile-autoload-dotenv",
    "--no-compile-autoload-bunfig",
    `--target=${t.bunTarget}`,
    `--compile-executable-path=${base}`,
    `${root}commands/seam.ts`,
    "--outfile",
    file,
  ]);
  // The header must say the platform the file is named after: a wrong base
  // executable would otherwise ship under the right name.
  const head = readFileSync(file).subarray(0, 1 << 16);
  const kind = executableKind(head);
  const libcOk =
    t.libc === undefined || (kind?.interpreter ?? "").includes(t.libc === "musl" ? "ld-musl-" : "ld-linux-");
  if (kind === null || kind.format !== t.format || kind.arch !== t.cpu || !libcOk)
    fail(`${t.file} is ${JSON.stringify(kind)}, not ${t.format} ${t.cpu} ${t.libc ?? ""}`);
  if (t.os !== "win32") chmodSync(file, 0o755);
  console.error(`release: ${t.file} (${kind.format} ${kind.arch}${kind.interpreter ? ` ${kind.interpreter}` : ""})`);
}

const sums = formatSums(readdirSync(out).map((name) => ({ name, sha256: sha256File(`${out}/${name}`) })));
writeFileSync(`${out}/${SUMS_FILE}`, sums);
const s = signer();
writeFileSync(`${out}/${NOTE_FILE}`, signNote(sums, [s]));
writeFileSync(`${root}dist/release.pub`, `${s.verifierKey}\n`);
console.log(s.verifierKey);

// ---- npm packages ----

/** The most the main package's tarball may weigh: it carries no executable. */
const MAIN_MAX_BYTES = 1 << 20;
const npmDir = `${root}dist/npm`;
const pkg = JSON.parse(readFileSync(`${root}package.json`, "utf8")) as Record<string, unknown> & {
  name: string;
  version: string;
  files: string[];
};

/** `npm pack` of a staged folder into dist/npm/; the tarball's path and size. */
function pack(dir: string): { file: string; size: number } {
  const [r] = JSON.parse(run(["npm", "pack", "--json", "--ignore-scripts", "--pack-destination", npmDir], dir)) as {
    filename: string;
    size: number;
  }[];
  return { file: `${npmDir}/${r!.filename}`, size: r!.size };
}

rmSync(npmDir, { recursive: true, force: true });
for (const t of targets) {
  const dir = `${npmDir}/${platformPackage(t)}`;
  mkdirSync(`${dir}/bin`, { recursive: true });
  const exe = `bin/${t.os === "win32" ? "seam.exe" : "seam"}`;
  copyFileSync(`${out}/${t.file}`, `${dir}/${exe}`);
  if (t.os !== "win32") chmodSync(`${dir}/${exe}`, 0o755);
  const manifest = {
    name: platformPackage(t),
    version: pkg.version,
    description: `seam compiled for ${t.id}; installed by seam-mcp, whose seam command runs it`,
    license: pkg.license,
    os: [t.os],
    cpu: [t.cpu],
    ...(t.libc === undefined ? {} : { libc: [t.libc] }),
    files: [exe],
  };
  writeFileSync(`${dir}/package.json`, `${JSON.stringify(manifest, null, 2)}\n`);
  console.error(`release: ${pack(dir).file}`);
}

const main = `${npmDir}/${pkg.name}`;
mkdirSync(`${main}/bin`, { recursive: true });
for (const f of pkg.files) cpSync(`${root}${f}`, `${main}/${f}`, { recursive: true });
copyFileSync(`${root}npm/seam.mjs`, `${main}/bin/seam.mjs`);
chmodSync(`${main}/bin/seam.mjs`, 0o755);
const { scripts: _s, devDependencies: _d, ...kept } = pkg;
const mainManifest = {
  ...kept,
  bin: { seam: "bin/seam.mjs" },
  files: [...pkg.files, "bin/seam.mjs"],
  optionalDependencies: Object.fromEntries(RELEASE_TARGETS.map((t) => [platformPackage(t), pkg.version])),
};
writeFileSync(`${main}/package.json`, `${JSON.stringify(mainManifest, null, 2)}\n`);
const packed = pack(main);
if (packed.size > MAIN_MAX_BYTES) fail(`${packed.file} is ${packed.size} bytes, over ${MAIN_MAX_BYTES}`);
console.error(`release: ${packed.file} (${packed.size} bytes)`);
