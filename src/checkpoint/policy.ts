/**
 * `seam verify --policy FILE`: a C2SP transparency log policy
 * (c2sp.org/tlog-policy), the lines
 *
 *   log <vkey> [<url>]                      a key checkpoints may be signed with (type 0x01)
 *   witness <name> <vkey> [<url>]           a witness's cosignature key (type 0x04 Ed25519 or 0x06 ML-DSA-44,
 *                                           src/checkpoint/cosignature.ts)
 *   group <name> all|any|<k> <name>...      at least k of the members witnessed it
 *   quorum <name>|none                      exactly one: what must have witnessed a checkpoint
 *
 * with blank and "#" lines skipped, names defined before use, each name
 * a member of a group at most once, no key given twice (the same public key
 * under another name or ID counts as the same), at most 32 logs, witnesses
 * and groups each. One departure: the spec wants a log key's name to be the
 * log's origin, but a seam ledger's origin comes from its first line, so
 * the name is not compared with it.
 */
import { SeamError } from "../base/error.ts";
import { isMlDsaCosignatureKey, newCosignatureVerifier } from "./cosignature.ts";
import { loadMlDsa44 } from "./ml-dsa.ts";
import { keyLabel, NoteError, newVerifier, openNote, type Verifier } from "./note.ts";

export class PolicyError extends SeamError {
  override readonly name = "PolicyError";
  constructor(message: string) {
    super("policy", message);
  }
}

/** A witness by name, or a group: `k` of its members. */
type Member = { witness: string } | { k: number; members: Member[] };

export interface Policy {
  logs: Verifier[];
  /** Cosignature verifiers, each named as the policy names its witness. */
  witnesses: { name: string; verifier: Verifier }[];
  /** null: `quorum none`, no cosignature needed. */
  quorum: Member | null;
  /** The quorum's name, as written. */
  quorumName: string;
}

const LIMIT = 32;
const NAME = /^[^\s\u0000-\u001f\u007f]+$/;

/** parsePolicy, after loading ML-DSA-44 when a witness line's key is of that type (it is loaded for no other policy). */
export async function loadPolicy(text: string, file: string): Promise<Policy> {
  const mlDsa = text.split("\n").some((l) => {
    const w = l.trim().split(/[ \t]+/);
    return w[0] === "witness" && w[2] !== undefined && isMlDsaCosignatureKey(w[2]);
  });
  if (mlDsa) await loadMlDsa44();
  return parsePolicy(text, file);
}

