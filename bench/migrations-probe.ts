/**
 * Migration probes: functions the bench suite can call (bench/run.ts), and a command line:
 *
 * - `probeLazyMigration()` -> `migrate.lazy5.1000`: loading a 1,000-message session whose history
 *   state is five versions old (`probe.History` v1, latest v6; every step rewrites every message)
 *   vs loading the same session stored at v6 (`load.1000`, no migration). Target: <= 1.25x.
 * - `probeBulkMigration(kind)` -> `migrate.bulk.<kind>`: `migrateStore` over N sessions stored by
 *   the previous release (InMemoryChatHistoryState v1 + RollingSummaryState v1) vs a raw
 *   read-modify-write loop over the same kind of store: scan pages of stored text, `JSON.parse`,
 *   the same two migrations applied by hand, `JSON.stringify`, compare-and-swap `save` (a
 *   pass-through codec: no validation, no migration engine). Both sides start from identical
 *   freshly seeded locations; the order alternates per round; the median is reported.
 *   Target: ours >= 50% of raw throughput.
 * - `probeBulkMemory()`: peak memory of `migrateStore` over 10,000 and 100,000 SQLite sessions,
 *   each in a fresh child process: heap and RSS sampled every 250 sessions, live heap (after a
 *   forced full GC) every 5,000. Target: peak at 100,000 within 1.2x of the peak at 10,000
 *   (memory flat in the store's size); judged on live heap and RSS, since the raw heap peak
 *   mostly measures how long V8 lets garbage pile up before a full collection.
 *
 *   npx tsx bench/migrations-probe.ts [lazy] [bulk [sqlite|postgres|redis ...]] [memory] [--sessions N] [--messages M] [--rounds R]
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { defineMigration } from "../src/runtime/persistence/migrations.js";
import { TypeRegistry, defaultRegistry } from "../src/runtime/persistence/registry.js";
import { deserializeSession } from "../src/runtime/persistence/serialization.js";
import type { AgentSession } from "../src/runtime/core/session.js";
import { migrateStore } from "../src/runtime/stores/migrate.js";
import { openStore } from "../src/runtime/stores/open.js";
import { PostgresSessionStore } from "../src/runtime/stores/postgres.js";
import { RedisSessionStore } from "../src/runtime/stores/redis.js";
import type { SessionCodec, SessionStore } from "../src/runtime/stores/types.js";
import { compare, median } from "./harness.js";
import { HISTORY_KEY, makeSession } from "./sessions.js";
import { PG_URL, REDIS_URL } from "./stores-probe.js";

type Msg = Record<string, unknown>;
const envelope = (session: unknown) => JSON.stringify({ format: "statebag.session", formatVersion: 1, session });

// -------------------------------------------------------------------------------------------------
// migrate.lazy5.1000

const each = (v: Msg, key: string, f: (m: Msg) => Msg) => ({ ...v, [key]: (v[key] as Msg[]).map(f) });
/** In place: moves `m[from]` to `m[to]` (through `f`). */
const move = (m: Msg, from: string, to: string, f: (x: unknown) => unknown = (x) => x) => {
  if (m[from] !== undefined) m[to] = f(m[from]);
  delete m[from];
};

/**
 * The five steps v1 -> v6 (each rewrites every message: a rename, a type change, a default):
 * - `copy`: each step builds new objects (`{ ...rest }`), the usual functional style;
 * - `in-place`: each step edits the value it is given (allowed: `up` gets a private copy, or a
 *   value freshly parsed from the stored text).
 */
export type StepStyle = "copy" | "in-place";

