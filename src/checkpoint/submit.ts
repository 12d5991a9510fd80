/**
 * Sending the ledger's checkpoints to witnesses (`--witness-url`, the client
 * side of c2sp.org/tlog-witness; the server is src/witness/server.ts):
 *
 *   POST <url>/add-checkpoint
 *     old <the size the witness last cosigned; 0 the first time>
 *     <the consistency proof from there, one base64 hash a line>
 *     <blank line>
 *     <the checkpoint note>
 *
 * All of it runs beside the recording, never on its path: the writer hands a
 * checkpoint over once its row is written (and fsynced), and hears back,
 * later, the cosignature lines to append as rows. One submitter serves every
 * writer of a process (seam proxy has one per MCP session), so each witness
 * sees one client.
 *
 * Per witness one request at a time, always for the largest checkpoint
 * handed over: one overtaken while another was in flight, or smaller than
 * one cosigned already (seam proxy's writers may hand theirs over out of
 * order), is not sent (the larger one's cosignature vouches for the lines
 * it sealed too). A 409 with
 * the witness's size (text/x.tlog.size) resyncs to that size and resends
 * with a proof from there; a failed connection, a timeout or a 5xx is
 * retried with backoff; any other answer is a refusal. A witness that fails
 * is warned about once (and once more when it answers again); the writer
 * counts failed requests in session_end, and does not wait at its end for a
 * witness known to be failing (unreached()). Proofs: src/checkpoint/ledger-proofs.ts.
 */
import { type Checkpoint, parseDecimal } from "./checkpoint.ts";
import { LedgerProofs } from "./ledger-proofs.ts";
import type { Hash } from "./merkle.ts";
import { encodeBase64, parseNote } from "./note.ts";

/** The path of the endpoint under a witness's URL. */
export const ADD_CHECKPOINT = "/add-checkpoint";
/** The Content-Type of a 409's body: the witness's size. */
export const SIZE_TYPE = "text/x.tlog.size";
/** A witness's answer is one or a few signature lines: more is not read. */
const MAX_ANSWER = 64 * 1024;
const REQUEST_MS = 10_000;
const ATTEMPTS = 4;
const FIRST_BACKOFF_MS = 500;
/** 409s in a row before a checkpoint counts as refused (the witness's size keeps changing under us). */
const RESYNCS = 3;

/** An add-checkpoint request body. */
export function formatAddCheckpoint(old: number, proof: readonly Hash[], note: string): string {
  return `old ${old}\n${proof.map((h) => `${encodeBase64(h)}\n`).join("")}\n${note}`;
}

/** A cosignature a witness returned: one signature line for a checkpoint. */
export interface Cosigned {
  url: string;
  /** The name and key ID on the line. */
  witness: string;
  keyId: number;
  size: number;
  root: string;
  /** The signature line, without its "\n". */
  line: string;
}

/** What a writer hears of one checkpoint at one witness. */
export type SubmitOutcome =
  | { kind: "cosigned"; cosignatures: Cosigned[] }
  /** The request failed (counted once per failed request), `why` in words. */
  | { kind: "failed"; url: string; why: string };

export interface Submission {
  /** The ledger file the checkpoint's lines are in. */
  path: string;
  checkpoint: Checkpoint;
  note: string;
  /** Called for each cosignature and each failed request, any time later. */
  report: (o: SubmitOutcome) => void;
}

interface Witness {
  url: string;
  /** The size it last cosigned, as far as we know (0: nothing, or not known yet). */
  size: number;
  /** The largest checkpoint it cosigned for this client: smaller ones handed over later add nothing. */
  cosigned: number;
  next: Submission | null;
  running: Promise<void> | null;
  failing: boolean;
  /** unreached() has said so since it began failing. */
  saidUnreached: boolean;
  /** Waiting out a backoff: nothing of it is in flight. */
  sleeping: boolean;
  abort: AbortController | null;
}

export interface SubmitterDeps {
  warn: (message: string) => void;
  info: (message: string) => void;
}

export class WitnessSubmitter {
  private readonly witnesses: Witness[];
  private proofs: LedgerProofs | null = null;
  private closed = false;
  private readonly sleeps = new Set<() => void>();

  constructor(
    urls: readonly string[],
    private readonly deps: SubmitterDeps,
  ) {
    this.witnesses = urls.map((url) => ({
      url: url.replace(/\/+$/, ""),
      size: 0,
      cosigned: 0,
      next: null,
      running: null,
      failing: false,
      saidUnreached: false,
      sleeping: false,
      abort: null,
    }));
  }

