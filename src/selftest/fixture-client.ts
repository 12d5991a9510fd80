/**
 * A scripted MCP client, built into seam. It speaks to a server command over
 * stdio the way MCP clients do, waits for the answers a step needs before the
 * next step (so the bytes a server sees never depend on timing), and keeps
 * every byte it sent and received for byte-for-byte comparison.
 */

import { getField, isObject, type Json, parseJson } from "../core/json.ts";
import { FrameSplitter } from "../observe/frames.ts";
import { idJson } from "../observe/own-answers.ts";
import type { Child } from "../runtime/types.ts";

export interface Step {
  /** Exact bytes to write. */
  send: string;
  /** Ids (as JSON text) of answers to wait for before the next step. */
  answers?: string[];
  /** Ids (as JSON text) of requests from the server to wait for, answered with `reply`. */
  serverRequest?: { id: string; reply: string; answersAfter: string[] };
}

const call = (id: string, name: string, args?: string) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${name}"${args ? `,"arguments":${args}` : ""}}}\n`;

const INIT = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"sampling":{}},"clientInfo":{"name":"seam-fixture-client","version":"1.0.0"}}}\n`;
const INITIALIZED = `{"jsonrpc":"2.0","method":"notifications/initialized"}\n`;

/**
 * MCP 2026-07-28: no initialize; every request carries its era and the
 * client's identity in _meta. `caps` are the client's capabilities for that
 * request (the tasks extension is declared where a task may come back).
 */
const TASKS_CAPS = `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`;
const meta = (caps = TASKS_CAPS) =>
  `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":${caps},"io.modelcontextprotocol/clientInfo":{"name":"seam-fixture-client","version":"1.0.0"}}`;
const req = (id: string, method: string, params = "", caps?: string) =>
  `{"jsonrpc":"2.0","id":${id},"method":"${method}","params":{${params}${params ? "," : ""}${meta(caps)}}}\n`;
const modernCall = (id: string, name: string, more = "", caps?: string) =>
  req(id, "tools/call", `"name":"${name}","arguments":{"n":1}${more}`, caps);
const task = (id: string, method: string, taskId: string, more = "") => req(id, method, `"taskId":"${taskId}"${more}`);
const RETRY = `,"inputResponses":{"ok":{"action":"accept","content":{"go":true}}},"requestState":"fixture-state-3"`;

/** One MiB of argument: a huge request that the server answers the instant it arrives. */
const HUGE = "y".repeat(1024 * 1024);