/** `probe.History` v6 (the built-in history's message schema) and its five steps from v1. */
export function lazyRegistry(style: StepStyle = "copy"): TypeRegistry {
  const registry = TypeRegistry.compose(defaultRegistry());
  const history = defaultRegistry().get("InMemoryChatHistoryState")!.schema as { properties: { messages: object } };
  registry.register({
    $type: "probe.History",
    version: 6,
    schema: { type: "object", properties: { messages: history.properties.messages }, required: ["messages"] },
    slots: [{ path: ["messages", "*", "contents", "*"], family: "AIContent" }],
    open: true,
  });
  const iso = (t: unknown) => new Date(t as number).toISOString();
  const steps =
    style === "copy"
      ? [
          (v: Msg) => {
            const { items, ...rest } = v;
            return { ...rest, messages: items };
          },
          (v: Msg) => each(v, "messages", ({ author, ...m }) => (author === undefined ? m : { ...m, authorName: author })),
          (v: Msg) => each(v, "messages", ({ time, ...m }) => (time === undefined ? m : { ...m, createdAt: iso(time) })),
          (v: Msg) => each(v, "messages", (m) => ({ ...m, contents: m.contents ?? [] })),
          (v: Msg) => each(v, "messages", ({ id, ...m }) => (id === undefined ? m : { ...m, messageId: id })),
        ]
      : [
          (v: Msg) => (move(v, "items", "messages"), v),
          (v: Msg) => ((v.messages as Msg[]).forEach((m) => move(m, "author", "authorName")), v),
          (v: Msg) => ((v.messages as Msg[]).forEach((m) => move(m, "time", "createdAt", iso)), v),
          (v: Msg) => ((v.messages as Msg[]).forEach((m) => (m.contents ??= [])), v),
          (v: Msg) => ((v.messages as Msg[]).forEach((m) => move(m, "id", "messageId")), v),
        ];
  registry.addMigration(...steps.map((up, i) => defineMigration({ type: "probe.History", from: i + 1, to: i + 2, up })));
  return registry;
}

/** The same session stored at v6 (current) and as v1 stored it (5 versions back). */
export function lazyDocuments(messages = 1000): { current: string; old: string } {
  const base = makeSession({ messages });
  const list = (base.stateBag[HISTORY_KEY] as unknown as { messages: Msg[] }).messages;
  const current = { ...base, stateBag: { history: { $type: "probe.History", $version: 6, messages: list } } };
  const v1 = list.map(({ authorName, createdAt, messageId, ...m }) => ({
    ...m,
    ...(authorName !== undefined ? { author: authorName } : {}),
    ...(createdAt !== undefined ? { time: Date.parse(createdAt as string) } : {}),
    ...(messageId !== undefined ? { id: messageId } : {}),
  }));
  return { current: envelope(current), old: envelope({ ...base, stateBag: { history: { $type: "probe.History", items: v1 } } }) };
}

export interface LazyProbeResult {
  case: string;
  baseline: string;
  /** Median ms per load, migrating 5 versions. */
  ours_ms: number;
  /** Median ms per load of the current document. */
  baseline_ms: number;
  ratio: number;
  target: number;
  ok: boolean;
}

export async function probeLazyMigration(options: { messages?: number; samples?: number; warmup?: number; style?: StepStyle } = {}): Promise<LazyProbeResult> {
  const messages = options.messages ?? 1000;
  const style = options.style ?? "copy";
  const registry = lazyRegistry(style);
  const { current, old } = lazyDocuments(messages);
  // The migrated session must be the current one (timestamps compared as instants).
  const a = deserializeSession(old, { registry, strict: true });
  const b = deserializeSession(current, { registry, strict: true });
  const norm = (s: AgentSession) => JSON.stringify(s, (k, v) => (k === "createdAt" ? Date.parse(v) : v && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([x], [y]) => (x < y ? -1 : 1))) : v));
  if (norm(a) !== norm(b)) throw new Error("migrate.lazy5: the migrated session differs from the current one");
  const timing = await compare(
    () => deserializeSession(old, { registry }),
    () => deserializeSession(current, { registry }),
    { samples: options.samples ?? 30, warmup: options.warmup ?? 5, minSampleMs: 0 },
  );
  const ratio = timing.ours_ms / timing.baseline_ms;
  return { case: `migrate.lazy5.${messages}${style === "copy" ? "" : `.${style}`}`, baseline: `load.${messages} (no migration)`, ...timing, ratio, target: 1.25, ok: ratio <= 1.25 };
}

// -------------------------------------------------------------------------------------------------
// migrate.bulk.<store>

