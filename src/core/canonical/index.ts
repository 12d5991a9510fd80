/**
 * Canonical forms: the one entry point for the rest of seam.
 *
 * reference.ts is the definition: the serializers of the lossless JSON model
 * (src/core/json.ts) that give the forms the ledger format names
 * (docs/ledger-format.md: json-c14n, the chain form, RFC 8785 JCS). Every
 * other file here is a fast path that must give the same bytes, held to the
 * reference by differential tests (test/e2e/canonical-bytes.test.ts,
 * test/unit/ascii-form.test.ts, test/unit/form-line.test.ts):
 *   from-bytes.ts UTF-8 JSON straight to its canonical bytes, with no model (`seam digest`);
 *   ascii-writer.ts values of ASCII text written into bytes member by member (rows, small digests);
 *   fast-line.ts  a ledger line already in chain form, chained without a parse (the verifier);
 *   fast-row.ts   the row of such a line, its members parsed only when asked for;
 *   key-order.ts  keys compared where they lie in the input, for from-bytes.ts.
 */

export { asciiFormScratch, compactAscii, putAscii, putJsonString } from "./ascii-writer.ts";
export {
  chainFromLine,
  chainOfMembers,
  type FormLayout,
  formScratchBytes,
  readLayout,
} from "./fast-line.ts";
export { FormRow, parsePlainLine } from "./fast-row.ts";
export { type ByteForm, type ByteFormOptions, canonicalBytes, type Outcome } from "./from-bytes.ts";
export { pyFloatRepr } from "./pyfloat.ts";
export {
  CanonicalError,
  CHAIN,
  COMPACT,
  chainForm,
  compactForm,
  compareCodePoints,
  feedUtf8,
  isWellFormed,
  JCS,
  jcsForm,
  lineForm,
  MAX_WRITE_DEPTH,
  quote,
  type Recipe,
  type Style,
  streamForm,
  type Utf8Sink,
  utf8Surrogatepass,
} from "./reference.ts";
