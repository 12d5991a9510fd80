/**
 * One descriptor for every ledger session of `seam proxy` that writes the
 * same file. Each MCP session has a ledger writer of its own, and each held a
 * descriptor of its own until the session ended: a client that opens sessions
 * and never ends them (or many clients at once) ran the process out of
 * descriptors (EMFILE), and with them out of sockets for the traffic itself.
 *
 * Each open still goes through `open`, with its checks (src/runtime/file.ts):
 * a link planted since is refused as before, and a ledger renamed away and
 * created anew is another file, with a descriptor of its own. Only a handle
 * to a file already open is closed again, and the open one used instead.
 */
import type { AppendFile } from "../runtime/types.ts";

export type OpenAppend = (path: string) => Promise<AppendFile>;

export function sharingOpen(open: OpenAppend): OpenAppend {
  const files = new Map<string, { file: AppendFile; users: number }>();
  return async (path) => {
    const fresh = await open(path);
    const id = fresh.identity?.();
    if (id === undefined) return fresh;
    let entry = files.get(id);
    // Counted before anything is awaited: a session ending meanwhile must not close the file this one shares.
    if (entry === undefined) {
      entry = { file: fresh, users: 1 };
      files.set(id, entry);
    } else {
      entry.users++;
      await fresh.close().catch(() => {});
    }
    const shared = entry;
    let closed = false;
    return {
      write: (bytes) => shared.file.write(bytes),
      sync: () => shared.file.sync(),
      size: () => shared.file.size(),
      readAt: (position, length) => shared.file.readAt(position, length),
      truncate: (size) => shared.file.truncate(size),
      identity: () => id,
      async close() {
        if (closed) return;
        closed = true;
        if (--shared.users > 0) return;
        if (files.get(id) === shared) files.delete(id);
        await shared.file.close();
      },
    };
  };
}