export type BulkKind = "sqlite" | "postgres" | "redis";

export interface BulkProbeOptions {
  sessions?: number;
  messages?: number;
  batchSize?: number;
  rounds?: number;
  /** Server URL for postgres/redis (defaults: the local test servers; env STATEBAG_BENCH_PG_URL / STATEBAG_BENCH_REDIS_URL). */
  url?: string;
}

export interface BulkProbeResult {
  case: string;
  kind: BulkKind;
  sessions: number;
  messages: number;
  /** Sessions per second, median over rounds. */
  ours_per_s: number;
  raw_per_s: number;
  /** ours / raw throughput. */
  ratio: number;
  target: number;
  ok: boolean;
}

/** Reads and writes stored text as it is: the raw side's codec, and the seeding codec. */
const passThrough: SessionCodec = {
  serialize: (session) => envelope(session),
  deserialize: (text) => (JSON.parse(text) as { session: AgentSession }).session,
};

/** A session as the previous release stored it: history v1, rolling summary v1. */
function storedV1(i: number, messages: number): AgentSession {
  const s = makeSession({ messages, seed: 1000 + i, id: `mig-${String(i).padStart(7, "0")}` });
  const list = (s.stateBag[HISTORY_KEY] as unknown as { messages: Msg[] }).messages;
  return {
    ...s,
    stateBag: {
      [HISTORY_KEY]: { $type: "InMemoryChatHistoryState", messages: list } as never,
      "statebag.rollingSummary": { $type: "RollingSummaryState", summary: "The user asked about the weather.", recentMessages: list.slice(-4), turns: Math.floor(messages / 2) } as never,
    },
  };
}

/** The raw side: what a hand-written migration over the same store does (no validation, no engine). */
async function rawMigrate(store: SessionStore, batchSize: number): Promise<number> {
  let cursor: string | undefined;
  let done = 0;
  do {
    const page = await store.scan({ cursor, limit: batchSize, includeText: true });
    for (const item of page.items) {
      const session = (JSON.parse(item.text!) as { session: AgentSession }).session;
      const bag = session.stateBag as Record<string, Msg>;
      const h = bag[HISTORY_KEY];
      if (h && (h.$version ?? 1) === 1) bag[HISTORY_KEY] = { ...h, $version: 2, droppedMessageCount: 0 };
      const r = bag["statebag.rollingSummary"];
      if (r && (r.$version ?? 1) === 1) {
        const { turns, ...rest } = r;
        bag["statebag.rollingSummary"] = { ...rest, $version: 2, turnCount: turns };
      }
      await store.save(session, { expectedRevision: item.revision });
      done++;
    }
    cursor = page.cursor;
  } while (cursor !== undefined);
  return done;
}

interface Location {
  url: string;
  cleanup: () => Promise<void>;
}

