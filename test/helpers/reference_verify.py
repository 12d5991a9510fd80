#!/usr/bin/env python3
"""An independent verifier of the hash-chained JSON-lines ledger format, written
from the format's rules alone (it knows nothing of seam's rows, sessions or
repairs), so seam's tests can cross-check `seam verify` against it.

Rules:
  - split the file on b"\\n" only; lines are numbered from 1; a line that
    bytes.strip() leaves empty is blank: counted, skipped;
  - each other line is decoded as strict UTF-8 and parsed with json.loads; a
    failure is "line N: unparseable", a non-dict is "line N: not a JSON object";
  - claimed = row.pop("chain", None); a falsy claim is a prechain row (skipped,
    or "line N: unchained (prechain) row rejected in strict mode") before the
    first chained row and "line N: unchained row after chain began" after it;
    an unchained row leaves prev as it was, so the next chained row continues
    from the last claimed chain (one removed chain is one break);
  - a truthy non-str claim is "line N: non-string chain value";
  - otherwise chain = sha256((prev + json.dumps(row, sort_keys=True,
    ensure_ascii=False)).encode("utf-8", "surrogatepass")).hexdigest()[:32];
    a failure to compute it is "line N: unhashable row (<ExceptionName>)", a
    different value "line N: chain mismatch"; prev becomes the claimed value.
  - verdict: broken if any break; inconclusive if no rows or any prechain row
    was skipped; ok otherwise.

Usage:
  reference_verify.py [--strict] FILE...     one JSON verdict per file, one per line
  reference_verify.py [--strict] --b64-lines each stdin line is a base64 ledger; one verdict per line
"""
import base64
import hashlib
import json
import sys

GENESIS = "genesis"


def verify(data, strict):
    prev = GENESIS
    began = False
    rows = chained = prechain = 0
    head = None
    breaks = []

    def brk(n, msg):
        breaks.append((n, "line %d: %s" % (n, msg)))

    for n, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        rows += 1
        try:
            row = json.loads(raw.decode("utf-8"))
        except Exception:
            brk(n, "unparseable")
            continue
        if not isinstance(row, dict):
            brk(n, "not a JSON object")
            continue
        claimed = row.pop("chain", None)
        if not claimed:
            if began:
                brk(n, "unchained row after chain began")
            else:
                prechain += 1
                if strict:
                    brk(n, "unchained (prechain) row rejected in strict mode")
            continue
        if not isinstance(claimed, str):
            brk(n, "non-string chain value")
            continue
        began = True
        chained += 1
        try:
            body = json.dumps(row, sort_keys=True, ensure_ascii=False)
            computed = hashlib.sha256((prev + body).encode("utf-8", "surrogatepass")).hexdigest()[:32]
        except Exception as e:
            brk(n, "unhashable row (%s)" % type(e).__name__)
            computed = None
        if computed is not None and computed != claimed:
            brk(n, "chain mismatch")
        prev = claimed
        head = claimed

    if breaks:
        verdict = "broken"
    elif rows == 0 or prechain > 0:
        verdict = "inconclusive"
    else:
        verdict = "ok"
    return {
        "verdict": verdict,
        "rows": rows,
        "chained": chained,
        "prechain": prechain,
        "first_break": breaks[0][1] if breaks else None,
        "first_break_line": breaks[0][0] if breaks else None,
        "breaks": len(breaks),
        "head": head,
    }


def main(argv):
    strict = "--strict" in argv
    rest = [a for a in argv if a != "--strict"]
    out = sys.stdout
    if rest == ["--b64-lines"]:
        for line in sys.stdin.buffer:
            line = line.strip()
            out.write(json.dumps(verify(base64.b64decode(line), strict)) + "\n")
        return 0
    if not rest:
        sys.stderr.write(__doc__)
        return 2
    for path in rest:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            out.write(json.dumps({"verdict": "broken", "unreadable": e.strerror}) + "\n")
            continue
        out.write(json.dumps(verify(data, strict)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
