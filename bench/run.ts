/**
 * The benchmark suite: `npm run bench` (full) or `npm run bench -- --quick` (CI smoke run).
 *
 * Every case runs side by side with its baseline, in the same process and run, and reports
 * medians (bench/harness.ts). Results:
 *   full:  bench/results.json, and the performance table in docs/performance.md (between the bench markers)
 *   quick: bench/results.quick.json only (fewer samples: a smoke test, not numbers to publish)
 *
 * Options: --quick, --only <prefix>[,<prefix>...] (e.g. --only load,save), --no-readme.
 * Exit 1 when a case failed to run (a server that is not reachable is skipped, not a failure).
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { attachmentCases } from "./cases/attachments.js";
import { blobCases } from "./cases/blobs.js";
import { bulkMigrateCases } from "./cases/bulk-migrate.js";
import { concurrencyCases } from "./cases/concurrency.js";
import { encryptionCases } from "./cases/encryption.js";
import { forkCases } from "./cases/fork.js";
import { genCases } from "./cases/gen.js";
import { httpTurnCases } from "./cases/http-turn.js";
import { langgraphCases } from "./cases/langgraph.js";
import { listingCases } from "./cases/listing.js";
import { migrationCases } from "./cases/migrations.js";
import { openAIAgentsCases } from "./cases/openai-agents.js";
import { peerCases } from "./cases/peers.js";
import { serializationCases } from "./cases/serialization.js";
import { storeCases } from "./cases/stores.js";
import { storedLogCases } from "./cases/storedlog.js";
import { streamCases } from "./cases/streams.js";
import { turnCases } from "./cases/turns.js";
import {
  isSkipped,
  skipped,
  type BenchContext,
  type CaseOutcome,
  type CaseResult,
  type SkippedCase,
} from "./harness.js";
import { machine } from "./machine.js";
import { updateReadme, type BenchResults } from "./render-readme.js";

const args = process.argv.slice(2);
const quick = args.includes("--quick");
const onlyArg = args.indexOf("--only") >= 0 ? args[args.indexOf("--only") + 1] : undefined;
const only = onlyArg?.split(",").filter(Boolean);
const root = fileURLToPath(new URL("../", import.meta.url));

const ctx: BenchContext = {
  quick,
  fast: quick ? { samples: 9, warmup: 3, minSampleMs: 15 } : { samples: 31, warmup: 10, minSampleMs: 50 },
  slowSamples: quick ? 1 : 5,
  root,
  log: (line) => process.stderr.write(`  ${line}\n`),
};

interface Group {
  /** Case names this group produces (for --only and for reporting a failed group). */
  cases: string[];
  run(ctx: BenchContext): Promise<CaseOutcome[]>;
}

const groups: Group[] = [
  {
    cases: [
      "load.10",
      "load.1000",
      "load.10000",
      "load.100000",
      "load.100000.peak",
      "save.1000",
      "save.validated.1000",
      "validate.1000",
    ],
    run: serializationCases,
  },
  { cases: ["migrate.lazy5.1000", "migrate.lazy5rewrite.1000"], run: migrationCases },
  { cases: ["gen.cold", "gen.noop"], run: genCases },
  {
    cases: ["store.sqlite.saveload", "store.sqlite-better.saveload", "store.postgres.saveload", "store.redis.saveload"],
    run: storeCases,
  },
  { cases: ["store.sqlite.saveload.encrypted"], run: encryptionCases },
  { cases: ["attach.sqlite.16x1MiB", "attach.sqlite.16x64KiB"], run: attachmentCases },
  { cases: ["migrate.bulk.sqlite", "migrate.bulk.postgres", "migrate.bulk.redis"], run: bulkMigrateCases },
  { cases: ["turn.sqlite.1000", "turn.postgres.1000", "turn.redis.1000", "turn.sqlite.1000.cold"], run: turnCases },
  {
    cases: [
      "http.turn.sqlite.1000",
      "http.turn.sqlite.1000.idle",
      "http.turn.postgres.1000",
      "http.turn.postgres.1000.idle",
      "http.turn.redis.1000",
      "http.turn.redis.1000.idle",
    ],
    run: httpTurnCases,
  },
  { cases: ["fork.sqlite.1000", "fork.sqlite.100000"], run: forkCases },
  {
    cases: [
      "turn.storedlog.1000.windowed",
      "turn.storedlog.100000.windowed",
      "turn.storedlog.1000.warm",
      "turn.storedlog.100000.warm",
      "turn.storedlog.100000.full",
    ],
    run: storedLogCases,
  },
  {
    cases: [
      "stream.sqlite.append",
      "stream.sqlite.first.1000",
      "stream.postgres.append",
      "stream.postgres.first.1000",
      "stream.redis.append",
      "stream.redis.first.1000",
    ],
    run: streamCases,
  },
  {
    cases: [
      "blob.sqlite.put.1mb",
      "blob.sqlite.get.1mb",
      "blob.postgres.put.1mb",
      "blob.postgres.get.1mb",
      "blob.redis.put.1mb",
      "blob.redis.get.1mb",
      "blob.folder.put.1mb",
      "blob.folder.get.1mb",
    ],
    run: blobCases,
  },
  {
    cases: ["concurrency.sqlite.8writers", "concurrency.postgres.8writers", "concurrency.redis.8writers"],
    run: concurrencyCases,
  },
  {
    cases: [
      "listing.sqlite.first",
      "listing.sqlite.later",
      "listing.postgres.first",
      "listing.postgres.later",
      "listing.redis.first",
      "listing.redis.later",
      "listing.redis-cluster.first",
      "listing.redis-cluster.later",
    ],
    run: listingCases,
  },
  { cases: ["openai-agents.sqlite.turns10", "openai-agents.sqlite.turns10.raw"], run: openAIAgentsCases },
  {
    cases: ["langgraph.memory.steps10", "langgraph.sqlite.steps10", "langgraph.postgres.steps10"],
    run: langgraphCases,
  },
  {
    cases: [
      "peer.openai-agents.load.1000",
      "peer.openai-agents.fromString.1000",
      "peer.langgraph.sqlite.saveload",
      "peer.langgraph.postgres.saveload",
    ],
    run: peerCases,
  },
];

