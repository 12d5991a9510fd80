/**
 * The flags of `seam wrap`: its command line (commands/wrap.ts), and what
 * install, uninstall and status read an installed entry's argv by.
 */
import type { WrapFlags } from "../src/install/entry.ts";
import { booleanFlags, valueFlags } from "./_args.ts";
import { RECORD_ARGS } from "./_record-flags.ts";

export const WRAP_ARGS = {
  ledger: {
    type: "string",
    description: "ledger file to append rows to (created if missing)",
    valueHint: "PATH",
    required: true,
  },
  server: {
    type: "string",
    description: "label for the server in every row (default: derived from the command)",
    valueHint: "NAME",
  },
  session: { type: "string", description: "session id (default: a fresh UUIDv4)", valueHint: "ID" },
  ...RECORD_ARGS,
  "strip-env": {
    type: "string",
    description: "remove this variable from the server's environment (repeatable; COMMITLAYER_API_KEY always is)",
    valueHint: "NAME",
  },
  "pass-env": {
    type: "string",
    description: "keep this variable in the server's environment although it would be removed (repeatable)",
    valueHint: "NAME",
  },
  "allow-foreign-ledger": {
    type: "boolean",
    description:
      "append to a ledger that is a symlink, belongs to another user or is writable by others (refused by default)",
  },
} as const;

/** The flags of WRAP_ARGS as typed on a command line: those that take a value, and those that do not. */
export const WRAP_FLAGS: WrapFlags = { valued: valueFlags(WRAP_ARGS), boolean: booleanFlags(WRAP_ARGS) };