async function freshLocation(kind: BulkKind, base?: string): Promise<Location> {
  const name = `mig_${process.pid.toString(36)}_${randomBytes(4).toString("hex")}`;
  if (kind === "sqlite") {
    const dir = mkdtempSync(join(tmpdir(), "statebag-migprobe-"));
    return { url: `sqlite:${join(dir, "s.db")}`, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  if (kind === "postgres") {
    const url = base ?? PG_URL;
    const admin = new PostgresSessionStore({ connectionString: url, schema: name, max: 1 });
    await admin.setup();
    return {
      url: `${url}${url.includes("?") ? "&" : "?"}schema=${name}`,
      cleanup: async () => {
        await admin.dropSchema();
        await admin.close();
      },
    };
  }
  const url = base ?? REDIS_URL;
  const prefix = `migprobe:${name}:`;
  return {
    url: `${url}${url.includes("?") ? "&" : "?"}prefix=${encodeURIComponent(prefix)}`,
    cleanup: async () => {
      const admin = new RedisSessionStore({ url, prefix });
      await admin.deleteAll();
      await admin.close();
    },
  };
}

async function seed(url: string, sessions: number, messages: number): Promise<void> {
  const store = await openStore(url, { codec: passThrough });
  try {
    for (let i = 0; i < sessions; i++) await store.save(storedV1(i, messages), { expectedRevision: null });
  } finally {
    await store.close();
  }
}

export async function probeBulkMigration(kind: BulkKind, options: BulkProbeOptions = {}): Promise<BulkProbeResult> {
  const sessions = options.sessions ?? 1000;
  const messages = options.messages ?? 20;
  const batchSize = options.batchSize ?? 100;
  const rounds = options.rounds ?? 3;
  const ours: number[] = [];
  const raw: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const sides: [string, (url: string) => Promise<number>, number[]][] = [
      [
        "ours",
        async (url) => {
          const store = await openStore(url);
          try {
            const report = await migrateStore(store, { batchSize });
            if (report.migrated !== sessions) throw new Error(`migrate.bulk.${kind}: migrated ${report.migrated} of ${sessions} (${report.failed[0]?.message ?? ""})`);
            return report.migrated;
          } finally {
            await store.close();
          }
        },
        ours,
      ],
      [
        "raw",
        async (url) => {
          const store = await openStore(url, { codec: passThrough });
          try {
            return await rawMigrate(store, batchSize);
          } finally {
            await store.close();
          }
        },
        raw,
      ],
    ];
    if (round % 2 === 1) sides.reverse();
    for (const [, run, out] of sides) {
      const location = await freshLocation(kind, options.url);
      try {
        await seed(location.url, sessions, messages);
        const start = performance.now();
        const n = await run(location.url);
        out.push((n / (performance.now() - start)) * 1000);
      } finally {
        await location.cleanup();
      }
    }
  }
  const oursPerS = median(ours);
  const rawPerS = median(raw);
  const ratio = oursPerS / rawPerS;
  return { case: `migrate.bulk.${kind}`, kind, sessions, messages, ours_per_s: oursPerS, raw_per_s: rawPerS, ratio, target: 0.5, ok: ratio >= 0.5 };
}

// -------------------------------------------------------------------------------------------------
// Peak memory, 10,000 vs 100,000 sessions (SQLite), one child process per size.

export interface MemoryProbeResult {
  /**
   * Per size: peak heap and RSS sampled every 250 sessions as the run goes (includes garbage not
   * yet collected), and the live heap (after a full GC) sampled every 5,000 sessions.
   */
  sizes: { sessions: number; peakHeapMB: number; peakRssMB: number; peakLiveHeapMB: number; seconds: number; migrated: number }[];
  /** Peak heap at the largest size / at the smallest. */
  heapRatio: number;
  rssRatio: number;
  /** Peak live heap (after GC) at the largest size / at the smallest: the retained memory. */
  liveHeapRatio: number;
  target: number;
  ok: boolean;
}

const SELF = fileURLToPath(import.meta.url);

function child(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ["--expose-gc", "--import", "tsx", SELF, ...args], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    p.stdout.on("data", (c: Buffer) => (out += c.toString()));
    p.on("error", reject);
    p.on("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`memory probe child exited ${code}`))));
  });
}

export async function probeBulkMemory(options: { sizes?: number[]; messages?: number; batchSize?: number } = {}): Promise<MemoryProbeResult> {
  const sizes = options.sizes ?? [10_000, 100_000];
  const messages = options.messages ?? 10;
  const batchSize = options.batchSize ?? 100;
  const results: MemoryProbeResult["sizes"] = [];
  for (const n of sizes) {
    const location = await freshLocation("sqlite");
    try {
      await seed(location.url, n, messages);
      const out = await child(["--memory-child", location.url, String(batchSize)]);
      results.push({ sessions: n, ...(JSON.parse(out.trim().split("\n").pop()!) as Omit<MemoryProbeResult["sizes"][number], "sessions">) });
    } finally {
      await location.cleanup();
    }
  }
  const first = results[0];
  const last = results[results.length - 1];
  const heapRatio = last.peakHeapMB / first.peakHeapMB;
  const rssRatio = last.peakRssMB / first.peakRssMB;
  const liveHeapRatio = last.peakLiveHeapMB / first.peakLiveHeapMB;
  return { sizes: results, heapRatio, rssRatio, liveHeapRatio, target: 1.2, ok: liveHeapRatio <= 1.2 && rssRatio <= 1.2 };
}