function selected(name: string): boolean {
  return !only || only.some((prefix) => name.startsWith(prefix));
}

function table(cases: readonly CaseResult[]): string {
  const rows = [
    ["case", "ours ms", "baseline", "baseline ms", "ratio"],
    ...cases.map((c) => [c.case, String(c.ours_ms), c.baseline, String(c.baseline_ms), `${c.ratio}x`]),
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const right = new Set([1, 3, 4]);
  const line = (r: string[]) =>
    r.map((cell, i) => (right.has(i) ? cell.padStart(widths[i]) : cell.padEnd(widths[i]))).join("  ");
  return [line(rows[0]), widths.map((w) => "-".repeat(w)).join("  "), ...rows.slice(1).map(line)].join("\n");
}

async function main(): Promise<number> {
  const started = Date.now();
  const info = machine();
  process.stderr.write(
    `statebag bench (${quick ? "quick" : "full"}) on ${info.cpu}, ${info.cores} cores, Node ${info.node}\n`,
  );
  const cases: CaseResult[] = [];
  const skippedCases: SkippedCase[] = [];
  let failed = false;
  for (const group of groups) {
    if (!group.cases.some(selected)) continue;
    try {
      for (const outcome of await group.run(ctx)) {
        if (!selected(outcome.case)) continue;
        if (isSkipped(outcome)) skippedCases.push(outcome);
        else cases.push(outcome);
      }
    } catch (error) {
      failed = true;
      const reason = `failed: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`;
      process.stderr.write(`  ${group.cases.join(", ")}: ${reason}\n`);
      if (process.env.STATEBAG_DEBUG && error instanceof Error) process.stderr.write(`${error.stack}\n`);
      for (const name of group.cases.filter(selected)) skippedCases.push(skipped(name, reason));
    }
  }

  const results: BenchResults & { mode: "full" | "quick"; date: string; skipped: SkippedCase[] } = {
    machine: info,
    cases,
    skipped: skippedCases,
    mode: quick ? "quick" : "full",
    date: new Date().toISOString(),
  };
  process.stdout.write(`\n${table(cases)}\n`);
  for (const skippedCase of skippedCases) process.stdout.write(`skipped ${skippedCase.case}: ${skippedCase.reason}\n`);

  const file = quick ? "bench/results.quick.json" : "bench/results.json";
  // A partial run (--only) never replaces the published results.
  const target = only ? file.replace(/\.json$/, ".partial.json") : file;
  writeFileSync(new URL(target, `file://${root}`), JSON.stringify(results, null, 2) + "\n");
  process.stdout.write(`\nwrote ${target}`);
  if (!quick && !only && !args.includes("--no-readme")) {
    const changed = updateReadme(`${root}docs/performance.md`, results);
    process.stdout.write(changed ? "; updated the docs/performance.md table" : "");
  }
  process.stdout.write(` (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
  return failed ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
