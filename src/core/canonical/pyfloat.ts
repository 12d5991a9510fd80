/**
 * Python's `repr(float)` for a finite double, the form `json.dumps` writes.
 *
 * Python and ECMAScript's Number#toString both print the shortest digit
 * string that reads back as the same double (ties to the nearer, then even),
 * so only the layout is redone here. With e the decimal exponent of the first
 * significant digit:
 *   -4 <= e < 16   fixed:    `0.0001`, `3.14159`, `1000000000000000.0` (integral floats end in `.0`)
 *   otherwise      exponent: `1e-05`, `2.5e-05`, `1e+16`, `1.7976931348623157e+308`, `5e-324`
 *                  (mantissa `d` or `d.ddd`, exponent signed and at least two digits)
 * Zero is `0.0` or `-0.0`. Non-finite values are the caller's business.
 */
export function pyFloatRepr(x: number): string {
  const a = x < 0 ? -x : x;
  // 1e-4 and 1e16 are the doubles whose shortest forms open each layout, so
  // comparing against them is comparing decimal exponents.
  if (a >= 1e-4 && a < 1e16) {
    const t = String(x); // ECMAScript writes fixed notation on [1e-7, 1e21), a superset of this range
    return Number.isInteger(x) ? `${t}.0` : t;
  }
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const sign = x < 0 ? "-" : "";
  const t = String(a);
  let digits: string;
  let exp: number;
  const e = t.indexOf("e");
  if (e >= 0) {
    // "d.ddde+X" or "de-X": already the right mantissa.
    digits = t.charCodeAt(1) === 46 ? t[0] + t.slice(2, e) : t.slice(0, e);
    exp = Number(t.slice(e + 1));
  } else if (a < 1) {
    // "0.0000ddd" on [1e-7, 1e-4)
    let i = 2;
    while (t.charCodeAt(i) === 48) i++;
    digits = t.slice(i);
    exp = 1 - i;
  } else {
    // "ddd000" on [1e16, 1e21): an integer, its trailing zeros are not digits
    let end = t.length;
    while (t.charCodeAt(end - 1) === 48) end--;
    digits = t.slice(0, end);
    exp = t.length - 1;
  }
  const mant = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  const mag = exp < 0 ? -exp : exp;
  return `${sign}${mant}e${exp < 0 ? "-" : "+"}${mag < 10 ? "0" : ""}${mag}`;
}
