/**
 * selftest's recipe cases: the frozen json-c14n and chain vectors (made by
 * the reference implementation) reproduce, and each known way of getting the
 * recipe wrong, switched on inside the real serializer, breaks a named vector.
 */
import chainVectors from "../../vectors/chain-v1.json" with { type: "json" };
import c14nVectors from "../../vectors/json-c14n-v1.json" with { type: "json" };
import { type CanonicalFault, withCanonicalFault } from "../core/canonical.ts";
import { chainOf, GENESIS } from "../core/chain.ts";
import { digestJson } from "../core/digest.ts";
import { parseJson } from "../core/json.ts";
import type { Arm } from "./run.ts";

interface C14nVector {
  input: string;
  canonical?: string;
  digest: string;
}
interface ChainVector {
  prev: string;
  row_json: string;
  chain: string;
}

/** Index (1-based) and input of the first json-c14n vector that does not reproduce, or null. */
function firstC14nFailure(): { index: number; input: string } | null {
  const vs = c14nVectors as C14nVector[];
  for (let i = 0; i < vs.length; i++) {
    const v = vs[i]!;
    let got: string;
    try {
      got = digestJson(parseJson(v.input));
    } catch {
      got = "unparseable";
    }
    if (got !== v.digest) return { index: i + 1, input: v.input };
  }
  return null;
}

/** Index (1-based) of the first chain vector that does not reproduce, or null. */
function firstChainFailure(): number | null {
  const vs = chainVectors as ChainVector[];
  let prev = GENESIS;
  for (let i = 0; i < vs.length; i++) {
    const v = vs[i]!;
    if (v.prev !== prev || chainOf(prev, parseJson(v.row_json)) !== v.chain) return i + 1;
    prev = v.chain;
  }
  return null;
}

/**
 * Which vector each fault must break first: the first case whose canonical
 * form depends on the rule the fault gets wrong.
 */
const C14N_RED: { fault: CanonicalFault; name: string; index: number }[] = [
  { fault: "unsorted-keys", name: "keys unsorted", index: 1 },
  { fault: "utf16-key-order", name: "UTF-16 key order", index: 37 },
  { fault: "js-numbers", name: "JavaScript number formatting", index: 12 },
];

export function recipeArms(): Arm[] {
  const arms: Arm[] = [];
  const c14n = c14nVectors as C14nVector[];
  {
    const c = "digest_recipe_frozen";
    const green = firstC14nFailure();
    arms.push({
      case: c,
      arm: "GREEN",
      pass: green === null,
      detail:
        green === null
          ? `${c14n.length} json-c14n vectors reproduce`
          : `vector ${green.index} (${green.input}) does not reproduce`,
    });
    for (const red of C14N_RED) {
      const got = withCanonicalFault(red.fault, firstC14nFailure);
      const arm = `RED with ${red.name}`;
      if (got === null) arms.push({ case: c, arm, pass: false, detail: "no-op guard: every vector still reproduces" });
      else
        arms.push({
          case: c,
          arm,
          pass: got.index === red.index,
          detail: `vector ${got.index} (${got.input}) no longer reproduces${got.index === red.index ? "" : ` (expected vector ${red.index})`}`,
        });
    }
  }
  {
    const c = "chain_recipe_frozen";
    const green = firstChainFailure();
    const n = (chainVectors as ChainVector[]).length;
    arms.push({
      case: c,
      arm: "GREEN",
      pass: green === null,
      detail: green === null ? `${n} chain vectors reproduce` : `chain vector ${green} does not reproduce`,
    });
    const got = withCanonicalFault("compact-chain", firstChainFailure);
    if (got === null)
      arms.push({
        case: c,
        arm: "RED with compact separators in the chain form",
        pass: false,
        detail: "no-op guard: every vector still reproduces",
      });
    else
      arms.push({
        case: c,
        arm: "RED with compact separators in the chain form",
        pass: got === 1,
        detail: `chain vector ${got} no longer reproduces${got === 1 ? "" : " (expected 1)"}`,
      });
  }
  return arms;
}
