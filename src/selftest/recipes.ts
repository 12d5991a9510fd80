/**
 * selftest's recipe cases: the frozen json-c14n and chain vectors (made by
 * the reference implementation) reproduce, and each known way of getting the
 * recipe wrong, switched on inside the real serializer, breaks a named vector.
 */
import chainVectors from "../../vectors/chain-v1.json" with { type: "json" };
import c14nVectors from "../../vectors/json-c14n-v1.json" with { type: "json" };
import { CHAIN, COMPACT, type Style } from "../core/canonical/index.ts";
import { chainOf, GENESIS } from "../core/chain.ts";
import { digestJson } from "../core/digest.ts";
import { parseJson } from "../core/json.ts";
import type { Arm } from "./arm.ts";

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

/**
 * The ways a reimplementation gets the recipe wrong, each a style the real
 * serializer is run with instead of the right one.
 */
const UNSORTED_KEYS: Style = { ...COMPACT, sort: 0 };
const UTF16_KEY_ORDER: Style = { ...COMPACT, sort: 2 };
const JS_NUMBERS: Style = { ...COMPACT, es: true };
const COMPACT_CHAIN: Style = { ...CHAIN, item: ",", colon: ":" };

/** Index (1-based) and input of the first json-c14n vector that does not reproduce (with `style`), or null. */
function firstC14nFailure(style: Style = COMPACT): { index: number; input: string } | null {
  const vs = c14nVectors as C14nVector[];
  for (let i = 0; i < vs.length; i++) {
    const v = vs[i]!;
    let got: string;
    try {
      got = digestJson(parseJson(v.input), "json-c14n", style);
    } catch {
      got = "unparseable";
    }
    if (got !== v.digest) return { index: i + 1, input: v.input };
  }
  return null;
}

/** Index (1-based) of the first chain vector that does not reproduce (with `style`), or null. */
function firstChainFailure(style: Style = CHAIN): number | null {
  const vs = chainVectors as ChainVector[];
  let prev = GENESIS;
  for (let i = 0; i < vs.length; i++) {
    const v = vs[i]!;
    if (v.prev !== prev || chainOf(prev, parseJson(v.row_json), style) !== v.chain) return i + 1;
    prev = v.chain;
  }
  return null;
}

/**
 * Which vector each fault must break first: the first case whose canonical
 * form depends on the rule the fault gets wrong.
 */
const C14N_RED: { style: Style; name: string; index: number }[] = [
  { style: UNSORTED_KEYS, name: "keys unsorted", index: 1 },
  { style: UTF16_KEY_ORDER, name: "UTF-16 key order", index: 37 },
  { style: JS_NUMBERS, name: "JavaScript number formatting", index: 12 },
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
      const got = firstC14nFailure(red.style);
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
    const got = firstChainFailure(COMPACT_CHAIN);
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