  /** Queues the checkpoint for every witness; returns at once. */
  submit(s: Submission): void {
    if (this.closed) return;
    if (this.proofs === null || this.proofs.path !== s.path) this.proofs = new LedgerProofs(s.path);
    for (const w of this.witnesses) {
      // Writers of one file (seam proxy's sessions) may hand checkpoints over out of order: the largest is sent.
      if (w.next === null || s.checkpoint.size > w.next.checkpoint.size) w.next = s;
      w.running ??= this.run(w).finally(() => {
        w.running = null;
      });
    }
  }

  /**
   * At a session's end: the URLs of the witnesses known to be failing now
   * (the last request to each failed and none has answered since), which
   * the end does not wait for. Each is said once on stderr until it answers
   * again (seam proxy ends many sessions).
   */
  unreached(): Set<string> {
    const out = new Set<string>();
    for (const w of this.witnesses) {
      if (!w.failing) continue;
      out.add(w.url);
      if (w.saidUnreached) continue;
      w.saidUnreached = true;
      this.deps.warn(
        `witness ${w.url}: not reached at the session's end; its last checkpoint is not waited for (counted in session_end)`,
      );
    }
    return out;
  }

  /**
   * Resolves when every witness but those in `skip` (unreached() taken before)
   * has nothing left to send, or after `ms`, whichever is first. A skipped
   * witness still gets the checkpoints handed over, in the background.
   */
  async settled(ms: number, skip: ReadonlySet<string> = new Set()): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const busy = this.witnesses.flatMap((w) => (w.running && !skip.has(w.url) ? [w.running] : []));
    if (busy.length === 0) return;
    await Promise.race([
      Promise.all(busy),
      new Promise<void>((r) => {
        timer = setTimeout(r, ms);
        (timer as { unref?: () => void }).unref?.();
      }),
    ]);
    clearTimeout(timer);
  }

  /**
   * Resolves when no witness has a request in flight (one waiting out a
   * backoff has none, and one known to be failing is not waited for), or
   * after `ms`: session_end then counts what the requests sent so far came to.
   */
  async quiet(ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline && this.witnesses.some((w) => w.running !== null && !w.sleeping && !w.failing))
      await new Promise((r) => setTimeout(r, 10));
  }

  /** Stops: requests in flight are abandoned, nothing more is sent. */
  close(): void {
    this.closed = true;
    for (const w of this.witnesses) {
      w.next = null;
      w.abort?.abort();
    }
    for (const wake of this.sleeps) wake();
  }

  private async run(w: Witness): Promise<void> {
    while (w.next !== null && !this.closed) {
      const s = w.next;
      w.next = null;
      await this.send(w, s);
    }
  }

  /** Sends one checkpoint until it is cosigned, refused, or out of attempts. */
  private async send(w: Witness, s: Submission): Promise<void> {
    const c = s.checkpoint;
    let resyncs = 0;
    // A witness that is failing gets one try per checkpoint, not a round of retries.
    const attempts = w.failing ? 1 : ATTEMPTS;
    for (let attempt = 1; !this.closed; ) {
      if (c.size <= w.cosigned) return;
      // The witness has a larger checkpoint already, not from us: this one cannot extend it.
      if (c.size < w.size)
        return this.failed(
          w,
          s,
          `it has cosigned size ${w.size}, beyond this checkpoint's ${c.size} (another writer's checkpoint, or the ledger was cut back)`,
        );
      let body: string;
      try {
        const proof = await this.proofs!.consistency(w.size, c.size);
        body = formatAddCheckpoint(w.size, proof, s.note);
      } catch (e) {
        return this.failed(w, s, `no consistency proof from size ${w.size}: ${(e as Error).message}`);
      }
      const r = await this.post(w, body);
      if (this.closed) return;
      if (r.status === 200) {
        let lines: Cosigned[];
        try {
          lines = cosignatures(w.url, s, r.body);
        } catch (e) {
          return this.failed(w, s, (e as Error).message);
        }
        w.size = c.size;
        w.cosigned = c.size;
        this.recovered(w);
        this.forgetBelowAll();
        s.report({ kind: "cosigned", cosignatures: lines });
        return;
      }
      if (r.status === 409 && (r.type ?? "").split(";")[0]!.trim().toLowerCase() === SIZE_TYPE) {
        const size = r.body.endsWith("\n") ? parseDecimal(r.body.slice(0, -1)) : null;
        if (size !== null && size !== w.size && ++resyncs <= RESYNCS) {
          w.size = size;
          continue;
        }
        return this.failed(
          w,
          s,
          size === w.size
            ? `it holds another checkpoint of size ${size} (a fork)`
            : `409 with ${JSON.stringify(r.body.slice(0, 40))}`,
        );
      }
      const retry = (r.status === 0 && !r.final) || r.status >= 500;
      const why = r.status === 0 ? r.body : `HTTP ${r.status}${firstLine(r.body)}`;
      if (!retry || attempt >= attempts) return this.failed(w, s, why);
      s.report({ kind: "failed", url: w.url, why });
      this.warnOnce(w, why);
      w.sleeping = true;
      await this.sleep(FIRST_BACKOFF_MS * 2 ** (attempt - 1));
      w.sleeping = false;
      attempt++;
    }
  }

  private failed(w: Witness, s: Submission, why: string): void {
    s.report({ kind: "failed", url: w.url, why });
    this.warnOnce(w, why);
  }

  private warnOnce(w: Witness, why: string): void {
    if (w.failing) return;
    w.failing = true;
    this.deps.warn(`witness ${w.url}: ${why}; checkpoints go on without its cosignature (counted in session_end)`);
  }

  private recovered(w: Witness): void {
    if (!w.failing) return;
    w.failing = false;
    w.saidUnreached = false;
    this.deps.info(`witness ${w.url} cosigns again`);
  }

  /**
   * Leaves below the size of every witness that answers are needed for no
   * proof. One that is failing holds nothing back: should it come back from
   * below, its proof reads the file again (src/checkpoint/ledger-proofs.ts).
   */
  private forgetBelowAll(): void {
    const live = this.witnesses.filter((w) => !w.failing);
    if (live.length === 0 || live.some((w) => w.size === 0)) return;
    this.proofs?.forget(Math.min(...live.map((w) => w.size)));
  }

  /** One request; status 0 when there was no answer or no usable one (`body` then says why; `final`: not worth a retry). */
  private async post(
    w: Witness,
    body: string,
  ): Promise<{ status: number; type: string | null; body: string; final?: boolean }> {
    const abort = new AbortController();
    w.abort = abort;
    const timer = setTimeout(() => abort.abort(new Error("no answer within 10 s")), REQUEST_MS);
    (timer as { unref?: () => void }).unref?.();
    try {
      const res = await fetch(`${w.url}${ADD_CHECKPOINT}`, {
        method: "POST",
        body,
        headers: { "content-type": "text/plain; charset=utf-8" },
        redirect: "error",
        signal: abort.signal,
      });
      const text = await readCapped(res);
      if (text === null) return { status: 0, type: null, body: `an answer over ${MAX_ANSWER} bytes`, final: true };
      return { status: res.status, type: res.headers.get("content-type"), body: text };
    } catch (e) {
      return { status: 0, type: null, body: describeFetchError(e) };
    } finally {
      clearTimeout(timer);
      w.abort = null;
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(t);
        this.sleeps.delete(wake);
        resolve();
      };
      const t = setTimeout(wake, ms);
      (t as { unref?: () => void }).unref?.();
      this.sleeps.add(wake);
    });
  }
}

