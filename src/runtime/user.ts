/**
 * This process's user id where user ids mean something: undefined on
 * Windows, whatever the runtime offers there (Node has no process.getuid on
 * Windows; a runtime that fills one in cannot name a file's owner, whose
 * stat uid is always 0 there), so every owner check is skipped on Windows.
 */
export function userId(platform: NodeJS.Platform = process.platform): number | undefined {
  return platform === "win32" ? undefined : process.getuid?.();
}
