/**
 * One ledger session per MCP session. A proxied MCP session is named by the
 * `Mcp-Session-Id` the upstream hands out in its answer to `initialize`; each
 * gets its own LedgerWriter (its own session id and seq, the shared file and
 * chain) and its own McpObserver, so requests pair with their answers within
 * the session as on stdio. Traffic that carries no session id (a stateless
 * server, or the sessionless 2026-07-28 revision) goes to one session per
 * proxy process.
 */
import { randomUUID } from "node:crypto";
import type { Log } from "../base/log.ts";
import type { CheckpointSeeds } from "../checkpoint/checkpoint-writer.ts";
import { digestOfCanonical } from "../core/digest.ts";
import type { Json } from "../core/json.ts";
import { SEAM_HTTP } from "../format/row.ts";
import { LedgerWriter } from "../ledger/ledger-writer.ts";
import type { sharedLock } from "../ledger/shared-lock.ts";
import { McpObserver } from "../observe/observer.ts";
import type { Fields, RowSink } from "../observe/observer-options.ts";
import { keeperFor, type PayloadKeeper } from "../observe/payloads.ts";
import { type RecordingOptions, recorderFields } from "../observe/session-fields.ts";
import type { AppendFile } from "../runtime/types.ts";
import type { Later } from "./deferred-recording.ts";

export interface RecordOptions extends RecordingOptions {
  ledger: string;
  server: string;
  openAppend: (path: string) => Promise<AppendFile>;
  /** The checkpoint trees the sessions of one proxy share, by file (src/checkpoint/checkpoint-writer.ts, `seeds`). */
  checkpointSeeds?: CheckpointSeeds;
  /** What session_begin says about the proxy (upstream, listen address; already redacted). */
  begin: Fields;
}

/**
 * How a ledger session came to be: an `initialize` without a session id
 * (the MCP session it opens is bound once the answer names it), a request
 * naming a session this proxy has not seen opened (it started mid-session),
 * or the one session of traffic without session ids.
 */
export type SessionKind = "initialize" | "joined" | "sessionless";

/** A session id as a row names it: its digest, never the id (it grants access to the session). */
export function sessionIdDigest(id: string): string {
  // The id is a visible-ASCII header value, so its JSON string form is already canonical text.
  return digestOfCanonical(JSON.stringify(id));
}

/** When something was seen: the monotonic clock (the observer's) and the wall clock (a row's ts). */
export interface Moment {
  perf: number;
  wall: number;
}

/** Now, for an observation that will be made later (ProxySession.at). */
export function moment(): Moment {
  return { perf: performance.now(), wall: Date.now() };
}

/** A session's clock: now, or, while an observation made after the fact runs, the moment it stands for. */
class SessionClock {
  private pinned: Moment | null = null;
  perf(): number {
    return this.pinned?.perf ?? performance.now();
  }
  /** Wall-clock epoch ms (a row's ts). */
  wall(): number {
    return this.pinned?.wall ?? Date.now();
  }
  at(m: Moment, f: () => void): void {
    const before = this.pinned;
    this.pinned = m;
    try {
      f();
    } finally {
      this.pinned = before;
    }
  }
}

/** A row waiting to be written (ProxySession.flush); `durable` is told whether it was, for a durable one. */
interface Staged {
  evt: string;
  fields: Fields;
  wall: number;
  durable: ((written: boolean) => void) | undefined;
}

export class ProxySession {
  readonly observer: McpObserver;
  readonly rows: RowSink;
  mcpId: string | undefined;
  exchanges = 0;
  open = 0;
  unobservedBodies = 0;
  httpErrors = 0;
  readonly bytes = { c2s: 0, s2c: 0 };
  ended = false;
  /** Serializes the observe-then-hold step of held POSTs (the observer holds one client frame at a time). */
  holdChain: Promise<unknown> = Promise.resolve();
  private idle: (() => void)[] = [];
  private idleMs = 0;
  private onIdle: (() => void) | undefined;
  private idleTimer: ReturnType<typeof setTimeout> | undefined;

  private warnedLate = false;

  private constructor(
    readonly id: string,
    readonly kind: SessionKind,
    private readonly writer: LedgerWriter,
    o: RecordOptions,
    private readonly log: Log,
    private readonly clock: SessionClock,
    private readonly later: Later,
    payloads: PayloadKeeper | undefined,
  ) {
    // Once session_end's counts are taken, a late row (an exchange that outlived
    // the grace period) would contradict them: it is dropped and warned about.
    this.rows = {
      row: (evt, fields) => {
        if (this.ended) this.late(evt);
        else this.stage(evt, fields, undefined);
      },
      durable: (evt, fields) => {
        if (this.ended) {
          this.late(evt);
          return Promise.resolve(false);
        }
        return new Promise<boolean>((resolve) => this.stage(evt, fields, resolve));
      },
    };
    this.observer = new McpObserver({
      rows: this.rows,
      raw: o.raw,
      payloads,
      writeAhead: o.writeAhead || o.failClosed,
      failClosed: o.failClosed,
      actions: o.actions,
      now: () => clock.perf(),
    });
  }

  /**
   * Rows made since the last flush, with the times they stand for. An exchange's rows are made when
   * the proxy records (src/proxy/deferred-recording.ts), each dated when its bytes crossed, and exchanges
   * record in turn: the rows of one batch are made in another order than their bytes crossed (an
   * answer's rows before the http_exchange row of an exchange that ended earlier). They are written in
   * the order of their times instead, as seam wrap writes them, at the end of the batch.
   */
  private staged: Staged[] = [];
  /** The time of the last row written: one made too late for its batch is written no earlier. */
  private lastWall = 0;