/** In the child: migrate the store, sampling memory. Prints one JSON line. */
async function memoryChild(url: string, batchSize: number): Promise<void> {
  const store = await openStore(url);
  let peakHeap = 0;
  let peakRss = 0;
  let peakLive = 0;
  const gc = (globalThis as { gc?: () => void }).gc;
  const sample = (live: boolean) => {
    if (live && gc) {
      gc();
      peakLive = Math.max(peakLive, process.memoryUsage().heapUsed);
      return;
    }
    const m = process.memoryUsage();
    peakHeap = Math.max(peakHeap, m.heapUsed);
    peakRss = Math.max(peakRss, m.rss);
  };
  const start = performance.now();
  let gcMs = 0;
  const report = await migrateStore(store, {
    batchSize,
    onProgress: (done) => {
      if (done % 250 === 0) sample(false);
      if (done % 5000 === 0) {
        const t = performance.now();
        sample(true);
        gcMs += performance.now() - t;
      }
    },
  });
  sample(false);
  sample(true);
  await store.close();
  const mb = (b: number) => Math.round((b / 2 ** 20) * 10) / 10;
  const seconds = Math.round((performance.now() - start - gcMs) / 100) / 10;
  process.stdout.write(JSON.stringify({ peakHeapMB: mb(peakHeap), peakRssMB: mb(peakRss), peakLiveHeapMB: mb(peakLive), seconds, migrated: report.migrated }) + "\n");
}

// -------------------------------------------------------------------------------------------------

async function main(argv: string[]): Promise<void> {
  if (argv[0] === "--memory-child") return memoryChild(argv[1], Number(argv[2]));
  const flag = (name: string, fallback: number) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? Number(argv[i + 1]) : fallback;
  };
  const words = argv.filter((a, i) => !a.startsWith("--") && !(i > 0 && argv[i - 1].startsWith("--")));
  const all = words.length === 0;
  if (all || words.includes("lazy")) {
    for (const style of ["copy", "in-place"] as const) {
      const r = await probeLazyMigration({ messages: flag("lazy-messages", 1000), style });
      console.log(`${r.case}: ${r.ours_ms.toFixed(2)} ms vs ${r.baseline} ${r.baseline_ms.toFixed(2)} ms = ${r.ratio.toFixed(3)}x (target <= ${r.target}x) ${r.ok ? "ok" : "MISSED"}`);
    }
  }
  if (all || words.includes("bulk")) {
    const kinds = words.filter((w): w is BulkKind => w === "sqlite" || w === "postgres" || w === "redis");
    for (const kind of kinds.length ? kinds : (["sqlite", "postgres", "redis"] as const)) {
      const r = await probeBulkMigration(kind, { sessions: flag("sessions", 1000), messages: flag("messages", 20), rounds: flag("rounds", 3) });
      console.log(`${r.case}: ${Math.round(r.ours_per_s)} sessions/s vs raw ${Math.round(r.raw_per_s)} sessions/s = ${(r.ratio * 100).toFixed(0)}% (target >= 50%) ${r.ok ? "ok" : "MISSED"}  [${r.sessions} sessions x ${r.messages} messages]`);
    }
  }
  if (words.includes("memory")) {
    const r = await probeBulkMemory({ messages: flag("messages", 10) });
    for (const s of r.sizes) console.log(`migrate.bulk.sqlite memory: ${s.sessions} sessions: peak heap ${s.peakHeapMB} MB (live after GC ${s.peakLiveHeapMB} MB), peak RSS ${s.peakRssMB} MB, ${s.seconds} s`);
    console.log(
      `peak ratio ${r.sizes.at(-1)!.sessions}/${r.sizes[0].sessions}: live heap ${r.liveHeapRatio.toFixed(2)}x, RSS ${r.rssRatio.toFixed(2)}x, heap incl. garbage ${r.heapRatio.toFixed(2)}x (target <= ${r.target}x) ${r.ok ? "ok" : "MISSED"}`,
    );
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  main(process.argv.slice(2)).then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
