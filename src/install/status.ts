/**
 * `seam status`: for each client whose file is on this machine, each server,
 * whether seam records it, into which ledger, and that ledger's last session
 * of the server (when, how many calls) with the whole ledger's verify
 * verdict: a last session in a broken ledger is not vouched for.
 */
import { existsSync } from "node:fs";
import { describeIoError } from "../base/io-error.ts";
import { getField, type Json, type JsonObject } from "../core/json.ts";
import { readSmallFile } from "../runtime/small-file.ts";
import { fileChunks, type Verdict, type VerifyOptions } from "../verify/ledger-verifier.ts";
import { verifyLedger } from "../verify/verify-ledger.ts";
import { type ClientId, expandTargets, type PathEnv, type Scope, targetsFor } from "./clients.ts";
import { classify, type WrapFlags } from "./entry.ts";
import { formatOf, listFolder } from "./install.ts";
import { launcherTransience, type Probe } from "./launcher.ts";

export interface LastSession {
  session: string;
  /** The ts of its last row. */
  when: string | null;
  calls: number;
  complete: boolean;
}

export interface LedgerState {
  path: string;
  exists: boolean;
  /** verify's verdict over the whole ledger; null when there is no ledger yet. */
  verdict: Verdict | null;
  rows: number;
}

export interface ServerStatus {
  name: string;
  where: string;
  state: "recorded" | "not-recorded" | "remote" | "unsupported";
  reason?: string;
  ledger?: LedgerState;
  last_session?: LastSession | null;
  /** Set when the seam the entry runs sits where it does not last (npm's npx cache, a temporary folder). */
  transient_launcher?: { path: string; reason: string };
}

export interface FileStatus {
  client: ClientId;
  scope: Scope;
  file: string;
  error?: string;
  /** What `error` is about: the file could not be read, or what was read does not parse. */
  problem?: "unreadable" | "unparsable";
  servers: ServerStatus[];
}

interface LedgerSummary {
  state: LedgerState;
  lastByServer: Map<string, LastSession>;
}

export async function status(
  clients: ClientId[],
  env: PathEnv,
  wrapFlags: WrapFlags,
  verify: Pick<VerifyOptions, "isWriterAlive"> = {},
  probe?: Pick<Probe, "os" | "temp" | "realpath">,
): Promise<FileStatus[]> {
  const out: FileStatus[] = [];
  const ledgers = new Map<string, Promise<LedgerSummary>>();
  const seen = new Set<string>();
  for (const client of clients) {
    for (const scope of ["user", "project"] as Scope[]) {
      for (const t of expandTargets(targetsFor(client, scope, env), listFolder)) {
        // Run from the home directory, a project's file can be the user's own: it is listed once.
        if (!existsSync(t.file) || seen.has(t.file)) continue;
        seen.add(t.file);
        const fs: FileStatus = { client, scope, file: t.file, servers: [] };
        out.push(fs);
        let text: string;
        try {
          text = readSmallFile(t.file).toString("utf8");
        } catch (e) {
          fs.error = `cannot read ${t.file}: ${describeIoError(e)}`;
          fs.problem = "unreadable";
          continue;
        }
        const listed = formatOf(t).list(text, t.containers);
        if (!listed.ok) {
          fs.error = `${t.file}: ${listed.error}`;
          fs.problem = "unparsable";
          continue;
        }
        for (const ref of listed.servers) {
          const c = classify(ref.value, wrapFlags, ref.shape);
          const s: ServerStatus = { name: ref.name, where: ref.where, state: "not-recorded" };
          if (c.kind === "remote" || c.kind === "unsupported") {
            s.state = c.kind;
            s.reason = c.reason;
          } else if (c.kind === "wrapped") {
            s.state = "recorded";
            const transient = probe && launcherTransience(c.wrapped!.launcher, probe);
            if (transient) s.transient_launcher = transient;
            const path = c.wrapped!.ledger;
            if (path) {
              if (!ledgers.has(path)) ledgers.set(path, summarize(path, verify));
              const sum = await ledgers.get(path)!;
              s.ledger = sum.state;
              s.last_session = sum.lastByServer.get(c.wrapped!.server ?? ref.name) ?? null;
            }
          }
          fs.servers.push(s);
        }
      }
    }
  }
  return out;
}

async function summarize(path: string, verify: Pick<VerifyOptions, "isWriterAlive">): Promise<LedgerSummary> {
  const lastByServer = new Map<string, LastSession>();
  if (!existsSync(path)) return { state: { path, exists: false, verdict: null, rows: 0 }, lastByServer };
  const ts = new Map<string, string>();
  const report = await verifyLedger(fileChunks(path), {
    ...verify,
    onRow(row: JsonObject | { readonly [k: string]: Json }) {
      const session = getField(row as Json, "session");
      const when = getField(row as Json, "ts");
      if (typeof session === "string" && typeof when === "string") ts.set(session, when);
    },
  });
  for (const s of report.sessions) {
    if (s.server === null) continue;
    // Sessions come in order of first appearance; the last one seen for a server wins.
    lastByServer.set(s.server, { session: s.id, when: ts.get(s.id) ?? null, calls: s.calls, complete: s.complete });
  }
  return { state: { path, exists: true, verdict: report.verdict, rows: report.rows }, lastByServer };
}
