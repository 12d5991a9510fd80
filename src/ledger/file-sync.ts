/**
 * When the writer's rows reach the disk (--fsync): `always` before any row
 * resolves; `batch` at the latest `batchMs` after a write, and at close;
 * `never` not at all (the OS decides). Rows the writer appends durably are
 * fsynced whatever the policy (src/ledger/ledger-writer.ts).
 */
import type { AppendFile } from "../runtime/types.ts";

export type FsyncPolicy = "batch" | "always" | "never";
export const FSYNC_POLICIES: readonly FsyncPolicy[] = ["batch", "always", "never"];

/** The fsyncs of one ledger file: one at a time (a later one joins it), or one timed after a write. */
export class FileSync {
  /** Bytes were written since the last fsync began. */
  unsynced = false;
  private syncTimer: ReturnType<typeof setTimeout> | null = null;
  private syncing: Promise<boolean> | null = null;

  constructor(
    /** The file, or null once it is closed or could not be opened. */
    private readonly file: () => AppendFile | null,
    private readonly batchMs: number,
    /** An fsync failed. */
    private readonly failed: (err: unknown) => void,
  ) {}

  /** fsyncs now (joining one already running); false if it failed. */
  sync(): Promise<boolean> {
    if (this.syncTimer) {
      clearTimeout(this.syncTimer);
      this.syncTimer = null;
    }
    const file = this.file();
    if (file === null) return Promise.resolve(false);
    const run = async (): Promise<boolean> => {
      if (this.syncing) await this.syncing;
      this.unsynced = false;
      try {
        await file.sync();
        return true;
      } catch (e) {
        this.unsynced = true;
        this.failed(e);
        return false;
      }
    };
    const p = run().finally(() => {
      if (this.syncing === p) this.syncing = null;
    });
    this.syncing = p;
    return p;
  }

  /** An fsync batchMs from now, unless one is timed already. */
  schedule(): void {
    if (this.syncTimer) return;
    this.syncTimer = setTimeout(() => {
      this.syncTimer = null;
      if (this.unsynced) void this.sync();
    }, this.batchMs);
    (this.syncTimer as { unref?: () => void }).unref?.();
  }

  /** Before the file closes: no timed fsync; under `batch` (`last`) a last one when bytes are unsynced; none left running. */
  async close(last: boolean): Promise<void> {
    if (this.syncTimer) {
      clearTimeout(this.syncTimer);
      this.syncTimer = null;
    }
    if (this.unsynced && last) await this.sync();
    if (this.syncing) await this.syncing;
  }
}
