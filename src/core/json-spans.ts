/**
 * Where the parts of UTF-8 JSON lie, found without reading them: the end of
 * a value, the members of an object. Lax on purpose and cheap: they only
 * say where to look. Whatever a span holds must still be read by a strict
 * reader (parseJson, canonicalBytes), which refuses what is not JSON; on
 * JSON they find exactly the spans a parser would.
 */

/** One member of an object: its key from the opening quote to after the closing one, and its value. */
export interface MemberSpan {
  keyStart: number;
  keyEnd: number;
  valueStart: number;
  valueEnd: number;
}

/** The index of the first byte at or after i that is no JSON whitespace (space, tab, LF, CR). */
export function skipWs(b: Uint8Array, i: number): number {
  let c = b[i];
  while (c === 32 || c === 10 || c === 13 || c === 9) c = b[++i];
  return i;
}

/** The index after the closing quote of the string whose opening quote is at i, or -1 when it does not close. */
export function stringEnd(b: Uint8Array, i: number): number {
  for (let j = i + 1; ; j++) {
    j = b.indexOf(0x22, j);
    if (j < 0) return -1;
    let k = j - 1;
    while (b[k] === 0x5c) k--;
    if ((j - 1 - k) % 2 === 0) return j + 1; // not escaped: an even run of backslashes before it
  }
}

/**
 * The index after the value that starts at i (no whitespace before it): a
 * string or a bracketed value to its closing byte, anything else to the next
 * delimiter or whitespace. -1 when a string or bracket does not close.
 */
export function valueEnd(b: Uint8Array, i: number): number {
  const n = b.length;
  let depth = 0;
  while (i < n) {
    const c = b[i]!;
    if (c === 0x22) {
      i = stringEnd(b, i);
      if (i < 0) return -1;
      if (depth === 0) return i;
      continue;
    }
    if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      if (depth === 0) return i;
      if (--depth === 0) return i + 1;
    } else if (depth === 0 && (c === 0x2c || c === 0x3a || c === 32 || c === 10 || c === 13 || c === 9)) return i;
    i++;
  }
  return depth === 0 ? n : -1;
}

/** The members of the object whose "{" is at i, or null where they cannot be found (then it is not JSON). */
export function objectMembers(b: Uint8Array, i: number): { members: MemberSpan[]; end: number } | null {
  const members: MemberSpan[] = [];
  const end = eachMember(b, i, (keyStart, keyEnd, valueStart, valueEnd) => {
    members.push({ keyStart, keyEnd, valueStart, valueEnd });
  });
  return end < 0 ? null : { members, end };
}

/** Where the value of a member whose key ends at keyEnd begins (after the colon and any whitespace). */
export function valueStartAfter(b: Uint8Array, keyEnd: number): number {
  return skipWs(b, skipWs(b, keyEnd) + 1);
}

/**
 * Where the keys of the object whose "{" is at i begin (each at its opening
 * quote), in order, and the index after its "}"; null where they cannot be
 * found (then it is not JSON). In one typed array of just the size needed:
 * an object of millions of members costs four bytes each here, not an
 * object each.
 */
export function objectKeyStarts(b: Uint8Array, i: number): { at: Int32Array; end: number } | null {
  // Counted first, then found into an array of just that size: no doubling for millions of members.
  let count = 0;
  const end = eachMember(b, i, () => count++);
  if (end < 0) return null;
  const at = new Int32Array(count);
  let m = 0;
  eachMember(b, i, (keyStart) => {
    at[m++] = keyStart;
  });
  return { at, end };
}

/**
 * Visits each member of the object whose "{" is at i, in order: where its
 * key begins and ends (after the closing quote), where its value begins and
 * ends. Returns the index after the object's "}", or -1 where its members
 * cannot be found (then it is not JSON; members before that were visited).
 */
export function eachMember(
  b: Uint8Array,
  i: number,
  visit: (keyStart: number, keyEnd: number, valueStart: number, valueEnd: number) => void,
): number {
  let j = skipWs(b, i + 1);
  if (b[j] === 0x7d) return j + 1;
  for (;;) {
    if (b[j] !== 0x22) return -1;
    const keyEnd = stringEnd(b, j);
    if (keyEnd < 0) return -1;
    const colon = skipWs(b, keyEnd);
    if (b[colon] !== 0x3a) return -1;
    const valueStart = skipWs(b, colon + 1);
    const end = valueEnd(b, valueStart);
    if (end <= valueStart) return -1;
    visit(j, keyEnd, valueStart, end);
    j = skipWs(b, end);
    if (b[j] === 0x2c) {
      j = skipWs(b, j + 1);
      continue;
    }
    return b[j] === 0x7d ? j + 1 : -1;
  }
}
