import { defineCommand } from "citty";
import { EXIT, UsageError } from "../src/base/exit.ts";
import { describeIoError } from "../src/base/io-error.ts";
import { createLog } from "../src/base/log.ts";
import { safeStringify } from "../src/base/terminal-text.ts";
import { wrapText } from "../src/base/wrap-text.ts";
import { cell } from "../src/read/cells.ts";
import { breakJson, breakLine, header, opJson, opLine, verdictJson, verdictLine } from "../src/read/format.ts";
import { readTail } from "../src/read/last-rows.ts";
import { readLedgerBatches } from "../src/read/stream.ts";
import { isWriterAlive } from "../src/runtime/alive.ts";
import { runtime } from "../src/runtime/index.ts";
import { FAULT_ENV } from "../src/selftest/faults.ts";
import { exitCodeFor, worstExit } from "../src/verify/verify-report.ts";
import { intFlag, rejectUnknownFlags } from "./_args.ts";
import { outputWidth } from "./_out.ts";
import { colorOut, filterArgs, filtersFrom, keysFrom, requireReadable } from "./_read.ts";

const args = {
  path: { type: "positional", description: "ledger file(s); '-' reads stdin", required: true, valueHint: "PATH…" },
  ...filterArgs,
  last: {
    type: "string",
    description: "only the last N operations (the whole file is still read and verified, as in seam report)",
    valueHint: "N",
  },
  verify: {
    type: "boolean",
    default: true,
    description: "verify the whole file (the default); --no-verify with --last reads only the end and verifies nothing",
  },
  follow: { type: "boolean", description: "keep printing operations as writers append them (Ctrl-C ends)" },
  json: { type: "boolean", description: "one JSON object per operation (NDJSON), then the verdict" },
  utc: { type: "boolean", description: "times in UTC, ISO 8601" },
  wide: {
    type: "boolean",
    description:
      "every column, whole: session ids, servers and operation names uncut, the ID and the preview on the line (the default fits the terminal's width, else $COLUMNS, else 80, leaving out ID, then shortening TIME, STATUS, SERVER and OPERATION, then SERVER and SESSION)",
  },
  "raw-width": {
    type: "string",
    description:
      "characters of the arguments → result preview, on the operation's line (ledgers written with --raw; 0: none; default: a line of its own below)",
    valueHint: "N",
  },
  key: {
    type: "string",
    description: "mark operations under a valid checkpoint signed by this verifier key as sealed (S)",
    valueHint: "VKEY",
  },
} as const;