export const SCRIPTS: Record<string, Step[]> = {
  /** Everything awkward at once; see src/selftest/fixture-server.ts for what each tool does. */
  awkward: [
    { send: INIT, answers: ["0"] },
    { send: INITIALIZED },
    { send: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}\r\n`, answers: ["1"] },
    { send: "\n   \t\nthis is not json either\n" },
    { send: call("2", "echo", `{"text":"h\u00e9llo \u2028 \ud83d\udd12","n":[1,2.0,-0.0,1e400]}`), answers: ["2"] },
    { send: call(`"2"`, "echo", `{"text":"string id"}`), answers: [`"2"`] },
    { send: call("3", "big"), answers: ["3"] },
    { send: call("4", "fail", `{}`), answers: ["4"] },
    { send: call("5", "iserror"), answers: ["5"] },
    { send: call("6", "slow") + call("7", "echo", `{"text":"overtakes 6"}`), answers: ["6", "7"] },
    {
      send: call("8", "ask"),
      serverRequest: {
        id: "8",
        reply: `{"jsonrpc":"2.0","id":8,"result":{"role":"assistant","content":{"type":"text","text":"go on"},"model":"fixture"}}\n`,
        answersAfter: ["8"],
      },
    },
    { send: call("9", "echo", `{"text":"first 9"}`) + call("9", "echo", `{"text":"second 9"}`), answers: ["9", "9"] },
    {
      send: `[${call("10", "echo", `{"text":"batch a"}`).trim()},${call("11", "echo", `{"text":"batch b"}`).trim()}]\n`,
      answers: ["10", "11"],
    },
    { send: call("12", "echo", `{"text":"${HUGE}"}`), answers: ["12"] },
    { send: call("13", "wait") },
    {
      send: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":13,"reason":"user gave up"}}\n`,
      answers: ["13"],
    },
    { send: `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{"text":"no id"}}}\n` },
    { send: call("1.5", "echo", `{"text":"float id"}`), answers: ["1.5"] },
    { send: call("18446744073709551616", "echo", `{"text":"big id"}`), answers: ["18446744073709551616"] },
    { send: call("14", "input"), answers: ["14"] },
    { send: `{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"echo","argu\n` },
    { send: call("16", "never") },
    { send: `{"jsonrpc":"2.0","id":17,"method":"ping"}` },
  ],
  /** What `seam demo` shows: a few calls, one error, one left unanswered. */
  demo: [
    { send: INIT, answers: ["0"] },
    { send: INITIALIZED },
    { send: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n`, answers: ["1"] },
    { send: call("2", "echo", `{"text":"hello, seam"}`), answers: ["2"] },
    { send: call("3", "echo", `{"text":"r\u00e9sum\u00e9 \ud83d\udd12"}`), answers: ["3"] },
    { send: call("4", "fail", `{"path":"/nope"}`), answers: ["4"] },
    { send: call("5", "iserror"), answers: ["5"] },
    { send: call("6", "never") },
  ],
  /**
   * MCP 2026-07-28 against `seam fixture server`: discover, then calls with
   * _meta; a multi round-trip call in two rounds (3, 4) and one abandoned
   * after its first (5); a task polled three times around a tasks/update (6);
   * a cancelled task (10); a resultType nobody defined (13, declared with no
   * capabilities, so the client identity changes); a task still open at EOF (14).
   */
  modern: [
    { send: req("0", "server/discover", "", "{}"), answers: ["0"] },
    { send: req("1", "tools/list"), answers: ["1"] },
    { send: modernCall("2", "echo"), answers: ["2"] },
    { send: modernCall("3", "confirm"), answers: ["3"] },
    { send: modernCall("4", "confirm", RETRY), answers: ["4"] },
    { send: modernCall("5", "confirm"), answers: ["5"] },
    { send: modernCall("6", "job"), answers: ["6"] },
    { send: task("7", "tasks/get", "task-6"), answers: ["7"] },
    { send: task("8", "tasks/get", "task-6"), answers: ["8"] },
    {
      send: task(
        "9",
        "tasks/update",
        "task-6",
        `,"inputResponses":{"name":{"action":"accept","content":{"name":"Ada"}}}`,
      ),
      answers: ["9"],
    },
    { send: task(`"9b"`, "tasks/get", "task-6"), answers: [`"9b"`] },
    { send: modernCall("10", "job"), answers: ["10"] },
    { send: task("11", "tasks/cancel", "task-10"), answers: ["11"] },
    { send: task("12", "tasks/get", "task-10"), answers: ["12"] },
    { send: modernCall("13", "odd", "", "{}"), answers: ["13"] },
    { send: modernCall("14", "job"), answers: ["14"] },
    { send: task("15", "tasks/get", "task-14"), answers: ["15"] },
  ],
  /**
   * A 2026-07-28 client meets a server of an earlier revision (`seam fixture
   * server --legacy`): server/discover gets -32601, and it falls back to initialize.
   */
  fallback: [
    { send: req("0", "server/discover", "", "{}"), answers: ["0"] },
    { send: INIT.replace(`"id":0`, `"id":1`), answers: ["1"] },
    { send: INITIALIZED },
    { send: `{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n`, answers: ["2"] },
    { send: call("3", "echo", `{"text":"after the fallback"}`), answers: ["3"] },
  ],
};

/** How many tool_call rows each script must leave (17 valid ids + 2 invalid ones in awkward). */
export const SCRIPT_CALLS: Record<string, number> = { awkward: 19, demo: 5, modern: 8, fallback: 1 };

/** Every chunk the client wrote and read, kept as it goes so a failed run still has them. */
export interface ClientRun {
  sent: Uint8Array[];
  received: Uint8Array[];
}

const enc = new TextEncoder();
const dec = new TextDecoder();

/** How long a server may take to say its first bytes, beyond the wait for an answer. */
const STARTUP_MS = 20000;

/**
 * Runs `script` against a spawned server; rejects when an awaited answer does
 * not come within `timeoutMs`. When `blind`, it waits for nothing: every
 * step's bytes and every reply to a server request go out in script order,
 * then stdin closes and it reads to the end. The fixture server's output
 * depends only on the order of what it reads, so a blind run gets the whole
 * stream with no wait to time out: what a run needs whose stream is
 * corrupted on purpose, where an awaited answer might never be recognised.
 */
export async function runFixtureClient(
  child: Child,
  script: Step[],
  run: ClientRun,
  timeoutMs = 20000,
  blind = false,
): Promise<void> {
  const { sent, received } = run;
  const seen = new Map<string, number>();
  let wake = null as (() => void) | null;
  const note = (key: string) => {
    seen.set(key, (seen.get(key) ?? 0) + 1);
    wake?.();
  };
  const frames = new FrameSplitter(Number.MAX_SAFE_INTEGER, {
    frame(bytes) {
      let msg: Json;
      try {
        msg = parseJson(dec.decode(bytes));
      } catch {
        return;
      }
      for (const m of Array.isArray(msg) ? msg : [msg]) {
        if (!isObject(m)) continue;
        const id = idJson(getField(m, "id"));
        if (id === undefined) continue;
        note(`${getField(m, "method") === undefined ? "answer" : "request"} ${id}`);
      }
    },
    oversize() {},
  });
  /** When the server's first bytes came: the time it took to start is not the answer's to wait. */
  let firstBytesAt: number | undefined;
  const reading = (async () => {
    for await (const chunk of child.stdout) {
      firstBytesAt ??= Date.now();
      received.push(chunk.slice());
      frames.push(chunk);
    }
    frames.end();
    wake?.();
  })();
  let closed = false;
  void reading.then(() => (closed = true));

  const take = async (key: string) => {
    const asked = Date.now();
    while ((seen.get(key) ?? 0) === 0) {
      if (closed) throw new Error(`the server closed its stdout before ${key}`);
      // Until the server has said anything it may still be starting (on a busy machine, seconds).
      const from = firstBytesAt === undefined ? asked + STARTUP_MS : Math.max(asked, firstBytesAt);
      if (Date.now() > from + timeoutMs) throw new Error(`no ${key} within ${timeoutMs} ms`);
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, 50);
      });
      wake = null;
    }
    seen.set(key, seen.get(key)! - 1);
  };
  const write = async (s: string) => {
    const bytes = enc.encode(s);
    sent.push(bytes);
    const w = child.stdin.write(bytes);
    if (w) await w;
  };

  for (const step of script) {
    await write(step.send);
    if (blind) {
      if (step.serverRequest) await write(step.serverRequest.reply);
      continue;
    }
    for (const id of step.answers ?? []) await take(`answer ${id}`);
    if (step.serverRequest) {
      await take(`request ${step.serverRequest.id}`);
      await write(step.serverRequest.reply);
      for (const id of step.serverRequest.answersAfter) await take(`answer ${id}`);
    }
  }
  await child.stdin.end();
  await reading;
}