/** The policy in `text`; an ML-DSA-44 witness key needs loadPolicy (or loadMlDsa44 first). */
export function parsePolicy(text: string, file: string): Policy {
  const logs: Verifier[] = [];
  const witnesses: { name: string; verifier: Verifier }[] = [];
  const names = new Map<string, Member>();
  const seenKeys = new Set<string>();
  let groups = 0;
  let quorum: { name: string; member: Member | null } | null = null;
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const where = `${file} line ${i + 1}`;
    const bad = (why: string) => new PolicyError(`${where}: ${why}`);
    if (/[\u0000-\u0008\u000b-\u001f\u007f]/.test(lines[i]!)) throw bad("a control character");
    const line = lines[i]!.replace(/^[ \t]+|[ \t]+$/g, "");
    if (line === "" || line.startsWith("#")) continue;
    const w = line.split(/[ \t]+/);
    /** The public key bytes a vkey wraps (its third part): duplicates are the same key under any name. */
    const once = (vkey: string) => {
      const pub = vkey.slice(vkey.indexOf("+", vkey.indexOf("+") + 1) + 2);
      if (seenKeys.has(pub)) throw bad("this key is given already");
      seenKeys.add(pub);
    };
    const define = (name: string, m: Member) => {
      if (!NAME.test(name) || name === "none") throw bad(`${JSON.stringify(name)} cannot name a witness or group`);
      if (names.has(name)) throw bad(`${name} is defined already`);
      names.set(name, m);
    };
    switch (w[0]) {
      case "log": {
        if (w.length < 2 || w.length > 3) throw bad('expected "log <vkey> [<url>]"');
        try {
          logs.push(newVerifier(w[1]!));
        } catch {
          throw bad("not a log verifier key (<name>+<id>+<base64 of 0x01 and the key>)");
        }
        once(w[1]!);
        if (logs.length > LIMIT) throw bad(`more than ${LIMIT} logs`);
        break;
      }
      case "witness": {
        if (w.length < 3 || w.length > 4) throw bad('expected "witness <name> <vkey> [<url>]"');
        let v: Verifier;
        try {
          v = newCosignatureVerifier(w[2]!);
        } catch (e) {
          if (!(e instanceof NoteError)) throw e;
          throw bad(
            "not a cosignature verifier key (<name>+<id>+<base64 of 0x04 or 0x06 and the key>, as seam witness prints)",
          );
        }
        once(w[2]!);
        define(w[1]!, { witness: w[1]! });
        witnesses.push({ name: w[1]!, verifier: v });
        if (witnesses.length > LIMIT) throw bad(`more than ${LIMIT} witnesses`);
        break;
      }
      case "group": {
        if (w.length < 4) throw bad('expected "group <name> all|any|<k> <name>..."');
        const memberNames = w.slice(3);
        if (new Set(memberNames).size !== memberNames.length) throw bad("a member is listed twice");
        const members = memberNames.map((n) => {
          const m = names.get(n);
          if (m === undefined) throw bad(`${n} is not defined on a line before`);
          return m;
        });
        const k =
          w[2] === "all" ? members.length : w[2] === "any" ? 1 : /^[1-9][0-9]{0,5}$/.test(w[2]!) ? Number(w[2]) : 0;
        if (k < 1 || k > members.length)
          throw bad(`threshold ${JSON.stringify(w[2])} is not all, any, or 1..${members.length}`);
        define(w[1]!, { k, members });
        if (++groups > LIMIT) throw bad(`more than ${LIMIT} groups`);
        break;
      }
      case "quorum": {
        if (w.length !== 2) throw bad('expected "quorum <name>"');
        if (quorum !== null) throw bad("a second quorum line");
        if (w[1] === "none") quorum = { name: "none", member: null };
        else {
          const m = names.get(w[1]!);
          if (m === undefined) throw bad(`${w[1]} is not defined on a line before`);
          quorum = { name: w[1]!, member: m };
        }
        break;
      }
      default:
        throw bad(`unknown line ${JSON.stringify(w[0])}`);
    }
  }
  if (quorum === null) throw new PolicyError(`${file} has no quorum line`);
  if (logs.length === 0)
    throw new PolicyError(`${file} names no log: seam needs the key its checkpoints are signed with`);
  return { logs, witnesses, quorum: quorum.member, quorumName: quorum.name };
}

function holds(m: Member, cosigned: ReadonlySet<string>): boolean {
  if ("witness" in m) return cosigned.has(m.witness);
  let n = 0;
  for (const x of m.members) if (holds(x, cosigned)) n++;
  return n >= m.k;
}

/** Whether the witnesses named `by` (as the policy names them) make its quorum. */
export function quorumHolds(p: Policy, by: ReadonlySet<string>): boolean {
  return p.quorum === null || holds(p.quorum, by);
}

/**
 * The policy's witnesses whose cosignatures on `note` verify. A witness's
 * cosignature that does not verify makes the note count for none
 * (openNote's rule: a known key's bad signature rejects the note).
 */
export function cosignersOn(p: Policy, note: string): string[] {
  if (p.witnesses.length === 0) return [];
  try {
    const labels = new Set(
      openNote(
        note,
        p.witnesses.map((w) => w.verifier),
      ).verified.map((s) => keyLabel(s.name, s.id)),
    );
    return p.witnesses.filter((w) => labels.has(keyLabel(w.verifier.name, w.verifier.id))).map((w) => w.name);
  } catch {
    return [];
  }
}

/** The policy's witnesses whose cosignatures on `note` verify, and whether they make the quorum. */
export function quorumOn(p: Policy, note: string): { ok: boolean; by: string[] } {
  const by = cosignersOn(p, note);
  return { ok: quorumHolds(p, new Set(by)), by };
}
