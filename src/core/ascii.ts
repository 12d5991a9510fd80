/**
 * The ASCII bytes seam's byte-level readers and writers look for, by name:
 * the one table, so that no reader spells its own.
 */
export const TAB = 0x09;
export const LF = 0x0a;
export const CR = 0x0d;
export const SPACE = 0x20;
export const QUOTE = 0x22;
export const COMMA = 0x2c;
export const DOT = 0x2e;
export const COLON = 0x3a;
export const LT = 0x3c;
export const OPEN_BRACKET = 0x5b;
export const BACKSLASH = 0x5c;
export const CLOSE_BRACKET = 0x5d;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
