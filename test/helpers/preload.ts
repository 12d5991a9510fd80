/**
 * Loaded before every test file (bunfig.toml, [test] preload): once a file's
 * tests have run, the folders it made with tempDir are removed, so a suite
 * run leaves nothing behind in the system's temporary folder. A hook here
 * runs after each file's own (bun test runs it per file under --parallel).
 */
import { afterAll } from "bun:test";
import { removeTempDirs } from "./proc.ts";

afterAll(removeTempDirs);
