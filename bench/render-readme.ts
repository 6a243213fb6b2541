/**
 * Renders the performance table from bench results and writes it between
 * `<!-- bench:start -->` and `<!-- bench:end -->` in docs/performance.md.
 *
 *   npx tsx bench/render-readme.ts [bench/results.json]     (npm run bench does this itself)
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { CaseResult, SkippedCase } from "./harness.js";
import type { MachineInfo } from "./machine.js";

export interface BenchResults {
  machine: MachineInfo;
  cases: CaseResult[];
  skipped?: SkippedCase[];
  mode?: "full" | "quick";
  date?: string;
}

export const START = "<!-- bench:start -->";
export const END = "<!-- bench:end -->";

/** What each case measures, for readers of the table. */
const WHAT: Record<string, string> = {
  "load.10": "load a 10-message session (parse + validate)",
  "load.1000": "load a 1,000-message session",
  "load.10000": "load a 10,000-message session",
  "load.100000": "load a 100,000-message session (linear in size?)",
  "load.100000.peak": "peak RSS growth of that load, in MiB (fresh process each)",
  "save.1000": "save a 1,000-message session (stringify, no validation)",
  "save.validated.1000": "save a 1,000-message session as stores do (validate + stringify)",
  "store.sqlite.saveload.encrypted":
    "a 1,000/1,001-message session (in turn) saved and loaded through the encrypting codecs (AES-256-GCM) vs the same store unencrypted",
  "validate.1000": "validate a 1,000-message session",
  "migrate.lazy5.1000": "load a 1,000-message session through a 5-step migration chain (state-level steps)",
  "migrate.lazy5rewrite.1000": "the same, but four of the five steps rewrite all 1,000 messages",
  "gen.cold": "`npm run gen`, nothing cached (new process)",
  "gen.noop": "`npm run gen`, nothing changed (new process)",
  "openai-agents.sqlite.turns10":
    "a 10-turn OpenAI Agents SDK conversation (getItems + addItems per turn) on StatebagSession over SQLite",
  "openai-agents.sqlite.turns10.raw": "the same conversation: StatebagSession vs the raw SQLite driver",
  "peer.openai-agents.load.1000": "restore the same 1,000-message conversation: statebag vs the OpenAI Agents SDK",
  "peer.openai-agents.fromString.1000": "the OpenAI Agents SDK's restore against JSON.parse of its own text",
};

function describe(name: string): string {
  if (WHAT[name]) return WHAT[name];
  const store = /^store\.([\w-]+)\.saveload$/.exec(name);
  const storeNames: Record<string, string> = {
    sqlite: "sqlite (node:sqlite)",
    "sqlite-better": "sqlite (better-sqlite3)",
  };
  if (store) return `${storeNames[store[1]] ?? store[1]}: save + update + load 1,000 sessions of 20 messages`;
  const bulk = /^migrate\.bulk\.(\w+)$/.exec(name);
  if (bulk) return `${bulk[1]}: migrate 1,000 stored sessions (history v1 -> v2)`;
  const turn = /^turn\.(\w+)\.1000$/.exec(name);
  if (turn)
    return `${turn[1]}: one turn (withSession, the bench model's own time out) on a stored 1,000-message session`;
  const http = /^http\.turn\.(\w+)\.1000$/.exec(name);
  if (http)
    return `${http[1]}: one chat turn through createChatHandler (POST /chat, the UI stream read to its end, the bench model's own time out) on a stored 1,000-message chat`;
  const httpIdle = /^http\.turn\.(\w+)\.1000\.idle$/.exec(name);
  if (httpIdle)
    return `${httpIdle[1]}: the same turns timed on to handler.idle() (the stream's last append and finish, after the response's end, included)`;
  const storedlog = /^turn\.storedlog\.(\d+)\.(windowed|warm|full)$/.exec(name);
  if (storedlog) {
    const how = {
      windowed: "reading a window of the log",
      warm: "a warm process reading only what was appended",
      full: "reading the whole log",
    }[storedlog[2]]!;
    return `one turn on a stored ${Number(storedlog[1]).toLocaleString("en-US")}-message log, ${how}`;
  }
  const listing = /^listing\.([\w-]+)\.(first|later)$/.exec(name);
  if (listing)
    return `${listing[1]}: one page of one owner's 50 newest sessions (${listing[2] === "first" ? "the first page" : "page 11, by cursor"})`;
  const writers = /^concurrency\.(\w+)\.8writers$/.exec(name);
  if (writers) return `${writers[1]}: 8 concurrent writers on different sessions, per get + compare-and-swap`;
  const langgraph = /^peer\.langgraph\.(\w+)\.saveload$/.exec(name);
  if (langgraph)
    return `${langgraph[1]}: 1,000 conversations of 20 messages stored, updated, read: statebag vs LangGraph's checkpoint saver`;
  return "";
}

function ms(n: number): string {
  if (n >= 100) return n.toFixed(0);
  if (n >= 1) return n.toFixed(2);
  return n.toPrecision(3);
}

/** Skipped cases grouped by reason: "`a`, `b` (reason); `c` (other reason)". */
function skippedText(skipped: readonly SkippedCase[]): string {
  const byReason = new Map<string, string[]>();
  for (const skip of skipped) byReason.set(skip.reason, [...(byReason.get(skip.reason) ?? []), `\`${skip.case}\``]);
  return [...byReason].map(([reason, cases]) => `${cases.join(", ")} (${reason})`).join("; ");
}

/** The Markdown block (without the markers). */
export function renderTable(results: BenchResults): string {
  const machine = results.machine;
  const lines = [
    "| case | what | statebag (ms) | baseline | baseline (ms) | ratio |",
    "| --- | --- | ---: | --- | ---: | ---: |",
    ...results.cases.map(
      (c) =>
        `| \`${c.case}\` | ${describe(c.case)} | ${ms(c.ours_ms)} | ${c.baseline} | ${ms(c.baseline_ms)} | ${c.ratio.toFixed(2)}x |`,
    ),
  ];
  const skipped = results.skipped ?? [];
  return [
    "",
    `Medians, measured ${results.date ? results.date.slice(0, 10) : ""} on ${machine.cpu} (${machine.cores} cores, ${machine.memory_gb} GB), ${machine.os}, Node ${machine.node}${results.mode === "quick" ? " (quick mode)" : ""}.`,
    "`ratio` = statebag / baseline (below 1: statebag is faster). Each case and its baseline ran side by side in the same process and run.",
    "",
    ...lines,
    ...(skipped.length ? ["", `Not measured in this run: ${skippedText(skipped)}.`] : []),
    "",
  ].join("\n");
}

/** Replaces the marked section of `readme` (text); throws when the markers are missing. */
export function replaceSection(readme: string, table: string): string {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) throw new Error(`docs/performance.md has no ${START} ... ${END} section`);
  return readme.slice(0, start + START.length) + "\n" + table + "\n" + readme.slice(end);
}

export function updateReadme(readmePath: string, results: BenchResults): boolean {
  const before = readFileSync(readmePath, "utf8");
  const after = replaceSection(before, renderTable(results));
  if (after !== before) writeFileSync(readmePath, after);
  return after !== before;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = new URL("../", import.meta.url);
  const file = process.argv[2] ?? fileURLToPath(new URL("bench/results.json", root));
  const results = JSON.parse(readFileSync(file, "utf8")) as BenchResults;
  const changed = updateReadme(fileURLToPath(new URL("docs/performance.md", root)), results);
  process.stdout.write(changed ? "docs/performance.md table updated\n" : "docs/performance.md table already current\n");
}