  private stage(evt: string, fields: Fields, durable: ((written: boolean) => void) | undefined): void {
    if (this.staged.length === 0) this.later(() => this.flush());
    this.staged.push({ evt, fields, wall: this.clock.wall(), durable });
  }

  /** Writes the rows staged, in the order of their times (those of one time in the order they were made). */
  private flush(): void {
    const rows = this.staged;
    if (rows.length === 0) return;
    this.staged = [];
    rows.sort((a, b) => a.wall - b.wall);
    for (const r of rows) {
      // A row made after a later one was written (its exchange recorded in a batch after that one's)
      // takes that row's time: the ledger's times never go back within a session.
      const wall = Math.max(r.wall, this.lastWall);
      this.lastWall = wall;
      this.clock.at({ perf: performance.now(), wall }, () => {
        if (r.durable === undefined) this.writer.add(r.evt, r.fields);
        else void this.writer.appendDurable(r.evt, r.fields).then(r.durable);
      });
    }
  }

  /** Runs `f` (observations and the rows they write) as if at `m`: their times are those of when it was seen. */
  at(m: Moment, f: () => void): void {
    this.clock.at(m, f);
  }

  /**
   * Opens a ledger session. `continues`: the ledger session of the same MCP
   * session that this proxy ended as idle (the client came back after it).
   */
  static async open(
    o: RecordOptions,
    kind: SessionKind,
    lock: ReturnType<typeof sharedLock>,
    log: Log,
    later: Later,
    mcpId?: string,
    continues?: string,
    since?: Moment,
  ): Promise<ProxySession> {
    const id = randomUUID();
    const clock = new SessionClock();
    const payloads = o.payloads === undefined ? undefined : keeperFor(o.payloads, (m) => log.warn(m));
    const writer = await LedgerWriter.open({
      path: o.ledger,
      session: id,
      server: o.server,
      fsync: o.fsync,
      openAppend: o.openAppend,
      warn: (m) => log.warn(m),
      checkpoints: o.checkpoints,
      checkpointSeeds: o.checkpointSeeds,
      seam: SEAM_HTTP,
      // The ledger was checked when the proxy started (src/proxy/run.ts). Refused now (a link planted
      // since), this session is not recorded, its rows counted as unlogged: its traffic still passes.
      refusedIsUnwritable: true,
      lockedOnly: o.failClosed,
      batchWhen: later,
      // A client's calls come a few ms apart: keep the lock files from one row to the next.
      lockLingerMs: 20,
      lock,
      now: () => clock.wall(),
      // The payloads rows name are in their files before the rows are in the ledger.
      beforeWrite: payloads === undefined ? undefined : () => payloads.settled(),
    });
    const s = new ProxySession(id, kind, writer, o, log, clock, later, payloads);
    s.mcpId = mcpId;
    // The session began when the request that opened it crossed, before its ledger was open.
    const begun = since ?? moment();
    s.lastWall = begun.wall;
    clock.at(begun, () =>
      writer.add("session_begin", {
        ...o.begin,
        mcp_session: mcpId === undefined ? undefined : sessionIdDigest(mcpId),
        opened_by: kind,
        continues,
        ...recorderFields(o),
      }),
    );
    return s;
  }

  private late(evt: string): void {
    if (this.warnedLate) return;
    this.warnedLate = true;
    this.log.warn(`session ${this.id} had ended when a ${evt} row came; it is not in the ledger`);
  }

  /** The MCP session id became known (from the answer to initialize). */
  bind(mcpId: string): void {
    this.mcpId = mcpId;
    this.rows.row("mcp_session", { mcp_session: sessionIdDigest(mcpId) });
  }

  enter(): void {
    this.open++;
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  leave(): void {
    this.open--;
    if (this.open !== 0) return;
    for (const f of this.idle.splice(0)) f();
    this.armIdle();
  }

  /** Calls `f` once the session has had no exchange open for `ms` (0: never). */
  expireWhenIdle(ms: number, f: () => void): void {
    this.idleMs = ms;
    this.onIdle = f;
    if (this.open === 0) this.armIdle();
  }

  private armIdle(): void {
    if (this.idleMs <= 0 || this.onIdle === undefined || this.ended) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(this.onIdle, this.idleMs);
    // An idle session alone does not keep the process running.
    this.idleTimer.unref?.();
  }

  /** Resolves once no exchange of the session is open, or after `ms`. */
  settled(ms: number): Promise<void> {
    if (this.open === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      this.idle.push(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }

  /**
   * Ends the ledger session: rows for calls still open, then session_end. Once.
   * Resolves to how many of its rows, session_end included, could not be written (0 the second time).
   */
  async end(reason: string, extra: Fields = {}): Promise<number> {
    if (this.ended) return 0;
    clearTimeout(this.idleTimer);
    this.observer.finish(reason);
    this.flush();
    this.ended = true;
    // session_end counts the payloads that could not be kept: every write is done by then.
    await this.observer.payloadsSettled();
    await this.writer.end({
      reason,
      ...extra,
      exchanges: this.exchanges,
      ...this.observer.endCounts(),
      unobserved_bodies: this.unobservedBodies || undefined,
      http_errors: this.httpErrors || undefined,
      bytes: new Map<string, Json>([
        ["c2s", this.bytes.c2s],
        ["s2c", this.bytes.s2c],
      ]),
    });
    return this.writer.rowsUnlogged;
  }
}