/** The signature lines of a 200's body, checked for shape (what they sign is for the verifier to judge). */
function cosignatures(url: string, s: Submission, body: string): Cosigned[] {
  if (body === "" || !body.endsWith("\n")) throw new Error("its answer is not signature lines");
  let sigs: ReturnType<typeof parseNote>["sigs"];
  try {
    sigs = parseNote(s.note + body).sigs;
  } catch {
    throw new Error("its answer is not signature lines");
  }
  const lines = body.slice(0, -1).split("\n");
  const mine = sigs.slice(sigs.length - lines.length);
  return lines.map((line, i) => ({
    url,
    witness: mine[i]!.name,
    keyId: mine[i]!.id,
    size: s.checkpoint.size,
    root: encodeBase64(s.checkpoint.root),
    line,
  }));
}

function firstLine(body: string): string {
  const l = body.split("\n")[0]!.slice(0, 200);
  return l === "" ? "" : ` (${JSON.stringify(l)})`;
}

async function readCapped(res: Response): Promise<string | null> {
  if (res.body === null) return "";
  const parts: Uint8Array[] = [];
  let total = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > MAX_ANSWER) {
      await reader.cancel().catch(() => {});
      return null;
    }
    parts.push(value);
  }
  return new TextDecoder().decode(Buffer.concat(parts));
}

/** A fetch failure in words: the cause's code when there is one (ECONNREFUSED…). */
function describeFetchError(e: unknown): string {
  const err = e as { name?: string; message?: string; cause?: { code?: string; message?: string }; code?: string };
  if (err?.name === "AbortError" || err?.name === "TimeoutError") return "no answer within 10 s";
  const code = err?.cause?.code ?? err?.code;
  if (typeof code === "string") return `cannot connect (${code})`;
  return `cannot connect (${err?.cause?.message ?? err?.message ?? String(e)})`;
}
