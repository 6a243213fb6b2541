/**
 * Peak memory of one load, in a fresh process: `tsx bench/heap-probe.ts <file> <json|statebag>`
 * reads the stored text, collects garbage, then runs JSON.parse or deserializeSession once and
 * prints the growth of the process's peak resident set size (bytes) during that call.
 *
 * Peak RSS is what a server's memory limit sees; it includes the garbage a call makes before the
 * next collection, which a heap snapshot after the call would miss.
 */
import { readFileSync } from "node:fs";
import { deserializeSession } from "../src/runtime/persistence/serialization.js";

const [file, mode] = process.argv.slice(2);
const text = readFileSync(file, "utf8");
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --expose-gc");
gc();
// maxRSS is in KiB and never goes down: the growth during the call is its peak above the start.
const before = Math.max(process.resourceUsage().maxRSS * 1024, process.memoryUsage.rss());
const value = mode === "json" ? JSON.parse(text) : deserializeSession(text);
const after = process.resourceUsage().maxRSS * 1024;
process.stdout.write(JSON.stringify({ peakGrowth: after - before, keys: Object.keys(value).length }) + "\n");