export default defineCommand({
  meta: {
    name: "log",
    description: "one line per operation, verified as it is read (exit 0 ok, 1 broken, 3 inconclusive)",
  },
  args,
  async run({ args: a, rawArgs }) {
    rejectUnknownFlags(rawArgs, args, "log");
    const paths = a._.map(String);
    const filters = filtersFrom(rawArgs, a);
    const keys = keysFrom(a.key, paths);
    const last = a.last === undefined ? undefined : intFlag(a.last, "--last", 0, 1);
    if (a.follow && paths.length !== 1) throw new UsageError("--follow follows one ledger file");
    if (a.follow && paths[0] === "-") throw new UsageError("--follow needs a file, not stdin");
    if (a.follow && keys !== undefined)
      throw new UsageError("--key and --follow do not go together", "run seam log --key without --follow");
    const noVerify = a.verify === false;
    if (noVerify && last === undefined)
      throw new UsageError("--no-verify goes with --last (without --last every row is read, so verified)");
    if (noVerify && (a.follow || keys !== undefined))
      throw new UsageError("--no-verify does not go with --follow or --key");
    // citty's args object converts names on every access: read each flag once, not per line.
    const following = a.follow === true;
    const json = a.json === true;
    const color = colorOut();
    const rawWidth = a["raw-width"] === undefined ? undefined : intFlag(a["raw-width"], "--raw-width", 0);
    const wide = a.wide === true;
    const style = { utc: a.utc === true, wide, color, rawWidth, width: wide ? undefined : outputWidth() };
    // The break marker and the verdict are sentences: wrapped to the width like the columns are fitted to it.
    const sentence = (s: string) => (style.width === undefined ? s : wrapText(s, style.width).join("\n"));
    requireReadable(paths);
    const out = runtime.stdout();
    const enc = new TextEncoder();
    // Lines go out together (one write per line would cost more than reading): each batch of operations the
    // reader hands out in one write, what `write` is given in writes of 64 KiB, and at once when following.
    let pending: string[] = [];
    let pendingChars = 0;
    const flush = async () => {
      if (pending.length === 0) return;
      const text = pending.join("");
      pending = [];
      pendingChars = 0;
      if (!out.broken) await out.write(enc.encode(text));
    };
    const write = async (text: string) => {
      pending.push(text);
      pendingChars += text.length;
      if (following || pendingChars >= 1 << 16) await flush();
    };

    // --last --no-verify: the end of the file only, nothing verified.
    if (last !== undefined && noVerify) {
      const codes: number[] = [];
      if (!json) await write(`${header(style)}\n`);
      for (const p of paths) {
        if (p === "-")
          throw new UsageError(
            "--no-verify reads a file from its end, not stdin",
            "leave out --no-verify to read stdin whole",
          );
        let r;
        try {
          r = await readTail(p, last, filters);
        } catch (e) {
          createLog().error(`cannot read ${cell(p)}: ${describeIoError(e)}`);
          codes.push(EXIT.FAIL);
          continue;
        }
        for (const op of r.ops) await write(`${json ? opJson(op) : opLine(op, style)}\n`);
        const why = "not verified: --no-verify read only the end of the file; leave it out to check it all";
        await write(
          a.json
            ? `{"type": "verdict", "file": ${safeStringify(p)}, "verdict": "unverified", "ok": null}\n`
            : `${sentence(`${cell(p)}: ${why}`)}\n`,
        );
        codes.push(EXIT.INCONCLUSIVE);
      }
      await flush();
      return worstExit(codes);
    }

    const fault = process.env[FAULT_ENV] === "log-unverified";
    if (fault) createLog().warn("selftest fault log-unverified is on: rows are not chain-checked");
    const ac = new AbortController();
    const off = a.follow ? runtime.onSignals(["SIGINT", "SIGTERM"], () => ac.abort()) : () => {};
    const codes: number[] = [];
    let unvouched = 0;
    let operations = 0;
    try {
      if (!json) await write(`${header(style)}\n`);
      for await (const batch of readLedgerBatches(paths, {
        filters,
        follow: following,
        signal: ac.signal,
        keys,
        last,
        isWriterAlive,
        verifier: "auto",
        faults: fault ? { skipVerify: true } : undefined,
      })) {
        for (const e of batch) {
          if (e.type === "op") {
            operations++;
            if (!e.op.vouched) unvouched++;
            pending.push(`${json ? opJson(e.op) : opLine(e.op, style)}\n`);
          } else if (e.type === "break") {
            pending.push(`${json ? breakJson(e.file, e.line, e.message) : sentence(breakLine(e.message, color))}\n`);
          } else {
            const counts = { operations, unvouched, sealedThrough: e.sealed_through, unreadTail: e.unread_tail };
            pending.push(
              `${json ? verdictJson(e.file, e.report, counts) : sentence(verdictLine(e.file, e.report, counts, color))}\n`,
            );
            codes.push(exitCodeFor(e.report));
            operations = 0;
            unvouched = 0;
          }
        }
        await flush();
      }
    } finally {
      off();
    }
    await flush();
    await out.end();
    // Ctrl-C ends a follow as `tail -f` ends: 0, unless the chain broke on the way.
    if (ac.signal.aborted) return codes.includes(EXIT.FAIL) ? EXIT.FAIL : EXIT.OK;
    return worstExit(codes);
  },
});
